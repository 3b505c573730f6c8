"""Connections to the database file, and the transactions every read and write runs in.

All writes go through one connection under a lock, in `BEGIN IMMEDIATE`
transactions (transaction()), so an Add is stored whole or not at all and
overlapping retries of one request see each other. Reads come from a pool of
connections, each search in one read transaction (a consistent snapshot; WAL lets
it run beside writes). Every connection waits BUSY_TIMEOUT_MS for a lock and zeroes
freed pages (connect()).
"""
from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sqlite3
import urllib.parse
from typing import Iterator

from ..errors import StoreError
from .sqlite_errors import storage_errors

log = logging.getLogger("flowmem.store")

BUSY_TIMEOUT_MS = 30_000  # how long a write waits for another writer before Unavailable

SIDECARS = ("-wal", "-shm", "-journal")


def file_uri(path: str, mode: str) -> str:
    """An SQLite URI for `path`: mode rwc (create), rw (must exist) or ro (read-only)."""
    return "file:%s?mode=%s" % (urllib.parse.quote(os.path.abspath(path)), mode)


def connect(uri: str, synchronous: str, busy_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
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


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, begin: str, path: str) -> Iterator[None]:
    """`begin` ... COMMIT, or ROLLBACK on any error; storage errors a caller can meet become FlowmemErrors."""
    with storage_errors(path):
        try:
            conn.execute(begin)
            yield
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise


def _rollback(conn: sqlite3.Connection) -> None:
    # After SQLITE_FULL or an I/O error SQLite may already have rolled the transaction back;
    # a ROLLBACK then fails ("no transaction is active") and would hide the real error.
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as e:
            log.warning("rollback failed: %s", e)
