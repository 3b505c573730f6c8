"""The core: Add, Search, health, delete and stats as calls on plain Python values.

Memory takes a request body as a dict (decoded JSON) and returns the response body as
a dict. It knows nothing of HTTP; the HTTP layer, the CLI and the evaluation tools all
call it, so they all run the same code path.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Dict, Mapping, Optional

from . import __version__
from .config import Config
from .search import make_ranking, search
from .store import Store, ViewSettings
from .validation import parse_add, parse_search


class Memory:
    """A flowmem memory on one database file."""

    def __init__(self, config: Config):
        """Open the database named by `config.db` (created and migrated as needed)."""
        self.config = config
        views = ViewSettings(config.window_size, config.segment_max_messages, config.segment_max_gap_s * 1000,
                             config.stem, config.split_speakers, config.resolve_times)
        self.store = Store(config.db, views, synchronous=config.synchronous)
        self._ranking = make_ranking(config)

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

    def close(self) -> None:
        """Close the database cleanly (checkpointing its WAL)."""
        self.store.close()
