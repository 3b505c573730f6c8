"""Hostile connections: slowloris, stalled bodies, idle sockets and non-readers, held open in a process of their own.

A HostilePool opens its connections non-blocking and drips or holds them as its kind says,
noting from TCP_INFO and the socket what the server did (closed it, answered 408, stopped
reading); Hostiles runs one in a child process, so their selects never steal the real
client's time slices.
"""
from __future__ import annotations

import collections
import errno
import multiprocessing
import random
import re
import socket
import struct
import time
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from tools.benchkit.stats import percentile

try:
    import fcntl
    import termios
except ImportError:
    fcntl = termios = None  # type: ignore[assignment]


# Linux TCP states (include/net/tcp_states.h), read from TCP_INFO's first byte.
TCP_ESTABLISHED, TCP_SYN_SENT, TCP_CLOSE, TCP_CLOSE_WAIT = 1, 2, 7, 8


TCP_INFO = getattr(socket, "TCP_INFO", 11)


def tcp_state(sock: socket.socket) -> Optional[int]:
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 8)[0]
    except OSError:
        return None


def unread_bytes(sock: socket.socket) -> int:
    if fcntl is None:
        return 0
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


def peek_status(sock: socket.socket) -> Optional[str]:
    """The status code of an answer waiting in the socket (not consumed), e.g. "408", or None."""
    try:
        head = sock.recv(64, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return None
    found = re.match(rb"HTTP/\d\.\d (\d{3})", head)
    return found.group(1).decode() if found else ("other bytes" if head else None)


class HostileSettings(NamedTuple):
    host: str
    port: int
    kind: str
    count: int  # type: ignore[assignment]  # shadows tuple.count(), which nothing here calls
    drip_interval_s: float
    reopen_delay_s: float
    connect_timeout_s: float
    nonreader_payload: bytes
    auth_header: bytes  # b"" or b"Authorization: Bearer ...\r\n"


class Slot:
    __slots__ = ("index", "sock", "started", "state", "next_drip", "drips", "answered", "reopen_at", "next_check")

    def __init__(self, index: int):
        self.index = index
        self.sock: Optional[socket.socket] = None
        self.started = 0.0
        self.state = "closed"  # closed | connecting | open
        self.next_drip = 0.0
        self.drips: List[bytes] = []
        self.answered = False
        self.reopen_at = 0.0
        self.next_check = 0.0


class HostilePool:
    """`count` connections of one kind to the server, kept open; what the server did to them."""

    def __init__(self, s: HostileSettings):
        self.s = s
        self.slots = [Slot(i) for i in range(s.count)]
        self.rng = random.Random("hostile-%s" % s.kind)
        self.opened = 0  # connections that got established and sent their opening bytes
        self.closed_by_server = 0
        self.close_after_s: List[float] = []
        self.close_status: "collections.Counter[str]" = collections.Counter()
        self.answers_open: "collections.Counter[str]" = collections.Counter()  # answered, not (yet) closed
        self.failures: "collections.Counter[str]" = collections.Counter()
        self.drips_sent = 0
        self.first_all_open_s: Optional[float] = None
        self.t0 = time.monotonic()

    # what a connection sends
    def opening(self, slot: Slot) -> Tuple[bytes, List[bytes]]:
        s, host = self.s, b"Host: 127.0.0.1\r\n"
        if s.kind == "slowloris":
            if slot.index % 2 == 0:  # inside the request line: one more byte every interval
                rest = b"rch HTTP/1.1\r\n"
                return b"POST /sea", [rest[i:i + 1] for i in range(len(rest))] + [host]
            return (b"POST /search HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n" + s.auth_header, [])
        if s.kind == "stalled_body":
            return (b"POST /add HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n" + s.auth_header
                    + b"Content-Length: 100000\r\n\r\n" + b'{"r', [])
        if s.kind == "idle":
            return b"", []
        if s.kind == "nonreader":
            return s.nonreader_payload, []
        raise ValueError("unknown hostile kind %r" % s.kind)

    def next_drip(self, slot: Slot) -> Optional[bytes]:
        if self.s.kind != "slowloris":
            return None
        if slot.drips:
            return slot.drips.pop(0)
        return b"X-Slow-%d: still here\r\n" % self.rng.randrange(1 << 30)

    # connection life
    def open(self, slot: Slot, now: float) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.s.kind == "nonreader":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        code = sock.connect_ex((self.s.host, self.s.port))
        if code not in (0, errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK):
            self.failures["connect: %s" % errno.errorcode.get(code, code)] += 1
            sock.close()
            slot.reopen_at = now + self.s.reopen_delay_s
            return
        slot.sock, slot.started, slot.state, slot.answered = sock, now, "connecting", False
        slot.next_check = now

    def drop(self, slot: Slot, now: float) -> None:
        if slot.sock is not None:
            try:
                slot.sock.close()
            except OSError:
                pass
        slot.sock, slot.state = None, "closed"
        slot.reopen_at = now + self.s.reopen_delay_s

    def closed_by_peer(self, slot: Slot, now: float, why: str) -> None:
        status = peek_status(slot.sock) if slot.sock is not None else None
        self.closed_by_server += 1
        self.close_after_s.append(now - slot.started)
        self.close_status[status or why] += 1
        self.drop(slot, now)

    def send(self, slot: Slot, data: bytes, now: float) -> bool:
        try:
            assert slot.sock is not None  # only an open slot drips
            slot.sock.send(data)
            return True
        except BlockingIOError:
            return True  # the server is not reading; that is its business
        except OSError as e:
            self.closed_by_peer(slot, now, "send failed: %s" % type(e).__name__)
            return False

    def tick(self, max_opens: int = 100) -> None:
        """One pass over the connections: (re)open up to `max_opens`, drip, notice what the server did."""
        now = time.monotonic()
        open_now = 0
        for slot in self.slots:
            if slot.sock is None:
                if now >= slot.reopen_at and max_opens > 0:
                    max_opens -= 1
                    self.open(slot, now)
                continue
            if slot.state == "connecting":
                state = tcp_state(slot.sock)
                if state == TCP_ESTABLISHED:
                    first, slot.drips = self.opening(slot)
                    slot.state = "open"
                    slot.next_drip = now + self.s.drip_interval_s * (0.5 + self.rng.random())
                    self.opened += 1
                    if first and not self.send(slot, first, now):
                        continue
                elif state != TCP_SYN_SENT:
                    err = slot.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    self.failures["connect: %s" % (errno.errorcode.get(err, err) if err else "state %s" % state)] += 1
                    self.drop(slot, now)
                    continue
                elif now - slot.started > self.s.connect_timeout_s:
                    self.failures["connect: timed out"] += 1
                    self.drop(slot, now)
                    continue
                else:
                    continue
            if now >= slot.next_check:
                slot.next_check = now + 0.5
                state = tcp_state(slot.sock)
                if state in (TCP_CLOSE_WAIT, TCP_CLOSE) or state is None:
                    self.closed_by_peer(slot, now, "closed without an answer")
                    continue
                if not slot.answered and self.s.kind != "nonreader" and unread_bytes(slot.sock):
                    slot.answered = True
                    self.answers_open[peek_status(slot.sock) or "?"] += 1
            if self.s.kind == "slowloris" and now >= slot.next_drip:
                slot.next_drip = now + self.s.drip_interval_s
                data = self.next_drip(slot)
                if data:
                    self.drips_sent += 1
                    if not self.send(slot, data, now):
                        continue
            open_now += 1
        if self.first_all_open_s is None and open_now >= len(self.slots):
            self.first_all_open_s = now - self.t0

    def stats(self) -> Dict[str, Any]:
        states = collections.Counter(slot.state for slot in self.slots)
        unread = sum(unread_bytes(slot.sock) for slot in self.slots
                     if slot.sock is not None and slot.state == "open") if self.s.kind == "nonreader" else None
        return {
            "kind": self.s.kind, "target": self.s.count, "open": states.get("open", 0),
            "connecting": states.get("connecting", 0), "closed_waiting": states.get("closed", 0),
            "opened_total": self.opened, "closed_by_server": self.closed_by_server,
            "close_after_s": {"n": len(self.close_after_s), "min": min(self.close_after_s, default=None),
                              "p50": percentile(self.close_after_s, 50) if self.close_after_s else None,
                              "max": max(self.close_after_s, default=None)},
            "close_status": dict(self.close_status), "answers_while_open": dict(self.answers_open),
            "failures": dict(self.failures), "drips_sent": self.drips_sent, "unread_bytes": unread,
            "all_open_after_s": self.first_all_open_s,
        }

    def close_all(self) -> None:
        for slot in self.slots:
            if slot.sock is not None:
                try:
                    slot.sock.close()
                except OSError:
                    pass
                slot.sock = None


def hostile_worker(pipe: Any, settings: HostileSettings) -> None:
    """The hostile process: open the connections, keep them open, answer "stats" and "stop"."""
    pool = HostilePool(settings)
    while True:
        # Quick passes while connections are still being opened (100 per pass), then every 0.1 s.
        busy = any(slot.state != "open" for slot in pool.slots)
        if pipe.poll(0.02 if busy else 0.1):
            command = pipe.recv()
            if command == "stats":
                pipe.send(pool.stats())
            else:
                stats = pool.stats()
                pool.close_all()
                pipe.send(stats)
                return
        pool.tick()


class Hostiles:
    """The parent's handle on a hostile process."""

    def __init__(self, settings: HostileSettings):
        ctx = multiprocessing.get_context("spawn")
        self.pipe, child = ctx.Pipe()
        self.proc = ctx.Process(target=hostile_worker, args=(child, settings), daemon=True)
        self.proc.start()
        child.close()

        self.last: Dict[str, Any] = {
            "kind": settings.kind, "target": settings.count, "open": 0, "connecting": 0, "closed_waiting": 0,
            "opened_total": 0, "closed_by_server": 0, "close_after_s": {"n": 0, "min": None, "p50": None, "max": None},
            "close_status": {}, "answers_while_open": {}, "failures": {}, "drips_sent": 0, "unread_bytes": None,
            "all_open_after_s": None}

    def _ask(self, command: str) -> Dict[str, Any]:
        try:
            self.pipe.send(command)
            if self.pipe.poll(60):
                self.last = self.pipe.recv()
                return self.last
        except (EOFError, OSError):
            pass
        failures = dict(self.last.get("failures") or {})
        failures["the hostile process died or hung"] = 1
        self.last = dict(self.last, failures=failures)
        return self.last

    def stats(self) -> Dict[str, Any]:
        return self._ask("stats")

    def stop(self) -> Dict[str, Any]:
        stats = self._ask("stop")
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(10)
        return stats
