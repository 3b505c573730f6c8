"""The SQLite file: schema and migrations, the write path of Add, reads for Search.

Tables (schema version 2):

- `users`: one row per user_id, with an internal `user_key`; `user_stats` holds the
  user's own index statistics per view kind (document count, total tokens) for BM25.
- `meta`: the index version and index settings (ViewSettings) the index was built
  with, and the index `generation`, bumped whenever existing data changes under
  readers (a rebuild, a deleted user).
- `requests`: one row per stored Add, keyed by (user, request_id): the idempotency record.
- `sessions`: one row per (user, session_id): message count, where the last segment
  starts, and the `tag` that makes message and view ids readable, stable and unique
  in the database (session_tag(); migration 2 gave every session its tag of this kind).
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

Live databases. Index settings are fixed per database: a Store adopts those in
`meta`, and refuses settings given explicitly that differ, naming the `flowmem
reindex` that would apply them; nothing rebuilds implicitly. reindex() rebuilds in
one write transaction, which a server beside it waits for like any other write,
and bumps the generation. Every read and write transaction first reads the
generation (one row); when another process changed it, this Store adopts the
settings of that snapshot and empties its caches, so it never answers from an
index it no longer reads. `read_only=True` opens the file with SQLite's mode=ro:
no writer, no checkpointer, no migration, so it works on read-only files.

Storage errors a caller can meet (a full disk, a lock held past the timeout, I/O
errors) become StorageFull or Unavailable with nothing written (storage_error()).
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import queue
import shlex
import sqlite3
import stat
import tempfile
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import fts, views
from ..errors import BadRequest, FlowmemError, StorageFull, StoreError, Unavailable
from .session_cache import SessionCache, SessionData
from ..text import stem, timeexpr
from ..text.features import derive, shown

log = logging.getLogger("flowmem.store")

BUSY_TIMEOUT_MS = 30_000  # how long a write waits for another writer before Unavailable
# The background checkpointer's truncating checkpoint runs under the write lock; it gives up
# this soon when a long read (a backup, a big search) holds an old snapshot, and retries later.
CHECKPOINT_BUSY_MS = 100


def session_tag(user_id: str, session_id: str, attempt: int = 0) -> str:
    """A short stable name for a user's session, used in message and view ids.

    The first 16 hex digits of sha256(json.dumps([user_id, session_id])) (ASCII JSON):
    no two pairs share an input, so two users' sessions of one session_id get
    different tags. `attempt` 1, 2, ... appends itself to the array: the next
    candidates when a tag is already taken (free_tag()).
    """
    key: List[Any] = [user_id, session_id] + ([attempt] if attempt else [])
    return hashlib.sha256(json.dumps(key).encode("ascii")).hexdigest()[:16]


def free_tag(user_id: str, session_id: str, taken: Callable[[str], bool]) -> str:
    """The first candidate tag of a session (session_tag()) that `taken` says no other session holds."""
    attempt = 0
    while taken(session_tag(user_id, session_id, attempt)):
        attempt += 1
    return session_tag(user_id, session_id, attempt)


def _retag_sessions(conn: sqlite3.Connection) -> None:
    """Migration 2: every session's tag from (user_id, session_id), unique, given in session order."""
    rows = conn.execute("SELECT s.session_key, u.user_id, s.session_id FROM sessions s"
                        " JOIN users u ON u.user_key = s.user_key ORDER BY s.session_key").fetchall()
    taken = set()
    for session_key, user_id, session_id in rows:
        tag = free_tag(user_id, session_id, taken.__contains__)
        taken.add(tag)
        conn.execute("UPDATE sessions SET tag = ? WHERE session_key = ?", (tag, session_key))


Migration = Union[str, Callable[[sqlite3.Connection], None]]

# Each entry upgrades the schema from version i to i+1 (SQL, or a function of the connection
# for what SQL cannot say); never edit a shipped entry.
MIGRATIONS: List[List[Migration]] = [
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
    [
        # Session tags were sha256(session_id): two users' sessions of one session_id shared ids.
        _retag_sessions,
        "CREATE UNIQUE INDEX sessions_by_tag ON sessions (tag)",
    ],
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
    times: str  # JSON: the dates the text mentions or implies (features.Derived.times)

    def resolutions(self) -> List[timeexpr.Resolution]:
        return [timeexpr.Resolution(e, datetime.date.fromisoformat(a), datetime.date.fromisoformat(b), r, 0)
                for e, a, b, r in json.loads(self.times or "[]")]


class ViewSettings(NamedTuple):
    """What the index holds: view sizes, and how message text becomes tokens.

    Fixed per database (stored in `meta`); these defaults, the only ones, are what a
    new database gets for every setting not given. Field names are Config's.
    """

    window_size: int = 3
    segment_max_messages: int = 8
    segment_max_gap_s: int = 1800
    stem: bool = True  # index Porter stems, not surface words
    split_speakers: bool = True  # index a leading "Name: " label as the speaker, not as text
    resolve_times: bool = True  # resolve and index the dates messages mean (timeexpr.py)


# Bump when tokenization or what a view indexes changes: stored indexes must then be rebuilt
# (`flowmem reindex`); a Store refuses an index of another version.
INDEX_VERSION = 6

SettingsRequest = Union[ViewSettings, Mapping[str, Any], None]


# A message counts as one against the session cache's bound per CACHE_UNIT_CHARS of its text.
CACHE_UNIT_CHARS = 2_000


# -- index settings in `meta` ----------------------------------------------------------


class IndexState(NamedTuple):
    """What a Store reads the index with: the settings of one index generation."""

    generation: int
    settings: ViewSettings


def requested_settings(settings: SettingsRequest) -> Dict[str, Any]:
    """The index settings asked for by name (a ViewSettings asks for all of them)."""
    if settings is None:
        return {}
    given = settings._asdict() if isinstance(settings, ViewSettings) else dict(settings)
    unknown = sorted(set(given) - set(ViewSettings._fields))
    if unknown:
        raise ValueError("not index settings: %s" % ", ".join(unknown))
    return {name: given[name] for name in ViewSettings._fields if given.get(name) is not None}


def flag_value(value: Any) -> str:
    """A setting's value as a flag takes it (booleans as 1 and 0), as `meta` stores it too."""
    return str(int(value)) if isinstance(value, bool) else str(value)


def reindex_command(path: str, settings: Mapping[str, Any]) -> str:
    """The `flowmem reindex` command line that rebuilds `path`'s index with `settings`."""
    flags = "".join(" --%s %s" % (name.replace("_", "-"), flag_value(settings[name]))
                    for name in ViewSettings._fields if name in settings)
    return "flowmem reindex --db %s%s" % (shlex.quote(path), flags)


def _meta(conn: sqlite3.Connection) -> Dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _generation(conn: sqlite3.Connection) -> int:
    """The index generation of the connection's snapshot: one row, read at every transaction's start."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def _write_meta(conn: sqlite3.Connection, settings: ViewSettings, generation: int) -> None:
    conn.execute("DELETE FROM meta")
    rows = [("index_version", str(INDEX_VERSION)), ("generation", str(generation))]
    rows += [(name, flag_value(value)) for name, value in settings._asdict().items()]
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(rows))


def _decode_settings(meta: Mapping[str, str], path: str) -> ViewSettings:
    """The settings `meta` records (flowmem before schema 2 wrote the gap in ms, booleans as True/False)."""
    values = dict(meta)
    if "segment_max_gap_ms" in values:
        values["segment_max_gap_s"] = str(int(values.pop("segment_max_gap_ms")) // 1000)
    out = {}
    try:
        for name, default in ViewSettings()._asdict().items():
            raw = values[name]
            out[name] = raw in ("1", "True") if isinstance(default, bool) else int(raw)
    except (KeyError, ValueError) as e:
        raise StoreError("database %s has an unreadable index description (meta): %s" % (path, e))
    return ViewSettings(**out)


def _index_problem(path: str, meta: Mapping[str, str], stored: ViewSettings,
                   requested: Mapping[str, Any]) -> Optional[str]:
    """Why an index cannot be read as asked (another index version, other settings given), or None."""
    differing = {name: value for name, value in requested.items() if getattr(stored, name) != value}
    command = reindex_command(path, differing)
    try:
        version = int(meta.get("index_version", INDEX_VERSION))
    except ValueError:
        return "database %s has an unreadable index version %r" % (path, meta["index_version"])
    if version > INDEX_VERSION:
        return ("the index of %s was built by a newer flowmem (index version %d; this one reads %d): upgrade "
                "flowmem, or rebuild the index for this one with `%s`" % (path, version, INDEX_VERSION, command))
    if version < INDEX_VERSION:
        return ("the index of %s was built by an older flowmem (index version %d; this one reads %d): rebuild it "
                "with `%s` (safe while a server runs)" % (path, version, INDEX_VERSION, command))
    if differing:
        said = "; ".join("%s is %s there, %s given" % (name, flag_value(getattr(stored, name)), flag_value(value))
                         for name, value in differing.items())
        return ("database %s was indexed with other settings (%s): rebuild its index with `%s` (safe while a "
                "server runs), or leave those settings out to use the database's" % (path, said, command))
    return None


# -- storage errors ----------------------------------------------------------------------

SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN = 5, 6, 8, 10, 13, 14
# sqlite_errorcode exists from Python 3.11; before it, the message says which error it was.
_ERROR_MESSAGES = (("database or disk is full", SQLITE_FULL), ("database is locked", SQLITE_BUSY),
                   ("is locked", SQLITE_LOCKED), ("disk I/O error", SQLITE_IOERR),
                   ("readonly database", SQLITE_READONLY), ("unable to open database file", SQLITE_CANTOPEN))
STORAGE_FULL_RETRY_S = 30


def _error_code(e: sqlite3.Error) -> Optional[int]:
    """SQLite's primary result code of an error, or None if it cannot be told."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF
    message = str(e)
    return next((code for text, code in _ERROR_MESSAGES if text in message), None)


def storage_error(e: sqlite3.Error, path: str) -> Optional[FlowmemError]:
    """The FlowmemError a caller should see for a failure of the storage under `path`, or None (a bug)."""
    code = _error_code(e)
    if code == SQLITE_FULL:
        return StorageFull("storage is full: the disk holding %s, or the database's size limit, has no room; "
                           "nothing was written, retry when space is freed" % path, STORAGE_FULL_RETRY_S)
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return Unavailable("database %s is busy (another process holds its write lock, e.g. a reindex); nothing "
                           "was written, retry shortly" % path, 1)
    if code == SQLITE_IOERR:
        return Unavailable("database %s had an I/O error (%s); nothing was written, retry shortly" % (path, e), 5)
    if code == SQLITE_READONLY:
        return StoreError("database %s cannot be written (read-only file or medium)" % path)
    return None


@contextlib.contextmanager
def _storage_errors(path: str) -> Iterator[None]:
    """Raise storage_error()'s FlowmemError for an sqlite3 error it knows; others as they are."""
    try:
        yield
    except sqlite3.Error as e:
        mapped = storage_error(e, path)
        if mapped is None:
            raise
        raise mapped from e


def _rollback(conn: sqlite3.Connection) -> None:
    # After SQLITE_FULL or an I/O error SQLite may already have rolled the transaction back;
    # a ROLLBACK then fails ("no transaction is active") and would hide the real error.
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as e:
            log.warning("rollback failed: %s", e)


# -- connections -----------------------------------------------------------------------


def _uri(path: str, mode: str) -> str:
    """An SQLite URI for `path`: mode rwc (create), rw (must exist) or ro (read-only)."""
    return "file:%s?mode=%s" % (urllib.parse.quote(os.path.abspath(path)), mode)


def _connect(uri: str, synchronous: str, busy_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = %d" % busy_ms)
        conn.execute("PRAGMA synchronous = %s" % synchronous.upper())
        # Freed pages are zeroed, so a deleted user leaves nothing readable in the file.
        conn.execute("PRAGMA secure_delete = ON")
    except BaseException:
        conn.close()
        raise
    return conn


SIDECARS = ("-wal", "-shm", "-journal")


def refuse_sidecar(path: str) -> None:
    """StoreError if `path` is one of SQLite's files beside a database (its WAL, say), not a database.

    An empty WAL (after a checkpoint) opens as an empty database; writing one there
    would destroy the live database's log. A mistyped or tab-completed `--db` must not.
    """
    for suffix in SIDECARS:
        if path.endswith(suffix) and os.path.exists(path[:-len(suffix)]):
            raise StoreError("%s is SQLite's %s file of the database %s, not a database; give --db %s"
                             % (path, suffix[1:], path[:-len(suffix)], shlex.quote(path[:-len(suffix)])))


def missing_database(path: str) -> StoreError:
    """The error for a command that needs an existing database at `path`."""
    return StoreError("no flowmem database at %s; create one with `flowmem init --db %s` (or `flowmem add`, "
                      "`flowmem serve`, which create it)" % (path, shlex.quote(path)))


_VIEW_ROWS_SQL = ("SELECT v.doc_id, v.session_key, s.session_id, s.tag, v.kind, v.first_seq, v.last_seq, v.length,"
                  " s.n_messages FROM views v JOIN sessions s ON s.session_key = v.session_key WHERE ")


def _user_key(conn: sqlite3.Connection, user_id: str) -> Optional[int]:
    row = conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()
    return row[0] if row else None


class Reader:
    """Queries of one read transaction; obtained from Store.reading().

    `settings` are the index settings of this transaction's snapshot: a question must
    be analysed with them (search.py), whatever the Store's were when it started.
    """

    def __init__(self, conn: sqlite3.Connection, cache: Optional[SessionCache] = None,
                 index: IndexState = IndexState(0, ViewSettings())):
        self.conn = conn
        self.cache = cache if cache is not None else SessionCache(0)  # an empty cache is falsy (len 0)
        self.settings = index.settings
        self._generation = index.generation
        self._sessions: Dict[int, SessionData] = {}

    def session(self, view: "ViewRow") -> SessionData:
        """Every message's features and every window and segment of the session `view` belongs to."""
        data = self._sessions.get(view.session_key)
        if data is None:
            data = self._sessions[view.session_key] = self.cache.get(
                view.session_key, view.session_messages, lambda: self._load_session(view), self._generation)
        return data

    def _load_session(self, view: "ViewRow") -> SessionData:
        messages, rows, cost = {}, {}, 0
        for seq, role, content, speaker, ts, tokens, times in self.conn.execute(
                "SELECT seq, role, content, speaker, timestamp_ms, tokens, times FROM messages WHERE session_key = ?",
                (view.session_key,)):
            messages[seq] = (tuple(speaker.split()), ts, tuple(tokens.split()), times != "")
            rows[seq] = MessageRow(seq, role, shown(content), ts, times)
            cost += 1 + len(rows[seq].content) // CACHE_UNIT_CHARS
        doc_freqs: Dict[str, int] = {}
        for _, _, tokens, _ in messages.values():
            for t in set(tokens):
                doc_freqs[t] = doc_freqs.get(t, 0) + 1
        views = tuple(self.context_views(view.session_key, 1, view.session_messages))
        return SessionData(len(messages), messages, views, doc_freqs, rows, cost)

    def sessions_read(self) -> List[SessionData]:
        """The sessions this reader has read so far, in the order first read."""
        return list(self._sessions.values())

    def user_key(self, user_id: str) -> Optional[int]:
        """The internal key of a user, or None if unknown."""
        return _user_key(self.conn, user_id)

    def stats(self, user_key: int) -> Dict[str, Tuple[int, int]]:
        """The user's (document count, total tokens) per view kind."""
        return {kind: (n, total) for kind, n, total in self.conn.execute(
            "SELECT kind, n_docs, total_length FROM user_stats WHERE user_key = ?", (user_key,))}

    def postings(self, user_key: int, kind: str, tokens: Sequence[str]) -> List[Tuple[str, int]]:
        """(token, doc_id) for every occurrence of `tokens` in the user's views of `kind`."""
        cut = len(fts.kind_prefix(user_key, kind))
        return [(term[cut:], doc) for sql, params in fts.postings_sql(user_key, kind, tokens)
                for term, doc in self.conn.execute(sql, params)]

    def doc_freqs(self, user_key: int, tokens: Sequence[str],
                  kinds: Sequence[str] = ("message", "window", "segment")) -> Dict[Tuple[str, str], int]:
        """{(kind, token): number of the user's views of that kind holding the token}."""
        prefixes = {fts.kind_prefix(user_key, kind): kind for kind in fts.KIND_LETTERS}
        out = {}
        for sql, params in fts.doc_freq_sql(user_key, tokens, kinds):
            for term, n in self.conn.execute(sql, params):
                prefix = term[: term.index("_", term.index("_") + 1) + 1]
                out[(prefixes[prefix], term[len(prefix):])] = n
        return out

    def views(self, doc_ids: Sequence[int]) -> Dict[int, ViewRow]:
        """The views with these doc_ids, by doc_id."""
        out: Dict[int, ViewRow] = {}
        for chunk in fts.chunks(sorted(set(doc_ids))):
            for row in self.conn.execute(_VIEW_ROWS_SQL + "v.doc_id IN (%s)" % ",".join("?" * len(chunk)), chunk):
                out[row[0]] = ViewRow(*row)
        return out

    def context_views(self, session_key: int, first: int, last: int) -> List[ViewRow]:
        """The windows and segments of a session that overlap messages `first`..`last`."""
        return [ViewRow(*row) for row in self.conn.execute(
            _VIEW_ROWS_SQL + "v.session_key = ? AND v.last_seq >= ? AND v.first_seq <= ? AND v.kind != 'message'",
            (session_key, first, last))]

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
    takes the write lock for one truncating checkpoint. That checkpoint waits for
    readers of older snapshots, so it gives up after CHECKPOINT_BUSY_MS and tries
    again later: a long read (a backup) must not stall writes. A failing checkpoint
    (a full disk) is logged and retried later; the thread never dies of it.
    """

    def __init__(self, path: str, uri: str, synchronous: str, write_lock: threading.Lock, interval_s: float = 0.5,
                 wal_limit_bytes: int = 64 * 1024 * 1024):
        super().__init__(name="flowmem-checkpoint", daemon=True)
        self._conn = _connect(uri, synchronous, CHECKPOINT_BUSY_MS)
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

    def checkpoint(self) -> bool:
        """One passive checkpoint, and a truncating one if the WAL is past its limit; True if all done."""
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if os.path.exists(self._wal) and os.path.getsize(self._wal) > self._wal_limit_bytes:
                with self._write_lock:
                    busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy:
                    self.wrote.set()  # an older snapshot is still read: try again at the next interval
                    return False
            return True
        except (sqlite3.Error, OSError) as e:
            # The next write retries (none succeeds while the disk is full); meanwhile the WAL just grows a little.
            log.warning("background checkpoint failed: %s", e)
            return False

    def stop(self) -> None:
        self._stop_requested.set()
        self.join()


class Store:
    """One flowmem database file. Thread-safe; call close() when done."""

    def __init__(self, path: str, settings: SettingsRequest = None, synchronous: str = "FULL",
                 pool_size: int = 16, cache_messages: int = 200_000, *, read_only: bool = False,
                 create: bool = True, check_index: bool = True):
        """Open the database at `path`, creating and migrating it as needed unless told not to.

        `settings` are the index settings asked for (ViewSettings names; a ViewSettings
        asks for all): unnamed ones are the database's, or for a new database
        ViewSettings' defaults; a named one that differs from the database's raises
        StoreError naming the reindex command, as does an index of another version
        (`check_index=False` skips both, for reindex() only). `synchronous` is SQLite's
        durability setting (FULL: an acknowledged Add survives power loss); `pool_size`
        is how many idle read connections are kept; `cache_messages` bounds the
        messages search keeps in memory between searches (session_cache.py).
        `read_only` opens the file read-only (no writes of any kind, no migration);
        `create=False` refuses a missing file instead of creating it.
        """
        check_fts5()
        refuse_sidecar(path)
        self.path = path
        self.read_only = read_only
        self._synchronous = synchronous
        self._pool_size = pool_size
        self._cache = SessionCache(cache_messages)
        self._idle: "queue.LifoQueue[sqlite3.Connection]" = queue.LifoQueue()
        self._write_lock = threading.Lock()
        self._index_lock = threading.Lock()
        self._index = IndexState(-1, ViewSettings())
        self._writer: Optional[sqlite3.Connection] = None
        self._checkpointer: Optional[_Checkpointer] = None
        self._closed = False
        if not create and not os.path.exists(path):
            raise missing_database(path)
        requested = requested_settings(settings)
        try:
            if read_only:
                self._open_read_only()
            else:
                self._open_writer(create)
            self._adopt(self._open_index(requested, check_index))
        except BaseException:
            self.close()
            raise

    # -- lifecycle -------------------------------------------------------------------

    def _open_connection(self) -> sqlite3.Connection:
        try:
            return _connect(self._uri, self._synchronous)
        except sqlite3.Error as e:
            raise StoreError("cannot open database %s: %s" % (self.path, e))

    def _open_writer(self, create: bool) -> None:
        """The writer connection (creating the file if `create`), WAL mode, migrations, the checkpointer."""
        self._uri = _uri(self.path, "rwc" if create else "rw")
        self._writer = self._open_connection()
        self._check_schema(self._writer, create)
        try:
            mode = self._writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError("cannot open database %s: %s" % (self.path, e))
        if mode.lower() != "wal":
            raise StoreError("cannot put database %s in WAL mode (got %s)" % (self.path, mode))
        self._migrate()
        self._writer.execute("PRAGMA wal_autocheckpoint = 0")
        self._checkpointer = _Checkpointer(self.path, self._uri, self._synchronous, self._write_lock)
        self._checkpointer.start()

    def _open_read_only(self) -> None:
        """A first read connection (mode=ro), checked to be a flowmem database at this schema."""
        if not os.path.exists(self.path):
            raise missing_database(self.path)
        self._uri = _uri(self.path, "ro")
        try:
            conn = _connect(self._uri, self._synchronous)
        except sqlite3.Error as e:
            # A WAL database closed cleanly on a read-only medium: SQLite cannot create the
            # -shm that mode=ro needs. With no -wal there is no writer whose changes
            # immutable=1 could miss.
            if _error_code(e) != SQLITE_CANTOPEN or os.path.exists(self.path + "-wal"):
                raise StoreError("cannot open database %s read-only: %s" % (self.path, e))
            self._uri += "&immutable=1"
            conn = self._open_connection()
        self._idle.put(conn)  # closed by close() if the check fails
        self._check_schema(conn, create=False)

    def _check_schema(self, conn: sqlite3.Connection, create: bool) -> None:
        """Refuse a database from a newer flowmem; read-only, also one that needs a migration."""
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            empty = version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        except sqlite3.DatabaseError as e:
            raise StoreError("cannot open database %s: %s" % (self.path, e))
        if version > SCHEMA_VERSION:
            raise StoreError("database %s has schema version %d; this flowmem knows up to %d (upgrade flowmem)"
                             % (self.path, version, SCHEMA_VERSION))
        if empty and not create:
            raise StoreError("%s is empty, not a flowmem database; create one with `flowmem init --db %s`"
                             % (self.path, shlex.quote(self.path)))
        if self.read_only and version < SCHEMA_VERSION:
            raise StoreError("database %s has schema version %d and needs an upgrade to %d, which a read-only open "
                             "cannot do; open it once read-write (`%s` upgrades it)"
                             % (self.path, version, SCHEMA_VERSION, reindex_command(self.path, {})))

    def _migrate(self) -> None:
        with self._write_lock:
            conn = self._writer
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for target in range(version + 1, SCHEMA_VERSION + 1):
                with self._transaction(conn, "BEGIN IMMEDIATE"):
                    for step in MIGRATIONS[target - 1]:
                        if callable(step):
                            step(conn)
                        else:
                            conn.execute(step)
                    conn.execute("PRAGMA user_version = %d" % target)

    def _open_index(self, requested: Mapping[str, Any], check: bool) -> IndexState:
        """The settings and generation of the index: a new database's are written, others checked."""
        if self.read_only:
            with self.reading(check=False) as reader:
                return self._index_of(reader.conn, requested, check)
        with self._writing(check=False) as conn:
            return self._index_of(conn, requested, check)

    def _index_of(self, conn: sqlite3.Connection, requested: Mapping[str, Any], check: bool) -> IndexState:
        meta = _meta(conn)
        if "index_version" not in meta:  # a new database
            settings = ViewSettings()._replace(**requested)
            if not self.read_only:
                _write_meta(conn, settings, 0)
            return IndexState(0, settings)
        stored = _decode_settings(meta, self.path)
        problem = _index_problem(self.path, meta, stored, requested) if check else None
        if problem:
            raise StoreError(problem)
        return IndexState(_generation(conn), stored)

    def schema_version(self) -> int:
        with self.reading() as reader:
            return reader.conn.execute("PRAGMA user_version").fetchone()[0]

    @property
    def settings(self) -> ViewSettings:
        """The index settings of the newest index generation this Store has seen."""
        return self._index.settings

    def close(self) -> None:
        """Close every connection; the last close checkpoints the WAL into the file."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            if self._checkpointer is not None:
                self._checkpointer.stop()
            while True:
                try:
                    self._idle.get_nowait().close()
                except queue.Empty:
                    break
            if self._writer is not None:
                try:
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error as e:
                    log.warning("checkpoint at close failed: %s", e)
                self._writer.close()

    # -- transactions and index generations ------------------------------------------

    @contextlib.contextmanager
    def _transaction(self, conn: sqlite3.Connection, begin: str) -> Iterator[None]:
        """`begin` ... COMMIT, or ROLLBACK on any error; storage errors a caller can meet become FlowmemErrors."""
        with _storage_errors(self.path):
            try:
                conn.execute(begin)
                yield
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise

    def _check_generation(self, conn: sqlite3.Connection) -> IndexState:
        """The index generation and settings of the transaction's snapshot, adopted if newer than ours.

        Another process's reindex or delete-user bumps the generation: the caches then
        hold what that snapshot no longer has, and the settings may have changed.
        """
        generation = _generation(conn)
        index = self._index
        if generation == index.generation:
            return index
        meta = _meta(conn)
        settings = _decode_settings(meta, self.path)
        problem = _index_problem(self.path, meta, settings, {})
        if problem:
            raise StoreError(problem)  # never answer from an index this flowmem cannot read
        seen = IndexState(generation, settings)
        if generation > index.generation:
            log.info("database %s changed (index generation %d -> %d, settings %s): caches cleared",
                     self.path, index.generation, generation, dict(settings._asdict()))
            self._adopt(seen)
        return seen

    def _adopt(self, index: IndexState) -> None:
        """Read the index as `index` says from now on, with nothing kept in memory from before."""
        with self._index_lock:
            if index.generation <= self._index.generation:
                return
            self._index = index
            self._cache.clear(index.generation)
            stem.stem.cache_clear()  # words users said, kept to stem them faster

    # -- reads -----------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self, check: bool = True) -> Iterator[Reader]:
        """A Reader over one consistent snapshot of the database."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = self._open_connection()
        reusable = False
        try:
            with self._transaction(conn, "BEGIN"):
                index = self._check_generation(conn) if check else self._index
                yield Reader(conn, self._cache, index)
            reusable = True
        finally:
            if not reusable or self._closed or self._idle.qsize() >= self._pool_size:
                conn.close()
            else:
                self._idle.put(conn)

    # -- writes ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self, check: bool = True) -> Iterator[sqlite3.Connection]:
        """The writer connection in a BEGIN IMMEDIATE transaction, at the newest index generation."""
        with self._write_lock:
            if self._closed:
                raise StoreError("the store is closed")
            if self._writer is None:
                raise StoreError("database %s is open read-only" % self.path)
            with self._transaction(self._writer, "BEGIN IMMEDIATE"):
                if check:
                    self._check_generation(self._writer)
                yield self._writer
            self._checkpointer.wrote.set()

    def add(self, user_id: str, session_id: str, request_id: str, messages: Sequence[NewMessage]) -> bool:
        """Store one Add atomically. Returns False (writing nothing) if the request was stored before.

        Messages are appended to the session in the given order; the session's views
        are brought up to date in the same transaction, so the messages are
        searchable the moment this returns. Raises StorageFull or Unavailable (nothing
        written) when the storage cannot take it.
        """
        settings = self.settings
        derived = [derive(m.content, m.timestamp_ms, settings) for m in messages]  # outside the lock
        with self._writing() as conn:
            if self.settings != settings:  # reindexed with other settings meanwhile (maybe by another process)
                settings = self.settings
                derived = [derive(m.content, m.timestamp_ms, settings) for m in messages]
            user_key = self._user_key(conn, user_id)
            seen = conn.execute(
                "SELECT 1 FROM requests WHERE user_key = ? AND request_id = ?", (user_key, request_id)
            ).fetchone()
            if seen:
                return False
            session_key, n_before, segment_start = self._session(conn, user_key, user_id, session_id)
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
            self._sync_views(conn, settings, user_key, session_key, n_before, n, segment_start)
            conn.execute(
                "INSERT INTO requests (user_key, request_id, session_key, n_messages, received_ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (user_key, request_id, session_key, len(messages), int(time.time() * 1000)),
            )
            return True

    def _sync_views(self, conn: sqlite3.Connection, settings: ViewSettings, user_key: int, session_key: int,
                    n_before: int, n: int, segment_start: int) -> None:
        """Bring a session's views and their index entries up to date after messages n_before+1..n arrived."""
        # Only views ending at or after the last segment's start can change (views.py).
        since = max(1, segment_start - settings.window_size + 1)
        tail = conn.execute(
            "SELECT seq, timestamp_ms, tokens, speaker FROM messages WHERE session_key = ? AND seq >= ? ORDER BY seq",
            (session_key, since),
        ).fetchall()
        times = {seq: ts for seq, ts, _, _ in tail}
        texts = {seq: (toks.split(), speaker.split()) for seq, _, toks, speaker in tail}
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

    # -- rebuilding the index --------------------------------------------------------

    def reindex(self, settings: SettingsRequest = None,
                progress: Optional[Callable[[int, int], None]] = None) -> ViewSettings:
        """Rebuild the whole index from the verbatim messages; returns the settings it was built with.

        `settings` named here replace the database's (the rest are kept). One write
        transaction: other writers wait for it (or get Unavailable past their busy
        timeout), readers keep reading the old index until it commits, and the
        generation bump makes every Store on the file, in any process, read the new
        one with its settings. `progress(messages done, total)` is called after each
        session.
        """
        with self._writing(check=False) as conn:
            settings = _decode_settings(_meta(conn), self.path)._replace(**requested_settings(settings))
            generation = _generation(conn) + 1
            self._rebuild(conn, settings, progress or (lambda done, total: None))
            _write_meta(conn, settings, generation)
        self._adopt(IndexState(generation, settings))
        return settings

    def _rebuild(self, conn: sqlite3.Connection, settings: ViewSettings, progress: Callable[[int, int], None]) -> None:
        """Re-derive every message's tokens and every view from the verbatim messages, session by session."""
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
                "UPDATE messages SET speaker = ?, tokens = ?, times = ? WHERE session_key = ? AND seq = ?",
                [(d.speaker, " ".join(d.tokens), d.times, session_key, seq) for seq, d in
                 ((seq, derive(content, ts, settings)) for seq, content, ts in rows)],
            )
            self._sync_views(conn, settings, user_key, session_key, 0, n, 1)
            done += n
            progress(done, total)

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
        """The user's key, the user created if new."""
        key = _user_key(conn, user_id)
        if key is not None:
            return key
        return conn.execute("INSERT INTO users (user_id) VALUES (?)", (user_id,)).lastrowid

    @staticmethod
    def _session(conn: sqlite3.Connection, user_key: int, user_id: str, session_id: str) -> Tuple[int, int, int]:
        """(session key, message count, last segment's start) of a session, created if new."""
        row = conn.execute(
            "SELECT session_key, n_messages, segment_start FROM sessions WHERE user_key = ? AND session_id = ?",
            (user_key, session_id),
        ).fetchone()
        if row:
            return row
        tag = free_tag(user_id, session_id, lambda candidate: conn.execute(
            "SELECT 1 FROM sessions WHERE tag = ?", (candidate,)).fetchone() is not None)
        key = conn.execute(
            "INSERT INTO sessions (user_key, session_id, tag) VALUES (?, ?, ?)", (user_key, session_id, tag)
        ).lastrowid
        return key, 0, 1

    def delete_user(self, user_id: str) -> bool:
        """Remove every trace of a user: messages, views, index entries, idempotency records, cached reads.

        Returns False if the user was unknown. The FTS5 index is merged in the same
        transaction so that no old index page keeps the user's terms, and the WAL is
        checkpointed; with secure_delete on, freed pages are zeroed. The generation
        bump empties this Store's caches and, at their next transaction, those of
        every other Store on the file. Other writes wait meanwhile: about 7 s on a
        database of 1M messages (2 cores).
        """
        with self._writing() as conn:
            user_key = _user_key(conn, user_id)
            if user_key is None:
                return False
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
            generation = _generation(conn) + 1
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)", (str(generation),))
            settings = self.settings
        self._adopt(IndexState(generation, settings))
        with self._write_lock:
            try:
                if self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                    log.warning("a read of an older snapshot outlasted the busy timeout: the WAL keeps pages of "
                                "the deleted user until later writes overwrite them")
            except sqlite3.Error as e:  # the user is deleted; the background checkpointer copies the rest
                log.warning("checkpoint after deleting a user failed: %s", e)
        return True

    # -- backup ----------------------------------------------------------------------

    def backup(self, target: str, force: bool = False) -> Dict[str, Any]:
        """Copy the database to `target`: consistent, self-contained, checked; returns what was copied.

        SQLite's backup API copies every page in one step, so the copy is one read
        snapshot (never restarted by writes, which go on meanwhile: WAL). The copy is
        switched to journal_mode=DELETE, so it is one file that opens read-only
        anywhere, and must pass PRAGMA integrity_check and FTS5's integrity-check. It
        is written under a temporary name beside `target` and renamed at the end, so
        `target` is either absent, the old file (`force`), or the whole copy.
        """
        self._refuse_backup_target(target)
        if os.path.exists(target) and not force:
            raise BadRequest("%s exists; give --force to overwrite it" % target)
        directory = os.path.dirname(os.path.abspath(target))
        fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".partial", dir=directory)
        os.close(fd)
        os.chmod(partial, stat.S_IMODE(os.stat(self.path).st_mode))  # readable by whoever reads the database
        try:
            with _storage_errors(target):
                copied = self._copy_to(partial)
            if os.path.exists(target) and not force:
                raise BadRequest("%s appeared during the backup; give --force to overwrite it" % target)
            os.replace(partial, target)
            _fsync_directory(directory)
        except BaseException:
            for leftover in (partial, partial + "-journal", partial + "-wal", partial + "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(leftover)
            raise
        return dict(copied, path=target, bytes=os.path.getsize(target))

    def _refuse_backup_target(self, target: str) -> None:
        """No backup may replace this database, its WAL or shared memory, or a database in use (--force or not)."""
        refuse_sidecar(target)
        own = {os.path.realpath(self.path + suffix) for suffix in ("",) + SIDECARS}
        if os.path.realpath(target) in own:
            raise BadRequest("%s is the database being copied (or one of its files); back up to another path" % target)
        if any(os.path.exists(target + suffix) for suffix in SIDECARS):
            raise BadRequest("%s has a WAL or journal beside it: it may be a database in use; stop what uses it "
                             "and remove it first, or back up to another path" % target)

    def _copy_to(self, partial: str) -> Dict[str, Any]:
        source = self._open_connection()
        try:
            copy = sqlite3.connect(partial, isolation_level=None)
            try:
                source.backup(copy)  # pages=-1: all pages in one step, one snapshot
                copy.execute("PRAGMA journal_mode = DELETE")
                _check_integrity(copy, partial)
                counts = {"messages": copy.execute("SELECT count(*) FROM messages").fetchone()[0],
                          "users": copy.execute("SELECT count(*) FROM users").fetchone()[0]}
            finally:
                copy.close()
        finally:
            source.close()
        with open(partial, "rb") as f:
            os.fsync(f.fileno())
        return counts

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
                    "index": dict(r.settings._asdict()),
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


def _check_integrity(conn: sqlite3.Connection, path: str) -> None:
    """Raise StoreError unless SQLite and FTS5 both find the database at `conn` whole."""
    problems = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
    if problems != ["ok"]:
        raise StoreError("the copy %s failed SQLite's integrity check: %s" % (path, "; ".join(problems[:3])))
    try:
        conn.execute(fts.integrity_check_sql())
    except sqlite3.DatabaseError as e:
        raise StoreError("the copy %s failed FTS5's integrity check: %s" % (path, e))


def _fsync_directory(directory: str) -> None:
    """Make a rename in `directory` durable (where the platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def init_database(path: str, settings: SettingsRequest = None, synchronous: str = "FULL") -> ViewSettings:
    """Create a new database at `path` with these index settings (the rest ViewSettings' defaults).

    Refuses (StoreError) if anything is at `path` already: settings of an existing
    database change only by `reindex`.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        raise StoreError("%s exists; init only creates new databases (change an index's settings with `%s`)"
                         % (path, reindex_command(path, requested_settings(settings))))
    except OSError as e:
        raise StoreError("cannot create database %s: %s" % (path, e.strerror))
    try:
        store = Store(path, settings, synchronous)
    except BaseException:
        os.remove(path)
        raise
    try:
        return store.settings
    finally:
        store.close()
