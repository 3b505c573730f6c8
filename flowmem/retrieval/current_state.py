"""Current-state ranking without cue words: of statements of one attribute from different times,
a question about the present gets the newest first, a question about the past the oldest.

People rarely announce a change ("loving the commute to the council offices" after months
of bakery shifts), so what decides here is not how the newer message is worded but what the
question asks and what the candidates state:

1. The question's tense (tense()): about the present ("where does she live?", "is he still
   vegetarian", "Sam's rent?") or about the past state ("before", "used to", "originally",
   "previous", "what was ..."). A question naming a day or period, asking for several facts
   (a list, a count: query.many), or asking about a past event ("when did they adopt the
   cat?", "did she pass?") is neither, and nothing moves.
2. The statements (statements()): the first `window` messages of the order that state the
   asked-about thing: each holds at least half the question's idf (its speakers' names aside)
   that the best of them holds, or is among the nearest in meaning; is said by the participant
   the question names, when it names one; says rather than asks (pool.Message.asks); and, when
   the question asks for an amount, a day, a name or a place (rerank.asked_for()), holds one.
3. If they were said on at least two days (and, for an amount, a name or a place, hold at
   least two different values: one value said again replaced nothing), they take their own
   places in the order again, newest first for the present and oldest first for the past; every other message keeps
   its place, so nothing leaves the first `window`. For the present each older statement
   is marked as replaced by the newest (`signals`' "replaced_by": that message's id), for a
   reader model to tell which one holds now.

A value that coexists with another (two pets, two jobs at once) is asked for by a question
asking for several facts, which is left alone; measured figures, gains and false
reorderings, are in docs/results.md (Current state).
"""
from __future__ import annotations

import heapq
import math
import re
from typing import Dict, FrozenSet, List, Sequence, Tuple

from ..text.tokenize import split_speaker
from .pool import Key, Pool
from .query import CURRENT, WHEN, Query
from .rerank import asked_for, holds_asked

PRESENT, PAST = "present", "past"
_SLOTS = ("amount", "name", "place")  # what a present-tense question without a word of time must ask for
_SHARE = 0.5  # a statement holds at least this share of the question's idf the best of the window holds
_USUAL = 20  # ... of this many cosines at least
_NEAREST = 5  # the nearest in meaning that count as stating the asked-about thing without its words

_PAST_STATE = re.compile(r"\b(before|originally|initially|at first|previous(ly)?|former(ly)?|prior|back (in|then|when)|"
                         r"old (\w+ )?(job|car|place|flat|house|address|number|phone|school|boss|venue|gym|doctor|"
                         r"team|partner|company|employer|rent|plan))\b", re.I)
# Said of past events and habits as often as of an earlier state: a past question only when it asks for a slot.
_PAST_MAYBE = re.compile(r"\b(used to|use to|what was|who was|where was|which was)\b", re.I)
# A hypothetical, or a name or rank that does not change ("the name of her child", "his number one goal").
_NOT_A_STATE = re.compile(r"\b(would|could|might|if|name of|number one|favou?rite)\b", re.I)
_PAST_EVENT = re.compile(r"\b(did|didn'?t|was|were|wasn'?t|had|ever|went|happened)\b", re.I)
_PRESENT = re.compile(r"\b(is|isn'?t|are|aren'?t|am|does|doesn'?t|do|don'?t|has|hasn'?t|have|haven'?t|now|currently|"
                      r"still|these days|nowadays|at the moment|at the minute|rn|anymore|any more)\b|'s\b|'re\b",
                      re.I)


def tense(query: Query) -> str:
    """PRESENT, PAST or "" (module docstring, 1) for an analyzed question."""
    text = query.text
    if query.periods or query.many or _NOT_A_STATE.search(text):
        return ""
    if _PAST_STATE.search(text) or (_PAST_MAYBE.search(text) and asked_for(text, query) in _SLOTS):
        return PAST
    if query.intent == CURRENT:
        return PRESENT
    if _PAST_EVENT.search(text) or query.intent == WHEN:
        return ""
    return PRESENT if asked_for(text, query) in _SLOTS and _PRESENT.search(text) else ""


def statements(query: Query, pool: Pool, order: Sequence[Key], window: int, wanted: str) -> List[Key]:
    """The messages among the first `window` of `order` that state the asked-about thing (docstring, 2);
    wanted: what the question asks for (rerank.asked_for())."""
    idf = {t: pool.idf.get(t, 0.0) for t in pool.asked}
    # math.fsum: exact whatever the order a frozenset of terms is walked in (it follows PYTHONHASHSEED).
    share = {key: math.fsum(idf[t] for t in pool.hits.get(key, ()) if t in idf) for key in order[:window]}
    enough = _SHARE * max(share.values(), default=0.0)
    # The nearest in meaning, where there are enough cosines for the nearest to stand apart from the user's usual.
    nearest = {k for _, _, _, k in heapq.nsmallest(_NEAREST, [(-v, pool.messages[k].tag, k[1], k)
                                                               for k, v in pool.meaning.items() if k in pool.messages])
               } if len(pool.meaning) >= _USUAL else set()
    named = pool.participants(query.terms)
    out = []
    for key in order[:window]:
        message = pool.messages.get(key)
        if message is None or message.timestamp_ms is None or message.asks:
            continue
        if named and not any(t in message.speaker for t in named):
            continue  # another person's statement of the same thing
        if not ((share[key] > 0 and share[key] >= enough) or key in nearest):
            continue
        if wanted and not holds_asked(wanted, message.content, message.dated):
            continue
        out.append(key)
    return out


def values(wanted: str, content: str) -> FrozenSet[str]:
    """The values of the asked-for kind a statement holds: its numbers for an amount or a day, its
    capitalised words (the speaker's label aside) for a name or a place; empty for anything else."""
    body = split_speaker(content)[1]
    if wanted in ("amount", "day"):
        return frozenset(_NUMBER.findall(body.lower()))
    if wanted in ("name", "place"):
        return frozenset(w.lower() for w in _CAPITALISED.findall(body))
    return frozenset()


_DAY_MS = 86_400_000
_NUMBER = re.compile(r"\d[\d,.]*k?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                     r"forty|fifty|hundred|thousand)\b")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")


def rerank(query: Query, pool: Pool, order: Sequence[Key], window: int) -> Tuple[List[Key], Dict[Key, Key]]:
    """`order` with the statements of the asked-about thing in time order in their own places (docstring, 3),
    and {older statement: the newest one} for a question about the present ({} when nothing moved)."""
    when = tense(query) if window > 0 else ""
    if not when:
        return list(order), {}
    wanted = asked_for(query.text, query)
    said = statements(query, pool, order, window, wanted)
    days = {pool.messages[k].timestamp_ms // _DAY_MS for k in said}  # type: ignore[operator]
    if len(days) < 2 or (wanted and len({values(wanted, pool.messages[k].content) for k in said}) < 2):
        return list(order), {}  # one day, or one value said again: nothing replaced anything
    by_time = sorted(said, key=lambda k: (pool.messages[k].timestamp_ms, pool.messages[k].tag, k[1]),
                     reverse=when == PRESENT)
    places = iter(by_time)
    chosen = set(said)
    out = [next(places) if key in chosen else key for key in order]
    if when != PRESENT:
        return out, {}
    newest = by_time[0]
    newest_day = pool.messages[newest].timestamp_ms // _DAY_MS  # type: ignore[operator]
    return out, {k: newest for k in by_time[1:] if pool.messages[k].timestamp_ms // _DAY_MS < newest_day}  # type: ignore
