"""The core: Add, Search, health, delete and stats as calls on plain Python values.

Memory takes a request body as a dict (decoded JSON) and returns the response body as
a dict. It knows nothing of HTTP; the HTTP layer, the CLI and the evaluation tools all
call it, so they all run the same code path.

The index settings of a Config (window_size ... resolve_times) are the ones asked for
explicitly (Config.index_settings()); None leaves each to the database, and store.py
refuses a differing one. A new database takes those given when it is created (by
init(), or by the first Memory on the file); reindex() is the only way to change those
of an existing one. The Ranking that search weighs and bounds its work with is the
Config's (Config.ranking()); retrieval takes it as given, and reads a question with the
index settings of the snapshot it searches.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
import sqlite3
import time
from typing import Any, Callable, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

from . import __version__, db_path, importing, paging, portable
from .config import Config
from .embedding import Embed, Embedding, http_embedder, set_model
from .errors import NotFound, StoreError
from .listing_params import parse_limit, parse_order
from .metadata import parse_filter_text
from .receipt import receipt_ms
from .retrieval import model_channel
from .retrieval.model_channel import ModelQuestion
from .retrieval.pipeline import search
from .retrieval.ranking import Ranking
from .sdk import MemoryAPI
from .storage import listing
from .storage.rows import NewAdd
from .storage.settings import ViewSettings, reindex_command, requested_settings
from .storage.store import Store
from .validation import parse_add, parse_id, parse_search, parse_time


def make_ranking(config: Optional[Config] = None) -> Ranking:
    """`config.ranking()`, for tools and tests: the Ranking of `config`'s settings (default: every default)."""
    return (config or Config()).ranking()


def init(config: Config) -> ViewSettings:
    """Create a new database at `config.db` with its index settings; StoreError if anything is there
    (settings of an existing database change only by `reindex`)."""
    path, settings = config.db, config.index_settings()
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError as e:
        raise StoreError("%s exists; init only creates new databases (change an index's settings with `%s`)"
                         % (path, reindex_command(path, requested_settings(settings)))) from e
    except OSError as e:
        raise StoreError("cannot create database %s: %s" % (path, e.strerror)) from e
    try:
        store = Store(path, synchronous=config.synchronous, cache_messages=0, settings=settings,
                      checkpoints=config.checkpoints)
    except BaseException:
        os.remove(path)
        raise
    try:
        return store.settings
    finally:
        store.close()


def reindex(config: Config, progress: Optional[Callable[[int, int], None]] = None) -> ViewSettings:
    """Rebuild the index of the existing database `config.db`, with the index settings given (the rest kept).

    Safe while a server has the file open (storage.store.Store.reindex). `progress(done, total)`
    counts messages. Returns the settings the index now has. With `embedder_model` set, another
    model's vectors are cleared (embedding.set_model()); with an embedder configured, every message
    without a vector gets one before this returns (or the embedder fails: they wait for the server's).
    """
    # cache_messages=0: rebuilding reads messages from the file, never through the session cache.
    store = Store(config.db, synchronous=config.synchronous, cache_messages=0, create=False, check_index=False,
                  checkpoints=config.checkpoints)
    try:
        settings = store.reindex(settings=config.index_settings(), progress=progress)
        if config.embedder_model:
            set_model(store, config.embedder_model)
        embedding = _embedding(store, config, None)
        if embedding is not None:
            embedding.drain(timeout_s=float("inf"))
            embedding.close()
        return settings
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


_MESSAGE_ID = re.compile(r"m-([0-9a-f]{1,64})-([1-9][0-9]{0,17})")  # storage/ids.py message_id()


class Memory(MemoryAPI):
    """A flowmem memory on one database file."""

    def __init__(self, config: Union[Config, str, "os.PathLike[str]"], read_only: bool = False, create: bool = True,
                 clock: Optional[Callable[[], float]] = time.time, embed: Optional[Embed] = None):
        """Open the database named by `config.db` (or the database path `config`, every setting
        its default), created and migrated as needed.

        `read_only` opens it without writing anything (search, stats, backup work);
        `create=False` refuses a missing file. Index settings given in `config` that
        differ from the database's raise StoreError naming the reindex command. `clock` (Unix
        seconds) dates the messages of an Add that sends none with a timestamp (validation.parse_add());
        None leaves them undated, as a database from before receipt dating has them. A reading that is
        not such a time refuses every Add, naming the clock (receipt.py). `embed`, a function from a
        list of texts to a list of vectors, is the operator's own embedder (embedding.py), as
        `config.embedder_url` names one over HTTP; `config.embedder_model` names it in the database.
        """
        self.clock = clock
        if not isinstance(config, Config):
            config = Config(db=os.fspath(config)).validate()
        db_path.check(config.db, "the database path")
        self.config = config
        self.store = Store(config.db, settings=config.index_settings(), synchronous=config.synchronous,
                           cache_messages=config.cache_messages, cache_postings_bytes=config.cache_postings_bytes,
                           cache_vector_bytes=config.cache_vector_bytes,
                           read_only=read_only, create=create, checkpoints=config.checkpoints)
        self._ranking = config.ranking()
        self.embedding: Optional[Embedding] = None
        try:
            self.embedding = _embedding(self.store, config, embed)
        except BaseException:
            self.store.close()
            raise

    def add_body(self, body: Mapping[str, Any], strict: bool = True) -> Dict[str, Any]:
        """Store an Add body (contract: request_id, user_id, session_id, messages; ours: metadata,
        anchored: the request_id names the body only, and the Add is stored under an id anchored
        where its first message lands, storage/ids.py anchored_id(), answered as its request_id).

        Returns the contract's success body, echoing the three ids, with `stored` (False: the
        (request_id, user_id) was stored before and nothing was written; `body_differs` True
        then if that Add's body was not this one) and `dated_on_receipt` (how many messages
        had no timestamp and were dated with this call's time). Raises InvalidField for a
        malformed body, before anything is written; `strict` (the Python API) refuses unknown
        fields, otherwise (HTTP, as the contract says) they are ignored and named in
        `ignored_fields`.
        """
        request = parse_add(body, None if self.clock is None else receipt_ms(self.clock()), strict,
                            self.config.max_add_messages)
        outcome = self.store.add(NewAdd(request.user_id, request.session_id, request.request_id, request.messages,
                                        request.fingerprint, request.anchored))
        answer: Dict[str, Any] = {
            "success": True,
            "request_id": outcome.request_id,
            "user_id": request.user_id,
            "session_id": request.session_id,
            "stored": outcome.new,
            "dated_on_receipt": request.dated_on_receipt if outcome.new else 0,
        }
        if outcome.new and self.embedding is not None:
            self.embedding.notify(outcome.user_key)
        if not outcome.new and outcome.fingerprint not in (None, request.fingerprint):
            answer["body_differs"] = True
        if request.ignored_fields:
            answer["ignored_fields"] = list(request.ignored_fields)
        return answer

    def search_body(self, body: Mapping[str, Any], strict: bool = True) -> Dict[str, Any]:
        """Answer a Search body (contract: query, user_id, top_k, optional options; optional filters:
        session_id, since, until, role, metadata, retrieval/filters.py) with `{"data": [...], "evidence":
        grade}` (grade: "strong", "weak" or "none", retrieval/strength.py); unknown fields are refused with
        `strict`, otherwise named in `ignored_fields` (add_body())."""
        request = parse_search(body, self.config.top_k_cap, strict)
        question, failed = self.model_question(request.user_id, request.query)
        with collector_paused(self.config.pause_gc):
            found = search(self.store, request.user_id, request.query, request.top_k, request.options,
                           self._ranking, request.filters, question)
        answer: Dict[str, Any] = {"data": found.items, "evidence": found.evidence}
        if self.embedding is not None:  # what the embedder's ranking could not see (embedding.py)
            answer["embedder"] = {"waiting": found.model_waiting} if failed is None else {"error": failed}
        if request.ignored_fields:
            answer["ignored_fields"] = list(request.ignored_fields)
        return answer

    def model_question(self, user_id: str, query: str) -> Tuple[Optional[ModelQuestion], Optional[str]]:
        """The embedder's vector of `query` without `user_id`'s speakers' names (model_channel.without_speakers()),
        and why it did not come; (None, None) without an embedder. Asked before a search's snapshot opens:
        the embedder's time is not in it."""
        if self.embedding is None:
            return None, None
        with self.store.reading() as reader:
            text = model_channel.without_speakers(reader, user_id, query)
        return self.embedding.question(text)

    def health(self) -> Dict[str, Any]:
        """Status, versions and schema; never any memory content."""
        return {
            "status": "ok",
            "version": __version__,
            "sqlite_version": sqlite3.sqlite_version,
            "schema_version": self.store.schema_version(),
        }

    def delete_user(self, user_id: str) -> Dict[str, Any]:
        """Remove every trace of `user_id`: `{"deleted": False, ...}` if there was nothing to remove."""
        return {"deleted": self.store.delete_user(parse_id(user_id, "user_id")), "user_id": user_id}

    def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        """Remove one session of a user as completely as delete_user removes a user (storage/writer.py
        delete_session()); `messages` is how many went. Deleting again gives `deleted` False.
        A user whose last session goes is removed with it."""
        removed = self.store.delete_session(parse_id(user_id, "user_id"), parse_id(session_id, "session_id"))
        return {"deleted": removed is not None, "user_id": user_id, "session_id": session_id,
                "messages": removed or 0}

    def delete_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        """Remove one message of the user by its id as completely as delete_session removes a session
        (storage/writer.py delete_message()): the memory then answers as if it had never been added,
        and the session's other messages keep their ids. `{"deleted": False, ...}` if the user has no
        such message; a session's last message goes with the session."""
        user_id = parse_id(user_id, "user_id")
        parts = _MESSAGE_ID.fullmatch(message_id) if isinstance(message_id, str) else None
        removed = None if parts is None else self.store.delete_message(user_id, parts.group(1), int(parts.group(2)))
        answer: Dict[str, Any] = {"deleted": removed is not None, "user_id": user_id, "message_id": message_id}
        if removed is not None:
            answer["session_id"] = removed.session_id
        return answer

    # -- listing: pages of what is stored, verbatim (paging.py; storage/listing.py) --------
    # Each page holds at most `limit` rows and, past its first, config.page_max_bytes of their
    # text: a page may be short with a next_cursor, which is what ends a listing.

    def list_users(self, limit: Any = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        """`{"data": [{user_id, sessions, messages}], "next_cursor"}`, users in the order they first added."""
        size, after = parse_limit(limit), paging.position(cursor, "u", 1)
        with self.store.reading() as reader:
            rows, more = listing.users(reader.conn, after[0] if after else 0, size, self.config.page_max_bytes)
        return paging.page(rows, more, "u", lambda row: (row[0],), paging.user)

    def list_sessions(self, user_id: str, limit: Any = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        """`{"data": [{session_id, messages, first_at, last_at}], "next_cursor"}` of a user's sessions in
        creation order; an unknown user has none (as a user with no memories)."""
        user_id, size, after = parse_id(user_id, "user_id"), parse_limit(limit), paging.position(cursor, "s", 1)
        with self.store.reading() as reader:
            user_key = reader.user_key(user_id)
            rows, more = ([], False) if user_key is None else listing.sessions(
                reader.conn, user_key, after[0] if after else 0, size, self.config.page_max_bytes)
        return paging.page(rows, more, "s", lambda row: (row[0],), paging.session)

    def list_messages(self, user_id: str, session_id: Optional[str] = None, since: Any = None, until: Any = None,
                      limit: Any = 50, cursor: Optional[str] = None, order: Any = "asc",
                      metadata: Any = None) -> Dict[str, Any]:
        """`{"data": [message], "next_cursor"}`: a user's messages, oldest first (by session creation,
        then position) or newest first (`order` "desc"), only of `session_id` if given, only those
        timed from `since` (inclusive) to `until` (exclusive) if either is given (ISO-8601 or Unix ms),
        only those holding every key and value of `metadata` if given (a dict, or its JSON text)."""
        user_id = parse_id(user_id, "user_id")
        tags = parse_filter_text(metadata, "metadata")
        session_id = None if session_id is None else parse_id(session_id, "session_id")
        start, end = parse_time(since, "since"), parse_time(until, "until")
        size, descending = parse_limit(limit), parse_order(order)
        after = paging.position(cursor, "m", 2)
        with self.store.reading() as reader:
            user_key = reader.user_key(user_id)
            session = None if user_key is None or session_id is None else listing.session_key(
                reader.conn, user_key, session_id)
            rows, more = ([], False) if user_key is None or (session_id is not None and session is None) else (
                listing.messages(reader.conn, user_key, session, start, end, (after[0], after[1]) if after else None,
                                 size, self.config.page_max_bytes, descending, tags))
        return paging.page(rows, more, "m", lambda row: (row.session_key, row.seq),
                          lambda row: paging.message(user_id, row))

    def get_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        """One message of the user by its id (`m-<tag>-<position>`); NotFound if it is not the user's."""
        user_id = parse_id(user_id, "user_id")
        parts = _MESSAGE_ID.fullmatch(message_id) if isinstance(message_id, str) else None
        row = None
        if parts:
            with self.store.reading() as reader:
                user_key = reader.user_key(user_id)
                if user_key is not None:
                    row = listing.message(reader.conn, user_key, parts.group(1), int(parts.group(2)))
        if row is None:  # the same answer for a malformed id, another user's and none: nothing to tell apart
            raise NotFound("no message %s for this user" % str(message_id)[:100])
        return paging.message(user_id, row)

    # -- export and import (portable.py) ------------------------------------------------

    def export_page(self, user_id: str, limit: Any = 100, cursor: Optional[str] = None) -> Dict[str, Any]:
        """`{"data": [Add body], "next_cursor"}`: a page of the user's stored Adds, in the order stored."""
        user_id, size, after = parse_id(user_id, "user_id"), parse_limit(limit), paging.position(cursor, "a", 1)
        with self.store.reading() as reader:
            user_key = reader.user_key(user_id)
            rows, more = ([], False) if user_key is None else listing.adds(
                reader.conn, user_key, after[0] if after else 0, size, self.config.page_max_bytes)
        return paging.page(rows, more, "a", lambda add: (add.last_rowid,), lambda add: portable.add_body(user_id, add))

    def export(self, user_id: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """The Add bodies that rebuild the user's memory (every user's, one user after another, if
        None), in the order they were stored; read a page at a time, each page its own snapshot."""
        users = iter([user_id]) if user_id is not None else self.user_ids()
        for user in users:
            yield from paging.walk(functools.partial(self.export_page, user, 500))

    def user_ids(self) -> Iterator[str]:
        """Every user id held, read a page at a time."""
        return (user["user_id"] for user in paging.walk(lambda cursor: self.list_users(1000, cursor)))

    def import_records(self, records: Iterable[Mapping[str, Any]], progress: Optional[portable.Progress] = None,
                       strict: bool = True) -> Dict[str, Any]:
        """Replay Add bodies (an export) as Adds (importing.py says how):
        `{"requests", "stored", "already_stored", "messages"}` and, when any, `body_differs` and
        `ignored_fields`; `strict` refuses unknown fields, as the Python API's Add does."""
        done = importing.import_records(self.store, records, progress, strict, self.config.max_add_messages)
        if self.embedding is not None:
            self.embedding.rescan()
        return done

    def stats(self, user_id: Optional[str] = None) -> Dict[str, Any]:
        """Counts for the database, or for one user; with an embedder, how its vectors stand."""
        counts = self.store.stats(user_id)
        if self.embedding is not None:
            if user_id is None:
                counts["embedder"] = self.embedding.status()
            elif counts.get("exists"):
                with self.store.reading() as reader:
                    user_key = reader.user_key(user_id)
                counts["embedder"] = {"waiting": 0 if user_key is None else self.embedding.waiting(user_key)}
        return counts

    def backup(self, target: str, force: bool = False) -> Dict[str, Any]:
        """A consistent, checked, self-contained copy of the database at `target` (storage.store.Store.backup)."""
        return self.store.backup(target, force)

    def close(self) -> None:
        """Close the database cleanly (checkpointing its WAL), the embedder's thread first."""
        if self.embedding is not None:
            self.embedding.close()
        self.store.close()


def _embedding(store: Store, config: Config, embed: Optional[Embed]) -> Optional[Embedding]:
    """The database's Embedding, if an embedder is configured (`embed`, or config.embedder_url); else None."""
    if embed is None and config.embedder_url:
        embed = http_embedder(config.embedder_url, config.embedder_model, config.embedder_key(),
                              config.embedder_timeout_s)
    if embed is None:
        return None
    model = config.embedder_model or getattr(embed, "__qualname__", type(embed).__name__)
    return Embedding(store, embed, model, config.embedder_batch, config.embedder_timeout_s)
