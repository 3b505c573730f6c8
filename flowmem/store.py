"""The SQLite file: schema and migrations, the write path of Add, reads for Search.

Tables (schema version 1):

- `users`: one row per user_id, with an internal `user_key` and the user's own index
  statistics (document count, total tokens) that BM25 uses.
- `requests`: one row per stored Add, keyed by (user, request_id): the idempotency record.
- `sessions`: one row per (user, session_id): message count, where the last segment
  starts, and the `tag` that makes message and view ids readable and stable.
- `messages`: every message verbatim (role, content, timestamp, the Add's request_id,
  its 1-based position in the session) and its tokens, frozen at write time. Never
  updated.
- `views`: each retrieval view as a range of one session's messages; its `doc_id` is
  its rowid in the FTS5 index. A view's text is never stored twice: its content is
  its messages' content, its indexed terms its messages' tokens.

All writes go through one connection under a lock, in `BEGIN IMMEDIATE`
transactions, so an Add is stored whole or not at all and overlapping retries of
one request see each other. Reads come from a pool of connections, each search in
one read transaction (a consistent snapshot; WAL lets it run beside writes).
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import queue
import sqlite3
import threading
import time
from typing import Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from . import fts, views
from .errors import StoreError
from .tokenize import tokenize

log = logging.getLogger("flowmem.store")

# Each entry upgrades the schema from version i to i+1; never edit a shipped entry.
MIGRATIONS: List[List[str]] = [
    [
        """CREATE TABLE users (
            user_key INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL UNIQUE,
            n_docs INTEGER NOT NULL DEFAULT 0,
            total_length INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE requests (
            user_key INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            session_key INTEGER NOT NULL,
            n_messages INTEGER NOT NULL,
            received_ms INTEGER NOT NULL,
            PRIMARY KEY (user_key, request_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE sessions (
            session_key INTEGER PRIMARY KEY AUTOINCREMENT,
            user_key INTEGER NOT NULL,
            session_id TEXT NOT NULL,
            tag TEXT NOT NULL,
            n_messages INTEGER NOT NULL DEFAULT 0,
            segment_start INTEGER NOT NULL DEFAULT 1,
            UNIQUE (user_key, session_id)
        )""",
        """CREATE TABLE messages (
            session_key INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            timestamp_ms INTEGER,
            request_id TEXT NOT NULL,
            tokens TEXT NOT NULL,
            PRIMARY KEY (session_key, seq)
        )""",
        """CREATE TABLE views (
            doc_id INTEGER PRIMARY KEY,
            session_key INTEGER NOT NULL,
            kind TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            length INTEGER NOT NULL
        )""",
        "CREATE INDEX views_by_session ON views (session_key, last_seq)",
    ]
    + fts.CREATE_SQL,
]
SCHEMA_VERSION = len(MIGRATIONS)


def check_fts5() -> None:
    """Raise StoreError unless this Python's SQLite was built with FTS5."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.OperationalError:
        raise StoreError(
            "this Python's SQLite %s has no FTS5; flowmem needs a Python whose sqlite3 "
            "module is built with FTS5 (the python.org and most distribution builds are)" % sqlite3.sqlite_version
        )
    finally:
        conn.close()


def session_tag(session_id: str) -> str:
    """A short stable name for a session, used in message and view ids."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:16]


def message_id(tag: str, seq: int) -> str:
    return "m-%s-%d" % (tag, seq)


def view_id(kind: str, tag: str, first: int, last: int) -> str:
    """The public id of a view: a message view's id is its message's id."""
    if kind == views.MESSAGE:
        return message_id(tag, first)
    return "%s-%s-%d-%d" % (kind[0], tag, first, last)


class NewMessage(NamedTuple):
    role: str
    content: str
    timestamp_ms: Optional[int]


class ViewRow(NamedTuple):
    doc_id: int
    session_key: int
    session_id: str
    tag: str
    kind: str
    first: int
    last: int
    length: int

    @property
    def id(self) -> str:
        return view_id(self.kind, self.tag, self.first, self.last)


class MessageRow(NamedTuple):
    seq: int
    role: str
    content: str
    timestamp_ms: Optional[int]


class ViewSettings(NamedTuple):
    window_size: int
    segment_max_messages: int
    segment_max_gap_ms: int


def _connect(path: str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA synchronous = %s" % synchronous.upper())
    # Freed pages are zeroed, so a deleted user leaves nothing readable in the file.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


class Reader:
    """Queries of one read transaction; obtained from Store.reading()."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def user(self, user_id: str) -> Optional[Tuple[int, int, int]]:
        """(user_key, n_docs, total_length) of a user, or None if unknown."""
        return self.conn.execute(
            "SELECT user_key, n_docs, total_length FROM users WHERE user_id = ?", (user_id,)
        ).fetchone()

    def postings(self, user_key: int, tokens: Sequence[str]) -> List[Tuple[str, int]]:
        """(index term, doc_id) for every occurrence of `tokens` in the user's views."""
        if not tokens:
            return []
        sql, params = fts.postings_sql(user_key, tokens)
        return self.conn.execute(sql, params).fetchall()

    def views(self, doc_ids: Sequence[int]) -> Dict[int, ViewRow]:
        """The views with these doc_ids, by doc_id."""
        out: Dict[int, ViewRow] = {}
        ids = sorted(set(doc_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.conn.execute(
                "SELECT v.doc_id, v.session_key, s.session_id, s.tag, v.kind, v.first_seq, v.last_seq, v.length"
                " FROM views v JOIN sessions s ON s.session_key = v.session_key"
                " WHERE v.doc_id IN (%s)" % ",".join("?" * len(chunk)),
                chunk,
            )
            for row in rows:
                out[row[0]] = ViewRow(*row)
        return out

    def messages(self, session_key: int, first: int, last: int) -> List[MessageRow]:
        """Messages `first`..`last` of a session, in order."""
        return [
            MessageRow(*r)
            for r in self.conn.execute(
                "SELECT seq, role, content, timestamp_ms FROM messages"
                " WHERE session_key = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                (session_key, first, last),
            )
        ]


class _Checkpointer(threading.Thread):
    """Copies the WAL back into the database file off the request path.

    SQLite's automatic checkpoint runs inside whichever commit crosses the threshold,
    so one Add in a few dozen would pay for writing pages scattered over the whole
    file: a cost that grows with everyone's data. Here a thread does it instead, after
    writes, with PASSIVE checkpoints that never block readers or the writer.
    """

    def __init__(self, path: str, synchronous: str, interval_s: float = 0.5):
        super().__init__(name="flowmem-checkpoint", daemon=True)
        self._conn = _connect(path, synchronous)
        self._interval_s = interval_s
        self.wrote = threading.Event()
        self._stop_requested = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop_requested.wait(self._interval_s):
                if self.wrote.is_set():
                    self.wrote.clear()
                    try:
                        self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    except sqlite3.Error as e:
                        # The next write retries; meanwhile the WAL just grows a little.
                        log.warning("background checkpoint failed: %s", e)
        finally:
            self._conn.close()

    def stop(self) -> None:
        self._stop_requested.set()
        self.join()


class Store:
    """One flowmem database file. Thread-safe; call close() when done."""

    def __init__(self, path: str, synchronous: str = "FULL", pool_size: int = 16):
        """Open (creating or migrating) the database at `path`.

        `synchronous` is SQLite's durability setting (FULL: an acknowledged Add
        survives power loss); `pool_size` is how many idle read connections are kept.
        """
        check_fts5()
        self.path = path
        self._synchronous = synchronous
        self._pool_size = pool_size
        self._idle: "queue.LifoQueue[sqlite3.Connection]" = queue.LifoQueue()
        self._write_lock = threading.Lock()
        self._closed = False
        try:
            self._writer = _connect(path, synchronous)
            mode = self._writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError("cannot open database %s: %s" % (path, e))
        try:
            if mode.lower() != "wal":
                raise StoreError("cannot put database %s in WAL mode (got %s)" % (path, mode))
            self._migrate()
        except BaseException:
            self._writer.close()
            raise
        self._writer.execute("PRAGMA wal_autocheckpoint = 0")
        self._checkpointer = _Checkpointer(path, synchronous)
        self._checkpointer.start()

    # -- lifecycle -------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._write_lock:
            conn = self._writer
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    "database %s has schema version %d; this flowmem knows up to %d (upgrade flowmem)"
                    % (self.path, version, SCHEMA_VERSION)
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for statement in MIGRATIONS[target - 1]:
                        conn.execute(statement)
                    conn.execute("PRAGMA user_version = %d" % target)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise

    def schema_version(self) -> int:
        with self._write_lock:
            return self._writer.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        """Close every connection; the last close checkpoints the WAL into the file."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            self._checkpointer.stop()
            while True:
                try:
                    self._idle.get_nowait().close()
                except queue.Empty:
                    break
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._writer.close()

    # -- reads -----------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[Reader]:
        """A Reader over one consistent snapshot of the database."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = _connect(self.path, self._synchronous)
        conn.execute("BEGIN")
        try:
            yield Reader(conn)
        finally:
            conn.execute("COMMIT")
            if self._closed or self._idle.qsize() >= self._pool_size:
                conn.close()
            else:
                self._idle.put(conn)

    # -- writes ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            if self._closed:
                raise StoreError("the store is closed")
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._checkpointer.wrote.set()

    def add(
        self,
        user_id: str,
        session_id: str,
        request_id: str,
        messages: Sequence[NewMessage],
        settings: ViewSettings,
    ) -> bool:
        """Store one Add atomically. Returns False (writing nothing) if the request was stored before.

        Messages are appended to the session in the given order; the session's views
        are brought up to date in the same transaction, so the messages are
        searchable the moment this returns.
        """
        token_lists = [tokenize(m.content) for m in messages]
        with self._writing() as conn:
            user_key = self._user_key(conn, user_id)
            seen = conn.execute(
                "SELECT 1 FROM requests WHERE user_key = ? AND request_id = ?", (user_key, request_id)
            ).fetchone()
            if seen:
                return False
            session_key, n_before, segment_start = self._session(conn, user_key, session_id)
            n = n_before + len(messages)
            conn.executemany(
                "INSERT INTO messages (session_key, seq, role, content, timestamp_ms, request_id, tokens)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_key, n_before + i + 1, m.role, m.content, m.timestamp_ms, request_id, " ".join(toks))
                    for i, (m, toks) in enumerate(zip(messages, token_lists))
                ],
            )
            # Only views ending at or after the last segment's start can change (views.py).
            since = max(1, segment_start - settings.window_size + 1)
            tail = conn.execute(
                "SELECT seq, timestamp_ms, tokens FROM messages WHERE session_key = ? AND seq >= ? ORDER BY seq",
                (session_key, since),
            ).fetchall()
            times = {seq: ts for seq, ts, _ in tail}
            tokens = {seq: toks.split() for seq, _, toks in tail}
            planned, new_segment_start = views.plan_tail(
                times, n, segment_start, settings.window_size, settings.segment_max_messages,
                settings.segment_max_gap_ms,
            )
            wanted = set(planned) | {views.Span(views.MESSAGE, s, s) for s in range(n_before + 1, n + 1)}
            existing = {}
            for doc_id, kind, first, last in conn.execute(
                "SELECT doc_id, kind, first_seq, last_seq FROM views"
                " WHERE session_key = ? AND last_seq >= ? AND kind != ?",
                (session_key, segment_start, views.MESSAGE),
            ):
                existing[views.Span(kind, first, last)] = doc_id
            docs_delta = length_delta = 0
            for span in sorted(set(existing) - wanted):
                terms = self._span_tokens(tokens, span)
                conn.execute(fts.delete_sql(), (existing[span], fts.document(user_key, terms)))
                conn.execute("DELETE FROM views WHERE doc_id = ?", (existing[span],))
                docs_delta -= 1
                length_delta -= len(terms)
            for span in sorted(wanted - set(existing), key=lambda s: (s.first, views.KINDS.index(s.kind), s.last)):
                terms = self._span_tokens(tokens, span)
                doc_id = conn.execute(
                    "INSERT INTO views (session_key, kind, first_seq, last_seq, length) VALUES (?, ?, ?, ?, ?)",
                    (session_key, span.kind, span.first, span.last, len(terms)),
                ).lastrowid
                conn.execute(fts.insert_sql(), (doc_id, fts.document(user_key, terms)))
                docs_delta += 1
                length_delta += len(terms)
            conn.execute(
                "UPDATE sessions SET n_messages = ?, segment_start = ? WHERE session_key = ?",
                (n, new_segment_start, session_key),
            )
            conn.execute(
                "UPDATE users SET n_docs = n_docs + ?, total_length = total_length + ? WHERE user_key = ?",
                (docs_delta, length_delta, user_key),
            )
            conn.execute(
                "INSERT INTO requests (user_key, request_id, session_key, n_messages, received_ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (user_key, request_id, session_key, len(messages), int(time.time() * 1000)),
            )
            return True

    @staticmethod
    def _span_tokens(tokens: Mapping[int, List[str]], span: views.Span) -> List[str]:
        return [t for seq in range(span.first, span.last + 1) for t in tokens[seq]]

    @staticmethod
    def _user_key(conn: sqlite3.Connection, user_id: str) -> int:
        row = conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()
        if row:
            return row[0]
        return conn.execute("INSERT INTO users (user_id) VALUES (?)", (user_id,)).lastrowid

    @staticmethod
    def _session(conn: sqlite3.Connection, user_key: int, session_id: str) -> Tuple[int, int, int]:
        row = conn.execute(
            "SELECT session_key, n_messages, segment_start FROM sessions WHERE user_key = ? AND session_id = ?",
            (user_key, session_id),
        ).fetchone()
        if row:
            return row
        key = conn.execute(
            "INSERT INTO sessions (user_key, session_id, tag) VALUES (?, ?, ?)",
            (user_key, session_id, session_tag(session_id)),
        ).lastrowid
        return key, 0, 1

    def delete_user(self, user_id: str) -> bool:
        """Remove every trace of a user: messages, views, index entries, idempotency records.

        Returns False if the user was unknown. The FTS5 index is merged in the same
        transaction so that no old index page keeps the user's terms, and the WAL is
        checkpointed; with secure_delete on, freed pages are zeroed. Other writes wait
        meanwhile: about 7 s on a database of 1M messages (2 cores).
        """
        with self._writing() as conn:
            row = conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()
            if not row:
                return False
            user_key = row[0]
            sessions = [r[0] for r in conn.execute("SELECT session_key FROM sessions WHERE user_key = ?", (user_key,))]
            for session_key in sessions:
                tokens = {
                    seq: toks.split()
                    for seq, toks in conn.execute("SELECT seq, tokens FROM messages WHERE session_key = ?", (session_key,))
                }
                for doc_id, kind, first, last in conn.execute(
                    "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ?", (session_key,)
                ).fetchall():
                    terms = self._span_tokens(tokens, views.Span(kind, first, last))
                    conn.execute(fts.delete_sql(), (doc_id, fts.document(user_key, terms)))
                conn.execute("DELETE FROM views WHERE session_key = ?", (session_key,))
                conn.execute("DELETE FROM messages WHERE session_key = ?", (session_key,))
            conn.execute("DELETE FROM sessions WHERE user_key = ?", (user_key,))
            conn.execute("DELETE FROM requests WHERE user_key = ?", (user_key,))
            conn.execute("DELETE FROM users WHERE user_key = ?", (user_key,))
            # FTS5 records a deletion as a marker beside the old entry; only a merge
            # drops the entry itself. Merging in small steps between other writes
            # corrupted a 1M-message index under SQLite 3.40, so it is one step.
            conn.execute(fts.optimize_sql())
        with self._write_lock:
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True

    # -- statistics ------------------------------------------------------------------

    def stats(self, user_id: Optional[str] = None) -> Dict[str, object]:
        """Counts for the whole database, or for one user when `user_id` is given."""
        with self.reading() as r:
            c = r.conn
            if user_id is None:
                out: Dict[str, object] = {
                    "users": c.execute("SELECT count(*) FROM users").fetchone()[0],
                    "sessions": c.execute("SELECT count(*) FROM sessions").fetchone()[0],
                    "messages": c.execute("SELECT count(*) FROM messages").fetchone()[0],
                    "views": c.execute("SELECT count(*) FROM views").fetchone()[0],
                    "schema_version": c.execute("PRAGMA user_version").fetchone()[0],
                }
            else:
                row = r.user(user_id)
                if row is None:
                    return {"user_id": user_id, "exists": False}
                user_key, n_docs, total_length = row
                sessions, messages = c.execute(
                    "SELECT count(*), coalesce(sum(n_messages), 0) FROM sessions WHERE user_key = ?", (user_key,)
                ).fetchone()
                out = {
                    "user_id": user_id,
                    "exists": True,
                    "sessions": sessions,
                    "messages": messages,
                    "views": n_docs,
                    "indexed_tokens": total_length,
                    "requests": c.execute("SELECT count(*) FROM requests WHERE user_key = ?", (user_key,)).fetchone()[0],
                }
        if user_id is None:
            out["file_bytes"] = sum(
                os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p)
            )
        return out

    def session_views(self, user_id: str, session_id: str) -> List[views.Span]:
        """The views a session has now, in a stable order (for inspection and tests)."""
        with self.reading() as r:
            rows = r.conn.execute(
                "SELECT v.kind, v.first_seq, v.last_seq FROM views v"
                " JOIN sessions s ON s.session_key = v.session_key JOIN users u ON u.user_key = s.user_key"
                " WHERE u.user_id = ? AND s.session_id = ?",
                (user_id, session_id),
            ).fetchall()
        return sorted((views.Span(*row) for row in rows), key=lambda s: (views.KINDS.index(s.kind), s.first))

    def index_terms(self, user_key: int) -> List[str]:
        """Every FTS5 index term stored under a user key (none once the user is deleted)."""
        with self.reading() as r:
            sql, params = fts.user_terms_sql(user_key)
            return [row[0] for row in r.conn.execute(sql, params)]
