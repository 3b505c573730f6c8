"""AsyncClient: a flowmem server from asyncio code, on asyncio streams (standard library only).

The Python API's calls as coroutines, with Client's arguments, bodies (sdk.add_call(),
search_call()), typed results (sdk_types.py), errors and retries (wire.py; client.py's
docstring says why they are as they are):

    async with AsyncClient("http://127.0.0.1:8000", api_key) as memory:
        await memory.add("I moved to Lisbon", user_id="alice")
        hits = await memory.search("where does alice live?", user_id="alice")  # hits.evidence: its grade

One connection is kept alive per AsyncClient, used within one event loop. HTTP/1.1
answers a connection's requests in order, so calls on it take turns (an asyncio.Lock);
for requests in parallel, open an AsyncClient for each. A kept connection the server
closed while idle fails before any status line: the request is sent once more on a new
one, as Client does. `timeout` bounds each request (connecting, sending, reading the
answer); a request cut short, a cancelled one included, closes the connection, whose
state is then unknown. An answer longer than `max_answer_bytes` is AnswerTooLarge, read no
further than the bound (wire.py).
"""
from __future__ import annotations

import asyncio
import http.client
import io
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import sdk
from .errors import Unavailable
from .listing_params import MAX_PAGE
from .sdk_types import AddResult, Session, StoredMessage, User, hits
from .timed_http import AnswerTooLong
from .wire import (
    DEFAULT_MAX_ANSWER_BYTES,
    answer_too_large,
    body_bytes,
    metadata_query,
    request_headers,
    resource,
    settled,
    target,
)

Answer = Tuple[int, str, Any, bytes]  # status, reason phrase, headers (`.get`), body
MAX_HEADER_LINES = 100  # an answer with more is not flowmem's (it sends about ten)


class _Unanswered(Exception):
    """The connection ended before the answer's status line: the server did not take the request."""


class AsyncClient:
    """A flowmem server, called from asyncio code as Client calls it."""

    def __init__(self, endpoint: str, api_key: Optional[str] = None, timeout: float = 60.0, retries: int = 2,
                 max_retry_wait: float = 10.0, max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES):
        """The arguments are Client's (`retries`: how many times a 429 or 503 is sent again)."""
        self.endpoint = endpoint.rstrip("/")
        self.api_key, self.timeout, self.max_answer_bytes = api_key, timeout, max_answer_bytes
        self.retries, self.max_retry_wait = retries, max_retry_wait
        self._parts = urllib.parse.urlsplit(self.endpoint)
        self._streams: Optional[Tuple[asyncio.StreamReader, asyncio.StreamWriter]] = None
        self._used = False  # whether the open connection has answered a request
        self._lock: Optional[asyncio.Lock] = None  # made in the loop that uses it (Python 3.9 binds one)

    async def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None) -> Any:
        """One call: the decoded JSON answer, or the answer's FlowmemError raised (429 and 503 retried)."""
        path = target("", path, query)
        data, headers = body_bytes(body) or b"", request_headers(self.api_key, body is not None)
        attempt = 0
        while True:
            answer = await self._exchange(method, self._parts.path + path, data, headers)
            value, wait = settled(self.endpoint, method, path, answer, attempt, self.retries, self.max_retry_wait)
            if wait is None:
                return value
            await asyncio.sleep(wait)
            attempt += 1

    async def _exchange(self, method: str, path: str, data: bytes, headers: Dict[str, str]) -> Answer:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            for again in (False, True):
                reused = self._streams is not None and self._used
                try:
                    return await asyncio.wait_for(self._roundtrip(method, path, data, headers), self.timeout)
                except _Unanswered as e:
                    self._drop()
                    if reused and not again:
                        continue
                    raise Unavailable("cannot reach flowmem at %s: %s" % (self.endpoint, e.__cause__ or
                                      "the connection closed before an answer")) from e
                except AnswerTooLong as e:
                    self._drop()  # the rest of the answer is left unread on it
                    raise answer_too_large(self.endpoint, method, path, e.size, self.max_answer_bytes) from None
                except asyncio.TimeoutError as e:
                    self._drop()
                    raise Unavailable("cannot reach flowmem at %s: no whole answer within the timeout of %g s"
                                      % (self.endpoint, self.timeout)) from e
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                        ValueError, http.client.HTTPException) as e:
                    self._drop()
                    raise Unavailable("cannot reach flowmem at %s: %s"
                                      % (self.endpoint, str(e) or type(e).__name__)) from e
                except BaseException:  # cancelled: what is left on the connection is unknown
                    self._drop()
                    raise
        raise AssertionError("unreachable")  # the loop returns or raises

    async def _roundtrip(self, method: str, path: str, data: bytes, headers: Dict[str, str]) -> Answer:
        """Send one request and read its answer whole: (status, reason phrase, headers, body)."""
        host = self._parts.netloc.rpartition("@")[2]
        lines = ["%s %s HTTP/1.1" % (method, path or "/"), "Host: " + host, "Content-Length: %d" % len(data)]
        head = "\r\n".join(lines + ["%s: %s" % item for item in headers.items()]) + "\r\n\r\n"
        try:
            reader, writer = await self._connect()
            writer.write(head.encode("latin-1") + data)
            await writer.drain()
            status_line = await reader.readline()
        except ConnectionError as e:
            raise _Unanswered() from e
        if not status_line:
            raise _Unanswered()
        version, _, rest = status_line.decode("latin-1").rstrip("\r\n").partition(" ")
        code, _, phrase = rest.partition(" ")
        if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
            raise ValueError("not an HTTP answer: %r" % status_line[:80])
        answer = await self._headers(reader)
        payload, framed = await _body(reader, answer, self.max_answer_bytes)
        self._used = True
        connection = (answer.get("Connection") or "").lower()
        if not framed or connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive"):
            self._drop()
        return int(code), phrase, answer, payload

    async def _connect(self) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._streams is None:
            parts = self._parts
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("not an http:// or https:// URL")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            self._streams = await asyncio.open_connection(parts.hostname, port, ssl=parts.scheme == "https" or None)
            self._used = False
        return self._streams

    @staticmethod
    async def _headers(reader: asyncio.StreamReader) -> Any:
        lines = []
        while True:
            line = await reader.readline()
            lines.append(line)
            if line in (b"\r\n", b"\n", b""):
                return http.client.parse_headers(io.BytesIO(b"".join(lines)))
            if len(lines) > MAX_HEADER_LINES:
                raise ValueError("an answer with over %d header lines" % MAX_HEADER_LINES)

    def _drop(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None

    async def close(self) -> None:
        """Close the kept connection (a later call opens a new one)."""
        if self._streams is not None:
            writer = self._streams[1]
            self._drop()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- the calls (Client's and the Python API's) -------------------------------------

    async def add_body(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        return await self.request("POST", "/add", body)

    async def search_body(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        return await self.request("POST", "/search", body)

    async def health(self) -> Dict[str, Any]:
        return await self.request("GET", "/health")

    async def _get(self, template: str, query: Optional[Mapping[str, Any]] = None, method: str = "GET",
                   **ids: str) -> Dict[str, Any]:
        path, query = resource(template, query, **ids)
        return await self.request(method, path, query=query)

    async def add(self, messages: Any, *, user_id: Optional[str] = None, session_id: str = "default",
                  role: str = "user", metadata: Optional[Mapping[str, Any]] = None, timestamp: sdk.Timestamp = None,
                  request_id: Optional[str] = None) -> Any:
        """As MemoryAPI.add: an AddResult (the contract's dict for an Add body)."""
        body, typed = sdk.add_call(messages, user_id, session_id, role, metadata, timestamp, request_id)
        answer = await self.add_body(body)
        return AddResult.from_dict(answer) if typed else answer

    async def search(self, query: Any, *, user_id: Optional[str] = None, limit: int = 10,
                     filters: Optional[Mapping[str, Any]] = None, options: Optional[Sequence[str]] = None) -> Any:
        """As MemoryAPI.search: Hits, a list of Hit with the search's `evidence` grade (the contract's dict,
        `evidence` in it, for a Search body)."""
        body, typed = sdk.search_call(query, user_id, limit, filters, options)
        answer = await self.search_body(body)
        return hits(answer) if typed else answer

    async def get(self, message_id: str, *, user_id: Optional[str] = None) -> StoredMessage:
        user_id = sdk.required(user_id, "user_id", "get")
        return StoredMessage.from_dict(await self._get("/users/{user_id}/messages/{message_id}", user_id=user_id,
                                                       message_id=message_id))

    async def list(self, *, user_id: Optional[str] = None, session_id: Optional[str] = None, since: Any = None,
                   until: Any = None, metadata: Optional[Mapping[str, Any]] = None, limit: Optional[int] = 100,
                   order: str = "asc") -> List[StoredMessage]:
        """As MemoryAPI.list: a user's stored messages, following the pages up to `limit` (None: all)."""
        user_id, limit = sdk.required(user_id, "user_id", "list"), sdk.list_limit(limit)
        shown = metadata_query(metadata)
        out: List[StoredMessage] = []
        cursor = None
        while True:
            page = await self._get("/users/{user_id}/messages", {
                "session_id": session_id, "since": since, "until": until, "metadata": shown, "order": order,
                "limit": sdk.page_size(limit, len(out)), "cursor": cursor}, user_id=user_id)
            out.extend(StoredMessage.from_dict(m) for m in page["data"])
            cursor = page["next_cursor"]
            if cursor is None or (limit is not None and len(out) >= limit):
                return out

    async def _walk(self, template: str, **ids: str) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        cursor = None
        while True:
            page = await self._get(template, {"limit": MAX_PAGE, "cursor": cursor}, **ids)
            out.extend(page["data"])
            cursor = page["next_cursor"]
            if cursor is None:
                return out

    async def sessions(self, user_id: str) -> List[Session]:
        return [Session.from_dict(s) for s in await self._walk("/users/{user_id}/sessions", user_id=user_id)]

    async def users(self) -> List[User]:
        return [User.from_dict(u) for u in await self._walk("/users")]

    async def delete(self, message_id: str, *, user_id: Optional[str] = None) -> bool:
        user_id = sdk.required(user_id, "user_id", "delete")
        return bool((await self._get("/users/{user_id}/messages/{message_id}", method="DELETE", user_id=user_id,
                                     message_id=message_id))["deleted"])

    async def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        return await self._get("/users/{user_id}/sessions/{session_id}", method="DELETE", user_id=user_id,
                               session_id=session_id)


async def _body(reader: asyncio.StreamReader, headers: Any, limit: int) -> Tuple[bytes, bool]:
    """An answer's body (its Content-Length, or up to the connection's end) and whether it was framed
    (False: the connection ended with it); AnswerTooLong past `limit` bytes, before reading any of a body
    that states its length. flowmem never sends chunks; a proxy that does is not read."""
    if headers.get("Transfer-Encoding") is not None:
        raise ValueError("an answer in chunks (Transfer-Encoding), which AsyncClient does not read")
    length = headers.get("Content-Length")
    if length is None:
        pieces: List[bytes] = []
        size = 0
        while True:  # read() alone would take what comes, however much
            piece = await reader.read(min(limit + 1 - size, 1 << 20))
            if not piece:
                return b"".join(pieces), False
            pieces.append(piece)
            size += len(piece)
            if size > limit:
                raise AnswerTooLong(None)
    if not length.isascii() or not length.isdigit() or len(length) > 12:
        raise ValueError("a Content-Length that is not a number")
    if int(length) > limit:
        raise AnswerTooLong(int(length))
    return await reader.readexactly(int(length)), True
