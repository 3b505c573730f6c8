"""HTTP: routing, authentication, body limits, JSON in and out, errors to statuses.

`App.handle` turns (method, path, headers, body reader) into a Response and holds all
HTTP policy, so it can be tested without a socket. `Handler` is the thin
http.server class that feeds it bytes from a connection; `serve` runs the threaded
server until SIGINT or SIGTERM, then lets in-flight requests finish and closes the
database.
"""
from __future__ import annotations

import hmac
import json
import logging
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from . import __version__
from .config import Config
from .errors import (BadRequest, FlowmemError, MethodNotAllowed, NotFound, Overloaded, PayloadTooLarge, RetryLater,
                     Unauthorized)
from .memory import Memory

log = logging.getLogger("flowmem.http")

# path -> (method, Memory method name, needs the API key)
ROUTES: Dict[str, Tuple[str, str, bool]] = {
    "/add": ("POST", "add", True),
    "/search": ("POST", "search", True),
    "/health": ("GET", "health", False),
}


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


def _reject_constant(name: str) -> Any:
    raise ValueError("%s is not valid JSON" % name)


def decode_json_object(body: bytes) -> Dict[str, Any]:
    """The body as a JSON object, or BadRequest saying why it is not one."""
    if not body.strip():
        raise BadRequest("request body is empty; send a JSON object")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("request body is not UTF-8")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise BadRequest("request body is nested too deeply")
    except ValueError as e:  # JSONDecodeError, over-long integers, NaN/Infinity
        raise BadRequest("request body is not valid JSON: %s" % e)
    if not isinstance(value, dict):
        raise BadRequest("request body must be a JSON object, got a JSON %s" % type(value).__name__)
    return value


def credential(headers: Mapping[str, str]) -> Optional[str]:
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
    """flowmem's HTTP policy over a Memory; call `handle` once per request."""

    def __init__(self, memory: Memory, config: Config):
        self.memory = memory
        self.max_body_bytes = config.max_body_bytes
        key = config.key()
        self._key = key.encode("utf-8") if key else None
        self._slots = threading.BoundedSemaphore(config.max_inflight)

    def handle(self, method: str, path: str, headers: Mapping[str, str], read_body: Callable[[int], bytes]) -> Response:
        """Answer one request. `read_body(limit)` returns the body or raises PayloadTooLarge."""
        try:
            action, needs_key = self._route(method, path)
            if needs_key:
                self._authorize(headers)
            if method == "POST":
                return self._call_limited(action, lambda: decode_json_object(read_body(self.max_body_bytes)))
            return json_response(200, getattr(self.memory, action)())
        except FlowmemError as e:
            return error_response(e)
        except Exception:
            # A bug, not bad input. Log the traceback (it holds no request content) and say little.
            log.exception("internal error on %s %s", method, path.split("?", 1)[0])
            return json_response(500, {"detail": {"reason": "internal error"}})

    def _route(self, method: str, path: str) -> Tuple[str, bool]:
        route = path.split("?", 1)[0]
        if len(route) > 1 and route.endswith("/"):
            route = route[:-1]
        if route not in ROUTES:
            raise NotFound("no such path; flowmem serves POST /add, POST /search and GET /health")
        allowed, action, needs_key = ROUTES[route]
        if method != allowed and not (method == "HEAD" and allowed == "GET"):
            raise MethodNotAllowed("%s takes %s, not %s" % (route, allowed, method), allow=allowed)
        return action, needs_key

    def _authorize(self, headers: Mapping[str, str]) -> None:
        if self._key is None:
            return
        given = credential(headers)
        # compare_digest takes constant time for equal-length inputs and does not leak the key's content.
        if given is None or not hmac.compare_digest(_header_bytes(given), self._key):
            raise Unauthorized(
                "missing or wrong API key; send Authorization: Bearer <key>, Authorization: Token <key> or X-Api-Key"
            )

    def _call_limited(self, action: str, body: Callable[[], Dict[str, Any]]) -> Response:
        if not self._slots.acquire(blocking=False):
            raise Overloaded("too many requests in flight; retry shortly", retry_after=1)
        try:
            return json_response(200, getattr(self.memory, action)(body()))
        finally:
            self._slots.release()


class Handler(BaseHTTPRequestHandler):
    """Moves bytes between a connection and App.handle; holds no policy of its own."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, the second
    # waits for the client's delayed ACK (~40 ms per keep-alive request).
    disable_nagle_algorithm = True
    # Answer even a garbled request line with a status line and headers, never bare HTTP/0.9.
    default_request_version = "HTTP/1.0"
    server_version = "flowmem/" + __version__
    server: "Server"

    def setup(self) -> None:
        super().setup()
        self.busy = False
        self.server.track(self, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self, False)

    def parse_request(self) -> bool:
        # Called once a request line has arrived: from here on the connection is busy.
        self.busy = True
        return super().parse_request()

    def _dispatch(self) -> None:
        started = time.perf_counter()
        self._body_read = False
        response = self.server.app.handle(self.command, self.path, self.headers, self._read_body)
        if not self._body_read and (self.headers.get("Content-Length") not in (None, "0")
                                    or self.headers.get("Transfer-Encoding")):
            # The unread body would be taken for the next request on this connection.
            self.close_connection = True
        if self.server.stopping:
            self.close_connection = True
        self._send(response, started)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch

    def _read_body(self, limit: int) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked(limit)
        raw = self.headers.get("Content-Length")
        if raw is None:
            self._body_read = True
            return b""
        try:
            length = int(raw)
            if length < 0:
                raise ValueError
        except ValueError:
            raise BadRequest("Content-Length is not a non-negative integer")
        if length > limit:
            raise PayloadTooLarge("request body is %d bytes; the limit is %d" % (length, limit))
        body = self.rfile.read(length)
        self._body_read = True
        if len(body) < length:
            raise BadRequest("request body ended early")
        return body

    def _read_chunked(self, limit: int) -> bytes:
        parts = []
        total = 0
        while True:
            line = self.rfile.readline(1026)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest("malformed chunked body")
            if size == 0:
                while self.rfile.readline(1026) not in (b"\r\n", b"\n", b""):
                    pass
                self._body_read = True
                return b"".join(parts)
            total += size
            if total > limit:
                raise PayloadTooLarge("request body is over the limit of %d bytes" % limit)
            parts.append(self.rfile.read(size))
            self.rfile.readline(3)

    def _send(self, response: Response, started: float) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)
        self.busy = False
        log.info("%s %s %d %.1fms", self.command, self.path.split("?", 1)[0], response.status,
                 (time.perf_counter() - started) * 1000)

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        # http.server's own rejections (bad request line, unknown method) also get the JSON error shape.
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        self._send(json_response(code, {"detail": {"reason": reason}}), time.perf_counter())

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass  # _send logs method, path, status and time; never bodies

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


class Server(ThreadingHTTPServer):
    """Threaded HTTP server that can stop idle keep-alive connections on shutdown."""

    daemon_threads = False  # server_close() then waits for in-flight requests
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: Tuple[str, int], app: App):
        super().__init__(address, Handler)
        self.app = app
        self.stopping = False
        self._handlers: set = set()
        self._handlers_lock = threading.Lock()

    def track(self, handler: Handler, alive: bool) -> None:
        with self._handlers_lock:
            (self._handlers.add if alive else self._handlers.discard)(handler)

    def stop_idle_connections(self) -> None:
        """Mark the server stopping and end connections that wait for a next request."""
        self.stopping = True
        with self._handlers_lock:
            idle = [h for h in self._handlers if not h.busy]
        for handler in idle:
            try:
                handler.connection.shutdown(socket.SHUT_RD)
            except OSError:
                pass


def serve(config: Config, ready: Optional[Callable[[Tuple[str, int]], None]] = None) -> None:
    """Serve until SIGINT or SIGTERM; in-flight requests finish, then the database closes."""
    memory = Memory(config)
    try:
        server = Server((config.host, config.port), App(memory, config))
    except BaseException:
        memory.close()
        raise

    def stop(signum: int, frame: Any) -> None:
        log.info("signal %d: finishing in-flight requests and stopping", signum)
        threading.Thread(target=server.shutdown, daemon=True).start()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    host, port = server.server_address[:2]
    log.info("flowmem %s serving on http://%s:%d (database %s)", __version__, host, port, config.db)
    if ready:
        ready((host, port))
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.stop_idle_connections()
        server.server_close()
        memory.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
        log.info("stopped; database closed")
