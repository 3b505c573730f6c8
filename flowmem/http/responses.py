"""What every HTTP module answers with: a Response, a JSON one, and the contract's error body.

A leaf of the HTTP package (it imports only errors): App (api.py), the endpoints
(endpoints.py), the pages (pages.py), the worker (handler.py) and the connection loop
(server.py) all make their answers here, so none of them imports another for it.
"""
from __future__ import annotations

import json
from typing import Any, List, NamedTuple, Optional, Tuple

from ..errors import FlowmemError, MethodNotAllowed, RetryLater


class Response(NamedTuple):
    status: int
    headers: List[Tuple[str, str]]
    body: bytes


def json_response(status: int, payload: Any, headers: Optional[List[Tuple[str, str]]] = None) -> Response:
    """`payload` as compact UTF-8 JSON with `status`; `headers` after the Content-Type."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(status, [("Content-Type", "application/json")] + (headers or []), body)


def error_response(error: FlowmemError) -> Response:
    """The contract's error body, `{"detail": {"reason": ...}}`, with the error's status."""
    headers = []
    if isinstance(error, MethodNotAllowed):
        headers.append(("Allow", error.allow))
    if isinstance(error, RetryLater):
        headers.append(("Retry-After", str(error.retry_after)))
    # What else an error says beside its reason (errors.partly_stored(): how many records an import stored).
    return json_response(error.status, {"detail": {"reason": error.reason, **error.detail}}, headers)


INTERNAL_ERROR = {"detail": {"reason": "internal error"}}  # a bug's answer: it says nothing of the request
