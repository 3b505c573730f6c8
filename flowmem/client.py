"""Client: a flowmem server's API as Memory's methods, over HTTP with urllib (standard library only).

`Client(endpoint, api_key)` has the calls Memory has (add, search, health, list_users,
list_sessions, list_messages, get_message, delete_session, delete_user, export,
import_records) with the same arguments and the same return shapes, so code written
against a Memory works against a server. An error the server answers is raised as the
FlowmemError subclass of its status (422 InvalidField, 404 NotFound, 429 Overloaded,
...) carrying the server's reason (and Retry-After or Allow where sent); a server that
cannot be reached, or answers with something that is not flowmem's, is Unavailable.
Nothing is retried: a 429 or 503 is the caller's to retry (an Add is idempotent).

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
import json
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Type

from . import errors, paging
from .decoding import decode_json
from .errors import FlowmemError, InvalidField, MethodNotAllowed, RetryLater, Unavailable

DEFAULT_BODY_LIMIT = 8 * 1024 * 1024  # the server's default max_body_bytes
_ERRORS: Dict[int, Type[FlowmemError]] = {
    400: errors.BadRequest, 401: errors.Unauthorized, 403: errors.Forbidden, 404: errors.NotFound,
    408: errors.RequestTimeout, 413: errors.PayloadTooLarge, 415: errors.UnsupportedMediaType,
    421: errors.MisdirectedRequest, 431: errors.HeadersTooLarge, 429: errors.Overloaded,
    503: errors.Unavailable, 507: errors.StorageFull}
_RECORD_INDEX = re.compile(r"^records\[(\d+)\]")
DOT_SEGMENTS = (".", "..")


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _path(template: str, query: Optional[Mapping[str, Any]] = None, **ids: str) -> Tuple[str, Dict[str, Any]]:
    """`template`'s path (`/users/{user_id}/sessions/{session_id}`) with `ids` percent-encoded in it,
    and the query with `query`'s parameters; an id `.` or `..` leaves its segment empty and goes in
    the query under its own name instead (the module docstring says why)."""
    out = dict(query or {})
    path = template
    for name, value in ids.items():
        if value in DOT_SEGMENTS:
            out[name] = value
            value = ""
        path = path.replace("{%s}" % name, _q(value))
    return path, out


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Every 3xx is answered as the HTTPError it is, never followed (the module docstring says why)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None


def invalid_field(reason: str) -> InvalidField:
    """The InvalidField of a 422's reason (`field problem`), its reason exactly as sent."""
    field, _, problem = reason.partition(" ")
    error = InvalidField(field, problem)
    error.reason, error.args = reason, (reason,)
    return error


def error_for(status: int, reason: str, headers: Any) -> FlowmemError:
    """The FlowmemError a response of `status` with `reason` stands for; `headers`: the response's (`.get`)."""
    if status == 422:
        return invalid_field(reason)
    if status == 405:
        return MethodNotAllowed(reason, allow=headers.get("Allow", ""))
    kind = _ERRORS.get(status, FlowmemError)
    if issubclass(kind, RetryLater):
        retry = headers.get("Retry-After", "1")
        # ASCII digits only, and few: int() refuses "²" (which isdigit() takes) and raises past 4,300 digits.
        return kind(reason, retry_after=int(retry) if retry.isascii() and retry.isdigit() and len(retry) <= 9 else 1)
    error = kind(reason)
    if kind is FlowmemError:
        error.status = status
    return error


class Client:
    """A flowmem server, called as a Memory is."""

    export_page_size = 500  # Add bodies export() asks for at a time

    def __init__(self, endpoint: str, api_key: Optional[str] = None, timeout: float = 60.0,
                 max_body_bytes: int = DEFAULT_BODY_LIMIT):
        """`endpoint`: the server's base URL (`http://127.0.0.1:8000`); `timeout`: seconds per request;
        `max_body_bytes`: the server's body limit, which import batches stay under."""
        self.endpoint = endpoint.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self._opener = urllib.request.build_opener(_NoRedirects)

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None) -> Any:
        """One call: the decoded JSON answer, or the answer's FlowmemError raised."""
        if query:
            pairs = [(k, v) for k, v in query.items() if v is not None]
            path += "?" + urllib.parse.urlencode(pairs) if pairs else ""
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        request = urllib.request.Request(self.endpoint + path, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return decode_json(response.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise (self._redirected(e, method, path) if 300 <= e.code < 400 else self._error(e)) from None
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            raise Unavailable("cannot reach flowmem at %s: %s" % (self.endpoint, getattr(e, "reason", e))) from e
        except ValueError as e:
            raise Unavailable("%s answered %s %s with something not JSON" % (self.endpoint, method, path)) from e

    def _error(self, e: urllib.error.HTTPError) -> FlowmemError:
        detail: Dict[str, Any] = {}
        try:
            detail = decode_json(e.read().decode("utf-8"))["detail"]
            reason = detail["reason"]
        except (ValueError, KeyError, TypeError, OSError):
            reason = "HTTP %d from %s" % (e.code, self.endpoint)
        finally:
            e.close()
        error = error_for(e.code, str(reason), e.headers)
        stored = detail.get("records_stored") if isinstance(detail, dict) else None
        if type(stored) is int:  # an import refused partway: as errors.partly_stored() made it on the server
            error.detail = {"records_stored": stored}  # type: ignore[attr-defined]
        return error

    def _redirected(self, e: urllib.error.HTTPError, method: str, path: str) -> FlowmemError:
        """The error of a 3xx answer, which Client never follows (the module docstring says why)."""
        location = e.headers.get("Location") or "(no Location header)"
        e.close()
        error = FlowmemError("%s answered %s %s with %d %s to %s; Client follows no redirect (it would send "
                             "the API key and the request there): set the endpoint to the server itself"
                             % (self.endpoint, method, path.split("?", 1)[0], e.code, e.reason, location[:300]))
        error.status = e.code
        return error

    # -- the contract --------------------------------------------------------------

    def add(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        return self.request("POST", "/add", body)

    def search(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        return self.request("POST", "/search", body)

    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/health")

    # -- management ----------------------------------------------------------------

    def list_users(self, limit: int = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        return self.request("GET", "/users", query={"limit": limit, "cursor": cursor})

    def list_sessions(self, user_id: str, limit: int = 50, cursor: Optional[str] = None) -> Dict[str, Any]:
        path, query = _path("/users/{user_id}/sessions", {"limit": limit, "cursor": cursor}, user_id=user_id)
        return self.request("GET", path, query=query)

    def list_messages(self, user_id: str, session_id: Optional[str] = None, since: Any = None, until: Any = None,
                      limit: int = 50, cursor: Optional[str] = None, order: str = "asc") -> Dict[str, Any]:
        path, query = _path("/users/{user_id}/messages", {
            "session_id": session_id, "since": since, "until": until, "limit": limit, "cursor": cursor,
            "order": order}, user_id=user_id)
        return self.request("GET", path, query=query)

    def get_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        path, query = _path("/users/{user_id}/messages/{message_id}", user_id=user_id, message_id=message_id)
        return self.request("GET", path, query=query)

    def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        path, query = _path("/users/{user_id}/sessions/{session_id}", user_id=user_id, session_id=session_id)
        return self.request("DELETE", path, query=query)

    def delete_user(self, user_id: str) -> Dict[str, Any]:
        path, query = _path("/users/{user_id}", user_id=user_id)
        return self.request("DELETE", path, query=query)

    def export_page(self, user_id: str, limit: int = 100, cursor: Optional[str] = None) -> Dict[str, Any]:
        path, query = _path("/users/{user_id}/export", {"limit": limit, "cursor": cursor}, user_id=user_id)
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
        counts = {"requests": 0, "stored": 0, "already_stored": 0, "messages": 0}
        for user_id, first, batch in self._batches(records):
            path, query = _path("/users/{user_id}/import", user_id=user_id)
            try:
                result = self.request("POST", path, {"records": batch}, query=query)
            except InvalidField as e:
                raise _shifted(e, first) from None
            except FlowmemError as e:
                raise _stopped(e, first, len(batch)) from None
            for name in counts:
                counts[name] += result.get(name, 0)
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
