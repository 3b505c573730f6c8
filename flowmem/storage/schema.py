"""The database's schema: its tables, the migrations that build and upgrade them, and the checks.

Tables (schema version 7):

- `users`: one row per user_id, with an internal `user_key`; `user_stats` holds the
  user's own index statistics per view kind (document count, total tokens) for BM25.
- `meta`: the index version and index settings (ViewSettings) the index was built
  with, the index `generation`, bumped by a rebuild, and the seq of the last deletion
  logged (settings.py read_marks()).
- `deletions` (migration 3): the log of deleted sessions, (seq, user_key, session_key),
  the last DELETION_LOG_ROWS of them (writer.py). Every Store on the file reads the last
  seq at each transaction's start and forgets what it cached of those users and sessions,
  nothing else; one that fell further behind than the log reaches forgets everything
  (store.py).
- `requests`: one row per stored Add, keyed by (user, request_id): the idempotency record.
- `sessions`: one row per (user, session_id): message count, where the last segment
  starts, and the `tag` that makes message and view ids readable, stable and unique
  in the database (session_tag(); migration 2 gave every session its tag of this kind).
- `messages`: every message verbatim (role, content, timestamp, the Add's request_id,
  its 1-based position in the session), with its speaker label, tokens and meaning vector
  (migration 4; text/meaning.py) as derived at write time. The verbatim columns are never
  updated. Migration 5 adds each message's `metadata` (a JSON object, metadata_index.py),
  `dated_on_receipt` (1: the Add gave no timestamp, and `timestamp_ms` is when it arrived) and
  `number`, the position its id names when that is no longer its position: deleting a message
  (writer.delete_message()) moves the later ones up a position, and their ids stay.
  `sessions.deleted_messages` counts a session's deleted messages, so that a new message's id
  never names one deleted; `requests.fingerprint` is a digest of the Add's body, so that a
  replay with another body can say so. Migration 6 adds `sessions.attempt`, the candidate of
  session_tag() the session's tag is: deleting a session raises its user's `users.tag_floor`
  past it, and the user's sessions created later start from the floor, so no tag (and no id)
  of a deleted session is given again (session_rows.py). A user removed with their last
  session leaves the floor in `retired_users` for when they come back; delete-user leaves
  nothing. Migration 7 adds `embedding`, the vector of the operator's own embedder when one is
  configured (storage/model_vectors.py), and `embedding_marks`: per user, how many were written.
- `metadata_index` (migration 5): one row per (message, metadata key): what a search's or a
  listing's `filters.metadata` reads. Migration 6 interns each (user, key, value) once as a row
  of `metadata_terms` (the value as canonical JSON, with how many messages hold it), makes the
  index rows (session_key, seq, term), integers only, and adds `metadata_sessions`, how many
  messages of each session hold each term; rows are written through the view `metadata_rows`,
  whose trigger interns them, and a trigger counts a deleted row out, deleting a term or a
  session's count with its last row (metadata_index.py).
- `views`: each retrieval view as a range of one session's messages; its `doc_id` is
  its rowid in the FTS5 index. A view's text is never stored twice: its content is
  its messages' content, its indexed terms its messages' tokens.
"""
from __future__ import annotations

import shlex
import sqlite3
from typing import Callable, List, Set, Union

from ..errors import StoreError
from . import fts
from .connection import transaction
from .ids import free_tag, session_tag
from .settings import reindex_command


def _retag_sessions(conn: sqlite3.Connection) -> None:
    """Migration 2: every session's tag from (user_id, session_id), unique, given in session order."""
    rows = conn.execute("SELECT s.session_key, u.user_id, s.session_id FROM sessions s"
                        " JOIN users u ON u.user_key = s.user_key ORDER BY s.session_key").fetchall()
    taken: Set[str] = set()
    for session_key, user_id, session_id in rows:
        tag = free_tag(user_id, session_id, taken.__contains__)
        taken.add(tag)
        conn.execute("UPDATE sessions SET tag = ? WHERE session_key = ?", (tag, session_key))


def _add_meaning_column(conn: sqlite3.Connection) -> None:
    """Migration 4: the messages' meaning column, unless the file has it already."""
    if "meaning" not in [row[1] for row in conn.execute("PRAGMA table_info(messages)")]:
        conn.execute("ALTER TABLE messages ADD COLUMN meaning BLOB")


def _add_embedding_column(conn: sqlite3.Connection) -> None:
    """Migration 7: the messages' embedding column, unless the file has it already."""
    if "embedding" not in [row[1] for row in conn.execute("PRAGMA table_info(messages)")]:
        conn.execute("ALTER TABLE messages ADD COLUMN embedding BLOB")


_COLUMNS_5 = (("messages", "metadata", "TEXT"), ("messages", "dated_on_receipt", "INTEGER NOT NULL DEFAULT 0"),
              ("messages", "number", "INTEGER"), ("sessions", "deleted_messages", "INTEGER NOT NULL DEFAULT 0"),
              ("requests", "fingerprint", "TEXT"))


def _add_metadata_columns(conn: sqlite3.Connection) -> None:
    """Migration 5: the columns, table and indexes it adds, each unless the file has it already."""
    for table, column, kind in _COLUMNS_5:
        if column not in [row[1] for row in conn.execute("PRAGMA table_info(%s)" % table)]:
            conn.execute("ALTER TABLE %s ADD COLUMN %s %s" % (table, column, kind))
    conn.execute("CREATE INDEX IF NOT EXISTS messages_by_number ON messages (session_key, number)"
                 " WHERE number IS NOT NULL")
    conn.execute("""CREATE TABLE IF NOT EXISTS metadata_index (
        user_key INTEGER NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        session_key INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (user_key, key, value, session_key, seq)
    ) WITHOUT ROWID""")
    conn.execute("CREATE INDEX IF NOT EXISTS metadata_by_message ON metadata_index (session_key, seq)")


def _add_attempt_column(conn: sqlite3.Connection) -> None:
    """Migration 6: each session's `attempt`, the candidate of session_tag() its tag is, found again
    from the tag (0 but where two sessions' first candidates collided); each user's `tag_floor`,
    and `retired_users`, the floors of users removed with their last session."""
    for table, column in (("sessions", "attempt"), ("users", "tag_floor")):
        if column not in [row[1] for row in conn.execute("PRAGMA table_info(%s)" % table)]:
            conn.execute("ALTER TABLE %s ADD COLUMN %s INTEGER NOT NULL DEFAULT 0" % (table, column))
    conn.execute("CREATE TABLE IF NOT EXISTS retired_users (user_id TEXT PRIMARY KEY, tag_floor INTEGER NOT NULL)"
                 " WITHOUT ROWID")
    rows = conn.execute("SELECT s.session_key, u.user_id, s.session_id, s.tag FROM sessions s"
                        " JOIN users u ON u.user_key = s.user_key ORDER BY s.session_key").fetchall()
    for session_key, user_id, session_id, tag in rows:
        attempt = next((a for a in range(64) if session_tag(user_id, session_id, a) == tag), 0)
        if attempt:
            conn.execute("UPDATE sessions SET attempt = ? WHERE session_key = ?", (attempt, session_key))


_METADATA_6 = [
    """CREATE TABLE metadata_terms (
        term INTEGER PRIMARY KEY,
        user_key INTEGER NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        messages INTEGER NOT NULL,
        UNIQUE (user_key, key, value)
    )""",
    "INSERT INTO metadata_terms (user_key, key, value, messages) SELECT user_key, key, value, count(*)"
    " FROM metadata_index GROUP BY user_key, key, value ORDER BY user_key, key, value",
    """CREATE TABLE metadata_sessions (
        term INTEGER NOT NULL,
        session_key INTEGER NOT NULL,
        messages INTEGER NOT NULL,
        PRIMARY KEY (term, session_key)
    ) WITHOUT ROWID""",
    "INSERT INTO metadata_sessions (term, session_key, messages) SELECT t.term, i.session_key, count(*)"
    " FROM metadata_index i JOIN metadata_terms t ON t.user_key = i.user_key AND t.key = i.key AND t.value = i.value"
    " GROUP BY t.term, i.session_key",
    """CREATE TABLE metadata_index_6 (
        session_key INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        term INTEGER NOT NULL,
        PRIMARY KEY (session_key, seq, term)
    ) WITHOUT ROWID""",
    "INSERT INTO metadata_index_6 (session_key, seq, term) SELECT i.session_key, i.seq, t.term FROM metadata_index i"
    " JOIN metadata_terms t ON t.user_key = i.user_key AND t.key = i.key AND t.value = i.value",
    "DROP TABLE metadata_index",  # and its index metadata_by_message, which the new primary key does the work of
    "ALTER TABLE metadata_index_6 RENAME TO metadata_index",
    """CREATE VIEW metadata_rows (user_key, key, value, session_key, seq) AS SELECT t.user_key, t.key, t.value,
        i.session_key, i.seq FROM metadata_index i JOIN metadata_terms t ON t.term = i.term""",
    """CREATE TRIGGER metadata_row_added INSTEAD OF INSERT ON metadata_rows BEGIN
        INSERT INTO metadata_terms (user_key, key, value, messages) VALUES (NEW.user_key, NEW.key, NEW.value, 1)
            ON CONFLICT (user_key, key, value) DO UPDATE SET messages = messages + 1;
        INSERT INTO metadata_index (session_key, seq, term) SELECT NEW.session_key, NEW.seq, term
            FROM metadata_terms WHERE user_key = NEW.user_key AND key = NEW.key AND value = NEW.value;
        INSERT INTO metadata_sessions (term, session_key, messages) SELECT term, NEW.session_key, 1
            FROM metadata_terms WHERE user_key = NEW.user_key AND key = NEW.key AND value = NEW.value
            ON CONFLICT (term, session_key) DO UPDATE SET messages = messages + 1;
    END""",
    """CREATE TRIGGER metadata_row_removed AFTER DELETE ON metadata_index BEGIN
        UPDATE metadata_sessions SET messages = messages - 1 WHERE term = OLD.term AND session_key = OLD.session_key;
        DELETE FROM metadata_sessions WHERE term = OLD.term AND session_key = OLD.session_key AND messages = 0;
        UPDATE metadata_terms SET messages = messages - 1 WHERE term = OLD.term;
        DELETE FROM metadata_terms WHERE term = OLD.term AND messages = 0;
    END""",
]


def _intern_metadata(conn: sqlite3.Connection) -> None:
    """Migration 6: each (user, key, value) of `metadata_index` once, as a term of `metadata_terms`, the index
    as rows of integers and `metadata_sessions` (metadata_index.py says why), unless the file has them already."""
    if "term" in [row[1] for row in conn.execute("PRAGMA table_info(metadata_index)")]:
        # A file made with this layout up front (tests do) and then given migration 5's index again.
        conn.execute("DROP INDEX IF EXISTS metadata_by_message")
        return
    for statement in _METADATA_6:
        conn.execute(statement)


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
        *fts.CREATE_SQL,
    ],
    [
        # Session tags were sha256(session_id): two users' sessions of one session_id shared ids.
        _retag_sessions,
        "CREATE UNIQUE INDEX sessions_by_tag ON sessions (tag)",
    ],
    [
        # A deletion bumped the generation, and every Store on the file emptied all its caches.
        "CREATE TABLE deletions (seq INTEGER PRIMARY KEY, user_key INTEGER NOT NULL, session_key INTEGER NOT NULL)",
    ],
    [
        # Each message's meaning vector (text/meaning.py), derived at write time as its tokens are;
        # a database from before has none until `flowmem reindex` (index version 8).
        _add_meaning_column,
    ],
    [
        # Metadata, receipt dating, stable ids past a deleted message, replay fingerprints (issue 25).
        _add_metadata_columns,
    ],
    [
        # A session deleted and sent again took its old tag, so its messages the ids of deleted ones (issue 31).
        _add_attempt_column,
        # Every metadata key and value was stored three times, and a filter cost one lookup per pair (issue 31).
        _intern_metadata,
    ],
    [
        # A user's own embedder's vectors, written after the Add that stored the message (issue 35;
        # model_vectors.py), and per user how many were written: what a held entry is checked against.
        _add_embedding_column,
        "CREATE TABLE IF NOT EXISTS embedding_marks (user_key INTEGER PRIMARY KEY, written INTEGER NOT NULL)",
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
    except sqlite3.OperationalError as e:
        raise StoreError(
            "this Python's SQLite %s has no FTS5; flowmem needs a Python whose sqlite3 "
            "module is built with FTS5 (the python.org and most distribution builds are)" % sqlite3.sqlite_version
        ) from e
    finally:
        conn.close()


def check_schema(conn: sqlite3.Connection, path: str, create: bool, read_only: bool) -> None:
    """Refuse a database from a newer flowmem; read-only, also one that needs a migration."""
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        empty = version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    except sqlite3.DatabaseError as e:
        raise StoreError("cannot open database %s: %s" % (path, e)) from e
    if version > SCHEMA_VERSION:
        raise StoreError("database %s has schema version %d; this flowmem knows up to %d (upgrade flowmem)"
                         % (path, version, SCHEMA_VERSION))
    if empty and not create:
        raise StoreError("%s is empty, not a flowmem database; create one with `flowmem init --db %s`"
                         % (path, shlex.quote(path)))
    if read_only and version < SCHEMA_VERSION:
        raise StoreError("database %s has schema version %d and needs an upgrade to %d, which a read-only open "
                         "cannot do; open it once read-write (`%s` upgrades it)"
                         % (path, version, SCHEMA_VERSION, reindex_command(path, {})))


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Upgrade the schema to SCHEMA_VERSION, one transaction per version (the caller holds the write lock)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with transaction(conn, "BEGIN IMMEDIATE", path):
            for step in MIGRATIONS[target - 1]:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
            conn.execute("PRAGMA user_version = %d" % target)
