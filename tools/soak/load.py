"""The soak's load: `--clients` keep-alive clients for `--duration` seconds, and what each saw.

Each client thread loops over requests of the workload (benchkit/workload.py) on its own
connection, checks every answer against the contract and records a row per request; a
sampler thread reads the server's RSS and threads from /proc meanwhile.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.benchkit.client import KeepAliveClient, Outcome
from tools.benchkit.process import proc_cpu_s, proc_status
from tools.benchkit.report import log, mib
from tools.benchkit.server import ServerProcess, auth_headers
from tools.benchkit.workload import Conversations, User, check_add, check_search


class Record:
    """What one client saw: a row per request, and its errors."""

    def __init__(self) -> None:
        # (start s since t0, endpoint, ms or None when no answer came, ok)
        self.rows: List[Tuple[float, str, Optional[float], bool]] = []
        self.marker_searches = 0
        self.errors: "collections.Counter[Tuple[str, str, str]]" = collections.Counter()  # (endpoint, kind, detail)
        self.examples: List[Dict[str, Any]] = []


class Soak:
    def __init__(self, args: argparse.Namespace, host: str, port: int, pid: Optional[int],
                 server: Optional[ServerProcess]):
        self.args = args
        self.host, self.port, self.pid, self.server = host, port, pid, server
        run_tag = "%s%04x" % ("abcdefghijklmnopqrstuvwxyz"[args.seed % 26], int(time.time() * 1000) % 0xFFFF)
        self.convo = Conversations(args.users, args.seed, run_tag)
        self.headers = auth_headers(args.api_key)
        self.stop = threading.Event()
        self.t0 = 0.0
        self.deadline = 0.0
        self.samples: List[Dict[str, Any]] = []
        self.records: List[Record] = []
        self.clients: List[KeepAliveClient] = []
        self.aborted: Optional[str] = None

    # one client thread
    def client(self, index: int, start: threading.Barrier) -> None:
        rng = random.Random("soak-client-%d-%d" % (self.args.seed, index))
        record = self.records[index]
        client = self.clients[index]
        try:
            client.ready()
        except OSError:
            pass  # the first request tries again, and counts the error if it fails too
        try:
            start.wait(120)
        except threading.BrokenBarrierError:
            return
        users = self.convo.users
        while not self.stop.is_set() and time.perf_counter() < self.deadline:
            if rng.random() < self.args.add_share:
                self.one_add(rng, users, client, record)
            else:
                self.one_search(rng, users, client, record)
        client.close()

    def pick_writable_user(self, rng: random.Random, users: Sequence[User]) -> User:
        """A random user whose previous Add is not still in flight (else wait for the last one tried)."""
        for _ in range(4):
            user = rng.choice(users)
            if user.lock.acquire(blocking=False):
                return user
        user.lock.acquire()
        return user

    def one_add(self, rng: random.Random, users: Sequence[User], client: KeepAliveClient, record: Record) -> None:
        user = self.pick_writable_user(rng, users)
        try:
            body, marker, texts = self.convo.next_add(user, rng)
            data = json.dumps(body).encode("utf-8")
            started = time.perf_counter() - self.t0
            out = client.request("POST", "/add", data)
            ok = out.error_kind is None
            if ok:
                ok = _well_formed(out, check_add(body, out.payload))
            if ok:
                self.convo.acknowledged(user, marker, texts)
        finally:
            user.lock.release()
        self.note(record, "add", started, out, ok)

    def one_search(self, rng: random.Random, users: Sequence[User], client: KeepAliveClient, record: Record) -> None:
        user = rng.choice(users)
        body, marker = self.convo.question(user, rng)
        record.marker_searches += marker is not None
        started = time.perf_counter() - self.t0
        out = client.request("POST", "/search", json.dumps(body).encode("utf-8"))
        ok = out.error_kind is None
        if ok:
            ok = _well_formed(out, check_search(body, out.payload))
            if ok and marker is not None and not any(marker in item["content"] for item in out.payload["data"]):
                ok = False
                out.error_kind = "lost write"
                out.error_detail = "an acknowledged Add's unique word is not in the answer"
                out.body_text = "query %r, %d items" % (body["query"], len(out.payload["data"]))
        self.note(record, "search top_k=%d" % body["top_k"], started, out, ok)

    def note(self, record: Record, endpoint: str, started: float, out: Outcome, ok: bool) -> None:
        record.rows.append((started, endpoint, out.latency_ms if out.status is not None else None, ok))
        if not ok:
            record.errors[(endpoint, out.error_kind or "?", out.error_detail)] += 1
            if len(record.examples) < 3:
                record.examples.append({"t_s": round(started, 3), "endpoint": endpoint, "kind": out.error_kind,
                                        "detail": out.error_detail, "status": out.status, "body": out.body_text})

    # the server's memory
    def sample(self) -> Dict[str, Any]:
        status = proc_status(self.pid)
        s = {"t_s": time.perf_counter() - self.t0 if self.t0 else 0.0, "rss_kib": status.get("VmRSS"),
             "anon_kib": status.get("RssAnon"), "threads": status.get("Threads"), "cpu_s": proc_cpu_s(self.pid)}
        self.samples.append(s)
        return s

    def sampler(self) -> None:
        while not self.stop.wait(self.args.sample_interval):
            self.sample()
            if self.server is not None and not self.server.alive():
                self.aborted = "the server exited during the run (exit status %s)" % self.server.proc.returncode
                self.stop.set()

    def preload(self) -> Dict[str, Any]:
        """Before the clock: every user gets `--preload` messages over HTTP (8 connections)."""
        pending = list(self.convo.users)
        lock = threading.Lock()
        done = {"adds": 0, "failed": 0}
        examples: List[str] = []

        def work(i: int) -> None:
            rng = random.Random("soak-preload-%d-%d" % (self.args.seed, i))
            client = KeepAliveClient(self.host, self.port, self.args.timeout, self.headers)
            while True:
                with lock:
                    if not pending:
                        break
                    user = pending.pop()
                while user.messages < self.args.preload:
                    with user.lock:
                        body, marker, texts = self.convo.next_add(user, rng)
                    out = client.request("POST", "/add", json.dumps(body).encode("utf-8"))
                    problem = out.error_detail if out.error_kind else check_add(body, out.payload)
                    with lock:
                        done["adds"] += 1
                        if problem:
                            done["failed"] += 1
                            if len(examples) < 3:
                                examples.append(problem)
                    if not problem:
                        self.convo.acknowledged(user, marker, texts)
            client.close()

        t0 = time.perf_counter()
        workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(min(8, len(pending)))]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        return dict(done, seconds=time.perf_counter() - t0, messages_per_user=self.args.preload,
                    failures=examples)

    def run(self) -> Dict[str, Any]:
        args = self.args
        preload = None
        if args.preload > 0:
            log("[soak] preloading %d messages for each of %d users" % (args.preload, args.users))
            preload = self.preload()
        n = args.clients
        self.records = [Record() for _ in range(n)]
        self.clients = [KeepAliveClient(self.host, self.port, args.timeout, self.headers) for _ in range(n)]
        start = threading.Barrier(n + 1)
        threads = [threading.Thread(target=self.client, args=(i, start), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        start_sample = self.sample()  # before any load, every client connected or connecting
        # The clock is set before the clients are let go, so none of them sees a deadline of 0.
        self.t0 = time.perf_counter()
        self.deadline = self.t0 + args.duration
        cpu0 = os.times()
        start.wait(120)
        start_sample["t_s"] = 0.0
        sampler = threading.Thread(target=self.sampler, daemon=True)
        sampler.start()
        last_progress = self.t0
        try:
            while any(t.is_alive() for t in threads):
                time.sleep(0.5)
                now = time.perf_counter()
                if now - last_progress >= args.progress_interval:
                    last_progress = now
                    done = sum(len(r.rows) for r in self.records)
                    errors = sum(sum(r.errors.values()) for r in self.records)
                    last = self.samples[-1] if self.samples else {}
                    log("[soak] %4.0f s / %.0f s: %d requests, %d errors, server RSS %s MiB, %s threads" % (
                        now - self.t0, args.duration, done, errors, mib(last.get("rss_kib"), "%.1f"),
                        last.get("threads")))
                if now > self.deadline + args.timeout + 30:
                    self.aborted = self.aborted or "clients did not stop within %.0f s of the end" % (args.timeout + 30)
                    break
        except KeyboardInterrupt:
            self.aborted = "interrupted"
            self.stop.set()
            for t in threads:
                t.join(args.timeout + 5)
        load_end = time.perf_counter()
        cpu1 = os.times()
        self.stop.set()
        sampler.join(args.sample_interval + 5)
        end_sample = self.sample()
        server_cpu = None
        if start_sample.get("cpu_s") is not None and end_sample.get("cpu_s") is not None:
            server_cpu = end_sample["cpu_s"] - start_sample["cpu_s"]
        return {"wall_s": load_end - self.t0, "start_sample": start_sample, "end_sample": end_sample,
                "preload": preload,
                "client_cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), "server_cpu_s": server_cpu}


def _well_formed(out: Outcome, problem: Optional[str]) -> bool:
    """Whether an answer fits the contract; if not (`problem`), `out` is marked malformed, its body kept short."""
    if problem:
        out.error_kind, out.error_detail = "malformed", problem
        out.body_text = json.dumps(out.payload)[:300]
    return not problem
