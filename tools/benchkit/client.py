"""The keep-alive HTTP client that the soak and the slow-client bench drive flowmem with.

One http.client connection per client thread, reopened only when the server closed it (a
close is counted, since a server that drops keep-alive connections under load costs every
client a handshake). A request's Outcome says what came back: the status, the JSON body,
the latency, or the kind of connection error, so a bench counts errors by kind.
"""
from __future__ import annotations

import collections
import http.client
import json
import select
import socket
import time
from typing import Any, Dict, Optional


def peer_closed(sock: Optional[socket.socket]) -> bool:
    """Whether an idle keep-alive socket was closed by the server (or holds bytes nobody asked for)."""
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):  # no FD_SETSIZE limit, unlike select()
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            readable = bool(poller.poll(0))
        else:
            readable = bool(select.select([sock], [], [], 0)[0])
        # Readable while idle: EOF, a reset, or an unsolicited answer (e.g. a 408 before closing): start over.
        return readable
    except (OSError, ValueError):
        return True


class Outcome:
    """One request: what happened and how long it took."""

    __slots__ = ("status", "payload", "latency_ms", "error_kind", "error_detail", "body_text")

    def __init__(self) -> None:
        self.status: Optional[int] = None
        self.payload: Any = None
        self.latency_ms: Optional[float] = None
        self.error_kind: Optional[str] = None  # None, "5xx", "non-200", "malformed", "connection"
        self.error_detail = ""
        self.body_text = ""


class KeepAliveClient:
    """One keep-alive connection; it reconnects only when the server closed it (counted)."""

    def __init__(self, host: str, port: int, timeout_s: float, headers: Dict[str, str]):
        self.host, self.port, self.timeout_s, self.headers = host, port, timeout_s, headers
        self.conn: Optional[http.client.HTTPConnection] = None
        self.connects = 0
        self.reconnects: "collections.Counter[str]" = collections.Counter()
        self._pending_reason: Optional[str] = None

    def _connect(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        self.conn = None
        conn.connect()
        self.conn = conn
        self.connects += 1

    def ready(self) -> None:
        """Make sure there is an open connection before a timed request (connecting is not timed)."""
        if self.conn is None:
            self._connect()
            if self._pending_reason:
                self.reconnects[self._pending_reason] += 1
                self._pending_reason = None
        elif self.conn.sock is None:  # http.client closed it: the server answered "Connection: close"
            self.reconnects["server closed after an answer"] += 1
            self._connect()
        elif peer_closed(self.conn.sock):
            self.reconnects["server closed an idle connection"] += 1
            self.conn.close()
            self._connect()

    def request(self, method: str, path: str, body: Optional[bytes]) -> Outcome:
        out = Outcome()
        try:
            self.ready()
        except OSError as e:
            out.error_kind, out.error_detail = "connection", "connect: %s" % type(e).__name__
            self.conn = None
            self._pending_reason = "after a connection error"
            return out
        assert self.conn is not None
        t0 = time.perf_counter()
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            raw = response.read()
            out.latency_ms = (time.perf_counter() - t0) * 1000.0
            out.status = response.status
        except (OSError, http.client.HTTPException) as e:
            out.latency_ms = (time.perf_counter() - t0) * 1000.0
            kind = "timeout" if isinstance(e, socket.timeout) else type(e).__name__
            out.error_kind, out.error_detail = "connection", kind
            self.conn.close()
            self.conn = None
            self._pending_reason = "after a connection error"
            return out
        if out.status != 200:
            out.error_kind = "5xx" if out.status >= 500 else "non-200"
            out.error_detail = "HTTP %d" % out.status
            out.body_text = raw[:300].decode("utf-8", "replace")
            return out
        try:
            out.payload = json.loads(raw)
        except ValueError:
            out.error_kind, out.error_detail = "malformed", "200 with a body that is not JSON"
            out.body_text = raw[:300].decode("utf-8", "replace")
        return out

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
