"""The guarded state-update rerank: a newer message that explicitly updates an older one goes first.

Only when all of these hold, and nothing is ever dropped:

1. the question asks for a current or latest state ("now", "currently", "still",
   "latest", 现在, 目前 ...);
2. both messages are among the best `top` ranked messages and are strongly about
   the same thing: they share two of the question's terms, or two content words of
   which at least one is a question term;
3. the newer one (later timestamp, or later in the same session) says explicitly
   that something changed ("changed to", "moved to", "no longer", "postponed",
   "instead", "actually", 改成, 搬到, 不再, 推迟 ...).

Then the newer message moves to just above the older one, which moves down one
place; everything else keeps its order. (A chain of updates settles newest first.)
If what an update changed is not among the best at all, the earlier message sharing
the most (and rarest) content words with it, at least two, joins it just below: a
current-state question is answered best with the new value first and the old in sight.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Sequence, Set, Tuple

from ..text.tokenize import STEMMED_STOPWORDS
from .candidates import Key, Message, Pool
from .query import CURRENT, Query

UPDATE_CUES = re.compile(
    r"\b(chang(e|ed|ing) (it |them )?(to|into)|mov(e|ed|ing) (to|into|back)|no longer|not any ?more|anymore|"
    r"postpon(e|ed|ing)|reschedul(e|ed|ing)|push(ed)? back|delay(ed)?|correct(ed|ion)?|instead|switch(ed|ing)? "
    r"(to|over)|actually|updat(e|ed)|replac(e|ed|ing)|now)\b|改成|改为|改到|搬到|搬去|不再|推迟|延期|换成|换到|其实|"
    r"更正|现在",
    re.I,
)


def _later(a: Message, b: Message) -> bool:
    """Whether message a was said after message b."""
    if a.timestamp_ms is not None and b.timestamp_ms is not None and a.timestamp_ms != b.timestamp_ms:
        return a.timestamp_ms > b.timestamp_ms
    return a.key[0] == b.key[0] and a.key[1] > b.key[1]


def _same_subject(a: Message, b: Message, terms: Set[str]) -> bool:
    """Two question terms in common, or two shared words one of which the question asks about."""
    words_a = set(a.tokens) - STEMMED_STOPWORDS
    words_b = set(b.tokens) - STEMMED_STOPWORDS
    shared = words_a & words_b
    return len(terms & shared) >= 2 or (len(shared) >= 2 and bool(terms & shared))


def _shared(a: Message, b: Message) -> Set[str]:
    return (set(a.tokens) & set(b.tokens)) - STEMMED_STOPWORDS


def _counterpart(newer: Message, older: Message) -> bool:
    """Whether `older` may state what `newer` updates: two content words in common (names, places, roles)."""
    return len(_shared(newer, older)) >= 2


def _rarity(pool: Pool) -> Dict[str, float]:
    """1 / the number of candidate messages holding each word: rare words say more about a subject."""
    counts: Dict[str, int] = {}
    for key in pool.matched:
        for t in set(pool.messages[key].tokens):
            counts[t] = counts.get(t, 0) + 1
    return {t: 1.0 / n for t, n in counts.items()}


def rerank(query: Query, pool: Pool, order: Sequence[Key], text_of: Callable[[Key], str],
           top: int) -> Tuple[List[Key], List[Tuple[Key, Key]]]:
    """The order with explicit updates raised above what they update, and the (newer, older) pairs moved.

    order: messages best first; `text_of(key)` gives a message's verbatim text (only
    the first `top` are read); top: how far down `order` updates and what they update
    are looked for (the setting state_update_window).
    """
    if query.intent != CURRENT or top <= 0:
        return list(order), []
    result = list(order)
    moves: List[Tuple[Key, Key]] = []
    terms = set(query.terms)
    best = result[:top]
    updates = [key for key in best if UPDATE_CUES.search(text_of(key))]
    # Insertion passes until no update sits below a message it updates; time order is
    # strict, so chains (old, newer, newest) settle newest first. Bounded regardless.
    for _ in range(len(best)):
        changed = False
        for newer in updates:
            for older in best:
                if older == newer:
                    continue
                a, b = pool.messages[newer], pool.messages[older]
                i, j = result.index(newer), result.index(older)
                if i > j and _later(a, b) and _same_subject(a, b, terms):
                    result.insert(j, result.pop(i))
                    moves.append((newer, older))
                    changed = True
        if not changed:
            break
    # An update whose earlier value is not among the best: bring the message it most
    # likely updates (the most, and rarest, words in common) to just below it, so the
    # reader sees what changed, old and new.
    rarity = _rarity(pool)
    for newer in updates:
        a = pool.messages[newer]
        earlier, strongest = None, 0.0
        for key in result:
            if key == newer or not _later(a, pool.messages[key]) or not _counterpart(a, pool.messages[key]):
                continue
            # Summed in sorted order: a float sum in set order would differ with PYTHONHASHSEED.
            strength = sum(rarity.get(t, 0.0) for t in sorted(_shared(a, pool.messages[key])))
            if strength > strongest:
                earlier, strongest = key, strength
        if earlier is not None and earlier not in result[:top]:
            result.remove(earlier)
            result.insert(result.index(newer) + 1, earlier)
            moves.append((newer, earlier))
    return result, moves
