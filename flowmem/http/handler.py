"""Answering one whole request on a worker thread: parse it, ask App, serialize the response.

The connection loop (server.py) hands a worker only requests that arrived whole;
answer() runs http.server's parser (Handler) over the request's bytes and App's
policy (api.py), or sheds a request that waited in its lane past the request timeout
with a 429. Every request, answered or refused, is logged in one line
(log_request()): method, path, status, time; never content.
"""
from __future__ import annotations

import email.utils
import http
import io
import logging
import time
from http.server import BaseHTTPRequestHandler
from typing import Optional, Tuple

from .. import __version__
from ..errors import Overloaded
from .api import App
from .framing import Request
from .responses import INTERNAL_ERROR, Response, error_response, json_response

log = logging.getLogger("flowmem.http")

_SERVER = "flowmem/" + __version__


def serialize(response: Response, close: bool, head_only: bool = False) -> bytes:
    """A response as bytes on the wire (status line, headers, body)."""
    try:
        phrase = http.HTTPStatus(response.status).phrase
    except ValueError:
        phrase = ""
    lines = ["HTTP/1.1 %d %s" % (response.status, phrase), "Server: " + _SERVER,
             "Date: " + email.utils.formatdate(usegmt=True)]
    lines += ["%s: %s" % header for header in response.headers]
    lines.append("Content-Length: %d" % len(response.body))
    if close:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + response.body


def printable(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, anything but printable ASCII escaped: a client's bytes
    must not reach the operator's terminal as control sequences."""
    cut = text[:limit]
    out = "".join(c if " " < c < "\x7f" else "\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c)
                  for c in cut)
    return out + ("..." if len(text) > limit else "")


def log_request(method: str, path: str, status: int, started: float) -> None:
    """The one log line of a request: method, path (no query string), status, time; never content."""
    log.info("%s %s %d %.1fms", printable(method, 20), printable(path.split("?", 1)[0], 200), status,
             (time.perf_counter() - started) * 1000)


class Handler(BaseHTTPRequestHandler):
    """Answers one request the loop has read whole: http.server parses it, App decides.

    Holds no policy: it parses the request line and headers, hands them and the body
    to App.handle, and serializes App's Response.
    """

    protocol_version = "HTTP/1.1"
    # Answer even a garbled request line with a status line and headers, never bare HTTP/0.9.
    default_request_version = "HTTP/1.0"

    def __init__(self, request: Request, app: App, closing: bool, received: float):
        # BaseHTTPRequestHandler.__init__ would read a socket; this request is already read whole.
        self.rfile = io.BytesIO(request.head)
        self._response = io.BytesIO()
        self.wfile = self._response
        self.body = request.body
        self.app = app
        self.closing = closing
        self.received = received
        self.path = "-"

    def respond(self) -> Tuple[bytes, bool]:
        """The response's bytes, and whether the connection closes after them."""
        self.close_connection = True
        self.raw_requestline = self.rfile.readline(65537)
        if self.parse_request():  # else parse_request has called send_error
            response = self.app.handle(self.command, self.path, self.headers, self.body)
            self.close_connection = self.close_connection or self.closing
            self._send(response)
        return self._response.getvalue(), self.close_connection

    def handle_expect_100(self) -> bool:
        return True  # the loop sent "100 Continue" when it mattered: before the body arrived

    def _send(self, response: Response) -> None:
        self.wfile.write(serialize(response, self.close_connection, self.command == "HEAD"))
        log_request(self.command or "-", self.path, response.status, self.received)

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        # http.server's own rejections (bad request line or version, bad headers) in the JSON error shape.
        self.close_connection = True
        self._send(json_response(code, {"detail": {"reason": message or http.HTTPStatus(code).phrase}}))
        self.app.refused(self.path, code)


def answer(request: Request, app: App, closing: bool, received: float,
           request_timeout_s: float) -> Tuple[bytes, bool]:
    """The response's bytes to a request the loop received whole at `received`, and whether the
    connection closes after them: 429 if it waited in its lane past the request timeout."""
    waited = time.perf_counter() - received
    try:
        if waited > request_timeout_s:
            return _shed(request, app, waited), False
        return Handler(request, app, closing, received).respond()
    except Exception:  # a bug in the handler itself; App.handle catches its own
        log.exception("internal error while answering a request")
        return serialize(json_response(500, INTERNAL_ERROR), True), True


def _shed(request: Request, app: App, waited: float) -> bytes:
    """429 for a request that waited in its lane past the request timeout: under a flood, answers
    come back within about that time, as 429s the client retries, instead of after minutes."""
    error = Overloaded("the request waited %.0f s for a worker; retry shortly" % waited)
    words = request.head.split(b"\n", 1)[0].split()
    path = words[1].decode("latin-1") if len(words) > 1 else "-"
    log_request(words[0].decode("latin-1") if words else "-", path, error.status, time.perf_counter() - waited)
    app.refused(path, error.status)
    return serialize(error_response(error), False)

