"""Connections: one loop reads requests whole, a fixed pool of threads answers them.

flowmem's first server gave each connection a thread (http.server's
ThreadingHTTPServer), and a client that connected and then sent slowly, or nothing,
kept its thread, and once its headers were in, an in-flight slot, for as long as it
liked: 1,000 such clients held 1,000 threads, and 520 held every slot. Here:

- One loop (this module's `Server`, on the thread that calls `serve_forever`) owns
  every socket. It accepts, reads what arrives into the connection's buffer and asks
  the framer (framing.py) whether a whole request is there. A request must
  arrive whole within `request_timeout_s` of its first byte (of connecting, for a new
  connection), or the connection is closed (408 if part of a request came); an idle
  keep-alive connection is closed after `keepalive_timeout_s`. A slow client costs a
  socket and a buffer, never a thread.
- Only whole requests go to the `workers` threads, which run the http.server
  handler (`Handler`, handler.py) over the request's bytes and App's policy; only whole requests
  count against `max_inflight` (more get 429), and one that waited in its lane longer
  than the request timeout is answered 429 without being run. A quarter of the workers take the
  writes (Adds), the rest everything else: writes queue for the database's single
  write lock, and in one shared pool a long write (a delete-user, a reindex by
  another process) would leave every worker waiting on that lock and searches none.
  Imports have a lane of their own (lanes.py).
- A worker sends its response itself when the socket takes it at once (the usual
  case); what does not fit goes back to the loop, which writes it as the client
  reads, within the request timeout. After a response that closes the connection,
  the loop stops writing and reads until the client closes (at most `LINGER_S`), so
  a client still sending a refused body sees the response instead of a reset.
- At most `max_connections` are open: when one more arrives, the connection that has
  waited longest for (the rest of) a request gives way. Bodies beyond 64 KiB a
  connection share a budget; a request that would exceed it gets 503.
- SIGTERM (`stop`): stop accepting, close idle connections, let half-sent requests
  finish until `shutdown_timeout_s`, answer every request received whole, close.

Each connection is in one state (`State`, connection.py: reading, answering, writing,
closing, draining, idle, closed), which alone says what the loop watches it for and what
a deadline, a new connection or the shutdown does to it.
"""
from __future__ import annotations

import collections
import errno
import logging
import queue
import selectors
import socket
import threading
import time
from typing import Any, Deque, Dict, Optional, Set, Tuple

from ..config import Config
from ..errors import FlowmemError, Overloaded, RequestTimeout, Unavailable
from .api import App
from .connection import EVENTS, Connection, State, StepRefused, listen, raise_file_limit
from .framing import Request, RequestFramer
from .handler import answer, log_request, serialize
from .lanes import LANES, THREAD_NAMES, lane_of, lanes_of_workers
from .responses import error_response

log = logging.getLogger("flowmem.http")

SMALL_BUFFER = 64 * 1024  # what any connection may buffer outside the shared budget
BUFFER_BUDGET = 256 * 1024 * 1024  # all connections' buffered bytes beyond SMALL_BUFFER each
LINGER_S = 2.0  # how long a closing connection is read (and discarded) for its client to see the response
SWEEP_S = 0.25  # how often deadlines are checked
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Server:
    """The connection loop and its workers over an App; `serve_forever` until `stop`."""

    def __init__(self, app: App, config: Config):
        self.app = app
        self.config = config
        self.max_connections = raise_file_limit(config.max_connections)
        self.listener = listen(config.host, config.port)
        self.address: Tuple[str, int] = self.listener.getsockname()[:2]
        self.selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        for sock in (self.listener, self._wake_r, self._wake_w):
            sock.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self.connections: Set[Connection] = set()
        # Writes wait for the database's one write lock; in a lane of their own they never
        # hold every worker while searches wait (during a long delete-user or reindex, say).
        self.lanes: Dict[str, "queue.Queue[Optional[Tuple[Connection, Request, float]]]"] = {
            lane: queue.Queue() for lane in LANES}
        self.done: Deque[Tuple[Connection, bytes, bool]] = collections.deque()
        self.inflight = 0
        app.metrics.inflight_source = lambda: self.inflight  # queued requests count too, not only those answering
        self.buffered = 0  # bytes beyond SMALL_BUFFER held by all connections
        self.stopping = False
        self._stop_by: Optional[float] = None
        self._workers = [threading.Thread(target=self._work, args=(self.lanes[lane],),
                                          name="flowmem-%s-%d" % (THREAD_NAMES[lane], i), daemon=True)
                         for i, lane in enumerate(lanes_of_workers(config.workers))]

    # -- the loop ------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until `stop()` and the shutdown it starts are done; then close the listener and connections."""
        for worker in self._workers:
            worker.start()
        next_sweep = time.monotonic() + SWEEP_S
        try:
            while not self._finished():
                for key, mask in self.selector.select(SWEEP_S):
                    self._event(key.data, mask)
                now = time.monotonic()
                self._finish_responses(now)
                if self.stopping and self._stop_by is None:
                    self._begin_shutdown(now)
                if now >= next_sweep:
                    self._sweep(now)
                    next_sweep = now + SWEEP_S
        finally:
            self._close_all()

    def stop(self) -> None:
        """Begin a graceful shutdown; safe from a signal handler or another thread."""
        self.stopping = True
        self._wake()

    def _event(self, data: Any, mask: int) -> None:
        now = time.monotonic()
        if data == "accept":
            self._accept(now)
        elif data == "wake":
            try:
                self._wake_r.recv(4096)
            except BlockingIOError:
                pass
        else:
            try:
                if mask & selectors.EVENT_READ:
                    self._read(data, now)
                if mask & selectors.EVENT_WRITE and data.state is not State.CLOSED:
                    self._write(data, now)
            except StepRefused:  # a bug: this connection goes, the server and the others stay
                log.exception("connection closed on a step its state does not allow")
                self._close(data)

    def _finished(self) -> bool:
        if self._stop_by is None:
            return False
        return (not self.connections and self.inflight == 0) or time.monotonic() >= self._stop_by

    # -- accepting -----------------------------------------------------------------

    def _accept(self, now: float) -> None:
        for _ in range(64):  # then serve the others before accepting more
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE):
                    log.warning("out of file descriptors with %d connections open", len(self.connections))
                    self._evict_oldest()
                return
            if len(self.connections) >= self.max_connections and not self._evict_oldest():
                sock.close()
                continue
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(sock, now, self.config.request_timeout_s, self.config.max_body_bytes)
            self.connections.add(conn)
            self._watch(conn, EVENTS[conn.state])

    def _evict_oldest(self) -> bool:
        """Close the connection that has waited longest for (the rest of) a request; False if none waits."""
        waiting = [c for c in self.connections if c.waiting()]
        if not waiting:
            return False
        self._close(min(waiting, key=lambda c: c.since))
        return True

    # -- reading -------------------------------------------------------------------

    def _read(self, conn: Connection, now: float) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn)  # the client closed; a half-sent request is dropped
            return
        if conn.state is State.DRAINING:
            return  # the response is sent; what the client still sends is discarded
        if conn.state is State.IDLE:
            self._become(conn, State.READING)
            conn.since = now
            conn.deadline = now + self.config.request_timeout_s
        before = len(conn.buffer)
        conn.buffer += data
        self._account(before, len(conn.buffer))
        if len(conn.buffer) > SMALL_BUFFER and self.buffered > BUFFER_BUDGET:
            self._refuse(conn, Unavailable("the server holds too many large request bodies; retry shortly"), now)
            return
        self._frame(conn, now)

    def _account(self, before: int, after: int) -> None:
        self.buffered += max(0, after - SMALL_BUFFER) - max(0, before - SMALL_BUFFER)

    def _frame(self, conn: Connection, now: float) -> None:
        try:
            found = conn.framer.feed(conn.buffer)
        except FlowmemError as e:
            self._refuse(conn, e, now)
            return
        if found is None:
            if conn.framer.expects_continue and not conn.framer.continued:
                conn.framer.continued = True
                self._send_now(conn, _CONTINUE)
            return
        request, used = found
        before = len(conn.buffer)
        del conn.buffer[:used]
        self._account(before, len(conn.buffer))
        conn.framer = RequestFramer(self.config.max_body_bytes)
        if self.inflight >= self.config.max_inflight:
            self._refuse(conn, Overloaded("too many requests in flight; retry shortly"), now,
                         request_line=request.head.split(b"\n", 1)[0].rstrip(b"\r"))
            return
        conn.deadline = float("inf")
        self._become(conn, State.ANSWERING)
        self.inflight += 1
        self.lanes[lane_of(request.head)].put((conn, request, time.perf_counter()))

    def _send_now(self, conn: Connection, data: bytes) -> None:
        try:
            conn.sock.send(data)
        except OSError:
            pass  # a client that cannot take 25 bytes is timed out like any other

    # -- answering -----------------------------------------------------------------

    def _work(self, jobs: "queue.Queue[Optional[Tuple[Connection, Request, float]]]") -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            conn, request, received = job
            data, close = answer(request, self.app, self.stopping, received, self.config.request_timeout_s)
            sent = 0
            try:
                sent = conn.sock.send(data)
            except BlockingIOError:
                pass
            except OSError:
                data, close = b"", True  # the client is gone
            self.done.append((conn, data[sent:], close))
            self._wake()

    def _finish_responses(self, now: float) -> None:
        while self.done:
            conn, rest, close = self.done.popleft()
            self.inflight -= 1
            if conn.state is State.CLOSED:
                continue
            self._queue_output(conn, rest, now, close or self.stopping)

    def _refuse(self, conn: Connection, error: FlowmemError, now: float, request_line: Optional[bytes] = None) -> None:
        """Answer with `error` from the loop itself and close: the request is not read further."""
        words = (request_line if request_line is not None else conn.framer.request_line).split()
        method = words[0].decode("latin-1") if words else "-"
        path = words[1].decode("latin-1") if len(words) > 1 else "-"
        log_request(method, path, error.status, time.perf_counter())
        self.app.refused(path, error.status)
        before = len(conn.buffer)
        conn.buffer = bytearray()
        self._account(before, 0)
        self._queue_output(conn, serialize(error_response(error), True), now, close=True)

    def _queue_output(self, conn: Connection, data: bytes, now: float, close: bool) -> None:
        """Send what is left of a response (`data`) as the client takes it; `close`: the connection after it."""
        if data:
            conn.out = memoryview(data)
            conn.deadline = now + self.config.request_timeout_s
            self._become(conn, State.CLOSING if close else State.WRITING)
            self._write(conn, now)
        else:
            self._response_sent(conn, now, close)

    def _write(self, conn: Connection, now: float) -> None:
        try:
            sent = conn.sock.send(conn.out)
        except BlockingIOError:
            return
        except OSError:
            self._close(conn)
            return
        conn.out = conn.out[sent:]
        if not conn.out:
            self._response_sent(conn, now, conn.state is State.CLOSING)

    def _response_sent(self, conn: Connection, now: float, close: bool) -> None:
        if close:
            self._drain(conn, now)
            return
        self._become(conn, State.IDLE)
        conn.since = now
        conn.deadline = now + self.config.keepalive_timeout_s
        if conn.buffer:  # a pipelined request came with the last one
            self._become(conn, State.READING)
            conn.deadline = now + self.config.request_timeout_s
            self._frame(conn, now)

    def _drain(self, conn: Connection, now: float) -> None:
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        self._become(conn, State.DRAINING)
        conn.since = now
        conn.deadline = now + LINGER_S

    # -- time ----------------------------------------------------------------------

    def _sweep(self, now: float) -> None:
        for conn in [c for c in self.connections if now >= c.deadline]:
            if conn.state is State.READING and conn.buffer:
                self._refuse(conn, RequestTimeout("the request did not arrive whole within %g s"
                                                  % self.config.request_timeout_s), now)
                conn.deadline = now + LINGER_S
            else:
                self._close(conn)  # idle, silent since connecting, or not reading its response

    def _begin_shutdown(self, now: float) -> None:
        log.info("stopping: answering %d received requests, no new connections", self.inflight)
        self._stop_by = now + self.config.shutdown_timeout_s
        self.selector.unregister(self.listener)
        self.listener.close()
        for conn in list(self.connections):
            if conn.state in (State.ANSWERING, State.WRITING, State.CLOSING):
                continue
            if conn.state in (State.IDLE, State.DRAINING) or not conn.buffer:
                self._close(conn)
            else:
                conn.deadline = min(conn.deadline, self._stop_by)  # half-sent: it may still finish

    # -- bookkeeping -----------------------------------------------------------------

    def _become(self, conn: Connection, state: State) -> None:
        """Step `conn` to `state` (connection.py says which steps there are) and watch what it waits for."""
        conn.become(state)
        self._watch(conn, EVENTS[state])

    def _watch(self, conn: Connection, events: int) -> None:
        if events == conn.events:
            return
        if not events:
            self.selector.unregister(conn.sock)
        elif not conn.events:
            self.selector.register(conn.sock, events, conn)
        else:
            self.selector.modify(conn.sock, events, conn)
        conn.events = events

    def _close(self, conn: Connection) -> None:
        if conn.state is State.CLOSED:
            return
        self._become(conn, State.CLOSED)
        self._account(len(conn.buffer), 0)
        conn.buffer = bytearray()
        self.connections.discard(conn)
        try:
            conn.sock.close()
        except OSError:
            pass

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # a wake-up is already pending

    def _close_all(self) -> None:
        for conn in list(self.connections):
            self._close(conn)
        for lane in self.lanes.values():
            for _ in self._workers:
                lane.put(None)
        for worker in self._workers:
            if worker.is_alive():
                worker.join(max(0.0, (self._stop_by or time.monotonic()) - time.monotonic()) + 1.0)
        if self.listener.fileno() >= 0:
            self.listener.close()
        self.selector.close()
        self._wake_r.close()
        self._wake_w.close()
