"""Client: a flowmem server's API as Memory's methods, over HTTP with http.client (standard library only).

`Client(endpoint, api_key)` has the calls Memory has: the dict-level ones (add_body,
search_body, health, list_users, list_sessions, list_messages, get_message,
delete_message, delete_session, delete_user, export, import_records) with the same
arguments and the same return shapes, and the keyword calls with typed results that
both inherit from sdk.MemoryAPI (add, search, get, list, sessions, users, delete, `with`),
so code written against a Memory works against a server (a typed search's Hits carry the
server's `evidence` grade, as a Memory's do). An error the server answers is
raised as the FlowmemError subclass of its status (422 InvalidField, 404 NotFound, 429
Overloaded, ...) carrying the server's reason (and Retry-After or Allow where sent); a
server that cannot be reached, or answers with something that is not flowmem's, is
Unavailable.

Each thread keeps one connection alive (HTTP/1.1 keep-alive) and reuses it. A kept
connection the server closed while it was idle (its keep-alive timeout) fails before
any answer: that request is sent once more on a new connection, which is safe since the
server never read it. close() (or leaving `with Client(...)`) closes the connections.

Retries are bounded and honest: a 429 (too many requests in flight) or a 503 (busy;
nothing was written) is sent again at most `retries` times (default 2, 0: never), each
after the Retry-After the server named, and only when that is at most `max_retry_wait`
seconds (never sooner than asked; a longer wait is the caller's). Every Add, Search and
management call is safe to send again: an Add is idempotent by its request_id. No other
status is retried (a 507 waits for disk space, a 4xx would fail again), and when the
retries are spent the last answer's error is raised with the server's reason.

Ids in paths are percent-encoded whole (a `/` in an id is sent as %2F), except the ids
`.` and `..`: browsers, curl and proxies remove such dot segments (RFC 3986 5.2.4), so
`/users/alice/sessions/..` could reach a server as `/users/alice/`. Those go in the query
form the server reads for an empty path segment (`/users/alice/sessions/?session_id=..`).

No redirect is followed. flowmem itself never answers one, so a 3xx comes from something in
between (a proxy, a moved endpoint), and following it would send the API key and the memory
content to wherever the Location names; even a same-origin one would be a second request the
caller never asked for (a POST replayed by a 307). The error (FlowmemError with the 3xx
status) names the status and the Location, so the endpoint can be corrected instead.

export()
follows the server's pages; import_records() sends records in batches, one user and
under the body limit each (the server imports per user), in their order, and names a
bad record by its index in what was passed (`records[1203].messages`): batches before
it stay stored, and importing again after fixing it stores only the rest (Adds are
idempotent).
"""
from __future__ import annotations

import functools
import http.client
import json
import re
import socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from . import paging
from .errors import FlowmemError, InvalidField, Unavailable
from .sdk import MemoryAPI
from .timed_http import AnswerTooLong, TimedHTTPConnection, TimedHTTPSConnection, read_answer
from .wire import (
    DEFAULT_MAX_ANSWER_BYTES,
    answer_too_large,
    body_bytes,
    invalid_field,
    metadata_query,
    request_headers,
    resource,
    settled,
    target,
)

DEFAULT_BODY_LIMIT = 8 * 1024 * 1024  # the server's default max_body_bytes
_RECORD_INDEX = re.compile(r"^records\[(\d+)\]")


class Client(MemoryAPI):
    """A flowmem server, called as a Memory is."""

    export_page_size = 500  # Add bodies export() asks for at a time

    def __init__(self, endpoint: str, api_key: Optional[str] = None, timeout: float = 60.0,
                 max_body_bytes: int = DEFAULT_BODY_LIMIT, retries: int = 2, max_retry_wait: float = 10.0,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES):
        """`endpoint`: the server's base URL (`http://127.0.0.1:8000`); `timeout`: seconds for each
        request whole (connecting, sending, the answer read to its end); `max_body_bytes`: the
        server's body limit, which import batches stay under; `retries`: how many times a 429 or 503
        is sent again (0: never), each after the Retry-After the server gave when that is at most
        `max_retry_wait` seconds (a longer one is raised at once); `max_answer_bytes`: the longest
        answer read (wire.py), a longer one is AnswerTooLarge."""
        self.endpoint = endpoint.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self.max_answer_bytes = max_answer_bytes
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._parts = urllib.parse.urlsplit(self.endpoint)
        self._local = threading.local()  # this thread's connection: http.client's are not thread-safe
        self._open: Set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None) -> Any:
        """One call: the decoded JSON answer, or the answer's FlowmemError raised (a 429 or 503 first
        sent again as the constructor's `retries` and `max_retry_wait` say)."""
        path = target("", path, query)
        data, headers = body_bytes(body), request_headers(self.api_key, body is not None)
        attempt = 0
        while True:
            answer = self._exchange(method, self._parts.path + path, data, headers)
            value, wait = settled(self.endpoint, method, path, answer, attempt, self.retries, self.max_retry_wait)
            if wait is None:
                return value
            time.sleep(wait)
            attempt += 1

    def _exchange(self, method: str, path: str, data: Optional[bytes],
                  headers: Dict[str, str]) -> Tuple[int, str, Any, bytes]:
        """(status, reason phrase, headers, body) of one request, on this thread's kept-alive connection.
        A connection that served a request before and fails before answering was closed by the server
        while idle (its keep-alive timeout): the request is sent once more, on a new connection."""
        for again in (False, True):
            conn, reused = self._connection()
            conn.start(self.timeout)  # one deadline for the whole request: the trickle of an answer included
            try:
                try:
                    conn.request(method, path, body=data, headers=headers)
                    response = conn.getresponse()
                except ConnectionError:  # reset, broken pipe, or closed with no status line sent
                    if reused and not again:
                        self._drop(conn)
                        continue
                    raise
                payload = read_answer(response, self.max_answer_bytes)  # from here on not retried: it answered
            except AnswerTooLong as e:
                self._drop(conn)  # the rest of the answer is left unread on it
                raise answer_too_large(self.endpoint, method, path, e.size, self.max_answer_bytes) from None
            except (OSError, http.client.HTTPException) as e:  # refused, timed out, not HTTP
                self._drop(conn)
                raise self._unreachable(e) from e
            self._local.used = True
            if response.will_close:
                self._drop(conn)
            return response.status, response.reason, response.msg, payload
        raise AssertionError("unreachable")  # the loop returns or raises

    def _unreachable(self, e: BaseException) -> Unavailable:
        if isinstance(e, (socket.timeout, TimeoutError)):
            return Unavailable("cannot reach flowmem at %s: no whole answer within the timeout of %g s"
                               % (self.endpoint, self.timeout))
        return Unavailable("cannot reach flowmem at %s: %s" % (self.endpoint, e))

    def _connection(self) -> Tuple[TimedHTTPConnection, bool]:
        """This thread's connection and whether it served a request before (a new one if none)."""
        conn: Optional[TimedHTTPConnection] = getattr(self._local, "conn", None)
        with self._lock:
            kept = conn is not None and conn in self._open  # not if close() closed it since
        if conn is not None and kept:
            return conn, self._local.used
        parts = self._parts
        kinds = {"http": TimedHTTPConnection, "https": TimedHTTPSConnection}
        if parts.scheme not in kinds or not parts.hostname:
            raise Unavailable("cannot reach flowmem at %s: not an http:// or https:// URL" % self.endpoint)
        conn = kinds[parts.scheme](parts.hostname, parts.port, timeout=self.timeout)
        self._local.conn, self._local.used = conn, False
        with self._lock:
            self._open.add(conn)
        return conn, False

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        self._local.conn = None
        with self._lock:
            self._open.discard(conn)

    def close(self) -> None:
        """Close the kept-alive connections (of every thread); a later call opens a new one."""
        with self._lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            conn.close()
        self._local.conn = None

    def __del__(self) -> None:
        # A Client dropped without close() closes its sockets now, not whenever they are collected.
        if getattr(self, "_open", None):
            self.close()

    # -- the contract --------------------------------------------------------------

    def add_body(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """POST /add: the Add body as it is (the server names the fields it ignored)."""
        return self.request("POST", "/add", body)

    def search_body(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        """POST /search: the Search body as it is."""
        return self.request("POST", "/search", body)

    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/health")

    # -- management ----------------------------------------------------------------

    def list_users(self, limit: int = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        return self.request("GET", "/users", query={"limit": limit, "cursor": cursor})

    def list_sessions(self, user_id: str, limit: int = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/sessions", {"limit": limit, "cursor": cursor}, user_id=user_id)
        return self.request("GET", path, query=query)

    def list_messages(self, user_id: str, session_id: Optional[str] = None, since: Any = None, until: Any = None,
                      limit: int = 50, cursor: Optional[str] = None, order: str = "asc",
                      metadata: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/messages", {
            "session_id": session_id, "since": since, "until": until, "limit": limit, "cursor": cursor,
            "order": order, "metadata": metadata_query(metadata)}, user_id=user_id)
        return self.request("GET", path, query=query)

    def get_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/messages/{message_id}", user_id=user_id, message_id=message_id)
        return self.request("GET", path, query=query)

    def delete_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/messages/{message_id}", user_id=user_id, message_id=message_id)
        return self.request("DELETE", path, query=query)

    def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/sessions/{session_id}", user_id=user_id, session_id=session_id)
        return self.request("DELETE", path, query=query)

    def delete_user(self, user_id: str) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}", user_id=user_id)
        return self.request("DELETE", path, query=query)

    def export_page(self, user_id: str, limit: int = 100, cursor: Optional[str] = None) -> Dict[str, Any]:
        path, query = resource("/users/{user_id}/export", {"limit": limit, "cursor": cursor}, user_id=user_id)
        return self.request("GET", path, query=query)

    def export(self, user_id: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """The Add bodies that rebuild the user's memory (every user's, one after another, if None), in the
        order they were stored, read a page at a time."""
        users = iter([user_id]) if user_id is not None else self.user_ids()
        for user in users:
            yield from paging.walk(functools.partial(self.export_page, user, self.export_page_size))

    def user_ids(self) -> Iterator[str]:
        """Every user id the server holds, read a page at a time."""
        return (user["user_id"] for user in paging.walk(lambda cursor: self.list_users(1000, cursor)))

    def import_records(self, records: Iterable[Mapping[str, Any]],
                       progress: Optional[Callable[[int, Optional[int]], None]] = None) -> Dict[str, Any]:
        """Replay Add bodies (an export) on the server: `{"requests", "stored", "already_stored", "messages"}`.

        An error from a batch past the first says which records are stored in all, as its reason and
        as `detail["records_stored"]` (see _stopped()): the import's first that many records, none after."""
        total = len(records) if isinstance(records, (list, tuple)) else None
        counts: Dict[str, Any] = {"requests": 0, "stored": 0, "already_stored": 0, "messages": 0}
        for user_id, first, batch in self._batches(records):
            path, query = resource("/users/{user_id}/import", user_id=user_id)
            try:
                result = self.request("POST", path, {"records": batch}, query=query)
            except InvalidField as e:
                raise _shifted(e, first) from None
            except FlowmemError as e:
                raise _stopped(e, first, len(batch)) from None
            _add_counts(counts, result, first)
            if progress is not None:
                progress(counts["requests"], total)
        return counts

    def _batches(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Tuple[str, int, List[Mapping[str, Any]]]]:
        """(user, index of its first record, records): runs of one user's records, each under the body limit."""
        batch: List[Mapping[str, Any]] = []
        user, first, size = "", 0, 0
        budget = self.max_body_bytes - 64  # `{"records": [...]}` around them
        for i, record in enumerate(records):
            if not isinstance(record, Mapping) or not isinstance(record.get("user_id"), str):
                raise InvalidField("records[%d].user_id" % i, "is required (the server imports per user)")
            length = len(json.dumps(record, ensure_ascii=False).encode("utf-8")) + 2  # and its ", "
            if batch and (record["user_id"] != user or size + length > budget):
                yield user, first, batch
                batch, size = [], 0
            if not batch:
                user, first = record["user_id"], i
            batch.append(record)
            size += length
        if batch:
            yield user, first, batch


def _shifted(error: InvalidField, offset: int) -> InvalidField:
    """A batch's InvalidField naming `records[i]` renamed to the index in the whole import."""
    reason = _RECORD_INDEX.sub(lambda m: "records[%d]" % (int(m.group(1)) + offset), error.reason)
    return invalid_field(reason)


def _stopped(error: FlowmemError, first: int, size: int) -> FlowmemError:
    """`error`, from the batch of `size` records that starts at `first`, saying which of the whole import's
    records are stored: every record before `first` (earlier batches were answered), and the batch's
    first `records_stored` where the server said so (errors.partly_stored()); else the batch is unknown.
    `detail["records_stored"]` is the import's first records known to be stored, as Memory's error says."""
    in_batch = getattr(error, "detail", {}).get("records_stored")
    error.detail = {"records_stored": first + (in_batch or 0)}  # type: ignore[attr-defined]
    if first == 0:
        return error  # the server's own words are about the whole import already
    if in_batch is not None:
        stored = "its first %d records (%s) are stored, none after them" % (
            first + in_batch, _span(0, first + in_batch - 1))
    else:
        stored = "%s %s stored; whether %s %s, the server did not say (importing again skips what is stored)" % (
            _span(0, first - 1), "is" if first == 1 else "are", _span(first, first + size - 1),
            "was" if size == 1 else "were")
    error.reason = "the import stopped: %s. The server answered the batch from records[%d]: %s" % (
        stored, first, error.reason)
    error.args = (error.reason,)
    return error


def _span(start: int, end: int) -> str:
    """Records `start` to `end` of an import as an error names them."""
    return "records[%d]" % start if start == end else "records[%d] to records[%d]" % (start, end)


def _add_counts(counts: Dict[str, Any], batch: Mapping[str, Any], first: int) -> None:
    """Add the import answer of a batch whose first record is the import's `first` to the import's:
    its counts, its body_differs and its ignored_fields, renamed by their index in the import."""
    for name in ("requests", "stored", "already_stored", "messages"):
        counts[name] += batch.get(name, 0)
    if batch.get("body_differs"):
        counts["body_differs"] = counts.get("body_differs", 0) + batch["body_differs"]
    if batch.get("ignored_fields"):
        counts.setdefault("ignored_fields", []).extend(_RECORD_INDEX.sub(
            lambda m: "records[%d]" % (first + int(m.group(1))), name) for name in batch["ignored_fields"])
