"""The SQLite file: schema and migrations, the write path of Add, reads for Search.

Tables (schema version 1):

- `users`: one row per user_id, with an internal `user_key`; `user_stats` holds the
  user's own index statistics per view kind (document count, total tokens) for BM25.
- `meta`: the index version and view settings the index was built with; when either
  changes, the index is rebuilt from the stored messages on open.
- `requests`: one row per stored Add, keyed by (user, request_id): the idempotency record.
- `sessions`: one row per (user, session_id): message count, where the last segment
  starts, and the `tag` that makes message and view ids readable and stable.
- `messages`: every message verbatim (role, content, timestamp, the Add's request_id,
  its 1-based position in the session), with its speaker label and tokens as derived
  at write time. The verbatim columns are never updated.
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
import datetime
import hashlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from typing import Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from . import fts, timeexpr, views
from .errors import StoreError
from .session_cache import SessionCache, SessionData
from .tokenize import split_speaker, tokenize

log = logging.getLogger("flowmem.store")

# Each entry upgrades the schema from version i to i+1; never edit a shipped entry.
MIGRATIONS: List[List[str]] = [
    [
        """CREATE TABLE users (
            user_key INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL UNIQUE
        )""",
        """CREATE TABLE user_stats (
            user_key INTEGER NOT NULL,
            kind TEXT NOT NULL,
            n_docs INTEGER NOT NULL,
            total_length INTEGER NOT NULL,
            PRIMARY KEY (user_key, kind)
        ) WITHOUT ROWID""",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
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
            speaker TEXT NOT NULL,
            tokens TEXT NOT NULL,
            times TEXT NOT NULL,
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
    """Raise StoreError unless this Python's SQLite is 3.24+ (upserts) and built with FTS5."""
    if sqlite3.sqlite_version_info < (3, 24, 0):
        raise StoreError("flowmem needs SQLite 3.24 or newer; this Python has %s" % sqlite3.sqlite_version)
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
    session_messages: int  # the session's message count when read: its version (session_cache.py)

    @property
    def id(self) -> str:
        return view_id(self.kind, self.tag, self.first, self.last)


class MessageRow(NamedTuple):
    seq: int
    role: str
    content: str
    timestamp_ms: Optional[int]
    times: str  # JSON: the dates the text mentions or implies (Derived.times)

    def resolutions(self) -> List[timeexpr.Resolution]:
        return [timeexpr.Resolution(e, datetime.date.fromisoformat(a), datetime.date.fromisoformat(b), r, 0)
                for e, a, b, r in json.loads(self.times or "[]")]


class ViewSettings(NamedTuple):
    """What the index holds: view sizes, and how message text becomes tokens."""

    window_size: int = 3
    segment_max_messages: int = 8
    segment_max_gap_ms: int = 1_800_000
    stem: bool = True  # index Porter stems, not surface words
    split_speakers: bool = True  # index a leading "Name: " label as the speaker, not as text
    resolve_times: bool = True  # resolve and index the dates messages mean (timeexpr.py)


# Bump when tokenization or what a view indexes changes: stored indexes are then rebuilt.
INDEX_VERSION = 6


class Derived(NamedTuple):
    speaker: str  # the speaker label's tokens, space-separated
    tokens: List[str]  # the text's tokens, then date tokens
    times: str  # JSON list of [expression, first day, last day, relative?]


def derive(content: str, timestamp_ms: Optional[int], settings: "ViewSettings") -> Derived:
    """What is indexed of a message: its speaker, its text's tokens, and the dates it means.

    With `resolve_times`, dates written in the text and relative ones ("yesterday")
    resolved against the message's own day are kept (timeexpr.py), and they and the
    message's own day are indexed as date tokens, so a question naming a day, month
    or year meets the messages of that time.
    """
    speaker, text = split_speaker(content) if settings.split_speakers else ("", content)
    tokens = tokenize(text, settings.stem)
    times: List[timeexpr.Resolution] = []
    if settings.resolve_times:
        day = timeexpr.day_of(timestamp_ms)
        times = timeexpr.resolve(text, day)
        if day is not None:
            tokens += timeexpr.tokens(day, day)
        for r in times:
            tokens += timeexpr.tokens(r.start, r.end)
    encoded = json.dumps([[r.expression, r.start.isoformat(), r.end.isoformat(), r.relative] for r in times],
                         ensure_ascii=False) if times else ""
    return Derived(" ".join(tokenize(speaker, settings.stem)), tokens, encoded)


def _connect(path: str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA synchronous = %s" % synchronous.upper())
    # Freed pages are zeroed, so a deleted user leaves nothing readable in the file.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


class Reader:
    """Queries of one read transaction; obtained from Store.reading()."""

    def __init__(self, conn: sqlite3.Connection, cache: Optional[SessionCache] = None):
        self.conn = conn
        self.cache = cache or SessionCache(0)
        self._sessions: Dict[int, SessionData] = {}

    def session(self, view: "ViewRow") -> SessionData:
        """Every message's features and every window and segment of the session `view` belongs to."""
        data = self._sessions.get(view.session_key)
        if data is None:
            data = self._sessions[view.session_key] = self.cache.get(
                view.session_key, view.session_messages, lambda: self._load_session(view))
        return data

    def _load_session(self, view: "ViewRow") -> SessionData:
        messages, rows = {}, {}
        for seq, role, content, speaker, ts, tokens, times in self.conn.execute(
                "SELECT seq, role, content, speaker, timestamp_ms, tokens, times FROM messages WHERE session_key = ?",
                (view.session_key,)):
            messages[seq] = (tuple(speaker.split()), ts, tuple(tokens.split()), times != "")
            rows[seq] = MessageRow(seq, role, content, ts, times)
        doc_freqs: Dict[str, int] = {}
        for _, _, tokens, _ in messages.values():
            for t in set(tokens):
                doc_freqs[t] = doc_freqs.get(t, 0) + 1
        views = tuple(self.context_views(view.session_key, 1, view.session_messages))
        return SessionData(len(messages), messages, views, doc_freqs, rows)

    def sessions_read(self) -> List[SessionData]:
        """The sessions this reader has read so far, in the order first read."""
        return list(self._sessions.values())

    def user_key(self, user_id: str) -> Optional[int]:
        """The internal key of a user, or None if unknown."""
        row = self.conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()
        return row[0] if row else None

    def stats(self, user_key: int) -> Dict[str, Tuple[int, int]]:
        """The user's (document count, total tokens) per view kind."""
        return {kind: (n, total) for kind, n, total in self.conn.execute(
            "SELECT kind, n_docs, total_length FROM user_stats WHERE user_key = ?", (user_key,))}

    def postings(self, user_key: int, kind: str, tokens: Sequence[str]) -> List[Tuple[str, int]]:
        """(token, doc_id) for every occurrence of `tokens` in the user's views of `kind`."""
        if not tokens:
            return []
        sql, params = fts.postings_sql(user_key, kind, tokens)
        cut = len(fts.kind_prefix(user_key, kind))
        return [(term[cut:], doc) for term, doc in self.conn.execute(sql, params)]

    def doc_freqs(self, user_key: int, tokens: Sequence[str],
                  kinds: Sequence[str] = ("message", "window", "segment")) -> Dict[Tuple[str, str], int]:
        """{(kind, token): number of the user's views of that kind holding the token}."""
        if not tokens:
            return {}
        sql, params = fts.doc_freq_sql(user_key, tokens, kinds)
        kinds = {fts.kind_prefix(user_key, kind): kind for kind in fts.KIND_LETTERS}
        out = {}
        for term, n in self.conn.execute(sql, params):
            prefix = term[: term.index("_", term.index("_") + 1) + 1]
            out[(kinds[prefix], term[len(prefix):])] = n
        return out

    def views(self, doc_ids: Sequence[int]) -> Dict[int, ViewRow]:
        """The views with these doc_ids, by doc_id."""
        out: Dict[int, ViewRow] = {}
        ids = sorted(set(doc_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.conn.execute(
                "SELECT v.doc_id, v.session_key, s.session_id, s.tag, v.kind, v.first_seq, v.last_seq, v.length,"
                " s.n_messages"
                " FROM views v JOIN sessions s ON s.session_key = v.session_key"
                " WHERE v.doc_id IN (%s)" % ",".join("?" * len(chunk)),
                chunk,
            )
            for row in rows:
                out[row[0]] = ViewRow(*row)
        return out

    def context_views(self, session_key: int, first: int, last: int) -> List[ViewRow]:
        """The windows and segments of a session that overlap messages `first`..`last`."""
        return [
            ViewRow(*row)
            for row in self.conn.execute(
                "SELECT v.doc_id, v.session_key, s.session_id, s.tag, v.kind, v.first_seq, v.last_seq, v.length,"
                " s.n_messages"
                " FROM views v JOIN sessions s ON s.session_key = v.session_key"
                " WHERE v.session_key = ? AND v.last_seq >= ? AND v.first_seq <= ? AND v.kind != 'message'",
                (session_key, first, last),
            )
        ]

    def message_row(self, session_key: int, seq: int) -> MessageRow:
        """The stored message at position `seq` of a session this reader has read (session())."""
        return self._sessions[session_key].rows[seq]


class _Checkpointer(threading.Thread):
    """Copies the WAL back into the database file off the request path.

    SQLite's automatic checkpoint runs inside whichever commit crosses the threshold,
    so one Add in a few dozen would pay for writing pages scattered over the whole
    file: a cost that grows with everyone's data. Here a thread does it instead, after
    writes, with PASSIVE checkpoints that never block readers or the writer. Under
    a steady stream of writes a passive checkpoint never catches up with the end of
    the WAL, so the WAL could grow without bound; past `wal_limit_bytes` the thread
    takes the write lock for one truncating checkpoint.
    """

    def __init__(self, path: str, synchronous: str, write_lock: threading.Lock, interval_s: float = 0.5,
                 wal_limit_bytes: int = 64 * 1024 * 1024):
        super().__init__(name="flowmem-checkpoint", daemon=True)
        self._conn = _connect(path, synchronous)
        self._wal = path + "-wal"
        self._write_lock = write_lock
        self._interval_s = interval_s
        self._wal_limit_bytes = wal_limit_bytes
        self.wrote = threading.Event()
        self._stop_requested = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop_requested.wait(self._interval_s):
                if self.wrote.is_set():
                    self.wrote.clear()
                    self.checkpoint()
        finally:
            self._conn.close()

    def checkpoint(self) -> None:
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if os.path.exists(self._wal) and os.path.getsize(self._wal) > self._wal_limit_bytes:
                with self._write_lock:
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as e:
            # The next write retries; meanwhile the WAL just grows a little.
            log.warning("background checkpoint failed: %s", e)

    def stop(self) -> None:
        self._stop_requested.set()
        self.join()


class Store:
    """One flowmem database file. Thread-safe; call close() when done."""

    def __init__(self, path: str, settings: ViewSettings = ViewSettings(), synchronous: str = "FULL",
                 pool_size: int = 16, cache_messages: int = 200_000):
        """Open (creating or migrating) the database at `path`.

        `settings` say which windows and segments a session gets; an index built
        with other settings (or an older tokenizer) is rebuilt from the stored
        messages. `synchronous` is SQLite's durability setting (FULL: an
        acknowledged Add survives power loss); `pool_size` is how many idle read
        connections are kept; `cache_messages` bounds the messages search keeps in
        memory between searches (session_cache.py).
        """
        check_fts5()
        self.path = path
        self.settings = settings
        self._cache = SessionCache(cache_messages)
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
            self._writer.execute("PRAGMA wal_autocheckpoint = 0")
            self._checkpointer = _Checkpointer(path, synchronous, self._write_lock)
        except BaseException:
            self._writer.close()
            raise
        self._checkpointer.start()
        try:
            self._check_index()
        except BaseException:
            self.close()
            raise

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
            yield Reader(conn, self._cache)
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

    def add(self, user_id: str, session_id: str, request_id: str, messages: Sequence[NewMessage]) -> bool:
        """Store one Add atomically. Returns False (writing nothing) if the request was stored before.

        Messages are appended to the session in the given order; the session's views
        are brought up to date in the same transaction, so the messages are
        searchable the moment this returns.
        """
        derived = [derive(m.content, m.timestamp_ms, self.settings) for m in messages]
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
                "INSERT INTO messages (session_key, seq, role, content, timestamp_ms, request_id, speaker, tokens, times)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_key, n_before + i + 1, m.role, m.content, m.timestamp_ms, request_id, d.speaker,
                     " ".join(d.tokens), d.times)
                    for i, (m, d) in enumerate(zip(messages, derived))
                ],
            )
            self._sync_views(conn, user_key, session_key, n_before, n, segment_start)
            conn.execute(
                "INSERT INTO requests (user_key, request_id, session_key, n_messages, received_ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (user_key, request_id, session_key, len(messages), int(time.time() * 1000)),
            )
            return True

    def _sync_views(self, conn: sqlite3.Connection, user_key: int, session_key: int, n_before: int, n: int,
                    segment_start: int) -> None:
        """Bring a session's views and their index entries up to date after messages n_before+1..n arrived."""
        settings = self.settings
        # Only views ending at or after the last segment's start can change (views.py).
        since = max(1, segment_start - settings.window_size + 1)
        tail = conn.execute(
            "SELECT seq, timestamp_ms, tokens, speaker FROM messages WHERE session_key = ? AND seq >= ? ORDER BY seq",
            (session_key, since),
        ).fetchall()
        times = {seq: ts for seq, ts, _, _ in tail}
        texts = {seq: (toks.split(), speaker.split()) for seq, _, toks, speaker in tail}
        planned, new_segment_start = views.plan_tail(
            times, n, segment_start, settings.window_size, settings.segment_max_messages, settings.segment_max_gap_ms
        )
        wanted = set(planned) | {views.Span(views.MESSAGE, s, s) for s in range(n_before + 1, n + 1)}
        existing = {}
        for doc_id, kind, first, last in conn.execute(
            "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ? AND last_seq >= ? AND kind != ?",
            (session_key, segment_start, views.MESSAGE),
        ):
            existing[views.Span(kind, first, last)] = doc_id
        deltas: Dict[str, List[int]] = {}
        for span in sorted(set(existing) - wanted):
            document, length = self._document(user_key, span, texts)
            conn.execute(fts.delete_sql(), (existing[span], document))
            conn.execute("DELETE FROM views WHERE doc_id = ?", (existing[span],))
            delta = deltas.setdefault(span.kind, [0, 0])
            delta[0] -= 1
            delta[1] -= length
        for span in sorted(wanted - set(existing), key=lambda s: (s.first, views.KINDS.index(s.kind), s.last)):
            document, length = self._document(user_key, span, texts)
            doc_id = conn.execute(
                "INSERT INTO views (session_key, kind, first_seq, last_seq, length) VALUES (?, ?, ?, ?, ?)",
                (session_key, span.kind, span.first, span.last, length),
            ).lastrowid
            conn.execute(fts.insert_sql(), (doc_id, document))
            delta = deltas.setdefault(span.kind, [0, 0])
            delta[0] += 1
            delta[1] += length
        conn.execute(
            "UPDATE sessions SET n_messages = ?, segment_start = ? WHERE session_key = ?",
            (n, new_segment_start, session_key),
        )
        for kind, (docs, length) in sorted(deltas.items()):
            conn.execute(
                "INSERT INTO user_stats (user_key, kind, n_docs, total_length) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (user_key, kind) DO UPDATE SET n_docs = n_docs + excluded.n_docs,"
                " total_length = total_length + excluded.total_length",
                (user_key, kind, docs, length),
            )

    # -- index version -----------------------------------------------------------------

    def _index_signature(self) -> Dict[str, str]:
        return dict({"index_version": str(INDEX_VERSION)},
                    **{name: str(value) for name, value in self.settings._asdict().items()})

    def _check_index(self) -> None:
        """Rebuild the index if it was built by another tokenizer or with other view settings."""
        with self._writing() as conn:
            stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            wanted = self._index_signature()
            if stored == wanted:
                return
            messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
            if messages:
                log.warning("rebuilding the index of %d messages (built with %s, now %s)", messages, stored, wanted)
                self._rebuild(conn)
            conn.execute("DELETE FROM meta")
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(wanted.items()))

    def _rebuild(self, conn: sqlite3.Connection) -> None:
        """Re-derive every message's tokens and every view from the verbatim messages."""
        conn.execute(fts.delete_all_sql())
        conn.execute("DELETE FROM views")
        conn.execute("DELETE FROM user_stats")
        rows = conn.execute("SELECT session_key, seq, content, timestamp_ms FROM messages").fetchall()
        conn.executemany(
            "UPDATE messages SET speaker = ?, tokens = ?, times = ? WHERE session_key = ? AND seq = ?",
            [(d.speaker, " ".join(d.tokens), d.times, key, seq) for key, seq, d in
             ((key, seq, derive(content, ts, self.settings)) for key, seq, content, ts in rows)],
        )
        for user_key, session_key, n in conn.execute(
            "SELECT user_key, session_key, n_messages FROM sessions ORDER BY session_key"
        ).fetchall():
            self._sync_views(conn, user_key, session_key, 0, n, 1)

    @staticmethod
    def _document(user_key: int, span: views.Span, texts: Mapping[int, Tuple[List[str], List[str]]]) -> Tuple[str, int]:
        """A view's indexed document and its length for BM25.

        The length counts the words of the text only: a message's speaker and its date
        tokens are indexed but not counted, so that a dated message does not look
        longer, and so less relevant per word, than an undated one. (Counting the date
        tokens cost LoCoMo multi-hop questions 0.022 Hit@10; README, time-aware memory.)
        """
        tokens = [t for seq in range(span.first, span.last + 1) for t in texts[seq][0]]
        speaker = texts[span.first][1] if span.kind == views.MESSAGE else []
        length = sum(1 for t in tokens if not timeexpr.is_date_token(t))
        return fts.document(user_key, span.kind, tokens, speaker), length

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
                texts = {
                    seq: (toks.split(), speaker.split())
                    for seq, toks, speaker in conn.execute(
                        "SELECT seq, tokens, speaker FROM messages WHERE session_key = ?", (session_key,))
                }
                for doc_id, kind, first, last in conn.execute(
                    "SELECT doc_id, kind, first_seq, last_seq FROM views WHERE session_key = ?", (session_key,)
                ).fetchall():
                    document, _ = self._document(user_key, views.Span(kind, first, last), texts)
                    conn.execute(fts.delete_sql(), (doc_id, document))
                conn.execute("DELETE FROM views WHERE session_key = ?", (session_key,))
                conn.execute("DELETE FROM messages WHERE session_key = ?", (session_key,))
            conn.execute("DELETE FROM sessions WHERE user_key = ?", (user_key,))
            conn.execute("DELETE FROM requests WHERE user_key = ?", (user_key,))
            conn.execute("DELETE FROM user_stats WHERE user_key = ?", (user_key,))
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
                user_key = r.user_key(user_id)
                if user_key is None:
                    return {"user_id": user_id, "exists": False}
                per_kind = r.stats(user_key)
                sessions, messages = c.execute(
                    "SELECT count(*), coalesce(sum(n_messages), 0) FROM sessions WHERE user_key = ?", (user_key,)
                ).fetchone()
                out = {
                    "user_id": user_id,
                    "exists": True,
                    "sessions": sessions,
                    "messages": messages,
                    "views": {kind: n for kind, (n, _) in sorted(per_kind.items())},
                    "indexed_tokens": sum(total for _, total in per_kind.values()),
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
