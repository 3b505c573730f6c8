"""The guarded state-update rerank: a newer message that explicitly updates an older one goes first.

Only when all of these hold, and nothing is ever dropped:

1. the question asks for a current or latest state ("now", "currently", "still",
   "latest", 现在, 目前 ...) and names no date (query.intent: CURRENT);
2. both messages are among the best `top` ranked messages and are about the same
   thing: they share a word the question asks about (the date tokens every message
   is indexed with do not count: two messages of one month would share them);
3. the newer one (later timestamp, or later in the same session) says explicitly
   that something changed, in the words people use (UPDATE_CUES): "now", "anymore",
   "used to", "my new ...", "quit", "switched", "joined", "took up", "moved to",
   "postponed", "instead", "actually"; 现在, 不再, 已经不, 换了, 改成, 搬到 ...

Then the newer message moves to just above the older one, which moves down one
place; everything else keeps its order. (A chain of updates settles newest first.)
If what an update changed is not among the best at all, the earlier message sharing
the most (and rarest) content words with it, at least two, joins it just below: a
current-state question is answered best with the new value first and the old in sight.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Sequence, Set, Tuple

from ..text import timeexpr
from ..text.tokenize import STEMMED_STOPWORDS
from .pool import Key, Message, Pool
from .query import CURRENT, Query

# The ways people say that something changed, collected from how conversations phrase it
# (cue words only): a change of state ("now", "anymore", "these days", "used to", "my new
# ..."), a verb of change ("started", "quit", "switched", "joined", "took up", "gave up"),
# a correction ("actually", "instead") or a rescheduling; and their Chinese forms. A cue
# alone moves nothing: the guard (same subject, newer, both among the best) decides.
_EN_CUES = "|".join([
    r"now", r"nowadays", r"these days", r"from now on", r"any ?more", r"no longer", r"not any longer",
    r"used to", r"since then", r"instead", r"actually", r"for good",
    r"(my|our|a|his|her|their) new", r"got (a |an |my |our )?new",
    r"chang(e|ed|es|ing)", r"mov(e|ed|es|ing) (to|into|back|out|in)", r"switch(ed|es|ing)?",
    r"start(ed|s|ing)?", r"began", r"quit(s|ting)?", r"stop(ped|s|ping)", r"became", r"become",
    r"join(ed|s|ing)?", r"left", r"(took|take|taken|taking) up", r"(gave|give|given|giving) up",
    r"retir(e|ed|ing)", r"resign(ed|ing)?", r"(signed|sign) up", r"enroll?(ed|ing)?", r"promot(ed|ion)",
    r"(got|get|gotten) (married|engaged|divorced|hired|fired)", r"broke up", r"laid off",
    r"postpon(e|ed|ing)", r"reschedul(e|ed|ing)", r"push(ed)? back", r"delay(ed)?", r"correct(ed|ion)?",
    r"updat(e|ed)", r"replac(e|ed|ing)",
])
_ZH_CUES = "|".join("""
现在 如今 目前 最近开始 从此 以后都 今后 以后 开始 不再 已经不 再也不 换了 换成 换到 改成 改为 改到 改了 搬到 搬去 搬家
新的 新工作 推迟 延期 其实 更正 辞职 离职 跳槽 戒了 加入 退出 退休 变成 成了 以前 原来
""".split())
UPDATE_CUES = re.compile(r"\b(%s)\b|%s" % (_EN_CUES, _ZH_CUES), re.I)


def _later(a: Message, b: Message) -> bool:
    """Whether message a was said after message b."""
    if a.timestamp_ms is not None and b.timestamp_ms is not None and a.timestamp_ms != b.timestamp_ms:
        return a.timestamp_ms > b.timestamp_ms
    return a.key[0] == b.key[0] and a.key[1] > b.key[1]


def _content(m: Message) -> Set[str]:
    """A message's words that can say what it is about: not stopwords, not the date tokens of its day.

    Every message is indexed with its own day's tokens (features.py), so two messages
    of the same year or month would otherwise share "words" whatever they say.
    """
    return {t for t in m.tokens if t not in STEMMED_STOPWORDS and not timeexpr.is_date_token(t)}


def _same_subject(a: Message, b: Message, terms: Set[str]) -> bool:
    """Whether both hold a word the question asks about.

    Measured against "two shared words, one a question term" (the rule before date
    tokens were left out of the words compared): that one lost a synthetic
    knowledge-update question at Hit@1 (0.821 -> 0.786) and LoCoMo dev 0.7049 -> 0.7039
    (`python tools/eval.py synthetic`, `python tools/tune.py --show`).
    """
    return bool(terms & _shared(a, b))


def _shared(a: Message, b: Message) -> Set[str]:
    return _content(a) & _content(b)


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
