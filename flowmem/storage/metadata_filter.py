"""Which of a user's messages hold every pair of a metadata filter, a session at a time, at a cost that
does not grow with the filter's number of pairs.

A search's filter (retrieval/filters.py) asks it of the sessions its candidates lie in, a listing
(listing.py) of each session it pages through. First, from `metadata_sessions` (how many of each
session's messages hold each term: metadata_index.py) and the sessions' message counts in the
snapshot, each session is one of three:

- none of its messages passes (a pair none of them holds): nothing more is read;
- all pass (every pair held by every message, as an Add's own metadata is): nothing more is read;
- some do: its messages are tested for the pairs they differ in, and those alone.

A session's messages are tested by one of two plans (plan()): lookups of its differing pairs,
fewest holders first, so that a message stops at the first it lacks; or, where a message is
expected to make more than SCAN_LOOKUPS lookups (many pairs, each held by most messages), one
read of its own rows (at most 32 integers) counted against the terms. Schema 5 looked every pair
up in every message: a 32-pair filter cost 18 to 39 unfiltered searches (docs/metadata.md).
"""
from __future__ import annotations

import sqlite3
from typing import Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Tuple

from .metadata_index import Pairs, term_sql

Terms = Mapping[Tuple[str, str], int]  # a filter's pairs, each with its term (terms())
Differing = List[Tuple[float, Tuple[str, str], int]]  # (share of a session's messages holding it, pair, term)
# What reading a message's own rows (at most 32 integers) costs, in lookups of one pair each: a
# session whose messages are expected to make more lookups than this reads the rows instead (plan()).
# `python3 -m tools.bench_metadata` times both on messages whose every pair differs (docs/metadata.md).
SCAN_LOOKUPS = 8
MAX_SESSIONS = 400  # sessions per statement: with 32 terms, well within SQLite's 999 variables


def terms(conn: sqlite3.Connection, user_key: int, wanted: Pairs) -> Optional[Dict[Tuple[str, str], int]]:
    """{pair: its term} of every pair of `wanted`, or None if one is held by no message of the user's."""
    out = {}
    for pair in wanted:
        row = conn.execute(*term_sql(user_key, pair)).fetchone()
        if row is None:
            return None
        out[pair] = row[0]
    return out


def rarest_first(conn: sqlite3.Connection, user_key: int, wanted: Pairs) -> Pairs:
    """`wanted` ordered by how few of the user's messages hold each pair (none first): the order in which
    metadata_index.filter_sql() tests them cheapest, a message stopping at the first it lacks."""
    held = {}
    for pair in wanted:
        row = conn.execute(*term_sql(user_key, pair, "messages")).fetchone()
        held[pair] = row[0] if row else 0
    return tuple(sorted(wanted, key=lambda pair: (held[pair], pair)))


def _chunks(keys: Sequence[int]) -> Iterator[List[int]]:
    ordered = sorted(set(keys))
    return (ordered[i:i + MAX_SESSIONS] for i in range(0, len(ordered), MAX_SESSIONS))


def shares(conn: sqlite3.Connection, wanted: Terms, session_keys: Sequence[int]) -> Dict[int, Optional[Differing]]:
    """{session key: (share of its messages holding it, pair, term) of each pair of `wanted` that only
    some of its messages hold, fewest holders first ([]: every message holds every pair); None when
    one is held by none of its messages} of `session_keys`."""
    held: Dict[int, Dict[int, int]] = {}
    sizes: Dict[int, int] = {}
    for chunk in _chunks(session_keys):
        marks = ",".join("?" * len(chunk))
        sizes.update(conn.execute("SELECT session_key, n_messages FROM sessions WHERE session_key IN (%s)" % marks,
                                  chunk))
        for term, session_key, messages in conn.execute(
                "SELECT term, session_key, messages FROM metadata_sessions WHERE term IN (%s) AND session_key IN (%s)"
                % (",".join("?" * len(wanted)), marks), (*wanted.values(), *chunk)):
            held.setdefault(session_key, {})[term] = messages
    out: Dict[int, Optional[Differing]] = {}
    for key in sorted(set(session_keys)):
        counts = held.get(key, {})
        out[key] = None if len(counts) < len(wanted) else sorted(
            (counts[term] / sizes[key], pair, term) for pair, term in wanted.items() if counts[term] < sizes[key])
    return out


def session_test(conn: sqlite3.Connection, wanted: Terms, session_key: int) -> Optional[Tuple[str, List[int]]]:
    """The SQL test (on a message `m`) and its parameters that a message of the session holds every pair
    of `wanted`, by the session's plan: ("", []) when every message does, None when none can."""
    differing = shares(conn, wanted, [session_key])[session_key]
    if differing is None:
        return None
    if not differing:
        return "", []
    return _test(plan(differing), len(differing)), [term for _, _, term in differing]


def plan(differing: Differing) -> bool:
    """Whether to read a message's rows rather than look its pairs up, for a session's differing pairs
    (shares()): lookups unless a message is expected to make more than SCAN_LOOKUPS of them, tested
    fewest holders first (each pair's share of holders taken as independent of the others')."""
    expected, reaching = 0.0, 1.0
    for share, _, _ in differing:
        expected += reaching
        reaching *= share
    return expected > SCAN_LOOKUPS


def _test(scan: bool, count: int) -> str:
    """The SQL test that a message `m` holds `count` terms, given as parameters after the sessions'."""
    at = "t.session_key = m.session_key AND t.seq = m.seq"
    if scan:  # `+t.term`: SQLite would otherwise look each term up, which is the other plan
        return "(SELECT count(*) FROM metadata_index t WHERE %s AND +t.term IN (%s)) = %d" % (
            at, ",".join("?" * count), count)
    return " AND ".join(["EXISTS (SELECT 1 FROM metadata_index t WHERE %s AND t.term = ?)" % at] * count)


def passing(conn: sqlite3.Connection, wanted: Terms,
            session_keys: Sequence[int]) -> Dict[int, Optional[FrozenSet[int]]]:
    """{session key: the positions of its messages that hold every pair of `wanted`; None for all of them}
    of `session_keys`. The sessions whose messages differ are tested together where they differ in the
    same pairs and take the same plan: one statement per such group and chunk of sessions, the pairs
    looked up fewest holders first across the group."""
    out: Dict[int, Optional[FrozenSet[int]]] = {}
    groups: Dict[Tuple[bool, FrozenSet[int]], List[Tuple[int, Differing]]] = {}
    for key, differing in shares(conn, wanted, session_keys).items():
        if differing is None or not differing:
            out[key] = frozenset() if differing is None else None
        else:
            groups.setdefault((plan(differing), frozenset(t for _, _, t in differing)), []).append((key, differing))
    for (scan, terms), members in groups.items():
        held: Dict[int, float] = dict.fromkeys(terms, 0.0)
        for _, differing in members:
            for share, _, term in differing:
                held[term] += share
        order = sorted(terms, key=lambda term: (held[term], term))
        found: Dict[int, List[int]] = {}
        for chunk in _chunks([key for key, _ in members]):
            for key, seq in conn.execute("SELECT m.session_key, m.seq FROM messages m WHERE m.session_key IN (%s)"
                                         " AND %s" % (",".join("?" * len(chunk)), _test(scan, len(order))),
                                         (*chunk, *order)):
                found.setdefault(key, []).append(seq)
        out.update((key, frozenset(found.get(key, ()))) for key, _ in members)
    return out
