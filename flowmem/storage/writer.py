"""The write path: a session's views and their index entries, rebuilds, deletions (an Add's rows: appending.py).

Every function here runs inside the Store's write transaction (Store._writing()),
on the writer connection: what one call writes commits whole or not at all. A
session's views are ranges of its messages (views.py); each is one FTS5 document
whose terms are its messages' tokens (fts.py), and the user's statistics per view
kind (`user_stats`) move with every view written or removed. A view's document is
joined from its messages' terms, each made once per call and kind (_Documents), and
sync_views() hands SQLite the index entries it adds, and those it removes, in one
executemany each.
"""
from __future__ import annotations

import sqlite3
from typing import Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..text import timeexpr
from ..text.features import derive
from . import fts, listing, metadata_index, views
from .rows import lookup_user_key
from .session_rows import retire
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
    documents = _Documents(user_key, {seq: _text(toks, speaker) for seq, _, toks, speaker in tail})
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


def _remove(conn: sqlite3.Connection, removed: Sequence[Tuple[int, views.Span]], documents: _Documents,
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


def _add(conn: sqlite3.Connection, session_key: int, added: Sequence[views.Span], documents: _Documents,
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
    if user_key is None:
        return None
    removed = 0
    for (session_key,) in conn.execute("SELECT session_key FROM sessions WHERE user_key = ?", (user_key,)).fetchall():
        removed += _delete_session(conn, user_key, session_key, counted=False)  # the statistics go whole below
    conn.execute("DELETE FROM requests WHERE user_key = ?", (user_key,))
    conn.execute("DELETE FROM user_stats WHERE user_key = ?", (user_key,))
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
        conn.execute("DELETE FROM users WHERE user_key = ?", (user_key,))
    return removed


class DeletedMessage(NamedTuple):
    session_id: str
    position: int  # where it stood in its session


def delete_message(conn: sqlite3.Connection, settings: ViewSettings, user_id: str, tag: str,
                   number: int) -> Optional[DeletedMessage]:
    """Remove one message of a user (the one whose id names position `number` of the session tagged
    `tag`) as completely as delete_session() removes a session; None if the user has no such message.

    The session is then what it would be had the message never been added: the later messages
    move up a position (each keeps its id: `number` keeps what the id names), the session's views
    are made again from the messages left (sync_views(), as for a session added whole) and the
    user's statistics move with them. The rebuilt views take the session's old doc ids, in
    order, so they keep their place among other sessions' views (ties are broken by doc id:
    retrieval/bm25.py). The deletion is logged for the session (log_deletion()), so every Store
    forgets what it cached of it. A session's only message goes with its session (delete_session()).
    """
    user_key = lookup_user_key(conn, user_id)
    found = None if user_key is None else conn.execute(
        "SELECT s.session_key, s.session_id, s.n_messages, m.seq FROM sessions s CROSS JOIN messages m"
        " ON m.session_key = s.session_key WHERE s.tag = ? AND s.user_key = ?"
        " AND (m.number = ? OR (m.number IS NULL AND m.seq = ?))", (tag, user_key, number, number)).fetchone()
    if user_key is None or found is None:
        return None
    session_key, session_id, n, seq = found
    if n == 1:
        delete_session(conn, user_id, session_id)
        return DeletedMessage(session_id, seq)
    old_ids = _drop_views(conn, user_key, session_key)
    conn.execute("DELETE FROM messages WHERE session_key = ? AND seq = ?", (session_key, seq))
    # Two steps, through negative positions: no moment where two messages hold one position.
    conn.execute("UPDATE messages SET number = coalesce(number, seq), seq = 1 - seq WHERE session_key = ? AND seq > ?",
                 (session_key, seq))
    conn.execute("UPDATE messages SET seq = -seq WHERE session_key = ? AND seq < 0", (session_key,))
    conn.execute("UPDATE sessions SET deleted_messages = deleted_messages + 1 WHERE session_key = ?", (session_key,))
    metadata_index.reindex_session(conn, user_key, session_key)
    sync_views(conn, settings, user_key, session_key, 0, n - 1, 1, iter(old_ids))
    log_deletion(conn, user_key, session_key)
    return DeletedMessage(session_id, seq)


def _drop_views(conn: sqlite3.Connection, user_key: int, session_key: int, counted: bool = True) -> List[int]:
    """Unindex and delete every view of a session, counting them out of the user's statistics (unless
    not `counted`: the caller removes them whole); their doc ids."""
    documents = _Documents(user_key, {seq: _text(toks, speaker) for seq, toks, speaker in conn.execute(
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


Text = Tuple[str, str, int]  # a message's tokens and its speaker's, space-separated, and its words (_text())


def _text(tokens: str, speaker: str) -> Text:
    """A stored message's tokens and speaker tokens, one space apart, and how many of its tokens
    are words, not date tokens: counted once per message, not once per view holding it."""
    split = tokens.split()
    return " ".join(split), " ".join(speaker.split()), len(split) - timeexpr.count_date_tokens(tokens)


class _Documents:
    """Views' indexed documents and their lengths for BM25, made from their messages' texts.

    The length counts the words of the text only: a message's speaker and its date
    tokens are indexed but not counted, so that a dated message does not look
    longer, and so less relevant per word, than an undated one. (Counting the date
    tokens cost LoCoMo multi-hop questions 0.022 Hit@10; docs/results.md, Time-aware memory.)

    A document is the text fts.document() makes of the view's tokens: each token's index
    term (its kind's prefix, then the token), one space apart. Here it is made from each
    message's stored tokens, already one space apart, by one str.replace that puts the
    prefix after every space, once per message and kind (a window's or segment's is its
    messages' joined): a message sits in a message view, window_size windows and a
    segment or two, and prefixing its every token in Python anew for each view took
    about a tenth of an Add's time.
    """

    def __init__(self, user_key: int, texts: Mapping[int, Text]) -> None:
        self._texts = texts
        self._prefixes = {kind: fts.kind_prefix(user_key, kind) for kind in (*views.KINDS, fts.SPEAKER)}
        self._terms: Dict[Tuple[str, int], str] = {}

    def __call__(self, span: views.Span) -> Tuple[str, int]:
        """The document of the view `span` and its length."""
        if span.kind == views.MESSAGE:  # its speaker is indexed with it, as terms of their own kind
            tokens, speaker, words = self._texts[span.first]
            parts = [_terms(self._prefixes[views.MESSAGE], tokens), _terms(self._prefixes[fts.SPEAKER], speaker)]
            return " ".join(filter(None, parts)), words
        seqs = range(span.first, span.last + 1)
        parts = [self._message(span.kind, seq) for seq in seqs]
        return " ".join(filter(None, parts)), sum(self._texts[seq][2] for seq in seqs)

    def _message(self, kind: str, seq: int) -> str:
        """Message `seq`'s part of a window's or segment's document ("" for a message without tokens)."""
        terms = self._terms.get((kind, seq))
        if terms is None:
            terms = self._terms[kind, seq] = _terms(self._prefixes[kind], self._texts[seq][0])
        return terms


def _terms(prefix: str, tokens: str) -> str:
    """The index terms of `tokens` (one space apart) with `prefix`, one space apart: fts.document()'s text."""
    return prefix + tokens.replace(" ", " " + prefix) if tokens else ""


def insert_row(conn: sqlite3.Connection, sql: str, parameters: Sequence[object]) -> int:
    """Run one INSERT; the new row's key."""
    key = conn.execute(sql, parameters).lastrowid
    if key is None:  # sqlite3 sets it after every INSERT that made a row
        raise RuntimeError("INSERT made no row: " + sql)
    return key
