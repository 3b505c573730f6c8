"""SQLite's errors as flowmem's: what a caller can meet becomes a FlowmemError with its status.

Storage errors a caller can meet (a full disk, a lock held past the timeout, I/O
errors) become StorageFull or Unavailable with nothing written (storage_error()); a
read-only file a StoreError. Any other sqlite3 error is a bug and stays as it is.
"""
from __future__ import annotations

import contextlib
import sqlite3
from typing import Iterator, Optional

from ..errors import FlowmemError, StorageFull, StoreError, Unavailable

SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN = 5, 6, 8, 10, 13, 14
# sqlite_errorcode exists from Python 3.11; before it, the message says which error it was.
_ERROR_MESSAGES = (("database or disk is full", SQLITE_FULL), ("database is locked", SQLITE_BUSY),
                   ("is locked", SQLITE_LOCKED), ("disk I/O error", SQLITE_IOERR),
                   ("readonly database", SQLITE_READONLY), ("unable to open database file", SQLITE_CANTOPEN))
STORAGE_FULL_RETRY_S = 30


def error_code(e: sqlite3.Error) -> Optional[int]:
    """SQLite's primary result code of an error, or None if it cannot be told."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF
    message = str(e)
    return next((code for text, code in _ERROR_MESSAGES if text in message), None)


def storage_error(e: sqlite3.Error, path: str) -> Optional[FlowmemError]:
    """The FlowmemError a caller should see for a failure of the storage under `path`, or None (a bug)."""
    code = error_code(e)
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
def storage_errors(path: str) -> Iterator[None]:
    """Raise storage_error()'s FlowmemError for an sqlite3 error it knows; others as they are."""
    try:
        yield
    except sqlite3.Error as e:
        mapped = storage_error(e, path)
        if mapped is None:
            raise
        raise mapped from e
