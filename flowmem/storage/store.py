"""The Store: one database file, its connections, and every transaction on it.

The Store owns the writer connection (and its lock and checkpointer.py's thread), a
pool of read connections, the index settings it reads with and the session cache.
Reads go through reading() (a Reader over one snapshot, reader.py), writes through
writing() (the writer in one BEGIN IMMEDIATE transaction); what they do is in
writer.py, reader.py, schema.py, settings.py and backup.py.

Live databases. Index settings are fixed per database (settings.py); nothing
rebuilds implicitly. reindex() rebuilds in one write transaction, which a server
beside it waits for like any other write, and bumps the generation. A deletion
(delete_user(), delete_session()) logs each session it removed instead (writer.py,
schema.py `deletions`). Every read and write transaction first reads the generation
and the last deletion logged (two rows of `meta`); when another process changed the
generation, this Store adopts the settings of that snapshot and empties its caches, so
it never answers from an index it no longer reads; when sessions were deleted since it
last looked, it forgets what it holds of them and of their users' postings, and
nothing of anyone else's (bounded_cache.py), or everything when the log no longer
reaches back that far (held.py). `read_only=True` opens the
file with SQLite's mode=ro: no writer, no checkpointer, no migration, so it works on
read-only files. `checkpoints="external"` leaves every checkpoint to another process
(Litestream, replicating the file): no background checkpoints, none after delete_user
or at close (checkpointer.py says why).

Storage errors a caller can meet (a full disk, a lock held past the timeout, I/O
errors) become StorageFull or Unavailable with nothing written (sqlite_errors.py).
"""
from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TypeVar

from ..errors import Conflict, InvalidField, StoreError
from ..text.features import Derived, derive
from . import appending, backup as backups, writer
from .appending import Refused, Stored
from .checkpointer import Checkpointer
from .connection import connect, file_uri, missing_database, refuse_sidecar, transaction
from .fair_lock import FairLock
from .held import Held, deletions_since
from .reader import Reader
from .rows import NewAdd
from .schema import check_fts5, check_schema, migrate
from .session_cache import SessionCache
from .session_rows import Placement
from .settings import (
    IndexState,
    SettingsRequest,
    ViewSettings,
    decode_settings,
    index_problem,
    read_marks,
    read_meta,
    requested_settings,
    write_meta,
)
from .sqlite_errors import SQLITE_CANTOPEN, error_code
from .writer import DeletedMessage

T = TypeVar("T")

log = logging.getLogger("flowmem.store")


class Store:
    """One flowmem database file. Thread-safe; call close() when done."""

    def __init__(self, path: str, *, synchronous: str, cache_messages: int, cache_postings_bytes: int = 0,
                 cache_vector_bytes: int = 0,
                 settings: SettingsRequest = None,
                 idle_readers: int = 16, read_only: bool = False, create: bool = True, check_index: bool = True,
                 checkpoints: str = "flowmem"):
        """Open the database at `path`, creating and migrating it as needed unless told not to.

        `settings` are the index settings asked for (ViewSettings names; a ViewSettings
        asks for all): unnamed ones are the database's, or for a new database
        ViewSettings' defaults; a named one that differs from the database's raises
        StoreError naming the reindex command, as does an index of another version
        (`check_index=False` skips both, for reindex() only). `synchronous` is SQLite's
        durability setting (FULL: an acknowledged Add survives power loss); `idle_readers`
        is how many idle read connections are kept; `cache_messages` bounds the
        messages search keeps in memory between searches (session_cache.py), `cache_postings_bytes`
        the bytes of users' message postings it keeps (postings.py), `cache_vector_bytes` those of
        their meaning vectors (vectors.py).
        `read_only` opens the file read-only (no writes of any kind, no migration);
        `create=False` refuses a missing file instead of creating it. `checkpoints`: "flowmem"
        (a background thread, checkpointer.py) or "external" (never this Store: Litestream's).
        """
        check_fts5()
        refuse_sidecar(path)
        self.path = path
        self.read_only = read_only
        self._synchronous = synchronous
        self._own_checkpoints = checkpoints != "external"
        self._idle_readers = idle_readers
        self._held = Held(path, cache_messages, cache_postings_bytes, cache_vector_bytes)
        self._idle: "queue.LifoQueue[sqlite3.Connection]" = queue.LifoQueue()
        self._write_lock = FairLock()  # first come, first served: an import's next chunk waits behind Adds
        self._writer: Optional[sqlite3.Connection] = None
        self._checkpointer: Optional[Checkpointer] = None
        self._closed = False
        if not create and not os.path.exists(path):
            raise missing_database(path)
        requested = requested_settings(settings)
        try:
            if read_only:
                self._open_read_only()
            else:
                self._open_writer(create)
            self._held.adopt(self._open_index(requested, check_index))
        except BaseException:
            self.close()
            raise

    # -- lifecycle -------------------------------------------------------------------

    def _open_connection(self) -> sqlite3.Connection:
        try:
            return connect(self._uri, self._synchronous)
        except sqlite3.Error as e:
            raise StoreError("cannot open database %s: %s" % (self.path, e)) from e

    def _open_writer(self, create: bool) -> None:
        """The writer connection (creating the file if `create`), WAL mode, migrations, the checkpointer."""
        self._uri = file_uri(self.path, "rwc" if create else "rw")
        self._writer = self._open_connection()
        check_schema(self._writer, self.path, create, self.read_only)
        try:
            mode = self._writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError("cannot open database %s: %s" % (self.path, e)) from e
        if mode.lower() != "wal":
            raise StoreError("cannot put database %s in WAL mode (got %s)" % (self.path, mode))
        with self._write_lock:
            migrate(self._writer, self.path)
        self._writer.execute("PRAGMA wal_autocheckpoint = 0")
        self._checkpointer = Checkpointer(self.path, self._uri, self._synchronous, self._write_lock)
        if self._own_checkpoints:
            self._checkpointer.start()

    def _open_read_only(self) -> None:
        """A first read connection (mode=ro), checked to be a flowmem database at this schema."""
        if not os.path.exists(self.path):
            raise missing_database(self.path)
        self._uri = file_uri(self.path, "ro")
        try:
            conn = connect(self._uri, self._synchronous)
        except sqlite3.Error as e:
            # A WAL database closed cleanly on a read-only medium: SQLite cannot create the
            # -shm that mode=ro needs. With no -wal there is no writer whose changes
            # immutable=1 could miss.
            if error_code(e) != SQLITE_CANTOPEN or os.path.exists(self.path + "-wal"):
                raise StoreError("cannot open database %s read-only: %s" % (self.path, e)) from e
            self._uri += "&immutable=1"
            conn = self._open_connection()
        self._idle.put(conn)  # closed by close() if the check fails
        check_schema(conn, self.path, False, self.read_only)

    def _open_index(self, requested: Mapping[str, Any], check: bool) -> IndexState:
        """The settings and generation of the index: a new database's are written, others checked."""
        if self.read_only:
            with self.reading(check=False) as reader:
                return self._index_of(reader.conn, requested, check)
        with self.writing(check=False) as conn:
            return self._index_of(conn, requested, check)

    def _index_of(self, conn: sqlite3.Connection, requested: Mapping[str, Any], check: bool) -> IndexState:
        meta = read_meta(conn)
        if "index_version" not in meta:  # a new database
            settings = ViewSettings()._replace(**requested)
            if not self.read_only:
                write_meta(conn, settings, 0)
            return IndexState(0, settings)
        stored = decode_settings(meta, self.path)
        problem = index_problem(self.path, meta, stored, requested) if check else None
        if problem:
            raise StoreError(problem)
        generation, deletions = read_marks(conn)
        return IndexState(generation, stored, deletions)

    # -- what tests and diagnostics may look at -------------------------------------

    @property
    def writer(self) -> Optional[sqlite3.Connection]:
        """The connection every write goes through (None when read-only); use it only while no write runs."""
        return self._writer

    @property
    def checkpointer(self) -> Optional[Checkpointer]:
        """The background thread that copies the WAL into the database (None when read-only)."""
        return self._checkpointer

    @property
    def cache(self) -> SessionCache:
        """Sessions kept in memory between searches (session_cache.py)."""
        return self._held.sessions

    def schema_version(self) -> int:
        with self.reading() as reader:
            return reader.conn.execute("PRAGMA user_version").fetchone()[0]

    @property
    def settings(self) -> ViewSettings:
        """The index settings of the newest index generation this Store has seen."""
        return self._held.index.settings

    def close(self) -> None:
        """Close every connection; the last close checkpoints the WAL into the file."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True  # from here no write begins
        # Stopped outside the write lock: the thread may be waiting for it to truncate a large
        # WAL, and joining it while holding the lock would wait forever.
        if self._checkpointer is not None:
            self._checkpointer.stop()
        with self._write_lock:
            while True:
                try:
                    self._idle.get_nowait().close()
                except queue.Empty:
                    break
            if self._writer is not None and self._own_checkpoints:
                try:
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error as e:
                    log.warning("checkpoint at close failed: %s", e)
            if self._writer is not None:
                self._writer.close()

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
            with transaction(conn, "BEGIN", self.path):
                index = self._held.check(conn) if check else self._held.index
                yield Reader(conn, self._held.sessions, index, self._held.postings, self._held.vectors,
                             self._held.model_vectors)
            reusable = True
        finally:
            if not reusable or self._closed or self._idle.qsize() >= self._idle_readers:
                conn.close()
            else:
                self._idle.put(conn)

    def stats(self, user_id: Optional[str] = None) -> Dict[str, object]:
        """Counts for the whole database, or for one user when `user_id` is given."""
        with self.reading() as r:
            if user_id is not None:
                return r.user_counts(user_id)
            out = r.database_counts()
        out["file_bytes"] = sum(
            os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p)
        )
        return out

    def backup(self, target: str, force: bool = False) -> Dict[str, Any]:
        """Copy the database to `target`: consistent, self-contained, checked; returns what was copied.

        One read snapshot, while writes go on; `target` is either absent, the old file
        (`force`), or the whole copy (backup.py).
        """
        return backups.backup(self.path, self._open_connection, target, force)

    # -- writes ----------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, check: bool = True) -> Iterator[sqlite3.Connection]:
        """The writer connection in a BEGIN IMMEDIATE transaction, at the newest index generation."""
        with self._write_lock:
            if self._closed:
                raise StoreError("the store is closed")
            writer, checkpointer = self._writer, self._checkpointer  # both set by _open_writer, or neither
            if writer is None or checkpointer is None:
                raise StoreError("database %s is open read-only" % self.path)
            with transaction(writer, "BEGIN IMMEDIATE", self.path):
                if check:
                    self._held.check(writer)
                yield writer
            checkpointer.wrote.set()

    def add(self, add: NewAdd) -> Stored:
        """Store one Add atomically. Returns Stored(False, the first one's fingerprint), writing
        nothing, if the request was stored before.

        Messages are appended to the session in the given order; the session's views
        are brought up to date in the same transaction, so the messages are
        searchable the moment this returns. Raises StorageFull or Unavailable (nothing
        written) when the storage cannot take it.
        """
        return self.add_many([add])[0]

    def add_many(self, adds: Sequence[NewAdd]) -> List[Stored]:
        """Store Adds in one transaction, all or none: for each, what add() returns. One the writer
        refuses (an import's ids that cannot be kept, its user deleted meanwhile) is raised as
        Refused, saying which, and nothing of any is written.

        An import's chunk (Memory.import_records): one hold of the write lock, which the Adds
        waiting for it get next (fair_lock.py). Each message's index features are made before
        the lock is taken, so the lock is held for the SQL alone.
        """
        settings = self.settings
        derived = self._derived(adds, settings)  # outside the lock
        with self.writing() as conn:
            if self.settings != settings:  # reindexed with other settings meanwhile (maybe by another process)
                settings = self.settings
                derived = self._derived(adds, settings)
            out = []
            for position, (add, features) in enumerate(zip(adds, derived)):
                placement = None if add.placement is None else Placement(*add.placement)
                try:
                    out.append(appending.add(conn, settings, add.user_id, add.session_id, add.request_id, add.messages,
                                          features, add.fingerprint, add.anchored, placement, add.user_key))
                except (InvalidField, Conflict) as e:
                    raise Refused(position, e) from e
            return out

    @staticmethod
    def _derived(adds: Sequence[NewAdd], settings: ViewSettings) -> List[List[Derived]]:
        return [[derive(m.content, m.timestamp_ms, settings) for m in add.messages] for add in adds]

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
        with self.writing(check=False) as conn:
            settings = decode_settings(read_meta(conn), self.path)._replace(**requested_settings(settings))
            generation, deletions = read_marks(conn)
            generation += 1
            writer.rebuild(conn, settings, progress or (lambda done, total: None))
            write_meta(conn, settings, generation)
        self._held.adopt(IndexState(generation, settings, deletions))
        return settings

    def delete_user(self, user_id: str) -> bool:
        """Remove every trace of a user: messages, views, index entries, idempotency records, cached reads.

        Returns False if the user was unknown. The FTS5 index is merged in the same
        transaction so that no old index page keeps the user's terms, and the WAL is
        checkpointed (unless checkpoints are external); with secure_delete on, freed pages
        are zeroed. Other writes wait meanwhile: about 7 s on a database of 1M messages (2 cores).
        """
        if self._delete(lambda conn: writer.delete_user(conn, user_id)) is None:
            return False
        if not self._own_checkpoints:
            return True  # Litestream's next checkpoint copies the rest (docs/cluster.md: the replica keeps history)
        with self._write_lock:
            try:
                if self._writer and self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                    log.warning("a read of an older snapshot outlasted the busy timeout: the WAL keeps pages of "
                                "the deleted user until later writes overwrite them")
            except sqlite3.Error as e:  # the user is deleted; the background checkpointer copies the rest
                log.warning("checkpoint after deleting a user failed: %s", e)
        return True

    def delete_session(self, user_id: str, session_id: str) -> Optional[int]:
        """Remove one session of a user as delete_user removes a user (writer.delete_session());
        the number of messages removed, None if the user has no such session."""
        return self._delete(lambda conn: writer.delete_session(conn, user_id, session_id))

    def delete_message(self, user_id: str, tag: str, number: int) -> Optional[DeletedMessage]:
        """Remove one message of a user as delete_session removes a session (writer.delete_message());
        None if the user has no such message."""
        return self._delete(lambda conn: writer.delete_message(conn, self.settings, user_id, tag, number))

    def _delete(self, delete: Callable[[sqlite3.Connection], Optional[T]]) -> Optional[T]:
        """Run `delete` in one write transaction, which logs each session it removes (writer.py);
        once committed, forget what this Store holds of them. Every other Store on the file does
        the same at its next transaction (Held.check()); none forgets anything else."""
        with self.writing() as conn:
            seen = read_marks(conn)[1]
            removed = delete(conn)
            if removed is None:
                return None
            writer.seal_deletions(conn, seen)  # a user's sessions one entry; the log trimmed to its last entries
            upto = read_marks(conn)[1]
            deleted = deletions_since(conn, seen, upto)
        self._held.forget(deleted, seen, upto)  # once committed: a rolled-back deletion's numbers are given again
        return removed

