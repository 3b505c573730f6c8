"""What flowmem's clients (Client, AsyncClient) put on the wire and read from it, in one place.

Paths with their ids percent-encoded (dot segments in the query form), the request's
headers, the error an answer stands for (a 3xx never followed; each status its
FlowmemError with the server's reason), and the retry rule: client.py's docstring says
why each is as it is. Both clients share these so that they send the same requests and
raise the same errors; only how the bytes travel differs (http.client, asyncio streams).

Both read an answer only up to `max_answer_bytes` (DEFAULT_MAX_ANSWER_BYTES unless given):
a longer one is AnswerTooLarge, refused before any of it is read where it states its length,
so that a runaway answer (a proxy's, a hostile server's) costs the bound, not its size twice
over. The default is 8 times the server's largest request body: a listing's or an export's
page holds at most page_max_bytes of text (one message past it alone, and a message came in
one body), so every page of a server at its defaults fits with room to spare; a search of
top_k long items can pass it, and the error says to ask for fewer or raise the bound.
"""
from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, Mapping, Optional, Tuple, Type

from . import errors
from .decoding import decode_json
from .errors import FlowmemError, InvalidField, MethodNotAllowed, RetryLater, Unavailable

_ERRORS: Dict[int, Type[FlowmemError]] = {
    400: errors.BadRequest, 401: errors.Unauthorized, 403: errors.Forbidden, 404: errors.NotFound,
    408: errors.RequestTimeout, 413: errors.PayloadTooLarge, 415: errors.UnsupportedMediaType,
    421: errors.MisdirectedRequest, 431: errors.HeadersTooLarge, 429: errors.Overloaded,
    503: errors.Unavailable, 507: errors.StorageFull}
DOT_SEGMENTS = (".", "..")
DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024
RETRIED = (429, 503)  # the statuses sent again: nothing was done, and the server said when to come back


class AnswerTooLarge(FlowmemError):
    """An answer longer than the client's `max_answer_bytes`; it was not read (the connection is closed)."""

    status = 502  # what a gateway answers for an answer from upstream it cannot take


def answer_too_large(endpoint: str, method: str, path: str, size: Optional[int], limit: int) -> AnswerTooLarge:
    """The error of an answer past `limit` bytes: `size` its stated length, None if it stated none."""
    length = "%d bytes" % size if size is not None else "over %d bytes (no length stated)" % limit
    return AnswerTooLarge("%s answered %s %s with %s, past max_answer_bytes=%d, and it was not read: ask for less "
                          "(a smaller limit or top_k) or give the client a larger max_answer_bytes"
                          % (endpoint, method, path.split("?", 1)[0], length, limit))


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def resource(template: str, query: Optional[Mapping[str, Any]] = None, **ids: str) -> Tuple[str, Dict[str, Any]]:
    """`template`'s path (`/users/{user_id}/sessions/{session_id}`) with `ids` percent-encoded in it,
    and the query with `query`'s parameters; an id `.` or `..` leaves its segment empty and goes in
    the query under its own name instead (client.py's docstring says why)."""
    out = dict(query or {})
    path = template
    for name, value in ids.items():
        if value in DOT_SEGMENTS:
            out[name] = value
            value = ""
        path = path.replace("{%s}" % name, _q(value))
    return path, out


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


def answer_error(endpoint: str, method: str, path: str, status: int, phrase: str, headers: Any,
                 payload: bytes) -> FlowmemError:
    """The error of an answer that is not a 2xx: a 3xx (never followed: client.py's docstring says why)
    or the FlowmemError of the status, with the server's reason (and `detail["records_stored"]`)."""
    if 300 <= status < 400:
        location = headers.get("Location") or "(no Location header)"
        error = FlowmemError("%s answered %s %s with %d %s to %s; Client follows no redirect (it would send "
                             "the API key and the request there): set the endpoint to the server itself"
                             % (endpoint, method, path.split("?", 1)[0], status, phrase, location[:300]))
        error.status = status
        return error
    detail: Dict[str, Any] = {}
    try:
        detail = decode_json(payload.decode("utf-8"))["detail"]
        reason = detail["reason"]
    except (ValueError, KeyError, TypeError):
        reason = "HTTP %d from %s" % (status, endpoint)
    error = error_for(status, str(reason), headers)
    stored = detail.get("records_stored") if isinstance(detail, dict) else None
    if type(stored) is int:  # an import refused partway: as errors.partly_stored() made it on the server
        error.detail = {"records_stored": stored}  # type: ignore[attr-defined]
    return error


def decoded(endpoint: str, method: str, path: str, payload: bytes) -> Any:
    """A 2xx answer's JSON; Unavailable if it is not JSON (not flowmem answering)."""
    try:
        return decode_json(payload.decode("utf-8"))
    except ValueError as e:
        raise Unavailable("%s answered %s %s with something not JSON" % (endpoint, method, path)) from e


def retry_wait(error: FlowmemError, attempt: int, retries: int, max_wait: float) -> Optional[float]:
    """Seconds to wait before sending again after `error` (its `attempt`-th retry is next), or None
    to raise it: only a 429 or a 503 (nothing was done), only `retries` times, and only when the
    server's Retry-After (1 if it sent none) is at most `max_wait`: never sooner than it asked."""
    if attempt >= retries or error.status not in RETRIED or not isinstance(error, RetryLater):
        return None
    return float(error.retry_after) if error.retry_after <= max_wait else None


def settled(endpoint: str, method: str, path: str, answer: Tuple[int, str, Any, bytes], attempt: int,
            retries: int, max_wait: float) -> Tuple[Any, Optional[float]]:
    """What a client does with `answer` (status, reason phrase, headers, body) to its `attempt`-th try:
    (the decoded JSON, None) for a 2xx, (None, seconds to wait) to send it again (retry_wait()),
    or the answer's FlowmemError raised."""
    status, phrase, headers, payload = answer
    if 200 <= status < 300:
        return decoded(endpoint, method, path, payload), None
    error = answer_error(endpoint, method, path, status, phrase, headers, payload)
    wait = retry_wait(error, attempt, retries, max_wait)
    if wait is None:
        raise error
    return None, wait


def request_headers(api_key: Optional[str], has_body: bool) -> Dict[str, str]:
    headers = {"Accept": "application/json"}
    if has_body:
        headers["Content-Type"] = "application/json"
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    return headers


def target(base: str, path: str, query: Optional[Mapping[str, Any]]) -> str:
    """The request target: the endpoint's own path, `path`, and the query's parameters that are not None."""
    pairs = [(k, v) for k, v in (query or {}).items() if v is not None]
    return base + path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")


def metadata_query(metadata: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A listing's `metadata` filter as its query parameter carries it (JSON), None if there is none."""
    return None if metadata is None else json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":"))


def body_bytes(body: Any) -> Optional[bytes]:
    return None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
