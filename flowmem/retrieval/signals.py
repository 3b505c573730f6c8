"""The signals that search fuses: each scores candidate messages on one explainable ground.

A signal function takes the question (query.Query) and the candidate pool and returns
its signal scores, {message key: score}, higher is better, leaving out messages the
signal says nothing about. Scores are only compared within one signal; fusion.py
turns them into ranks.

A signal's name is what its weight setting is called (`weight_<name>`) and what an
item's `signals` report. Each name is spelled once, here: SIGNALS maps the name of
every signal computed from the question and the pool to its function, and OPTIONS and
ADJACENCY name the two that need more (one ranking per answer option; a first fused
order). SIGNAL_NAMES lists them all.

Message keys are (session_key, position in session).
"""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Sequence, Tuple

from ..storage.views import MESSAGE, SEGMENT, WINDOW
from .candidates import Key, Pool, best_per_message
from .query import FIRST, LAST, WHEN, Query

SignalScores = Dict[Key, float]
Signal = Callable[[Query, Pool], SignalScores]


def message_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message itself."""
    return pool.best_bm25[MESSAGE]


def window_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """Best BM25 of a window around the message: the message in its immediate context.

    A message in a window-less session (one message) stands as its own window, so
    short sessions are not put at a disadvantage.
    """
    return _fallback(pool.best_bm25[WINDOW], pool.best_bm25[MESSAGE], pool)


def segment_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message's segment: the stretch of conversation it belongs to.

    Where no segment holds the message because it would repeat a window or the
    message itself (short sessions), that view stands as its segment.
    """
    return _fallback(pool.best_bm25[SEGMENT], window_bm25(query, pool), pool)


def _fallback(scores: Dict[Key, float], instead: Mapping[Key, float], pool: Pool) -> Dict[Key, float]:
    """`scores`, completed with `instead` for messages of sessions where no view of the kind holds them."""
    covered = {key[0] for key in scores}
    out = dict(scores)
    for key, value in instead.items():
        if key not in out and key[0] not in covered:
            out[key] = value
    return out


def coverage(query: Query, pool: Pool) -> Dict[Key, float]:
    """Share of the question's (idf-weighted) terms the message contains."""
    total = sum(pool.idf.get(t, 0.0) for t in query.terms)
    if total <= 0:
        return {}
    out = {}
    for key, present in pool.hits.items():
        # Summed in question order: a float sum in set order would differ with PYTHONHASHSEED.
        got = sum(pool.idf.get(t, 0.0) for t in query.terms if t in present)
        if got > 0:
            out[key] = got / total
    return out


def phrase(query: Query, pool: Pool) -> Dict[Key, float]:
    """How many adjacent pairs of the question's words the message has side by side."""
    if not query.pairs:
        return {}
    wanted = set(query.pairs)
    out = {}
    for key, present in pool.hits.items():
        if len(present) < 2:
            continue  # a pair needs both of its words
        tokens = pool.messages[key].tokens
        found = len(wanted.intersection(zip(tokens, tokens[1:])))
        if found:
            out[key] = float(found)
    return out


def names(query: Query, pool: Pool) -> Dict[Key, float]:
    """How many of the names the question mentions, other than the speakers', the message's text has.

    Speakers are named all through a conversation ("Thanks, Dana!"), so their
    names say little about which message answers; other names (places, pets,
    titles) say a lot.
    """
    speakers = {t for m in pool.messages.values() for t in m.speaker}
    wanted = [n for n in query.names if n not in speakers]
    if not wanted:
        return {}
    out = {}
    for key, present in pool.hits.items():
        found = sum(1 for n in wanted if n in present)
        if found:
            out[key] = float(found)
    return out


def speaker(query: Query, pool: Pool) -> Dict[Key, float]:
    """1 for messages said by someone the question names."""
    wanted = set(query.terms)
    return {key: 1.0 for key, m in pool.messages.items() if wanted.intersection(m.speaker)}


def numbers(query: Query, pool: Pool) -> Dict[Key, float]:
    """How many of the question's numbers the message contains."""
    if not query.numbers:
        return {}
    out = {}
    for key, present in pool.hits.items():
        found = sum(1 for n in query.numbers if n in present)
        if found:
            out[key] = float(found)
    return out


def dated(query: Query, pool: Pool) -> Dict[Key, float]:
    """For questions asking when: 1 for messages whose text states or implies a date."""
    if query.intent != WHEN:
        return {}
    return {key: 1.0 for key, m in pool.messages.items() if m.dated}


def time_order(query: Query, pool: Pool) -> Dict[Key, float]:
    """For "first"/"last" questions: relevant messages by time, earliest or latest first.

    Relevant: those with a BM25 of their own, or else (no message matched) of a window.
    """
    if query.intent not in (FIRST, LAST):
        return {}
    relevant = message_bm25(query, pool) or window_bm25(query, pool)
    stamped = [(pool.messages[k].timestamp_ms, k) for k in relevant if pool.messages[k].timestamp_ms is not None]
    if not stamped:
        return {}
    ordered = sorted(stamped, reverse=query.intent == LAST)
    return {key: float(len(ordered) - i) for i, (_, key) in enumerate(ordered)}


def feedback(query: Query, pool: Pool) -> Dict[Key, float]:
    """Pseudo-relevance feedback (candidates.py): the weight of the best hits' distinctive words a message holds."""
    return dict(pool.feedback)


def related(query: Query, pool: Pool) -> Dict[Key, float]:
    """Words related in meaning to the question's (bridges.py): the idf x strength of those a message holds."""
    return dict(pool.related)


def typo(query: Query, pool: Pool) -> Dict[Key, float]:
    """Near spellings of question words the memory never holds (bridges.py): their weight in the message."""
    return dict(pool.typo)


def option_signals(query: Query, pool: Pool) -> Dict[str, Dict[Key, float]]:
    """One signal per answer option, named option_signal_name(i): messages by BM25 of that option's words.

    All of them are weighed by the OPTIONS weight.
    """
    return {option_signal_name(i): best_per_message(scores, pool.views)[MESSAGE]
            for i, scores in enumerate(pool.option_view_bm25)}


def option_signal_name(index: int) -> str:
    """The name of the signal of answer option `index` (0-based)."""
    return "%s%d" % (_OPTION_PREFIX, index)


def is_option_signal(name: str) -> bool:
    """Whether `name` is the name of an answer option's signal (option_signal_name())."""
    return name.startswith(_OPTION_PREFIX) and name[len(_OPTION_PREFIX):].isdigit()


def adjacency(pool: Pool, order: Sequence[Key], top: int) -> Dict[Key, float]:
    """Neighbours of the `top` best messages, the neighbours of better hits first.

    A question's answer is often the reply to, or the line before, the message that
    matches its words; this brings them back together.
    """
    out: Dict[Key, float] = {}
    for position, (session_key, seq) in enumerate(order[:top]):
        for neighbour in ((session_key, seq - 1), (session_key, seq + 1)):
            if neighbour in pool.messages and neighbour not in out:
                out[neighbour] = float(top - position)
    return out


# The registry: every signal computed from the question and the pool alone, by name. The
# names are the weights' (weight_<name>): "window" and "segment" name signals, not view kinds.
SIGNALS: Mapping[str, Signal] = {
    "bm25": message_bm25,
    "window": window_bm25,
    "segment": segment_bm25,
    "coverage": coverage,
    "phrase": phrase,
    "names": names,
    "speaker": speaker,
    "numbers": numbers,
    "dated": dated,
    "time": time_order,
    "feedback": feedback,
    "related": related,
    "typo": typo,
}
OPTIONS = "options"  # the weight of every answer option's signal (option_signals())
ADJACENCY = "adjacency"  # neighbours of the best messages of a first fused order (adjacency())
_OPTION_PREFIX = "option"
SIGNAL_NAMES: Tuple[str, ...] = tuple(SIGNALS) + (OPTIONS, ADJACENCY)  # every signal weight's name
