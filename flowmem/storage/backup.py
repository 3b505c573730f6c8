"""Backup: a consistent, self-contained, checked copy of a database file.

SQLite's backup API copies every page in one step, so the copy is one read snapshot
(never restarted by writes, which go on meanwhile: WAL). The copy is switched to
journal_mode=DELETE, so it is one file that opens read-only anywhere, and must pass
PRAGMA integrity_check and FTS5's integrity-check. It is written under a temporary
name beside the target and renamed at the end, so the target is either absent, the
old file (`force`), or the whole copy.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import tempfile
from typing import Any, Callable, Dict

from ..errors import BackupRefused, StoreError
from . import fts
from .connection import SIDECARS, refuse_sidecar
from .sqlite_errors import storage_errors


def backup(path: str, open_connection: Callable[[], sqlite3.Connection], target: str,
           force: bool = False) -> Dict[str, Any]:
    """Copy the database at `path` (read through `open_connection()`) to `target`; returns what was copied."""
    _refuse_target(path, target)
    if os.path.exists(target) and not force:
        raise BackupRefused("%s exists; give --force to overwrite it" % target)
    directory = os.path.dirname(os.path.abspath(target))
    fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".partial", dir=directory)
    os.close(fd)
    os.chmod(partial, stat.S_IMODE(os.stat(path).st_mode))  # readable by whoever reads the database
    try:
        with storage_errors(target):
            copied = _copy_to(open_connection, partial)
        if os.path.exists(target) and not force:
            raise BackupRefused("%s appeared during the backup; give --force to overwrite it" % target)
        os.replace(partial, target)
        _fsync_directory(directory)
    except BaseException:
        for leftover in (partial, partial + "-journal", partial + "-wal", partial + "-shm"):
            with contextlib.suppress(OSError):
                os.remove(leftover)
        raise
    return dict(copied, path=target, bytes=os.path.getsize(target))


def _refuse_target(path: str, target: str) -> None:
    """No backup may replace this database, its WAL or shared memory, or a database in use (--force or not)."""
    refuse_sidecar(target)
    own = {os.path.realpath(path + suffix) for suffix in ("",) + SIDECARS}
    if os.path.realpath(target) in own:
        raise BackupRefused("%s is the database being copied (or one of its files); back up to another path" % target)
    if any(os.path.exists(target + suffix) for suffix in SIDECARS):
        raise BackupRefused("%s has a WAL or journal beside it: it may be a database in use; stop what uses it "
                         "and remove it first, or back up to another path" % target)


def _copy_to(open_connection: Callable[[], sqlite3.Connection], partial: str) -> Dict[str, Any]:
    source = open_connection()
    try:
        copy = sqlite3.connect(partial, isolation_level=None)
        try:
            source.backup(copy)  # pages=-1: all pages in one step, one snapshot
            copy.execute("PRAGMA journal_mode = DELETE")
            check_integrity(copy, "the copy %s" % partial)
            counts = {"messages": copy.execute("SELECT count(*) FROM messages").fetchone()[0],
                      "users": copy.execute("SELECT count(*) FROM users").fetchone()[0]}
        finally:
            copy.close()
    finally:
        source.close()
    with open(partial, "rb") as f:
        os.fsync(f.fileno())
    return counts


def check_integrity(conn: sqlite3.Connection, name: str) -> None:
    """Raise StoreError unless SQLite and FTS5 both find the database at `conn` whole.

    name: how the error names the database ("the copy PATH").
    """
    problems = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
    if problems != ["ok"]:
        raise StoreError("%s failed SQLite's integrity check: %s" % (name, "; ".join(problems[:3])))
    try:
        conn.execute(fts.integrity_check_sql())
    except sqlite3.DatabaseError as e:
        raise StoreError("%s failed FTS5's integrity check: %s" % (name, e)) from e


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
