"""Reading a session for the session cache (session_cache.py): whole the first time, then extended.

A session only grows by appends between two deletions (a deleted message logs a deletion,
which forgets the session's entry in every Store: held.py), and the cache hands a loader the
entry it holds only when that entry may still be used (bounded_cache.py); so an entry held at
n messages is the session's first n messages at any later snapshot, and extending it reads
what was appended and what that can have changed:

- the messages after n (their features, rows and cost, added to copies of the held ones);
- the windows and segments ending at or after `segment_start`, where the session's last
  segment began when the entry was read: writer.sync_views() removes and adds only those
  (views.plan_tail()), so the held ones ending before it are kept, and the views stay in
  the index's order (last message, then doc id) that a whole read gives;
- which views hold each position, again from the first position a changed view covers;
- the turns, again from the start of the turn of the held last message (a turn is decided
  left to right: views.turn_spans()).

So an Add to a long session costs the next search what the Add wrote, not the session: an
agent that stores each turn and searches in one thread was paying for the whole thread at
every turn. The result equals the session read whole (tests/test_session_cache.py), except
that a held window or segment keeps the session's message count it was read with
(ViewRow.session_messages, its version then): remaking every view of a long session for it
would cost what reading it whole does, and nothing reads that count of a window or segment.

What is shared with the held entry is never changed: a search still reading it, at the
snapshot it was read at, sees it as it was.
"""
from __future__ import annotations

import sqlite3
from sys import intern
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..text import timeexpr
from ..text.features import shown
from .rows import MessageRow, ViewRow, resolutions, view_rows
from .session_cache import CACHE_UNIT_CHARS, Features, SessionData
from .views import MESSAGE, TURN_GAP_MS, TURN_MAX_MESSAGES, turn_spans

_MESSAGES_SQL = ("SELECT seq, role, content, speaker, timestamp_ms, tokens, times, coalesce(number, seq), metadata"
                 " FROM messages WHERE session_key = ? AND seq > ? ORDER BY seq")


def load(conn: sqlite3.Connection, session_key: int, n_messages: int,
         held: Optional[SessionData] = None) -> SessionData:
    """The session `session_key` at `n_messages` messages: `held` (what the cache holds of it, or
    None) extended when it holds fewer, else the session read whole."""
    if held is not None and 0 < held.n_messages < n_messages:
        return _extended(conn, session_key, n_messages, held)
    return _whole(conn, session_key, n_messages)


def _whole(conn: sqlite3.Connection, session_key: int, n_messages: int) -> SessionData:
    user_key, segment_start = _session_row(conn, session_key)
    messages, rows, cost = _messages(conn, session_key, 0)
    context = tuple(_context_views(conn, session_key, 1, n_messages))
    return SessionData(len(messages), messages, context, _doc_freqs({}, messages.values()), rows, cost,
                       _views_at(context, 1), _turns(messages, rows, 1, len(messages)), user_key, segment_start)


def _extended(conn: sqlite3.Connection, session_key: int, n_messages: int, held: SessionData) -> SessionData:
    """`held` with the messages after its last and the views they changed (the module's docstring)."""
    user_key, segment_start = _session_row(conn, session_key)
    new, new_rows, cost = _messages(conn, session_key, held.n_messages)
    if held.n_messages + len(new) != n_messages or min(new) != held.n_messages + 1:
        return _whole(conn, session_key, n_messages)  # not the held messages plus appends: never seen, but exact
    messages, rows = dict(held.messages), dict(held.rows)  # dict(): a copy at memcpy speed, then the new few
    messages.update(new)
    rows.update(new_rows)
    kept = _ending_before(held.views, held.segment_start)
    read = tuple(_context_views(conn, session_key, held.segment_start, n_messages))
    context = held.views[:kept] + read
    # Every position a dropped or read view covers holds other views now; those before hold what they held.
    first = min([held.segment_start] + [v.first for v in held.views[kept:]] + [v.first for v in read])
    views_at = dict(held.views_at)
    for seq in range(first, held.n_messages + 1):
        views_at.pop(seq, None)
    views_at.update(_views_at(context[_ending_before(context, first):], first))
    start = held.turns.get(held.n_messages, (held.n_messages, held.n_messages))[0]
    turns = dict(held.turns)
    for seq in range(start, held.n_messages + 1):
        turns.pop(seq, None)
    turns.update(_turns(messages, rows, start, len(messages)))
    return SessionData(len(messages), messages, context, _doc_freqs(dict(held.doc_freqs), new.values()), rows,
                       held.cost + cost, views_at, turns, user_key, segment_start)


def _session_row(conn: sqlite3.Connection, session_key: int) -> Tuple[int, int]:
    """(user key, where its last segment begins) of a session."""
    row = conn.execute("SELECT user_key, segment_start FROM sessions WHERE session_key = ?",
                       (session_key,)).fetchone()
    return (row[0], row[1]) if row else (0, 1)


def _messages(conn: sqlite3.Connection, session_key: int,
              after: int) -> Tuple[Dict[int, Features], Dict[int, MessageRow], int]:
    """(features, rows, their cost against the cache's bound) of the session's messages after position `after`."""
    messages: Dict[int, Features] = {}
    rows: Dict[int, MessageRow] = {}
    cost = 0
    for seq, role, content, speaker, ts, tokens, times, number, metadata in conn.execute(
            _MESSAGES_SQL, (session_key, after)):
        resolved = resolutions(times)
        rows[seq] = MessageRow(seq, role, shown(content), ts, times, timeexpr.annotation(resolved), number,
                               metadata)
        spans = tuple((r.start.toordinal(), r.end.toordinal()) for r in resolved)
        # Interned: a word said in thousands of cached messages is then one string, not thousands.
        messages[seq] = (tuple(map(intern, speaker.split())), ts, tuple(map(intern, tokens.split())), spans)
        cost += 1 + len(rows[seq].content) // CACHE_UNIT_CHARS
    return messages, rows, cost


def _doc_freqs(counts: Dict[str, int], messages: Iterable[Features]) -> Dict[str, int]:
    """`counts` (token -> messages holding it) with `messages` counted in."""
    for _, _, tokens, _ in messages:
        for t in set(tokens):
            counts[t] = counts.get(t, 0) + 1
    return counts


def _context_views(conn: sqlite3.Connection, session_key: int, since: int, last: int) -> List[ViewRow]:
    """The windows and segments of a session that end at or after message `since` and begin at or before
    `last`, by last message then doc id (views_by_session's order: no sort)."""
    return list(view_rows(
        conn, "v.session_key = ? AND v.last_seq >= ? AND v.first_seq <= ? AND v.kind != ?"
        " ORDER BY v.last_seq, v.doc_id", (session_key, since, last, MESSAGE)))


def _ending_before(context: Sequence[ViewRow], position: int) -> int:
    """How many of `context` (by last message) end before `position`: those after end at or after it."""
    i = len(context)
    while i and context[i - 1].last >= position:  # from the end: an extension's views are near it
        i -= 1
    return i


def _views_at(context: Sequence[ViewRow], since: int) -> Dict[int, Tuple[ViewRow, ...]]:
    """Position -> the views of `context` holding it, in `context` order, for the positions from `since` on."""
    at: Dict[int, List[ViewRow]] = {}
    for view in context:
        for seq in range(max(view.first, since), view.last + 1):
            at.setdefault(seq, []).append(view)
    return {seq: tuple(views) for seq, views in at.items()}


def _turns(messages: Mapping[int, Features], rows: Mapping[int, MessageRow], first: int,
           last: int) -> Dict[int, Tuple[int, int]]:
    """Position -> (first, last) of its turn, for the turns of two or more messages among positions
    `first`..`last`, `first` beginning a turn."""
    order = range(first, last + 1)
    spans = turn_spans([(rows[seq].role, messages[seq][0]) for seq in order],  # role and label
                       [messages[seq][1] for seq in order], TURN_GAP_MS, TURN_MAX_MESSAGES)
    shift = first - 1
    return {seq: (a + shift, b + shift) for a, b in spans if b > a for seq in range(a + shift, b + shift + 1)}
