"""The rankings that search fuses: each scores candidate messages on one explainable signal.

Every function takes the question (query.Query) and the candidate pool and returns
{message key: score}, higher is better, leaving out messages the signal says nothing
about. Scores are only compared within one signal; fusion.py turns them into ranks.

Message keys are (session_key, position in session).
"""
from __future__ import annotations

from typing import Dict, Mapping, Sequence

from .query import FIRST, LAST, WHEN, Query
from .candidates import Key, Pool, best_per_message


def bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message itself."""
    return pool.best["message"]


def window(query: Query, pool: Pool) -> Dict[Key, float]:
    """Best BM25 of a window around the message: the message in its immediate context.

    A message in a window-less session (one message) stands as its own window, so
    short sessions are not put at a disadvantage.
    """
    return _fallback(pool.best["window"], pool.best["message"], pool)


def segment(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message's segment: the stretch of conversation it belongs to.

    Where no segment holds the message because it would repeat a window or the
    message itself (short sessions), that view stands as its segment.
    """
    return _fallback(pool.best["segment"], window(query, pool), pool)


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


def options(query: Query, pool: Pool) -> Dict[str, Dict[Key, float]]:
    """One ranking per answer option: messages by BM25 of that option's words."""
    return {"option%d" % i: best_per_message(scores, pool.views)["message"] for i, scores in enumerate(pool.option_bm25)}


def time_order(query: Query, pool: Pool, relevant: Mapping[Key, float]) -> Dict[Key, float]:
    """For "first"/"last" questions: relevant messages by time, earliest or latest first."""
    if query.intent not in (FIRST, LAST):
        return {}
    stamped = [(pool.messages[k].timestamp_ms, k) for k in relevant if pool.messages[k].timestamp_ms is not None]
    if not stamped:
        return {}
    ordered = sorted(stamped, reverse=query.intent == LAST)
    return {key: float(len(ordered) - i) for i, (_, key) in enumerate(ordered)}


def feedback(query: Query, pool: Pool) -> Dict[Key, float]:
    """Pseudo-relevance feedback (candidates.py): the weight of the best hits' distinctive words a message holds."""
    return dict(pool.feedback)


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

