"""Client: a flowmem server's API as Memory's methods, over HTTP with urllib (standard library only).

`Client(endpoint, api_key)` has the calls Memory has (add, search, health, list_users,
list_sessions, list_messages, get_message, delete_session, delete_user, export,
import_records) with the same arguments and the same return shapes, so code written
against a Memory works against a server. An error the server answers is raised as the
FlowmemError subclass of its status (422 InvalidField, 404 NotFound, 429 Overloaded,
...) carrying the server's reason (and Retry-After or Allow where sent); a server that
cannot be reached, or answers with something that is not flowmem's, is Unavailable.
Nothing is retried: a 429 or 503 is the caller's to retry (an Add is idempotent).

Ids in paths are percent-encoded whole (a `/` in an id is sent as %2F). export()
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
from .errors import FlowmemError, InvalidField, MethodNotAllowed, RetryLater, Unavailable

DEFAULT_BODY_LIMIT = 8 * 1024 * 1024  # the server's default max_body_bytes
_ERRORS: Dict[int, Type[FlowmemError]] = {
    400: errors.BadRequest, 401: errors.Unauthorized, 403: errors.Forbidden, 404: errors.NotFound,
    408: errors.RequestTimeout, 413: errors.PayloadTooLarge, 415: errors.UnsupportedMediaType,
    421: errors.MisdirectedRequest, 431: errors.HeadersTooLarge, 429: errors.Overloaded,
    503: errors.Unavailable, 507: errors.StorageFull}
_RECORD_INDEX = re.compile(r"^records\[(\d+)\]")


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


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
        return kind(reason, retry_after=int(retry) if retry.isdigit() else 1)
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
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            raise self._error(e) from None
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            raise Unavailable("cannot reach flowmem at %s: %s" % (self.endpoint, getattr(e, "reason", e))) from e
        except ValueError as e:
            raise Unavailable("%s answered %s %s with something not JSON" % (self.endpoint, method, path)) from e

    def _error(self, e: urllib.error.HTTPError) -> FlowmemError:
        try:
            reason = json.loads(e.read())["detail"]["reason"]
        except (ValueError, KeyError, TypeError, OSError):
            reason = "HTTP %d from %s" % (e.code, self.endpoint)
        finally:
            e.close()
        return error_for(e.code, str(reason), e.headers)

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
        return self.request("GET", "/users/%s/sessions" % _q(user_id), query={"limit": limit, "cursor": cursor})

    def list_messages(self, user_id: str, session_id: Optional[str] = None, since: Any = None, until: Any = None,
                      limit: int = 50, cursor: Optional[str] = None, order: str = "asc") -> Dict[str, Any]:
        query = {"session_id": session_id, "since": since, "until": until, "limit": limit, "cursor": cursor,
                 "order": order}
        return self.request("GET", "/users/%s/messages" % _q(user_id), query=query)

    def get_message(self, user_id: str, message_id: str) -> Dict[str, Any]:
        return self.request("GET", "/users/%s/messages/%s" % (_q(user_id), _q(message_id)))

    def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        return self.request("DELETE", "/users/%s/sessions/%s" % (_q(user_id), _q(session_id)))

    def delete_user(self, user_id: str) -> Dict[str, Any]:
        return self.request("DELETE", "/users/%s" % _q(user_id))

    def export_page(self, user_id: str, limit: int = 100, cursor: Optional[str] = None) -> Dict[str, Any]:
        return self.request("GET", "/users/%s/export" % _q(user_id), query={"limit": limit, "cursor": cursor})

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
        """Replay Add bodies (an export) on the server: `{"requests", "stored", "already_stored", "messages"}`."""
        total = len(records) if isinstance(records, (list, tuple)) else None
        counts = {"requests": 0, "stored": 0, "already_stored": 0, "messages": 0}
        for user_id, first, batch in self._batches(records):
            try:
                result = self.request("POST", "/users/%s/import" % _q(user_id), {"records": batch})
            except InvalidField as e:
                raise _shifted(e, first) from None
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
