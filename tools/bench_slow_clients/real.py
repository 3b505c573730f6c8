"""The real client whose latency the hostile ones must not spoil, and the server's side of a phase.

RealClient sends Searches and Adds on a keep-alive connection (and some on fresh ones) and
keeps their latencies and errors; Sampler follows the server's threads, RSS and CPU; settle
waits for the server to go quiet between phases.
"""
from __future__ import annotations

import collections
import http.client
import json
import random
import re
import socket
import threading
import time
from typing import Any, Dict, List, Optional, Tuple, cast

from tools.benchkit.client import KeepAliveClient, Outcome
from tools.benchkit.process import proc_cpu_s, proc_status
from tools.benchkit.stats import summary
from tools.benchkit.workload import Conversations, check_add, check_search

try:
    import resource
except ImportError:  # not Unix: the limit stays as it is
    resource = None  # type: ignore[assignment]
from tools.bench_slow_clients.plan import Plan


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
