#!/usr/bin/env python3
"""flowmem soak test: many keep-alive clients, mixed Add/Search, for a bounded time.

What it does (`make soak`; prints Markdown, `--out PATH` writes every figure as JSON):

1. Starts `python -m flowmem serve --port 0` on a fresh database in a temporary folder
   (the port is read from the server's `serving on http://...:PORT` log line), or uses
   a running server given with `--endpoint URL` (its RSS is read when `--pid` is given).
2. Runs `--clients` threads for `--duration` seconds. Each holds one keep-alive
   http.client connection, reconnecting only when the server closed it (counted), and
   loops, for a random one of `--users` users: an Add (20 messages of conversation text,
   "Name: text", Unix-ms timestamps; a user's session grows by Adds of 20 until it is
   20-120 messages long, then the next session starts days later) with probability
   `--add-share`, else a Search (a question made of words that user said, top_k 100 or
   10, sometimes with multiple-choice options; one in 20 asks for the unique word
   planted in one of that user's acknowledged Adds and expects to find it).
3. Checks every response against the contract (docs/api.md, The contract): Add 200 with
   `success: true` and the three ids echoed; Search 200 with a `data` list of at most top_k items,
   each with a non-empty `id` and `content` and a numeric `score`, ids unique, scores
   non-increasing. Errors are counted by kind: 5xx, other non-200, malformed body
   (a 200 that breaks the contract), lost write (an acknowledged Add's word not found),
   connection (refused, reset, timed out, garbled).
4. Samples the server's RSS and thread count (/proc/PID/status) every
   `--sample-interval` seconds: at the start, after warm-up (10% of the run, at least
   30 s, at most half of it), at the end, the maximum, and the change from after
   warm-up to the end.

Default add share 0.2: the platform's traffic is mostly questions (the LoCoMo dev
split is 138 Adds of 20 messages to 993 questions, 0.12), but a soak must also keep
the write path and the growing index busy the whole time, with Adds and Searches of
one user interleaved. At 0.2 roughly one request in five writes, so users keep growing
through the run (a few thousand messages each in ten minutes on 2 cores) while most
of the load stays Search, as on the platform.

Exit status: 0 when there was no error of any kind and RSS grew at most
`--max-rss-growth` percent (10) from after warm-up to the end; 1 otherwise; 2 when
the server could not be started or reached.

Usage (from anywhere; standard library only, Python 3.9+, Linux for RSS):

    python -m tools.soak                          # 10 minutes, 64 clients, 50 users
    python -m tools.soak --duration 30            # a short check
    python -m tools.soak --out out/soak.json --seed 2 --add-share 0.5
    python -m tools.soak --endpoint http://127.0.0.1:8000 --pid 1234 --api-key KEY
    python -m tools.soak --repo ../other-checkout  # soak another checkout's server
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.benchkit.client import KeepAliveClient, Outcome
from tools.benchkit.process import proc_cpu_s, proc_open_files_limit, proc_status
from tools.benchkit.report import command_line, finish, fmt, log, machine, markdown, mib
from tools.benchkit.server import ServerProcess, auth_headers, log_problems, parse_endpoint, wait_healthy
from tools.benchkit.stats import percentile, summary
from tools.benchkit.workload import ADD_SIZE, Conversations, User, check_add, check_search

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- small helpers ----------------------------------------------------------------------


# -- the server process -----------------------------------------------------------------


# -- conversation text ------------------------------------------------------------------


# -- the contract -----------------------------------------------------------------------


# -- HTTP client ------------------------------------------------------------------------


# -- the soak ---------------------------------------------------------------------------


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
                problem = check_add(body, out.payload)
                if problem:
                    ok = False
                    out.error_kind, out.error_detail = "malformed", problem
                    out.body_text = json.dumps(out.payload)[:300]
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
            problem = check_search(body, out.payload)
            if problem:
                ok = False
                out.error_kind, out.error_detail = "malformed", problem
                out.body_text = json.dumps(out.payload)[:300]
            elif marker is not None and not any(marker in item["content"] for item in out.payload["data"]):
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


# -- figures and the report -------------------------------------------------------------


def endpoint_rows(rows: Sequence[Tuple[float, str, Optional[float], bool]],
                  errors: Dict[Tuple[str, str, str], int], wall_s: float) -> List[Dict[str, Any]]:
    """Per endpoint: requests sent, errors, latency of the answered ones, answered requests per second."""
    def group(name: str) -> str:
        return "search" if name.startswith("search") else name

    attempts: Dict[str, int] = collections.Counter()
    latencies: Dict[str, List[float]] = collections.defaultdict(list)
    for _, endpoint, ms, _ in rows:
        for name in {endpoint, group(endpoint), "all"}:
            attempts[name] += 1
            if ms is not None:
                latencies[name].append(ms)
    err_by: Dict[str, int] = collections.Counter()
    for (endpoint, _, _), count in errors.items():
        for name in {endpoint, group(endpoint), "all"}:
            err_by[name] += count
    order = ["add", "search", "search top_k=100", "search top_k=10"]
    out = []
    for name in order + sorted(set(attempts) - set(order) - {"all"}) + ["all"]:
        if not attempts.get(name) and not err_by.get(name):
            continue
        lat = latencies.get(name, [])
        out.append({"endpoint": name, "requests": attempts.get(name, 0), "answered": len(lat),
                    "errors": err_by.get(name, 0), "latency": summary(lat),
                    "throughput_per_s": len(lat) / wall_s if wall_s else float("nan")})
    return out


def sample_at(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The first sample with an RSS figure at or after t_s (else the last one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    for s in with_rss:
        if s["t_s"] >= t_s:
            return s
    return with_rss[-1] if with_rss else None


def sample_before(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The last sample with an RSS figure at or before t_s (else the first one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    before = [s for s in with_rss if s["t_s"] <= t_s + 1e-6]
    return before[-1] if before else (with_rss[0] if with_rss else None)


def memory_figures(samples: Sequence[Dict[str, Any]], warmup_s: float, start: Dict[str, Any],
                   end: Dict[str, Any], messages_after_warmup: int) -> Dict[str, Any]:
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    if not with_rss:
        return {"available": False}
    warm = sample_at(samples, warmup_s)
    peak = max(with_rss, key=lambda s: s["rss_kib"])
    threads = [s["threads"] for s in with_rss if s.get("threads") is not None]
    end = end if end.get("rss_kib") is not None else with_rss[-1]
    start = start if start.get("rss_kib") is not None else with_rss[0]
    growth = anon_growth = per_message = None
    if warm and warm["rss_kib"]:
        growth = (end["rss_kib"] - warm["rss_kib"]) * 100.0 / warm["rss_kib"]
        if messages_after_warmup:
            per_message = (end["rss_kib"] - warm["rss_kib"]) * 1024.0 / messages_after_warmup
    if warm and warm.get("anon_kib") and end.get("anon_kib") is not None:
        anon_growth = (end["anon_kib"] - warm["anon_kib"]) * 100.0 / warm["anon_kib"]
    return {
        "available": True,
        "start": start, "after_warmup": warm, "end": end, "max": peak,
        "max_threads": max(threads) if threads else None,
        "growth_after_warmup_pct": growth,
        "anon_growth_after_warmup_pct": anon_growth,
        "messages_after_warmup": messages_after_warmup,
        "growth_bytes_per_message_added": per_message,
        "samples": len(with_rss),
    }


def over_time(rows: Sequence[Tuple[float, str, Optional[float], bool]], samples: Sequence[Dict[str, Any]],
              wall_s: float, slices: int) -> List[Dict[str, Any]]:
    """The run cut into equal slices: requests/s, latency and errors per slice, RSS at its end."""
    width = wall_s / slices if wall_s > 0 else 1.0
    out = []
    for i in range(slices):
        lo, hi = i * width, (i + 1) * width
        part = [r for r in rows if lo <= r[0] < hi or (i == slices - 1 and r[0] >= hi)]
        adds = [ms for _, e, ms, _ in part if e == "add" and ms is not None]
        searches = [ms for _, e, ms, _ in part if e.startswith("search") and ms is not None]
        s = sample_before(samples, hi) if samples else None
        out.append({
            "from_s": lo, "to_s": hi, "requests": len(part), "req_per_s": len(part) / width,
            "failed": sum(1 for r in part if not r[3]),
            "add_p50_ms": percentile(adds, 50), "add_p99_ms": percentile(adds, 99),
            "search_p50_ms": percentile(searches, 50), "search_p99_ms": percentile(searches, 99),
            "rss_kib": s["rss_kib"] if s else None, "threads": s.get("threads") if s else None,
        })
    return out


def report(figures: Dict[str, Any]) -> str:
    m = figures["machine"]
    p = figures["params"]
    out: List[str] = []
    add = out.append
    add("# flowmem soak\n")
    add("command: `%s`  " % figures["command"])
    add("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    add("server: %s  " % figures["server"]["description"])
    add("load: %.0f s (ran %.1f s), %d keep-alive clients, %d users, add share %.2f (Adds of %d messages), "
        "seed %d, warm-up %.0f s  \n" % (p["duration"], figures["wall_s"], p["clients"], p["users"], p["add_share"],
                                         ADD_SIZE, p["seed"], figures["warmup_s"]))
    rows: List[Sequence[Any]] = [("endpoint", "requests", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms", "req/s")]
    for e in figures["endpoints"]:
        lat = e["latency"]
        rows.append((e["endpoint"], e["requests"], e["errors"], fmt(lat["p50_ms"]), fmt(lat["p95_ms"]),
                     fmt(lat["p99_ms"]), fmt(lat["max_ms"], "%.1f"), fmt(e["throughput_per_s"], "%.1f")))
    add(markdown(rows))
    add("\nlatency: request sent to answer read, over answered requests (any status); req/s: answered requests "
        "per second of the run; clients and server share the machine's CPUs.\n")

    mem = figures["memory"]
    if mem.get("available"):
        rows = [("server", "t s", "RSS MiB", "of it anonymous MiB", "threads")]
        for label, key in (("start", "start"), ("after warm-up", "after_warmup"), ("end", "end")):
            s = mem.get(key) or {}
            rows.append((label, fmt(s.get("t_s"), "%.0f"), mib(s.get("rss_kib"), "%.1f"),
                         mib(s.get("anon_kib"), "%.1f"), fmt(s.get("threads"), "%d")))
        rows.append(("max (RSS at %s s; threads)" % fmt(mem["max"].get("t_s"), "%.0f"), "-",
                     mib(mem["max"].get("rss_kib"), "%.1f"), mib(mem["max"].get("anon_kib"), "%.1f"),
                     fmt(mem.get("max_threads"), "%d")))
        add(markdown(rows))
        add("\nRSS change from after warm-up to end: **%s** (limit %+.0f%%; anonymous memory %s), while %d messages "
            "were added: %s bytes of RSS per message added. VmHWM at end %s MiB; %d samples, every %.0f s.\n" % (
                fmt(mem["growth_after_warmup_pct"], "%+.1f%%"), p["max_rss_growth"],
                fmt(mem["anon_growth_after_warmup_pct"], "%+.1f%%"), mem["messages_after_warmup"],
                fmt(mem["growth_bytes_per_message_added"], "%.0f"), mib(figures["server"].get("vmhwm_kib"), "%.1f"),
                mem["samples"], p["sample_interval"]))
    else:
        add("server RSS: not measured (give `--pid` of the server process with `--endpoint`; Linux only).\n")

    errs = figures["errors"]
    if errs:
        rows = [("errors", "kind", "detail", "count")]
        for e in errs:
            rows.append((e["endpoint"], e["kind"], e["detail"].replace("|", "/"), e["count"]))
        add(markdown(rows))
        add("")
        for ex in figures["error_examples"][:5]:
            add("- example at %.1f s: %s %s %s: %s  " % (ex["t_s"], ex["endpoint"], ex["kind"], ex["detail"],
                                                         ex["body"][:200].replace("\n", " ")))
        add("")
    else:
        add("errors: none (no 5xx, no other non-200, no malformed answer, no lost write, no connection error).\n")

    rows = [("time s", "req/s", "failed", "add p50 ms", "add p99 ms", "search p50 ms", "search p99 ms", "RSS MiB",
             "threads")]
    for s in figures["over_time"]:
        span = "%.0f-%.0f" if figures["wall_s"] >= 10 * len(figures["over_time"]) else "%.1f-%.1f"
        rows.append((span % (s["from_s"], s["to_s"]), fmt(s["req_per_s"], "%.1f"), s["failed"],
                     fmt(s["add_p50_ms"]), fmt(s["add_p99_ms"]), fmt(s["search_p50_ms"]), fmt(s["search_p99_ms"]),
                     mib(s["rss_kib"], "%.1f"), fmt(s["threads"], "%d")))
    add(markdown(rows))
    d = figures["data"]
    c = figures["connections"]
    add("\ndata: %d Adds acknowledged (%d messages) in %d sessions of %d users; %d Searches checked for an "
        "acknowledged Add's unique word  " % (d["adds_acknowledged"], d["messages_acknowledged"], d["sessions"],
                                              p["users"], d["marker_searches"]))
    if figures.get("preload"):
        pre = figures["preload"]
        add("preload: %d messages per user before the clock, %d Adds (%d failed) in %.0f s  " % (
            pre["messages_per_user"], pre["adds"], pre["failed"], pre["seconds"]))
    cpu = figures["cpu"]
    add("CPU during the load: server %s s (%s cores on average), soak clients %.0f s (%.2f cores)  " % (
        fmt(cpu["server_s"], "%.0f"), fmt(None if cpu["server_s"] is None else cpu["server_s"] / figures["wall_s"]),
        cpu["client_s"], cpu["client_s"] / figures["wall_s"]))
    add("connections: %d opened by %d clients; reconnects: %s  " % (
        c["connects"], p["clients"], ", ".join("%s %d" % kv for kv in sorted(c["reconnects"].items())) or "none"))
    srv = figures["server"]
    if srv.get("log_problems") is not None:
        lp = srv["log_problems"]
        add("server log: %d tracebacks, %d ERROR lines, %d logged 5xx; exit status after SIGTERM: %s  " % (
            lp["tracebacks"], lp["error_lines"], lp["logged_5xx"], srv.get("exit_status")))
    if srv.get("db_bytes") is not None:
        add("database: %.1f MB (+ WAL %.1f MB) at the end  " % (srv["db_bytes"] / 1e6, srv["wal_bytes"] / 1e6))
    add("\n**%s**" % ("PASS" if figures["passed"] else "FAIL: " + "; ".join(figures["failures"])))
    return "\n".join(out)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--duration", type=float, default=600.0, help="seconds of load (600)")
    p.add_argument("--clients", type=int, default=64, help="client threads, one keep-alive connection each (64)")
    p.add_argument("--users", type=int, default=50, help="users the clients write and ask for (50)")
    p.add_argument("--preload", type=int, default=0, metavar="MESSAGES",
                   help="before the clock starts, add this many messages to every user (0); with a small "
                        "--add-share this gives a steady state, where RSS should stop growing")
    p.add_argument("--add-share", type=float, default=0.2, help="fraction of requests that are Adds (0.2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", "--json", dest="out", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--api-key", help="send it as Authorization: Bearer; a server started here is given it "
                                     "(FLOWMEM_API_KEY)")
    p.add_argument("--endpoint", help="soak this running server instead of starting one (http://HOST:PORT)")
    p.add_argument("--pid", type=int, help="with --endpoint: the server's process id, for its RSS and threads")
    p.add_argument("--repo", default=REPO_ROOT, help="the flowmem checkout whose server is started (this one)")
    p.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `flowmem serve` (repeatable), e.g. --serve-arg=--synchronous=NORMAL")
    p.add_argument("--warmup", type=float, help="seconds of warm-up before the RSS baseline "
                                                "(10%% of the run, at least 30 s, at most half of it)")
    p.add_argument("--max-rss-growth", type=float, default=10.0, help="percent RSS may grow after warm-up (10)")
    p.add_argument("--sample-interval", type=float, default=2.0, help="seconds between RSS samples (2)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take before it counts as a "
                                                               "connection error (60)")
    p.add_argument("--slices", type=int, default=10, help="rows of the over-time table (10)")
    p.add_argument("--progress-interval", type=float, default=30.0, help="seconds between progress lines (30)")
    p.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    args = p.parse_args(argv)
    if not 0.0 <= args.add_share <= 1.0:
        p.error("--add-share must be between 0 and 1")
    if args.duration <= 0 or args.clients < 1 or args.users < 1:
        p.error("--duration, --clients and --users must be positive")
    if args.pid is not None and not args.endpoint:
        p.error("--pid goes with --endpoint")
    return args


def start(args: argparse.Namespace, workdir: str) -> Tuple[str, int, Optional[int], Optional[ServerProcess],
                                                            Dict[str, Any]]:
    """The server to soak: `--endpoint`'s, or one started here; (host, port, pid, process, its figures)."""
    server: Optional[ServerProcess] = None
    srv: Dict[str, Any] = {}
    try:
        if args.endpoint:
            host, port = parse_endpoint(args.endpoint)
            pid = args.pid
            srv["description"] = "%s (running; %s)" % (
                args.endpoint, "pid %d" % pid if pid else "no --pid, so no RSS figures")
        else:
            db = os.path.join(workdir, "soak.db")
            log("[soak] starting flowmem serve on %s" % db)
            server = ServerProcess(db, os.path.join(workdir, "serve.log"), args.repo, args.api_key, args.serve_arg)
            host, port, pid = server.host, server.port, server.pid
            srv["description"] = "started here: `%s` from %s, pid %d, %s" % (
                " ".join(shlex.quote(a) for a in ["python"] + server.argv[1:]), args.repo, pid, server.endpoint)
        srv["health"] = wait_healthy(host, port)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    srv["open_files_limit"] = proc_open_files_limit(pid)
    return host, port, pid, server, srv


def after_run(args: argparse.Namespace, host: str, port: int, pid: Optional[int], server: Optional[ServerProcess],
              srv: Dict[str, Any], workdir: str) -> None:
    """The server's figures once the load stopped: peak RSS, health, exit status, log problems, file sizes."""
    srv["vmhwm_kib"] = proc_status(pid).get("VmHWM")
    try:
        wait_healthy(host, port, 10)
        srv["healthy_at_end"] = True
    except RuntimeError:
        srv["healthy_at_end"] = False
    if server is not None:
        srv["exit_status"] = server.stop()
        srv["log_problems"] = log_problems(server.log_text())
        db = os.path.join(workdir, "soak.db")
        srv["db_bytes"] = os.path.getsize(db) if os.path.exists(db) else 0
        srv["wal_bytes"] = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
        srv["log_path"] = server.log_path if args.keep else None


def collect(args: argparse.Namespace, soak: Soak, result: Dict[str, Any], srv: Dict[str, Any],
            warmup_s: float) -> Tuple[Dict[str, Any], "collections.Counter[Tuple[str, str, str]]", int]:
    """Every figure of the run (the JSON report), its errors by (endpoint, kind, detail), requests answered."""
    rows = sorted((r for rec in soak.records for r in rec.rows), key=lambda r: r[0])
    errors: "collections.Counter[Tuple[str, str, str]]" = collections.Counter()
    examples: List[Dict[str, Any]] = []
    for rec in soak.records:
        errors.update(rec.errors)
        examples.extend(rec.examples)
    examples.sort(key=lambda e: e["t_s"])
    wall_s = result["wall_s"]
    reconnects: "collections.Counter[str]" = collections.Counter()
    for c in soak.clients:
        reconnects.update(c.reconnects)
    users = soak.convo.users
    # What was acknowledged: Adds counted by the users' state include ones that failed; count the 200s.
    acked_adds = sum(1 for r in rows if r[1] == "add" and r[3])
    figures: Dict[str, Any] = {
        "command": command_line(),
        "machine": machine(),
        "params": {k: v for k, v in vars(args).items() if k != "api_key"},
        "warmup_s": warmup_s,
        "wall_s": wall_s,
        "server": srv,
        "endpoints": endpoint_rows(rows, errors, wall_s),
        "errors": [{"endpoint": e, "kind": k, "detail": d, "count": n}
                   for (e, k, d), n in sorted(errors.items(), key=lambda kv: -kv[1])],
        "error_examples": examples[:20],
        "memory": memory_figures(soak.samples, warmup_s, result["start_sample"], result["end_sample"],
                                 ADD_SIZE * sum(1 for r in rows if r[1] == "add" and r[3] and r[0] >= warmup_s)),
        "over_time": over_time(rows, soak.samples, wall_s, max(1, args.slices)),
        "samples": soak.samples,
        "data": {
            "adds_acknowledged": acked_adds,
            "messages_acknowledged": acked_adds * ADD_SIZE,
            "sessions": sum(u.sessions for u in users),
            "marker_searches": sum(rec.marker_searches for rec in soak.records),
        },
        "cpu": {"server_s": result["server_cpu_s"], "client_s": result["client_cpu_s"]},
        "preload": result["preload"],
        "connections": {"connects": sum(c.connects for c in soak.clients), "reconnects": dict(reconnects)},
        "aborted": soak.aborted,
    }
    return figures, errors, len(rows)


def failures(args: argparse.Namespace, figures: Dict[str, Any], errors: "collections.Counter[Tuple[str, str, str]]",
             answered: int, started_here: bool) -> List[str]:
    """Why the run fails, one line a reason; none when it passed."""
    out = []
    if figures["aborted"]:
        out.append(figures["aborted"])
    n_errors = sum(errors.values())
    if n_errors:
        by_kind: "collections.Counter[str]" = collections.Counter()
        for (_, k, _), n in errors.items():
            by_kind[k] += n
        out.append("%d errors (%s)" % (n_errors, ", ".join("%s %d" % kv for kv in sorted(by_kind.items()))))
    growth = figures["memory"].get("growth_after_warmup_pct")
    if growth is not None and growth > args.max_rss_growth:
        out.append("RSS grew %.1f%% from after warm-up to the end (limit %.0f%%)" % (growth, args.max_rss_growth))
    srv = figures["server"]
    if not srv.get("healthy_at_end"):
        out.append("GET /health failed after the run")
    if started_here and srv.get("exit_status") != 0:
        out.append("the server's exit status after SIGTERM was %s" % srv.get("exit_status"))
    if not answered:
        out.append("no request was answered")
    preload = figures["preload"]
    if preload and preload["failed"]:
        out.append("%d preload Adds failed (%s)" % (preload["failed"], "; ".join(preload["failures"])))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Soak a server with the arguments in `argv`; the exit status (0 passed, 1 failed, 2 no server)."""
    args = parse_args(argv)
    warmup_s = args.warmup if args.warmup is not None else min(max(0.1 * args.duration, 30.0), args.duration / 2)
    workdir = tempfile.mkdtemp(prefix="flowmem-soak-")
    try:
        host, port, pid, server, srv = start(args, workdir)
    except (RuntimeError, ValueError, OSError) as e:
        log("[soak] cannot start: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 2
    log("[soak] %.0f s, %d clients, %d users, add share %.2f against %s:%d" % (
        args.duration, args.clients, args.users, args.add_share, host, port))
    soak = Soak(args, host, port, pid, server)
    result = soak.run()
    after_run(args, host, port, pid, server, srv, workdir)
    figures, errors, answered = collect(args, soak, result, srv, warmup_s)
    figures["failures"] = failures(args, figures, errors, answered, server is not None)
    figures["passed"] = not figures["failures"]
    finish(report(figures), figures, args.out, workdir, args.keep, "soak")
    return 0 if figures["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
