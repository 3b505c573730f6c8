"""The core: Add, Search, health, delete and stats as calls on plain Python values.

Memory takes a request body as a dict (decoded JSON) and returns the response body as
a dict. It knows nothing of HTTP; the HTTP layer, the CLI and the evaluation tools all
call it, so they all run the same code path.

The index settings of a Config (window_size ... resolve_times) are the ones asked for
explicitly; None leaves each to the database, and store.py refuses a differing one. A
new database takes those given when it is created (by init(), or by the first Memory
on the file); reindex() is the only way to change those of an existing one. The
Ranking that search weighs and bounds its work with is built here from the Config
(make_ranking()): retrieval takes it as given.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Callable, Dict, Mapping, Optional

from . import __version__
from .config import Config
from .retrieval.pipeline import search
from .retrieval.ranking import Ranking
from .storage.settings import ViewSettings
from .storage.store import Store, init_database
from .validation import parse_add, parse_search


def make_ranking(config: Any = None, index: Optional[ViewSettings] = None) -> Ranking:
    """The Ranking a Config describes (the default Config if none) for an index with `index`'s settings.

    `stem` and `resolve_times` are the index's, never the Config's: a question must be
    read as the messages were (default: a new database's settings).
    """
    config = config or Config()
    index = index or ViewSettings()
    return Ranking(config.bm25_k1, config.bm25_b, config.rrf_k, config.weights(), config.adjacency_top,
                   config.candidate_pool, config.context_pool, config.head_size, config.feedback_docs,
                   config.feedback_terms, config.postings_budget, config.tail_weights(), config.view_kind, config.message_share,
                   config.state_update_window, index.stem, index.resolve_times, config.date_prefix,
                   config.time_annotations)


def index_settings(config: Config) -> Dict[str, Any]:
    """The index settings `config` gives explicitly, by name; the others are left to the database."""
    return {name: getattr(config, name) for name in ViewSettings._fields if getattr(config, name) is not None}


def init(config: Config) -> ViewSettings:
    """Create a new database at `config.db` with its index settings; StoreError if one is there."""
    return init_database(config.db, index_settings(config), config.synchronous)


def reindex(config: Config, progress: Optional[Callable[[int, int], None]] = None) -> ViewSettings:
    """Rebuild the index of the existing database `config.db`, with the index settings given (the rest kept).

    Safe while a server has the file open (storage.store.Store.reindex). `progress(done, total)`
    counts messages. Returns the settings the index now has.
    """
    store = Store(config.db, synchronous=config.synchronous, create=False, check_index=False)
    try:
        return store.reindex(index_settings(config), progress)
    finally:
        store.close()


class Memory:
    """A flowmem memory on one database file."""

    def __init__(self, config: Config, read_only: bool = False, create: bool = True):
        """Open the database named by `config.db`, created and migrated as needed.

        `read_only` opens it without writing anything (search, stats, backup work);
        `create=False` refuses a missing file. Index settings given in `config` that
        differ from the database's raise StoreError naming the reindex command.
        """
        self.config = config
        self.store = Store(config.db, index_settings(config), synchronous=config.synchronous,
                           cache_messages=config.cache_messages, read_only=read_only,
                           create=create)
        self._ranking = make_ranking(config, self.store.settings)

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
