"""The core: Add, Search, health, delete and stats as calls on plain Python values.

Memory takes a request body as a dict (decoded JSON) and returns the response body as
a dict. It knows nothing of HTTP; the HTTP layer, the CLI and the evaluation tools all
call it, so they all run the same code path.

The index settings of a Config (window_size ... resolve_times) are the ones asked for
explicitly (Config.index_settings()); None leaves each to the database, and store.py
refuses a differing one. A new database takes those given when it is created (by
init(), or by the first Memory on the file); reindex() is the only way to change those
of an existing one. The Ranking that search weighs and bounds its work with is the
Config's (Config.ranking()), for the index settings the database actually has:
retrieval takes it as given.
"""
from __future__ import annotations

import contextlib
import gc
import sqlite3
from typing import Any, Callable, Dict, Iterator, Mapping, Optional

from . import __version__
from .config import Config
from .retrieval.pipeline import search
from .retrieval.ranking import Ranking
from .storage.settings import ViewSettings
from .storage.store import Store, init_database
from .validation import parse_add, parse_search


def make_ranking(config: Optional[Config] = None, index: Optional[ViewSettings] = None) -> Ranking:
    """`config.ranking(index)`, for tools and tests: the default Config if none, a new database's index if none.

    config: the settings (default: every default).
    index: the settings of the index searched (default: those a new database gets).
    """
    return (config or Config()).ranking(index or ViewSettings())


def init(config: Config) -> ViewSettings:
    """Create a new database at `config.db` with its index settings; StoreError if one is there."""
    return init_database(config.db, settings=config.index_settings(), synchronous=config.synchronous)


def reindex(config: Config, progress: Optional[Callable[[int, int], None]] = None) -> ViewSettings:
    """Rebuild the index of the existing database `config.db`, with the index settings given (the rest kept).

    Safe while a server has the file open (storage.store.Store.reindex). `progress(done, total)`
    counts messages. Returns the settings the index now has.
    """
    # cache_messages=0: rebuilding reads messages from the file, never through the session cache.
    store = Store(config.db, synchronous=config.synchronous, cache_messages=0, create=False, check_index=False)
    try:
        return store.reindex(settings=config.index_settings(), progress=progress)
    finally:
        store.close()


@contextlib.contextmanager
def collector_paused(pause: bool) -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, if `pause` and it is on; back on after.

    The collector is process-wide: whoever turned it off turns it back on, so with
    searches on several threads it is on again once the last of those finishes, and a
    collector someone else switched off stays off.
    """
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


class Memory:
    """A flowmem memory on one database file."""

    def __init__(self, config: Config, read_only: bool = False, create: bool = True):
        """Open the database named by `config.db`, created and migrated as needed.

        `read_only` opens it without writing anything (search, stats, backup work);
        `create=False` refuses a missing file. Index settings given in `config` that
        differ from the database's raise StoreError naming the reindex command.
        """
        self.config = config
        self.store = Store(config.db, settings=config.index_settings(), synchronous=config.synchronous,
                           cache_messages=config.cache_messages, cache_words=config.cache_words,
                           read_only=read_only, create=create)
        self._ranking = config.ranking(self.store.settings)

    def add(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """Store an Add body (contract: request_id, user_id, session_id, messages).

        Returns the contract's success body, echoing the three ids. A repeated
        (request_id, user_id) returns the same body and writes nothing. Raises
        InvalidField for a malformed body, before anything is written.
        """
        request = parse_add(body)
        self.store.add(request.user_id, request.session_id, request.request_id, request.messages)
        return {
            "success": True,
            "request_id": request.request_id,
            "user_id": request.user_id,
            "session_id": request.session_id,
        }

    def search(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """Answer a Search body (contract: query, user_id, top_k, optional options) with `{"data": [...]}`."""
        request = parse_search(body, self.config.top_k_cap)
        with collector_paused(self.config.pause_gc):
            return {"data": search(self.store, request.user_id, request.query, request.top_k, request.options,
                                   self._ranking)}

    def health(self) -> Dict[str, Any]:
        """Status, versions and schema; never any memory content."""
        return {
            "status": "ok",
            "version": __version__,
            "sqlite_version": sqlite3.sqlite_version,
            "schema_version": self.store.schema_version(),
        }

    def delete_user(self, user_id: str) -> bool:
        """Remove every trace of `user_id`; False if there was nothing to remove."""
        return self.store.delete_user(user_id)

    def stats(self, user_id: Optional[str] = None) -> Dict[str, Any]:
        """Counts for the database, or for one user."""
        return self.store.stats(user_id)

    def backup(self, target: str, force: bool = False) -> Dict[str, Any]:
        """A consistent, checked, self-contained copy of the database at `target` (storage.store.Store.backup)."""
        return self.store.backup(target, force)

    def close(self) -> None:
        """Close the database cleanly (checkpointing its WAL)."""
        self.store.close()
