"""The write path: a session's views and their index entries, rebuilds, deletions (an Add's rows: appending.py).

Every function here runs inside the Store's write transaction (Store.writing()),
on the writer connection: what one call writes commits whole or not at all. A
session's views are ranges of its messages (views.py); each is one FTS5 document
whose terms are its messages' tokens (fts.py), and the user's statistics per view
kind (`user_stats`) move with every view written or removed. A view's document is
joined from its messages' terms, each made once per call and kind (Documents), and
sync_views() hands SQLite the index entries it adds, and those it removes, in one
executemany each.
"""
from __future__ import annotations

import sqlite3
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from ..text.features import derive
from . import fts, listing, views
from .documents import Documents, Text, message_text
from .rows import lookup_user_key
from .session_rows import forget_floor, keep_floor, retire
from .settings import ViewSettings, read_marks, write_deletions_mark

Deltas = Dict[str, List[int]]  # per view kind, the change in [number of views, their total length]


def sync_views(conn: sqlite3.Connection, settings: ViewSettings, user_key: int, session_key: int,
               n_before: int, n: int, segment_start: int, doc_ids: Optional[Iterator[int]] = None) -> None:
    """Bring a session's views and their index entries up to date after messages n_before+1..n arrived
    (new views take their doc ids from `doc_ids` while it lasts, then new ones)."""
    # Only views ending at or after the last segment's start can change (views.py).
    since = max(1, segment_start - settings.window_size + 1)
    tail = conn.execute(
        "SELECT seq, timestamp_ms, tokens, speaker FROM messages WHERE session_key = ? AND seq >= ? ORDER BY seq",
        (session_key, since),
    ).fetchall()
    times = {seq: ts for seq, ts, _, _ in tail}
    documents = Documents(user_key, {seq: message_text(toks, speaker) for seq, _, toks, speaker in tail})
    planned, new_segment_start = views.plan_tail(
        times, n, segment_start, settings.window_size, settings.segment_max_messages,
        settings.segment_max_gap_s * 1000
    )
    wanted = set(planned) | {views.Span(views.MESSAGE, s, s) for s in range(n_before + 1, n + 1)}
    existing = {}
    for doc_id, kind, first, last in conn.execute(
        "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ? AND last_seq >= ? AND kind != ?",
        (session_key, segment_start, views.MESSAGE),
    ):
        existing[views.Span(kind, first, last)] = doc_id
    deltas: Deltas = {}
    removed = [(existing[span], span) for span in sorted(set(existing) - wanted)]
    _remove(conn, removed, documents, deltas)
    added = sorted(wanted - set(existing), key=lambda s: (s.first, views.KINDS.index(s.kind), s.last))
    _add(conn, session_key, added, documents, deltas, doc_ids)
    conn.execute(
        "UPDATE sessions SET n_messages = ?, segment_start = ? WHERE session_key = ?",
        (n, new_segment_start, session_key),
    )
    _count(conn, user_key, deltas)


def _count(conn: sqlite3.Connection, user_key: int, deltas: Deltas) -> None:
    """Move the user's statistics by `deltas`; a kind left with no view has no row (as one never had)."""
    for kind, (docs, length) in sorted(deltas.items()):
        conn.execute(
            "INSERT INTO user_stats (user_key, kind, n_docs, total_length) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_key, kind) DO UPDATE SET n_docs = n_docs + excluded.n_docs,"
            " total_length = total_length + excluded.total_length",
            (user_key, kind, docs, length),
        )
    if any(docs < 0 for docs, _ in deltas.values()):
        conn.execute("DELETE FROM user_stats WHERE user_key = ? AND n_docs = 0 AND total_length = 0", (user_key,))


def _remove(conn: sqlite3.Connection, removed: Sequence[Tuple[int, views.Span]], documents: Documents,
            deltas: Deltas) -> None:
    """Unindex and delete the views `removed` ((doc id, span) each), counting them out of `deltas`."""
    unindexed = []
    for doc_id, span in removed:
        document, length = documents(span)
        unindexed.append((doc_id, document))
        delta = deltas.setdefault(span.kind, [0, 0])
        delta[0] -= 1
        delta[1] -= length
    # One statement run for many rows: in this order, the index and the table end as with a statement per view.
    conn.executemany(fts.delete_sql(), unindexed)
    conn.executemany("DELETE FROM views WHERE doc_id = ?", [(doc_id,) for doc_id, _ in removed])


def _add(conn: sqlite3.Connection, session_key: int, added: Sequence[views.Span], documents: Documents,
         deltas: Deltas, doc_ids: Optional[Iterator[int]] = None) -> None:
    """Insert and index the views `added`, in this order (their doc ids follow it, taken from `doc_ids`
    while it lasts), counting them into `deltas`."""
    indexed = []
    for span in added:
        document, length = documents(span)
        reused = next(doc_ids, None) if doc_ids is not None else None
        doc_id = insert_row(
            conn, "INSERT INTO views (doc_id, session_key, kind, first_seq, last_seq, length)"
            " VALUES (?, ?, ?, ?, ?, ?)", (reused, session_key, span.kind, span.first, span.last, length))
        indexed.append((doc_id, document))
        delta = deltas.setdefault(span.kind, [0, 0])
        delta[0] += 1
        delta[1] += length
    conn.executemany(fts.insert_sql(), indexed)


def rebuild(conn: sqlite3.Connection, settings: ViewSettings, progress: Callable[[int, int], None]) -> None:
    """Re-derive every message's tokens and meaning vector, and every view, from the verbatim messages,
    session by session."""
    conn.execute(fts.delete_all_sql())
    conn.execute("DELETE FROM views")
    conn.execute("DELETE FROM user_stats")
    sessions = conn.execute(
        "SELECT user_key, session_key, n_messages FROM sessions ORDER BY session_key").fetchall()
    total, done = sum(n for _, _, n in sessions), 0
    progress(0, total)
    for user_key, session_key, n in sessions:
        rows = conn.execute("SELECT seq, content, timestamp_ms FROM messages WHERE session_key = ?",
                            (session_key,)).fetchall()
        conn.executemany(
            "UPDATE messages SET speaker = ?, tokens = ?, times = ?, meaning = ? WHERE session_key = ? AND seq = ?",
            [(d.speaker, " ".join(d.tokens), d.times, d.meaning, session_key, seq) for seq, d in
             ((seq, derive(content, ts, settings)) for seq, content, ts in rows)],
        )
        sync_views(conn, settings, user_key, session_key, 0, n, 1)
        done += n
        progress(done, total)


def delete_user(conn: sqlite3.Connection, user_id: str) -> Optional[int]:
    """Remove a user's messages, views and their index entries, idempotency records and statistics,
    then merge the index so that no old index page keeps the user's terms; the number of messages
    removed, None if the user is unknown."""
    user_key = lookup_user_key(conn, user_id)
    forget_floor(conn, user_id)  # nothing of the user is kept (session_rows.py), known now or not
    if user_key is None:
        return None
    removed = 0
    for (session_key,) in conn.execute("SELECT session_key FROM sessions WHERE user_key = ?", (user_key,)).fetchall():
        removed += _delete_session(conn, user_key, session_key, counted=False)  # the statistics go whole below
    conn.execute("DELETE FROM requests WHERE user_key = ?", (user_key,))
    conn.execute("DELETE FROM user_stats WHERE user_key = ?", (user_key,))
    conn.execute("DELETE FROM embedding_marks WHERE user_key = ?", (user_key,))
    conn.execute("DELETE FROM users WHERE user_key = ?", (user_key,))
    # FTS5 records a deletion as a marker beside the old entry; only a merge
    # drops the entry itself. Merging in small steps between other writes
    # corrupted a 1M-message index under SQLite 3.40, so it is one step.
    conn.execute(fts.optimize_sql())
    return removed


def delete_session(conn: sqlite3.Connection, user_id: str, session_id: str) -> Optional[int]:
    """Remove one session of a user: its messages, views and their index entries, the idempotency
    records of its Adds, and its views' share of the user's statistics, which end as if the session
    had never been added. A user left with no session is removed whole (nothing of them is left
    but an empty row, and a user with no memories is an unknown one). The number of messages
    removed, None if the user has no such session.

    The index is not merged here, unlike delete_user(): the session's entries are gone from every
    read at once (FTS5's delete markers), and FTS5 drops them from its pages as its own automatic
    merges reach them, the merging every Add already does. An 'optimize' would rewrite the whole
    index of every user (seconds at a million messages, with every write waiting), and merging in
    small steps is what corrupted an index under SQLite 3.40 (delete_user()).
    """
    user_key = lookup_user_key(conn, user_id)
    session_key = None if user_key is None else listing.session_key(conn, user_key, session_id)
    if user_key is None or session_key is None:
        return None
    removed = _delete_session(conn, user_key, session_key)
    conn.execute("DELETE FROM requests WHERE user_key = ? AND session_key = ?", (user_key, session_key))
    if conn.execute("SELECT 1 FROM sessions WHERE user_key = ? LIMIT 1", (user_key,)).fetchone() is None:
        conn.execute("DELETE FROM requests WHERE user_key = ?", (user_key,))
        conn.execute("DELETE FROM user_stats WHERE user_key = ?", (user_key,))
        conn.execute("DELETE FROM embedding_marks WHERE user_key = ?", (user_key,))
        keep_floor(conn, user_key)  # so that the user's sessions sent again never take a deleted one's ids
        conn.execute("DELETE FROM users WHERE user_key = ?", (user_key,))
    return removed


class DeletedMessage(NamedTuple):
    session_id: str
    position: int  # where it stood in its session


def delete_message(conn: sqlite3.Connection, settings: ViewSettings, user_id: str, tag: str,
                   number: int) -> Optional[DeletedMessage]:
    """Remove one message of a user (the one whose id names position `number` of the session tagged
    `tag`) as completely as delete_session() removes a session; None if the user has no such message.

    The session is then what it would be had the message never been added, views and statistics
    as sync_views() would make them of the messages left (_forget()): the later messages move up
    a position (each keeps its id: `number` keeps what the id names). The deletion is logged for
    the session (log_deletion()), so every Store forgets what it cached of it. A session's only
    message goes with its session (delete_session()).
    """
    user_key = lookup_user_key(conn, user_id)
    session = None if user_key is None else conn.execute(
        "SELECT session_key, session_id, n_messages FROM sessions WHERE tag = ? AND user_key = ?",
        (tag, user_key)).fetchone()
    # Two index lookups: one query with `number = ? OR seq = ?` read every message of the session.
    found = None if session is None else conn.execute(
        "SELECT seq FROM messages WHERE session_key = ? AND number = ?"
        " UNION ALL SELECT seq FROM messages WHERE session_key = ? AND seq = ? AND number IS NULL",
        (session[0], number, session[0], number)).fetchone()
    if user_key is None or session is None or found is None:
        return None
    (session_key, session_id, n), seq = session, found[0]
    if n == 1:
        delete_session(conn, user_id, session_id)
        return DeletedMessage(session_id, seq)
    _forget(conn, settings, user_key, session_key, n, seq)
    log_deletion(conn, user_key, session_key)
    return DeletedMessage(session_id, seq)


def _forget(conn: sqlite3.Connection, settings: ViewSettings, user_key: int, session_key: int, n: int,
            removed: int) -> None:
    """Take message `removed` out of its `n`-message session, and out of the views that held it.

    Only the views that change are unindexed and indexed again (views.plan_removal()): those that
    held the message, and the segments re-cut around it. Every later view holds what it held, so
    its row moves up a position with its messages and its index entry stays; rebuilding every view
    of a 20,000-message session held the write lock for seconds (docs/write_stalls.md). The new
    views take the doc ids of those they replace, in order, so they keep their place among other
    sessions' views (ties are broken by doc id: retrieval/bm25.py)."""
    segment_start = conn.execute("SELECT segment_start FROM sessions WHERE session_key = ?",
                                 (session_key,)).fetchone()[0]
    start = _boundary_before(conn, settings, session_key, removed, segment_start)
    texts: Dict[int, Text] = {}
    plan = _plan_removal(conn, settings, session_key, n, removed, start, segment_start, texts)
    gone, added = _changed_views(conn, settings, session_key, removed, start, plan)
    deltas: Deltas = {}
    _remove(conn, gone, Documents(user_key, texts), deltas)
    conn.execute("DELETE FROM messages WHERE session_key = ? AND seq = ?", (session_key, removed))
    conn.execute("DELETE FROM metadata_index WHERE session_key = ? AND seq = ?", (session_key, removed))
    _close_gap(conn, "messages", session_key, removed, "number = coalesce(number, seq), ")
    _close_gap(conn, "metadata_index", session_key, removed)
    # What is left after `removed` held none of it: it moves up with its messages, as it is.
    conn.execute("UPDATE views SET first_seq = first_seq - 1, last_seq = last_seq - 1"
                 " WHERE session_key = ? AND last_seq > ?", (session_key, removed))
    moved = {seq - (seq > removed): text for seq, text in texts.items() if seq != removed}
    _add(conn, session_key, added, Documents(user_key, moved), deltas, iter(sorted(doc for doc, _ in gone)))
    conn.execute("UPDATE sessions SET n_messages = ?, segment_start = ?, deleted_messages = deleted_messages + 1"
                 " WHERE session_key = ?", (n - 1, plan.segment_start, session_key))
    _count(conn, user_key, deltas)


def _boundary_before(conn: sqlite3.Connection, settings: ViewSettings, session_key: int, removed: int,
                     segment_start: int) -> int:
    """Where a segment of the session starts before message `removed` (1 for the first): the last
    segment's start, or else the nearest stored segment's (a segment alone or as long as a window
    is no view, so some starts are not stored; any start will do, the nearest costs least)."""
    if segment_start < removed:
        return segment_start
    found = conn.execute(  # a segment starting before `removed` ends before removed + segment_max_messages - 1
        "SELECT first_seq FROM views WHERE session_key = ? AND last_seq < ? AND kind = ? AND first_seq < ?"
        " ORDER BY last_seq DESC LIMIT 1",
        (session_key, removed + settings.segment_max_messages - 1, views.SEGMENT, removed)).fetchone()
    return found[0] if found else 1


def _plan_removal(conn: sqlite3.Connection, settings: ViewSettings, session_key: int, n: int, removed: int,
                  start: int, segment_start: int, texts: Dict[int, Text]) -> views.Removal:
    """views.plan_removal() of the session, reading its messages from the first a changed view holds
    as far as the plan needs; `texts` gets the text of every message read (message_text())."""
    first = max(1, min(start, removed - settings.window_size + 1))
    windows_end = removed + settings.window_size - 1  # the last message a window holding `removed` holds
    rows = conn.execute("SELECT seq, timestamp_ms, tokens, speaker FROM messages WHERE session_key = ? AND seq >= ?"
                        " ORDER BY seq", (session_key, first))

    def times() -> Iterator[Tuple[int, Optional[int]]]:
        for seq, timestamp_ms, tokens, speaker in rows:
            texts[seq] = message_text(tokens, speaker)
            if seq >= start:
                yield seq, timestamp_ms

    plan = views.plan_removal(times(), n, removed, start, segment_start, settings.window_size,
                              settings.segment_max_messages, settings.segment_max_gap_s * 1000)
    if max(texts) < windows_end:
        for seq, _, tokens, speaker in rows:
            texts[seq] = message_text(tokens, speaker)
            if seq >= windows_end:
                break
    rows.close()
    return plan


def _changed_views(conn: sqlite3.Connection, settings: ViewSettings, session_key: int, removed: int, start: int,
                   plan: views.Removal) -> Tuple[List[Tuple[int, views.Span]], List[views.Span]]:
    """The views that forgetting message `removed` ends ((doc id, span at the old positions)) and those
    it makes (at the new ones, in the order sync_views() adds views)."""
    longest = max(settings.window_size, settings.segment_max_messages)  # no view holds more messages
    gone = {doc_id: views.Span(kind, first, last) for doc_id, kind, first, last in conn.execute(
        "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ? AND last_seq BETWEEN ? AND ?"
        " AND first_seq <= ?", (session_key, removed, removed + longest - 1, removed))}
    segments = set(plan.segments)
    for doc_id, first, last in conn.execute(
            "SELECT doc_id, first_seq, last_seq FROM views WHERE session_key = ? AND last_seq BETWEEN ? AND ?"
            " AND kind = ? AND first_seq >= ?", (session_key, start, plan.last, views.SEGMENT, start)).fetchall():
        moved = views.Span(views.SEGMENT, first - (first > removed), last - (last > removed))
        if doc_id in gone or moved not in segments:
            gone[doc_id] = views.Span(views.SEGMENT, first, last)
        else:
            segments.discard(moved)  # the same messages: it stays, moved up
    added = sorted([*plan.windows, *segments], key=lambda s: (s.first, views.KINDS.index(s.kind), s.last))
    return sorted(gone.items()), added


def _close_gap(conn: sqlite3.Connection, table: str, session_key: int, removed: int, also: str = "") -> None:
    """Move the rows of `table` at a session's positions after `removed` up one (`also`: more columns to set)."""
    where = " WHERE session_key = ? AND seq > ?"
    try:
        # SQLite checks each row's new position is free as it moves it: rows visited in position order
        # (the scan of the (session_key, seq) index, as every plan so far reads them) each take the
        # place the one before left.
        conn.execute("UPDATE %s SET %sseq = seq - 1%s" % (table, also, where), (session_key, removed))
    except sqlite3.IntegrityError:
        # Visited in another order the statement stops, undone whole: two steps then, through
        # negative positions, so that no two rows ever hold one position.
        conn.execute("UPDATE %s SET %sseq = 1 - seq%s" % (table, also, where), (session_key, removed))
        conn.execute("UPDATE %s SET seq = -seq WHERE session_key = ? AND seq < 0" % table, (session_key,))


def _drop_views(conn: sqlite3.Connection, user_key: int, session_key: int, counted: bool = True) -> List[int]:
    """Unindex and delete every view of a session, counting them out of the user's statistics (unless
    not `counted`: the caller removes them whole); their doc ids."""
    documents = Documents(user_key, {seq: message_text(toks, speaker) for seq, toks, speaker in conn.execute(
        "SELECT seq, tokens, speaker FROM messages WHERE session_key = ?", (session_key,))})
    removed = [(doc_id, views.Span(kind, first, last)) for doc_id, kind, first, last in conn.execute(
        "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ? ORDER BY doc_id",
        (session_key,)).fetchall()]
    deltas: Deltas = {}
    _remove(conn, removed, documents, deltas)
    if counted:
        _count(conn, user_key, deltas)
    return [doc_id for doc_id, _ in removed]


def _delete_session(conn: sqlite3.Connection, user_key: int, session_key: int, counted: bool = True) -> int:
    """Unindex and delete a session's views (_drop_views(), out of the user's statistics unless not
    `counted`), then delete its messages and itself, and log it as deleted (log_deletion()); its
    message count. A kind left with no view has no row of statistics, as for a user who never had one."""
    _drop_views(conn, user_key, session_key, counted)
    retire(conn, session_key)  # its tag is never given again: the session sent again gets the next attempt
    conn.execute("DELETE FROM metadata_index WHERE session_key = ?", (session_key,))
    removed = conn.execute("DELETE FROM messages WHERE session_key = ?", (session_key,)).rowcount
    conn.execute("DELETE FROM sessions WHERE session_key = ?", (session_key,))
    log_deletion(conn, user_key, session_key)
    return removed


DELETION_LOG_ROWS = 10_000  # the deletions a Store may fall behind by and still forget only what they touched
WHOLE_USER = 0  # the session key of a log entry naming a user deleted whole (no session has key 0)


def log_deletion(conn: sqlite3.Connection, user_key: int, session_key: int) -> None:
    """Append a deleted session to the deletions log (schema.py): what tells every Store on the file,
    at its next transaction, which cached entries to forget. The deletion's transaction ends the log
    with seal_deletions()."""
    seq = read_marks(conn)[1] + 1
    conn.execute("INSERT INTO deletions (seq, user_key, session_key) VALUES (?, ?, ?)", (seq, user_key, session_key))
    write_deletions_mark(conn, seq)


def seal_deletions(conn: sqlite3.Connection, seen: int) -> None:
    """End a deletion in the log, which held `seen` entries before it: the sessions it logged of a user
    it removed become one entry naming the user (WHOLE_USER), and the last DELETION_LOG_ROWS entries are kept.

    One entry however many sessions the user had, so the log keeps deletions, not sessions: a Store
    that last read the log before a user of more sessions than it keeps went (and a deletion or two
    after) still finds what it missed, and forgets only those users (held.py); trimming by sessions,
    inside the deletion's own transaction, made every Store on the file forget everything."""
    upto = read_marks(conn)[1]
    users = {user_key for (user_key,) in conn.execute("SELECT user_key FROM deletions WHERE seq > ?", (seen,))}
    user = users.pop() if len(users) == 1 else None
    if user is not None and conn.execute("SELECT 1 FROM users WHERE user_key = ?", (user,)).fetchone() is None:
        conn.execute("DELETE FROM deletions WHERE seq > ?", (seen,))
        upto = seen + 1
        conn.execute("INSERT INTO deletions (seq, user_key, session_key) VALUES (?, ?, ?)", (upto, user, WHOLE_USER))
        write_deletions_mark(conn, upto)
    conn.execute("DELETE FROM deletions WHERE seq <= ?", (upto - DELETION_LOG_ROWS,))


def insert_row(conn: sqlite3.Connection, sql: str, parameters: Sequence[object]) -> int:
    """Run one INSERT; the new row's key."""
    key = conn.execute(sql, parameters).lastrowid
    if key is None:  # sqlite3 sets it after every INSERT that made a row
        raise RuntimeError("INSERT made no row: " + sql)
    return key
