"""http.client connections whose timeout bounds a whole request, and whose answers are bounded in size.

http.client's `timeout` is its socket's, and a socket's timeout bounds each connect, send
and recv on its own: a server that trickles its answer a byte a second (each recv returns
well within the timeout) holds a call for as long as it keeps trickling. These connections
carry a deadline instead, set for each request (start()): connecting gets what is left of
it, and so does every send and every read of the status line, the headers and the body
(the socket's timeout is set to what is left before each), and a read begun past it raises
socket.timeout at once. A request so takes at most its timeout, as AsyncClient's
asyncio.wait_for() bounds its requests.

read_answer() reads an answer's body only up to a bound (the Client's `max_answer_bytes`):
one that says it is longer is refused before any of it is read, and one of no stated length
(chunks, or up to the connection's end) once it passes the bound, so a runaway answer costs
at most the bound, not its whole size twice over (the bytes, then their text).
"""
from __future__ import annotations

import http.client
import io
import socket
import time
from typing import Any, Optional


class Deadline:
    """When the request now on a connection must be done (time.monotonic()); None: no bound."""

    def __init__(self) -> None:
        self.at: Optional[float] = None

    def left(self) -> Optional[float]:
        """Seconds left (None: no bound); socket.timeout once there are none, so no read or send begins."""
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        return left


class _Reader(io.RawIOBase):
    """A socket's raw reader (socket.makefile's) that sets the socket's timeout to the deadline's
    time left before each read: a trickle of bytes ends at the deadline, not at the trickle's end."""

    def __init__(self, sock: Any, deadline: Deadline):
        super().__init__()
        self._sock, self._deadline = sock, deadline
        self._raw = sock.makefile("rb", buffering=0)  # counted by the socket: it stays open while this is

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> Optional[int]:
        self._sock.settimeout(self._deadline.left())
        return self._raw.readinto(buffer)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _Socket:
    """A connected socket whose sends, and the reads of every answer on it, keep to one deadline."""

    def __init__(self, sock: Any, deadline: Deadline):
        self._sock, self._deadline = sock, deadline

    def sendall(self, data: Any) -> None:
        # sendall's timeout bounds the whole send (Python 3.5+), so what is left bounds it too.
        self._sock.settimeout(self._deadline.left())
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self._sock, self._deadline))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)  # close(), setsockopt(), ...: the socket's own


class _Timed:
    """What both connection classes add to http.client's: the deadline, and a socket that keeps to it."""

    sock: Any
    timeout: Optional[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self.deadline = Deadline()

    def start(self, seconds: Optional[float]) -> None:
        """Bound the request about to be sent, and the reading of its answer, to `seconds` from now
        (None: unbounded, as http.client's timeout None)."""
        self.deadline.at = None if seconds is None else time.monotonic() + seconds

    def connect(self) -> None:
        self.timeout = self.deadline.left()  # connecting (and TLS's handshake) takes from the same time
        super().connect()  # type: ignore[misc]
        self.sock = _Socket(self.sock, self.deadline)


class TimedHTTPConnection(_Timed, http.client.HTTPConnection):
    """An HTTPConnection whose requests each keep to one deadline (start())."""


class TimedHTTPSConnection(TimedHTTPConnection, http.client.HTTPSConnection):
    """An HTTPSConnection whose requests each keep to one deadline (start())."""


class AnswerTooLong(Exception):
    """An answer's body is past the bound: `size` its length (None: past the bound, length unknown)."""

    def __init__(self, size: Optional[int]):
        super().__init__(size)
        self.size = size


def read_answer(response: http.client.HTTPResponse, limit: int) -> bytes:
    """The body of `response`, at most `limit` bytes; AnswerTooLong if it is longer (the rest unread)."""
    if response.length is not None:
        if response.length > limit:
            raise AnswerTooLong(response.length)
        return response.read()  # exactly its Content-Length, or IncompleteRead
    payload = response.read(limit + 1)  # chunks, or up to the connection's end: one byte more tells
    if len(payload) > limit:
        raise AnswerTooLong(None)
    return payload
