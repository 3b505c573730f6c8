"""The sockets: one client connection's state as the loop sees it, the listener, the open-file limit."""
from __future__ import annotations

import logging
import socket

from .framing import RequestFramer

log = logging.getLogger("flowmem.http")

RESERVED_FILES = 256  # file descriptors kept for the database, the log and the listener


class Connection:
    """One client connection, as the loop sees it."""

    def __init__(self, sock: socket.socket, now: float, request_timeout_s: float, max_body_bytes: int):
        self.sock = sock
        self.buffer = bytearray()  # received, not yet part of a dispatched request
        self.framer = RequestFramer(max_body_bytes)
        self.out = memoryview(b"")  # response bytes the client has not taken yet
        self.busy = False  # a worker holds its request
        self.idle = False  # waiting on keep-alive for a next request
        self.closing = False  # close once `out` is sent
        self.draining = False  # response sent; reading until the client closes
        self.continued = False  # "100 Continue" sent for the current request
        self.closed = False
        self.since = now  # when it began to wait for (the rest of) a request
        self.deadline = now + request_timeout_s
        self.events = 0  # what the selector watches for


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=1024)


def raise_file_limit(max_connections: int) -> int:
    """Raise the soft limit on open files to fit `max_connections`; the number of connections that fit."""
    try:
        import resource
    except ImportError:  # not on Unix: the platform's limit applies
        return max_connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
            soft = new
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < wanted:
        fits = max(1, soft - RESERVED_FILES)
        log.warning("only %d open files allowed: at most %d connections, not %d", soft, fits, max_connections)
        return fits
    return max_connections
