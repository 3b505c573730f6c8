"""The database path checked before SQLite sees it, so that a wrong one is named in words.

SQLite answers a directory given as the database, or a file in a directory that does
not exist, with "unable to open database file" (or "disk I/O error" read-only), which
names neither the path's problem nor its fix. check() says which part of the path is
wrong and what to give instead. It only looks at the file system (stat calls), before
any database is opened or created, so a refused path leaves nothing behind.
"""
from __future__ import annotations

import os

from .errors import StoreError


def check(path: str, name: str = "--db") -> None:
    """StoreError if `path` cannot be a database file: it is a directory, or the directory it
    would be in does not exist or is not a directory. `name` is how the message calls the path
    (the CLI's flag; "the database path" for Memory)."""
    if os.path.isdir(path):
        suggestion = os.path.join(path, "flowmem.db")
        raise StoreError("%s names a directory, %s; give a file path such as %s" % (name, path, suggestion))
    if os.path.exists(path):
        return  # a file (or something else SQLite will judge): the store says what is wrong with it
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(directory):
        raise StoreError("directory %s does not exist (for %s %s)" % (_shown(path, directory), name, path))
    if not os.path.isdir(directory):
        raise StoreError("%s is not a directory (for %s %s)" % (_shown(path, directory), name, path))


def _shown(path: str, directory: str) -> str:
    """The directory as the user wrote it, when they wrote one (`/x/y` of `/x/y/m.db`); else absolute."""
    written = os.path.dirname(path)
    return written if written and os.path.abspath(written) == directory else directory
