"""HTTP policy: routing, browser checks, authentication, errors to statuses.

`App.handle` turns one whole request (method, path, headers, body) into a Response and
holds all of flowmem's HTTP policy, so it can be tested without a socket. Connections,
framing, timeouts and threads are server.py's; the routes are table.py's (one record
each, naming its endpoint and its documentation: the OpenAPI document and the metrics'
labels are made from the same table); which route a request is and its path and query
values are routes.py's; which requests a web page may make is guard.py's; what each
route does is its endpoint's (endpoints.py), which App calls with a `Call`, by no name;
reading a body as a JSON object is the service's (validation.py, shared with the CLI);
every error a caller can cause is a FlowmemError that becomes its status and the
contract's `{"detail": {"reason": ...}}` body (responses.py's `error_response`).

Every route passes the browser checks (Host, Origin, Sec-Fetch-Site) first, whatever
it is, so a page can neither read nor delete through the operator's browser; then the
key, where the route needs it (all but /health, the documentation and the inspector
page, and /metrics where `metrics_public` is set); a POST's Content-Type last. The
pages (pages.py) hold no memory content: the inspector fetches everything through
this API with the key its user types.
"""
from __future__ import annotations

import hmac
import logging
import time
from typing import List, Optional, Sequence, Tuple

from ..config import Config
from ..errors import BadRequest, FlowmemError, Unauthorized
from ..memory import Memory
from .guard import BrowserGuard, Headers
from .metrics import Metrics
from .openapi import document
from .pages import Pages
from .responses import INTERNAL_ERROR, Response, error_response, json_response
from .routes import Call, Found, Route, Router
from .table import ROUTER, ROUTES

log = logging.getLogger("flowmem.http")


def writes(method: str, path: str) -> bool:
    """Whether this request would write to the database (and so wait for its write lock)."""
    return any(r.writes and r.method == method for r in ROUTER.find(path).routes)


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

    def __init__(self, memory: Memory, config: Config, routes: Sequence[Route] = ROUTES):
        """`routes`: what it serves (table.py's, unless a test serves others)."""
        self.memory = memory
        self.config = config
        key = config.key()
        self._key = key.encode("utf-8") if key else None
        self.guard = BrowserGuard(config.host, allowed_hosts=config.allowed_hosts,
                                  allowed_origins=config.allowed_origins)
        # A route opened by a setting (open_if) is served without the key where that setting is on.
        self.routes: Tuple[Route, ...] = tuple(r._replace(needs_key=False) if r.open_if and getattr(config, r.open_if)
                                               else r for r in routes)
        self.router = Router(self.routes)
        self.metrics = Metrics(config.db)
        embedding = getattr(memory, "embedding", None)
        if embedding is not None:
            self.metrics.embedder_source = embedding.status
        keyed = key is not None
        self.pages = Pages(lambda: document(self.routes, keyed=keyed))  # made at the first page asked for

    def handle(self, method: str, path: str, headers: Headers, body: bytes) -> Response:
        """Answer one request; `body` is already read whole and within its limit (framing.py)."""
        started = time.perf_counter()
        found = self.router.find(path)  # the one lookup of this request's route
        self.metrics.started()
        status = 500  # what is counted if _answer raises past its own handlers
        try:
            response = self._answer(method, found, headers, body)
            status = response.status
        finally:
            self.metrics.finished(found.template, status, time.perf_counter() - started)
        return response

    def refused(self, path: str, status: int) -> None:
        """Count a request the connection loop refused before App saw it (server.py, handler.py)."""
        self.metrics.refused(self.router.find(path).template, status)

    def _answer(self, method: str, found: Found, headers: Headers, body: bytes) -> Response:
        cors: List[Tuple[str, str]] = []
        try:
            # An absolute-form target's authority stands in for Host (RFC 9112 3.2.2; routes.py rule 1).
            host = found.authority if found.authority is not None else headers.get("Host")
            self.guard.check_host(host)
            self.guard.check_origin(headers, host)
            allow = found.allow
            cors = self.guard.cors_headers(headers, allow) if allow else []
            if method == "OPTIONS" and cors:
                return Response(204, cors, b"")  # a CORS preflight from an allowed origin
            match = found.match(method)
            if match.route.needs_key:
                self._authorize(headers)
            if body and not match.route.takes_body():
                # Refused before anything runs: a client sending one meant something this route ignores.
                raise BadRequest("%s %s takes no request body; send it without one"
                                 % (match.route.method, match.route.template))
            if match.route.method == "POST":
                self.guard.check_content_type(headers.get("Content-Type"))
            response = match.route.endpoint(Call(match, body, self.memory, self.metrics, self.pages))
        except FlowmemError as e:
            response = error_response(e)
        except Exception:
            # A bug, not bad input. Log the traceback (it holds no request content) and say little.
            log.exception("internal error on %s %s", method, found.template or "(no route)")
            response = json_response(500, INTERNAL_ERROR)
        return response._replace(headers=response.headers + cors) if cors else response

    def _authorize(self, headers: Headers) -> None:
        if self._key is None:
            return
        given = credential(headers)
        # compare_digest takes constant time for equal-length inputs and does not leak the key's content.
        if given is None or not hmac.compare_digest(_header_bytes(given), self._key):
            raise Unauthorized(
                "missing or wrong API key; send Authorization: Bearer <key>, Authorization: Token <key> or X-Api-Key"
            )
