"""The sockets: one client connection's state as the loop sees it, the listener, the open-file limit.

A connection is in one `State` at a time, and the state alone says what the loop
(server.py) does with it: which socket events it watches, whether its deadline answers
408 or closes it, whether it gives way to a new connection, what a shutdown does to it.
The steps it may take (`NEXT`):

    READING    -> ANSWERING  a whole request went to a worker
               -> CLOSING    the loop refused it (400, 408, 413, 429, 431, 503): the answer, then close
    ANSWERING  -> WRITING    the worker's response, or what the socket did not take at once
               -> CLOSING    the same, when the connection closes after it
               -> IDLE       the worker sent it whole (or DRAINING, when the connection closes after it)
    WRITING    -> IDLE       sent whole
    CLOSING    -> DRAINING   sent whole; writing shut, reading (and discarding) until the client closes
    IDLE       -> READING    a byte of the next request arrived, or one pipelined came with the last
    any        -> CLOSED     the client closed, a deadline passed, a new connection needed the room, shutdown

`Connection.become` refuses any other step: one would be a bug in the loop.
"""
from __future__ import annotations

import enum
import logging
import selectors
import socket
from typing import Dict, FrozenSet

from .framing import RequestFramer

log = logging.getLogger("flowmem.http")

RESERVED_FILES = 256  # file descriptors kept for the database, the log and the listener


class State(enum.Enum):
    READING = "reading"  # waiting for (the rest of) a request, since connecting or since its first byte
    ANSWERING = "answering"  # a worker holds its request; the socket is not watched
    WRITING = "writing"  # a response the client has not taken whole; then the next request
    CLOSING = "closing"  # the same, and the connection closes after it
    DRAINING = "draining"  # the last response sent, writing shut: what arrives is discarded until the client closes
    IDLE = "idle"  # keep-alive: the last response sent, no byte of a next request yet
    CLOSED = "closed"


# Where each state may go next (the module docstring's list).
class StepRefused(ValueError):
    """A step NEXT does not allow: a bug of the server's loop, never a client's doing. The loop
    closes that connection and logs it (server.py); the server and its other connections go on."""


NEXT: Dict[State, FrozenSet[State]] = {
    State.READING: frozenset({State.ANSWERING, State.CLOSING, State.CLOSED}),
    State.ANSWERING: frozenset({State.WRITING, State.CLOSING, State.IDLE, State.DRAINING, State.CLOSED}),
    State.WRITING: frozenset({State.IDLE, State.CLOSED}),
    State.CLOSING: frozenset({State.DRAINING, State.CLOSED}),
    State.DRAINING: frozenset({State.CLOSED}),
    State.IDLE: frozenset({State.READING, State.CLOSED}),
    State.CLOSED: frozenset(),
}
# What the selector watches for in each state.
EVENTS: Dict[State, int] = {
    State.READING: selectors.EVENT_READ, State.ANSWERING: 0, State.WRITING: selectors.EVENT_WRITE,
    State.CLOSING: selectors.EVENT_WRITE, State.DRAINING: selectors.EVENT_READ, State.IDLE: selectors.EVENT_READ,
    State.CLOSED: 0,
}


class Connection:
    """One client connection, as the loop sees it: its state, its bytes in and out, its deadline."""

    def __init__(self, sock: socket.socket, now: float, request_timeout_s: float, max_body_bytes: int):
        self.sock = sock
        self.state = State.READING
        self.buffer = bytearray()  # received, not yet part of a dispatched request
        self.framer = RequestFramer(max_body_bytes)  # the request being read; "100 Continue" sent for it or not
        self.out = memoryview(b"")  # response bytes the client has not taken yet (WRITING, CLOSING)
        self.since = now  # when it began to wait for (the rest of) a request
        self.deadline = now + request_timeout_s
        self.events = 0  # what the selector watches for now

    def become(self, state: State) -> None:
        """Step to `state`; StepRefused (a bug of the loop) for a step NEXT does not have."""
        if state not in NEXT[self.state]:
            raise StepRefused("a connection cannot go from %s to %s" % (self.state.value, state.value))
        self.state = state

    def waiting(self) -> bool:
        """Whether it waits on its client (for a request, or to close): what gives way to a new connection."""
        return self.state in (State.READING, State.IDLE, State.DRAINING)


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
