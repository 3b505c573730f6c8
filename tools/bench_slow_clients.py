#!/usr/bin/env python3
"""What slow and hostile clients cost a real client of flowmem, as ratios to a baseline.

What it measures (`make bench-slow-clients`; prints Markdown tables, `--json PATH`
writes every figure):

It starts `python -m flowmem serve --port 0` on a fresh database (the port is read
from the server's log line), prepares a memory over HTTP (a few users with a few
hundred messages each), and then runs phases. In each phase a "real client" sends
Searches (top_k 100, the same questions in every phase) and Adds (20 messages) on one
keep-alive connection, and Searches on a fresh connection each (connect included in
the time), while the hostile connections of the phase are held open:

  a  baseline          nothing else
  b  slowloris         1,000 connections that send a partial request (half stop inside the
                       request line, half after some headers) and one more header line
                       (or request-line byte) every 5 s, never finishing
  c  stalled bodies    520 connections that send complete headers with
                       `Content-Length: 100000` and 3 body bytes, then stall (520: more
                       than the default 512 requests in flight)
  d  idle              1,000 connections that send nothing
  e  non-readers       200 connections that send 2 Searches at once (top_k 100) and never
                       read the answers (receive buffer 4 KiB), so a server writing the
                       answers blocks
  f  baseline again    nothing else: has the server recovered?

The hostile connections are driven by a separate process (so they do not take the
real client's CPU time or interpreter lock) that reopens, after `--reopen-delay`
seconds, any connection the server closes, so that the target number stays open; it
counts how many the server closed, after how long, and with what answer. Before the
real client starts, the tool waits until every hostile connection is open and the
server's CPU use and thread count have settled; each phase lasts at least `--hold`
seconds (so a server's header timeout has time to act); between phases it waits for
the server's thread count to come back down.

For each phase: the real client's p50/p95/p99 and their ratio to phase a (over
requests answered 200; the machine is noisy, so compare phase f with a for the
noise), its errors (any non-200, refused or reset connections, timeouts after
`--timeout` s, malformed answers), the server's thread count (/proc/PID/status
Threads) and RSS before, at most and after the hostile connections, and what
happened to those connections. The process's open-file soft limit is raised (with
`resource`) to what the phases need; the server, started afterwards, inherits it.

The tool measures; it does not judge, unless `--check` is given: then it exits 1
when the real client saw any error or a p99 ratio above `--max-ratio` (3) in any
phase. It exits 2 when the server could not be started.

Usage (from anywhere; standard library only, Python 3.9+, Linux):

    python -m tools.bench_slow_clients            # ~3-4 minutes
    python -m tools.bench_slow_clients --quick    # ~1 minute: fewer requests, shorter holds
    python -m tools.bench_slow_clients --phases abf --json out/slow.json
    python -m tools.bench_slow_clients --repo ../before   # the server of another checkout
"""
from __future__ import annotations

import argparse
import collections
import errno
import http.client
import json
import multiprocessing
import os
import random
import re
import shlex
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, cast

from tools.benchkit.client import KeepAliveClient, Outcome
from tools.benchkit.process import proc_cpu_s, proc_open_files_limit, proc_status
from tools.benchkit.report import command_line, finish, fmt, log, machine, markdown, mib
from tools.benchkit.server import ServerProcess, auth_headers, wait_healthy
from tools.benchkit.stats import percentile, summary
from tools.benchkit.workload import ADD_SIZE, Conversations, check_add, check_search

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import resource
except ImportError:  # not Unix: the limit stays as it is
    resource = None  # type: ignore[assignment]
try:
    import fcntl
    import termios
except ImportError:
    fcntl = termios = None  # type: ignore[assignment]

# Linux TCP states (include/net/tcp_states.h), read from TCP_INFO's first byte.
TCP_ESTABLISHED, TCP_SYN_SENT, TCP_CLOSE, TCP_CLOSE_WAIT = 1, 2, 7, 8
TCP_INFO = getattr(socket, "TCP_INFO", 11)


class Plan(NamedTuple):
    """How big each part of the run is; `--quick` picks smaller values."""

    users: int  # prepared users...
    messages_per_user: int  # ...and messages each (Adds of 20)
    searches: int  # real client, per phase: keep-alive Searches
    adds: int  # keep-alive Adds
    fresh: int  # Searches on a fresh connection each
    hold_s: float  # a hostile phase lasts at least this long
    measure_budget_s: float  # the real client stops after this long in a phase, done or not


FULL = Plan(4, 300, 300, 100, 100, 30.0, 90.0)
QUICK = Plan(3, 200, 100, 30, 30, 12.0, 30.0)


class PhaseSpec(NamedTuple):
    key: str
    label: str
    kind: Optional[str]  # hostile connection kind, None for a baseline
    count: int  # type: ignore[assignment]  # shadows tuple.count(), which nothing here calls


# -- hostile connections (run in their own process) ------------------------------------


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


# -- the real client ---------------------------------------------------------------------


def classify(out: Outcome) -> str:
    """An error's label for the tables: HTTP 429, timeout, ConnectionResetError, ..."""
    if out.error_kind in ("5xx", "non-200"):
        return out.error_detail
    if out.error_kind == "malformed":
        return "malformed: " + out.error_detail
    return out.error_detail or (out.error_kind or "?")


def fresh_request(host: str, port: int, timeout_s: float, headers: Dict[str, str], body: bytes) -> Outcome:
    """One Search on a new connection; the time includes connecting."""
    out = Outcome()
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        conn.request("POST", "/search", body=body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        out.latency_ms = (time.perf_counter() - t0) * 1000.0
        out.status = response.status
    except (OSError, http.client.HTTPException) as e:
        out.latency_ms = (time.perf_counter() - t0) * 1000.0
        out.error_kind = "connection"
        out.error_detail = "timeout" if isinstance(e, socket.timeout) else type(e).__name__
        return out
    finally:
        conn.close()
    if out.status != 200:
        out.error_kind = "5xx" if out.status >= 500 else "non-200"
        out.error_detail = "HTTP %d" % out.status
        return out
    try:
        out.payload = json.loads(raw)
    except ValueError:
        out.error_kind, out.error_detail = "malformed", "200 with a body that is not JSON"
    return out


class RealClient:
    """The measured client: the same questions every phase; Adds to its own user."""

    def __init__(self, host: str, port: int, timeout_s: float, headers: Dict[str, str], convo: Conversations,
                 questions: List[Dict[str, Any]], plan: Plan, seed: int):
        self.host, self.port, self.timeout_s, self.headers = host, port, timeout_s, headers
        self.convo = convo
        self.questions = questions
        self.plan = plan
        self.rng = random.Random("real-client-%d" % seed)
        self.writer = convo.users[-1]  # a user of its own, not searched

    def measure(self, budget_s: float, share: float = 1.0) -> Dict[str, Any]:
        """One phase's requests (`share` of them for a warm-up)."""
        plan = self.plan
        plan = plan._replace(searches=max(1, int(plan.searches * share)), adds=max(1, int(plan.adds * share)),
                             fresh=max(1, int(plan.fresh * share)))
        lat: Dict[str, List[float]] = {"search": [], "add": [], "search, fresh connection": []}
        errors: Dict[str, "collections.Counter[str]"] = {k: collections.Counter() for k in lat}
        sent: "collections.Counter[str]" = collections.Counter()
        client = KeepAliveClient(self.host, self.port, self.timeout_s, self.headers)
        started = time.perf_counter()
        add_every = max(1, plan.searches // max(1, plan.adds))
        fresh_every = max(1, plan.searches // max(1, plan.fresh))
        stopped_early = False

        def note(kind: str, out: Outcome, problem: Optional[str]) -> None:
            sent[kind] += 1
            if out.error_kind is None and problem:
                out.error_kind, out.error_detail = "malformed", problem
            if out.error_kind is None:
                lat[kind].append(cast(float, out.latency_ms))  # set whenever an answer came
            else:
                errors[kind][classify(out)] += 1

        for i in range(plan.searches):
            if time.perf_counter() - started > budget_s:
                stopped_early = True
                break
            body = self.questions[i % len(self.questions)]
            out = client.request("POST", "/search", json.dumps(body).encode("utf-8"))
            note("search", out, check_search(body, out.payload) if out.error_kind is None else None)
            if i % add_every == 0 and sent["add"] < plan.adds:
                with self.writer.lock:
                    add, marker, texts = self.convo.next_add(self.writer, self.rng)
                out = client.request("POST", "/add", json.dumps(add).encode("utf-8"))
                note("add", out, check_add(add, out.payload) if out.error_kind is None else None)
            if i % fresh_every == 0 and sent["search, fresh connection"] < plan.fresh:
                body = self.questions[(i * 7 + 3) % len(self.questions)]
                out = fresh_request(self.host, self.port, self.timeout_s, self.headers,
                                    json.dumps(body).encode("utf-8"))
                note("search, fresh connection", out,
                     check_search(body, out.payload) if out.error_kind is None else None)
        client.close()
        return {
            "wall_s": time.perf_counter() - started,
            "stopped_early": stopped_early,
            "requests": {k: {"sent": sent[k], "ok": len(lat[k]), "errors": dict(errors[k]),
                             "latency": summary(lat[k])} for k in lat},
            "reconnects": dict(client.reconnects),
        }


# -- the server's side -------------------------------------------------------------------


class Sampler:
    """Threads and RSS of the server every `interval` s, in a thread, until stopped."""

    def __init__(self, pid: int, interval: float = 0.25):
        self.pid, self.interval = pid, interval
        self.max_threads: Optional[int] = None
        self.max_rss: Optional[int] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            st = proc_status(self.pid)
            if "Threads" in st:
                self.max_threads = max(self.max_threads or 0, st["Threads"])
            if "VmRSS" in st:
                self.max_rss = max(self.max_rss or 0, st["VmRSS"])
            if self._stop.wait(self.interval):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def settle(pid: int, max_s: float = 20.0, cpu_share: float = 0.15) -> Tuple[float, bool]:
    """Wait until the server uses under `cpu_share` of a core and its thread count is steady."""
    t0 = time.perf_counter()
    quiet = 0
    last_cpu, last_threads = proc_cpu_s(pid), proc_status(pid).get("Threads")
    while time.perf_counter() - t0 < max_s:
        time.sleep(0.5)
        cpu, threads = proc_cpu_s(pid), proc_status(pid).get("Threads")
        if cpu is None or last_cpu is None:
            return time.perf_counter() - t0, False
        quiet = quiet + 1 if (cpu - last_cpu) / 0.5 < cpu_share and threads == last_threads else 0
        last_cpu, last_threads = cpu, threads
        if quiet >= 2:
            return time.perf_counter() - t0, True
    return time.perf_counter() - t0, False


EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::|$)")


def log_slice_problems(text: str) -> Dict[str, Any]:
    """Tracebacks in a piece of the server log, and their last lines (the exceptions), counted."""
    exceptions: "collections.Counter[str]" = collections.Counter()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            for later in lines[i + 1:i + 200]:  # threads' tracebacks may interleave: take the exception line
                if EXCEPTION_LINE.match(later):
                    exceptions[later.strip()[:120]] += 1
                    break
    return {"tracebacks": sum(exceptions.values()), "exceptions": dict(exceptions.most_common(3)),
            "error_lines": len(re.findall(r"^\S+ \S+ (?:ERROR|CRITICAL) ", text, re.M))}


def raise_open_files(need: int) -> Dict[str, Any]:
    """Raise this process's soft limit on open files to `need` (children inherit it)."""
    if resource is None:
        return {"before": None, "after": None, "hard": None, "enough": None}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    after = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return {"before": soft, "after": after, "hard": hard,
            "enough": after == resource.RLIM_INFINITY or after >= need, "need": need}


# -- the run ------------------------------------------------------------------------------


def prepare(host: str, port: int, headers: Dict[str, str], plan: Plan, seed: int
            ) -> Tuple[Conversations, List[Dict[str, Any]], Dict[str, Any]]:
    """Users with messages over HTTP, the real client's questions, and how long it took."""
    convo = Conversations(plan.users + 1, seed, "sc%04x" % (int(time.time()) % 0xFFFF))  # the last: the writer
    rng = random.Random("prepare-%d" % seed)
    client = KeepAliveClient(host, port, 60.0, headers)
    t0 = time.perf_counter()
    adds = failed = 0
    for user in convo.users[:-1]:
        while user.messages < plan.messages_per_user:
            body, marker, texts = convo.next_add(user, rng)
            out = client.request("POST", "/add", json.dumps(body).encode("utf-8"))
            adds += 1
            if out.error_kind is None and check_add(body, out.payload) is None:
                convo.acknowledged(user, marker, texts)
            else:
                failed += 1
    client.close()
    qrng = random.Random("questions-%d" % seed)
    questions = []
    for i in range(200):
        body, _ = convo.question(convo.users[i % plan.users], qrng)
        body["top_k"] = 100
        body.pop("options", None)
        questions.append(body)
    return convo, questions, {"adds": adds, "failed": failed, "seconds": time.perf_counter() - t0,
                              "messages": sum(u.messages for u in convo.users[:-1])}


def nonreader_payload(questions: List[Dict[str, Any]], n: int, api_key: Optional[str]) -> bytes:
    """`n` complete Search requests, pipelined, for questions with many answers."""
    out = []
    for i in range(n):
        body = json.dumps(dict(questions[i % len(questions)], top_k=100)).encode("utf-8")
        auth = b"Authorization: Bearer %s\r\n" % api_key.encode() if api_key else b""
        out.append(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + auth
                   + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return b"".join(out)


def run_phase(spec: PhaseSpec, args: argparse.Namespace, plan: Plan, server: ServerProcess, real: RealClient,
              payload: bytes) -> Dict[str, Any]:
    pid = server.pid
    phase: Dict[str, Any] = {"key": spec.key, "label": spec.label, "kind": spec.kind, "count": spec.count}
    log_offset = len(server.log_text())
    before = proc_status(pid)
    phase["threads_before"], phase["rss_before_kib"] = before.get("Threads"), before.get("VmRSS")
    t0 = time.perf_counter()
    hostiles = None
    if spec.kind:
        auth = b"Authorization: Bearer %s\r\n" % args.api_key.encode() if args.api_key else b""
        hostiles = Hostiles(HostileSettings(server.host, server.port, spec.kind, spec.count, args.drip_interval,
                                            args.reopen_delay, 10.0, payload, auth))
        # Wait until all are open (or 30 s), then until the server is quiet again.
        deadline = time.perf_counter() + 30
        while True:
            st = hostiles.stats()
            # Every connection opened once (some may already have been closed and wait to reopen).
            if st["open"] >= spec.count or st["opened_total"] >= spec.count or time.perf_counter() > deadline:
                break
            time.sleep(0.25)
        phase["hostile_at_start"] = st
        log("[%s] %d of %d %s connections open after %.1f s" % (spec.key, st["open"], spec.count, spec.kind,
                                                                  time.perf_counter() - t0))
    phase["settle_s"], phase["settled"] = settle(pid)
    sampler = Sampler(pid)
    at = proc_status(pid)
    phase["threads_at_measure"], phase["rss_at_measure_kib"] = at.get("Threads"), at.get("VmRSS")
    phase["real"] = real.measure(plan.measure_budget_s)
    if hostiles:
        while time.perf_counter() - t0 < plan.hold_s and server.alive():
            time.sleep(0.25)
        phase["hostile"] = hostiles.stop()
    phase["seconds"] = time.perf_counter() - t0
    sampler.stop()
    phase["threads_max"], phase["rss_max_kib"] = sampler.max_threads, sampler.max_rss
    # Let the server clean up before the next phase: threads back near where they were.
    t1 = time.perf_counter()
    while server.alive() and time.perf_counter() - t1 < 30:
        now = proc_status(pid).get("Threads")
        if now is None or before.get("Threads") is None or now <= before["Threads"] + 2:
            break
        time.sleep(0.25)
    after = proc_status(pid)
    phase["threads_after"], phase["rss_after_kib"] = after.get("Threads"), after.get("VmRSS")
    phase["recovery_s"] = time.perf_counter() - t1
    phase["server_alive"] = server.alive()
    phase["log"] = log_slice_problems(server.log_text()[log_offset:])
    r = phase["real"]["requests"]
    log("[%s] %s: search p50 %s ms, %d errors; server threads max %s" % (
        spec.key, spec.label, fmt(r["search"]["latency"]["p50_ms"]),
        sum(sum(v["errors"].values()) for v in r.values()), phase["threads_max"]))
    return phase


# -- the report ---------------------------------------------------------------------------


def ratio(value: Optional[float], base: Optional[float]) -> str:
    if value is None or base is None or value != value or base != base or base <= 0:
        return "-"
    return "%.2fx" % (value / base)


def report(figures: Dict[str, Any]) -> str:
    m, p, plan = figures["machine"], figures["params"], figures["plan"]
    out: List[str] = []
    add = out.append
    add("# flowmem: what slow and hostile clients cost a real client\n")
    add("command: `%s`  " % figures["command"])
    add("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    add("server: `%s` from %s; open files limit %s (this process: %s, raised from %s)  " % (
        figures["server"]["argv"], p["repo"], figures["server"]["open_files_limit"],
        figures["open_files"]["after"], figures["open_files"]["before"]))
    prep = figures["prepare"]
    add("memory: %d users x %d messages, added over HTTP in %d Adds (%d failed) in %.1f s  " % (
        plan["users"], plan["messages_per_user"], prep["adds"], prep["failed"], prep["seconds"]))
    add("real client per phase: %d Searches (top_k 100) and %d Adds (%d messages) on one keep-alive connection, "
        "%d Searches on a fresh connection each; timeout %.0f s; mode: %s\n" % (
            plan["searches"], plan["adds"], ADD_SIZE, plan["fresh"], p["timeout"], figures["mode"]))

    phases = figures["phases"]
    base = phases[0]["real"]["requests"] if phases and phases[0]["kind"] is None else None
    rows: List[Sequence[Any]] = [("phase", "request", "ok", "errors", "p50 ms", "p95 ms", "p99 ms",
                                  "p50 x", "p95 x", "p99 x")]
    for ph in phases:
        for kind, r in ph["real"]["requests"].items():
            lat = r["latency"]
            b = base[kind]["latency"] if base else {}
            rows.append(("%s %s" % (ph["key"], ph["label"]), kind, "%d/%d" % (r["ok"], r["sent"]),
                         sum(r["errors"].values()), fmt(lat["p50_ms"]), fmt(lat["p95_ms"]), fmt(lat["p99_ms"]),
                         ratio(lat["p50_ms"], b.get("p50_ms")), ratio(lat["p95_ms"], b.get("p95_ms")),
                         ratio(lat["p99_ms"], b.get("p99_ms"))))
    add("## The real client\n")
    add(markdown(rows))
    add("\nlatency over requests answered 200 (fresh connection: connect included); x = ratio to phase a, "
        "measured in this run (phase f against a shows the noise of the machine).\n")
    notes = []
    for ph in phases:
        for kind, r in ph["real"]["requests"].items():
            if r["errors"]:
                notes.append("- %s, %s: %s" % (ph["key"], kind, ", ".join(
                    "%s %d" % kv for kv in sorted(r["errors"].items(), key=lambda kv: -kv[1]))))
        if ph["real"]["stopped_early"]:
            notes.append("- %s: the real client stopped after its %.0f s budget" % (ph["key"],
                                                                                 plan["measure_budget_s"]))
        if ph["real"]["reconnects"]:
            notes.append("- %s: keep-alive reconnects: %s" % (ph["key"], ", ".join(
                "%s %d" % kv for kv in ph["real"]["reconnects"].items())))
    if notes:
        add("errors and reconnects of the real client:\n")
        add("\n".join(notes) + "\n")

    rows = [("phase", "hostile open / target", "closed by server", "closed after s (min / p50 / max)",
             "server answers", "threads before / at start / max / after", "RSS MiB before / max / after",
             "settle s", "server tracebacks")]
    for ph in phases:
        h = ph.get("hostile")
        hs = ph.get("hostile_at_start")
        if h:
            c = h["close_after_s"]
            answers = collections.Counter(h["close_status"])
            answers.update(h["answers_while_open"])
            opened = "%d / %d" % (hs["open"] if hs else h["open"], h["target"])
            closed = str(h["closed_by_server"])
            after = "%s / %s / %s" % (fmt(c["min"], "%.1f"), fmt(c["p50"], "%.1f"), fmt(c["max"], "%.1f"))
            answered = ", ".join("%s %d" % kv for kv in sorted(answers.items())) or "none"
        else:
            opened = closed = after = answered = "-"
        rows.append(("%s %s" % (ph["key"], ph["label"]), opened, closed, after, answered.replace("|", "/"),
                     "%s / %s / %s / %s" % (ph["threads_before"], ph["threads_at_measure"], ph["threads_max"],
                                            ph["threads_after"]),
                     "%s / %s / %s" % (mib(ph["rss_before_kib"], "%.1f"), mib(ph["rss_max_kib"], "%.1f"),
                                       mib(ph["rss_after_kib"], "%.1f")),
                     "%.1f%s" % (ph["settle_s"], "" if ph["settled"] else " (not quiet)"),
                     ph["log"]["tracebacks"]))
    add("## The server and the hostile connections\n")
    add(markdown(rows))
    add("\nhostile open: connections open when the real client started (target: kept open by reopening, %.0f s "
        "after the server closed one); closed by server: over the whole phase, reopened ones included; server "
        "answers: status lines the server sent on hostile connections (on closing them, or while they stayed "
        "open); threads and RSS from /proc/PID/status (at start: when the real client started; after: once the "
        "hostile connections were closed and the thread count came back, at most 30 s); settle: wait for the "
        "server's CPU and thread count to calm down before measuring.\n" % p["reopen_delay"])
    notes = []
    for ph in phases:
        h = ph.get("hostile")
        if h and (h["failures"] or h.get("unread_bytes") is not None or h["drips_sent"]):
            bits = []
            if h["failures"]:
                bits.append("open failures: " + ", ".join("%s %d" % kv for kv in sorted(h["failures"].items())))
            if h["drips_sent"]:
                bits.append("%d drips sent" % h["drips_sent"])
            if h.get("unread_bytes") is not None:
                bits.append("%d answer bytes waiting unread on the client side at the end" % h["unread_bytes"])
            notes.append("- %s: %s" % (ph["key"], "; ".join(bits)))
        if ph["log"]["exceptions"]:
            notes.append("- %s: server log: %s" % (ph["key"], "; ".join(
                "%s (x%d)" % kv for kv in ph["log"]["exceptions"].items())))
        if not ph["server_alive"]:
            notes.append("- %s: THE SERVER EXITED" % ph["key"])
    if notes:
        add("\n".join(notes) + "\n")
    add("total time: %.0f s; server exit status after SIGTERM: %s" % (figures["total_s"],
                                                                     figures["server"].get("exit_status")))
    if figures.get("check") is not None:
        c = figures["check"]
        add("\n**%s**" % ("PASS" if not c else "FAIL: " + "; ".join(c)))
    return "\n".join(out)


ALL_PHASES = "abcdef"


def phase_specs(args: argparse.Namespace) -> List[PhaseSpec]:
    specs = {
        "a": PhaseSpec("a", "baseline", None, 0),
        "b": PhaseSpec("b", "slowloris", "slowloris", args.slowloris),
        "c": PhaseSpec("c", "stalled bodies", "stalled_body", args.stalled),
        "d": PhaseSpec("d", "idle connections", "idle", args.idle),
        "e": PhaseSpec("e", "non-readers", "nonreader", args.nonreaders),
        "f": PhaseSpec("f", "baseline again", None, 0),
    }
    return [specs[k] for k in ALL_PHASES if k in args.phases and (specs[k].kind is None or specs[k].count > 0)]


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--quick", action="store_true", help="about a minute: %d/%d/%d real requests per phase, "
                   "hostile phases of at least %.0f s" % (QUICK.searches, QUICK.adds, QUICK.fresh, QUICK.hold_s))
    p.add_argument("--phases", default=ALL_PHASES, help="which phases, in order a-f (%s); a first makes the "
                                                        "ratios" % ALL_PHASES)
    p.add_argument("--slowloris", type=int, default=1000, help="connections in phase b (1000)")
    p.add_argument("--stalled", type=int, default=520, help="connections in phase c (520)")
    p.add_argument("--idle", type=int, default=1000, help="connections in phase d (1000)")
    p.add_argument("--nonreaders", type=int, default=200, help="connections in phase e (200; 0 skips it)")
    p.add_argument("--nonreader-requests", type=int, default=2, help="Searches each non-reader sends at once (2)")
    p.add_argument("--drip-interval", type=float, default=5.0, help="seconds between a slowloris' drips (5)")
    p.add_argument("--reopen-delay", type=float, default=1.0, help="seconds before a closed hostile connection is "
                                                                    "reopened (1)")
    p.add_argument("--hold", type=float, help="a hostile phase lasts at least this many seconds (30; quick 12)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds before a real request counts as timed out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--api-key", help="start the server with this key and send it")
    p.add_argument("--repo", default=REPO_ROOT, help="the flowmem checkout whose server is started (this one)")
    p.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `flowmem serve` (repeatable), e.g. --serve-arg=--workers=32")
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--check", action="store_true", help="exit 1 on any real-client error or a p99 ratio above "
                                                        "--max-ratio")
    p.add_argument("--max-ratio", type=float, default=3.0)
    p.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    args = p.parse_args(argv)
    if set(args.phases) - set(ALL_PHASES):
        p.error("--phases takes letters from %s" % ALL_PHASES)
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.hold is not None:
        plan = plan._replace(hold_s=args.hold)
    specs = phase_specs(args)
    need = max([s.count for s in specs] + [0]) + 512
    open_files = raise_open_files(need)
    if open_files["enough"] is False:
        log("[slow] warning: open files limited to %s (hard limit), %d wanted; some hostile connections will fail"
            % (open_files["after"], need))
    started = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix="flowmem-slow-")
    headers = auth_headers(args.api_key)
    try:
        server = ServerProcess(os.path.join(workdir, "slow.db"), os.path.join(workdir, "serve.log"), args.repo,
                               args.api_key, args.serve_arg)
        wait_healthy(server.host, server.port)
    except (RuntimeError, OSError) as e:
        log("[slow] cannot start the server: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 2
    phases: List[Dict[str, Any]] = []
    figures: Dict[str, Any] = {}
    try:
        log("[slow] server pid %d on port %d; preparing %d users x %d messages" % (
            server.pid, server.port, plan.users, plan.messages_per_user))
        convo, questions, prep = prepare(server.host, server.port, headers, plan, args.seed)
        payload = nonreader_payload(questions, args.nonreader_requests, args.api_key)
        real = RealClient(server.host, server.port, args.timeout, headers, convo, questions, plan, args.seed)
        real.measure(plan.measure_budget_s, 0.5)  # warm-up: caches, connections; not reported
        for spec in specs:
            if not server.alive():
                log("[slow] the server exited; stopping")
                break
            log("[%s] %s%s" % (spec.key, spec.label, " (%d %s connections)" % (spec.count, spec.kind)
                                if spec.kind else ""))
            phases.append(run_phase(spec, args, plan, server, real, payload))
        figures["server"] = {"argv": " ".join(shlex.quote(a) for a in ["python"] + server.argv[1:]),
                             "pid": server.pid, "open_files_limit": proc_open_files_limit(server.pid)}
    finally:
        exit_status = server.stop()
    figures["server"] = dict(figures.get("server") or {"argv": " ".join(server.argv), "open_files_limit": None},
                             exit_status=exit_status)
    figures.update({
        "command": command_line(),
        "machine": machine(),
        "mode": "quick" if args.quick else "full",
        "params": {k: v for k, v in vars(args).items() if k != "api_key"},
        "plan": plan._asdict(),
        "open_files": open_files,
        "prepare": prep,
        "response_bytes_nonreader_payload": len(payload),
        "phases": phases,
        "total_s": time.perf_counter() - started,
    })
    check: Optional[List[str]] = None
    if args.check:
        check = []
        base = phases[0]["real"]["requests"] if phases and phases[0]["kind"] is None else None
        for ph in phases:
            for kind, r in ph["real"]["requests"].items():
                if r["errors"]:
                    check.append("%s %s: %d errors" % (ph["key"], kind, sum(r["errors"].values())))
                b = base[kind]["latency"]["p99_ms"] if base else None
                v = r["latency"]["p99_ms"]
                if b and v == v and b == b and v / b > args.max_ratio:
                    check.append("%s %s: p99 %.1fx baseline" % (ph["key"], kind, v / b))
            if not ph["server_alive"]:
                check.append("%s: the server exited" % ph["key"])
    figures["check"] = check
    finish(report(figures), figures, args.json, workdir, args.keep, "slow")
    return 1 if check else 0


if __name__ == "__main__":
    sys.exit(main())
