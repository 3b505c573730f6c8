"""HTTP policy: routing, browser checks, authentication, JSON in and out, errors to statuses.

`App.handle` turns one whole request (method, path, headers, body) into a Response and
holds all of flowmem's HTTP policy, so it can be tested without a socket. Connections,
framing, timeouts and threads are server.py's; which requests a web page may make
is guard.py's; reading a body as a JSON object is the service's (validation.py, shared
with the CLI); every error a caller can cause is a FlowmemError that becomes its
status and the contract's `{"detail": {"reason": ...}}` body here, in `error_response`.
"""
from __future__ import annotations

import hmac
import json
import logging
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from ..config import Config
from ..errors import FlowmemError, MethodNotAllowed, NotFound, RetryLater, Unauthorized
from ..memory import Memory
from ..validation import decode_json_object
from .guard import BrowserGuard, Headers

log = logging.getLogger("flowmem.http")

# path -> (method, Memory method name, needs the API key)
ROUTES: Dict[str, Tuple[str, str, bool]] = {
    "/add": ("POST", "add", True),
    "/search": ("POST", "search", True),
    "/health": ("GET", "health", False),
}


WRITE_ACTIONS = frozenset({"add"})


def writes(method: str, path: str) -> bool:
    """Whether this request would write to the database (and so wait for its write lock)."""
    route = ROUTES.get(path.split("?", 1)[0].rstrip("/") or "/")
    return route is not None and method == route[0] and route[1] in WRITE_ACTIONS


class Response(NamedTuple):
    status: int
    headers: List[Tuple[str, str]]
    body: bytes


def json_response(status: int, payload: Any, headers: Optional[List[Tuple[str, str]]] = None) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(status, [("Content-Type", "application/json")] + (headers or []), body)


def error_response(error: FlowmemError) -> Response:
    """The contract's error body, `{"detail": {"reason": ...}}`, with the error's status."""
    headers = []
    if isinstance(error, MethodNotAllowed):
        headers.append(("Allow", error.allow))
    if isinstance(error, RetryLater):
        headers.append(("Retry-After", str(error.retry_after)))
    return json_response(error.status, {"detail": {"reason": error.reason}}, headers)


def credential(headers: Headers) -> Optional[str]:
    """The key a request carries: `Authorization: Bearer|Token <key>` or `X-Api-Key: <key>`."""
    auth = headers.get("Authorization")
    if auth:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() in ("bearer", "token") and value.strip():
            return value.strip()
    key = headers.get("X-Api-Key")
    return key.strip() if key else None


def _header_bytes(value: str) -> bytes:
    # http.server decodes header bytes as Latin-1; encoding back recovers what was sent.
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


class App:
    """flowmem's HTTP policy over a Memory; call `handle` once per request, with its whole body."""

    def __init__(self, memory: Memory, config: Config):
        self.memory = memory
        key = config.key()
        self._key = key.encode("utf-8") if key else None
        self.guard = BrowserGuard(config.host, allowed_hosts=config.allowed_hosts,
                                  allowed_origins=config.allowed_origins)

    def handle(self, method: str, path: str, headers: Headers, body: bytes) -> Response:
        """Answer one request; `body` is already read whole and within its limit (framing.py)."""
        cors: List[Tuple[str, str]] = []
        try:
            self.guard.check_host(headers.get("Host"))
            self.guard.check_origin(headers)
            route, allowed = self._route(path)
            cors = self.guard.cors_headers(headers, allowed)
            if method == "OPTIONS" and cors:
                return Response(204, cors, b"")  # a CORS preflight from an allowed origin
            action, needs_key = self._action(route, allowed, method)
            if needs_key:
                self._authorize(headers)
            if method == "POST":
                self.guard.check_content_type(headers.get("Content-Type"))
                response = json_response(200, getattr(self.memory, action)(decode_json_object(body)))
            else:
                response = json_response(200, getattr(self.memory, action)())
        except FlowmemError as e:
            response = error_response(e)
        except Exception:
            # A bug, not bad input. Log the traceback (it holds no request content) and say little.
            log.exception("internal error on %s %s", method, path.split("?", 1)[0])
            response = json_response(500, {"detail": {"reason": "internal error"}})
        return response._replace(headers=response.headers + cors) if cors else response

    @staticmethod
    def _route(path: str) -> Tuple[str, str]:
        route = path.split("?", 1)[0]
        if len(route) > 1 and route.endswith("/"):
            route = route[:-1]
        if route not in ROUTES:
            raise NotFound("no such path; flowmem serves POST /add, POST /search and GET /health")
        return route, ROUTES[route][0]

    @staticmethod
    def _action(route: str, allowed: str, method: str) -> Tuple[str, bool]:
        if method != allowed and not (method == "HEAD" and allowed == "GET"):
            raise MethodNotAllowed("%s takes %s, not %s" % (route, allowed, method[:20]), allow=allowed)
        _, action, needs_key = ROUTES[route]
        return action, needs_key

    def _authorize(self, headers: Headers) -> None:
        if self._key is None:
            return
        given = credential(headers)
        # compare_digest takes constant time for equal-length inputs and does not leak the key's content.
        if given is None or not hmac.compare_digest(_header_bytes(given), self._key):
            raise Unauthorized(
                "missing or wrong API key; send Authorization: Bearer <key>, Authorization: Token <key> or X-Api-Key"
            )
