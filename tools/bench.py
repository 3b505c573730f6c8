#!/usr/bin/env python3
"""flowmem's speed benchmark: Add throughput, Search latency beside bare FTS5, memory, disk.

What it measures (`make bench`; prints Markdown tables, `--json PATH` writes every figure):

1. Add throughput in messages per second, with Adds of 20 messages shaped like the
   platform's ("Name: text", one timestamp per session, sessions of 40 messages so half
   the Adds open a session and half extend one): in-process (flowmem.memory.Memory on
   a fresh database, default config, so synchronous FULL), and over HTTP against a
   `python -m flowmem serve --port 0` child on a fresh database with 1, 8 and 32 client
   threads (one keep-alive http.client connection per thread, each thread its own users).
2. Search latency p50/p95/p99 with top_k=100, in-process and warm (one warm-up pass,
   then timed rounds), for one user's store of 1k, 10k and 100k messages, and for a
   1k-message user among 1M messages of 1,000 other users (tools/bench_isolation.py's
   cached database B).
3. Beside each search figure, the same figure for a bare FTS5 bm25() query on the same
   file (a separate sqlite3 connection, the same query terms), and the ratio
   flowmem/bare: the floor that flowmem's own work (per-user BM25 in Python, reading
   views and messages, building items) sits on.
4. Peak RSS of each phase (each phase runs in its own fresh process, so one phase's
   memory does not hide in the next one's peak), the HTTP server's peak RSS, and
   database bytes per message.

The synthetic text and the cached databases come from tools/bench_isolation.py: every
store here is one of its "DB B" builds (the single-user stores are builds with no
other users), cached in `--workdir` beside a sidecar of the parameters that made it
and a hash of flowmem's write path, so reruns skip the builds; `--rebuild` forces.

Usage (from anywhere; standard library only, Python 3.9+):

    python -m tools.bench                 # full run (cold caches: ~15 min on 2 cores)
    python -m tools.bench --quick         # small run (under 2 min): no 100k store,
                                          # 50k "others" database instead of 1M
    python -m tools.bench --json out/bench.json --workdir /tmp/flowmem-bench
"""
from __future__ import annotations

import argparse
import gc
import http.client
import json
import math
import os
import shlex
import sqlite3
import sys
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from flowmem.config import load
from flowmem.memory import Memory
from flowmem.storage import fts
from flowmem.text.tokenize import query_terms
from tools.benchkit import stats
from tools.benchkit.corpus import PLATFORM_MAX_ADD, TARGET_USER, TextGen, add_bodies, user_sessions
from tools.benchkit.process import rss_figures, ru_maxrss_kib, run_phase, vm_hwm_kib
from tools.benchkit.report import fmt, human, log, machine, markdown, mib
from tools.benchkit.server import JSON_HEADERS, ServerProcess
from tools.benchkit.stats import summary
from tools.benchkit.stores import StoreSpec, build_store, remove_db, store_queries, timed_searches

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import resource
except ImportError:  # Windows: no peak RSS figures
    resource = None  # type: ignore[assignment]

ADD_SIZE = PLATFORM_MAX_ADD  # messages per Add, as the platform sends them
ADD_SESSION_LEN = 40  # two Adds per session: one opens it, one extends it
ADD_USER_MESSAGES = 1000  # a client thread's messages are spread over users of this size


class Plan(NamedTuple):
    """How big each part of the run is; `--quick` picks smaller values."""

    add_messages: int  # messages per Add setting (in-process, and each thread count)
    threads: Tuple[int, ...]
    store_sizes: Tuple[int, ...]  # single-user stores, in messages
    other_users: int  # the "others" database: users besides the measured one...
    messages_per_other: int  # ...and messages each
    queries: int
    max_rounds: int  # timed passes over the queries per store, at most...
    round_budget_s: float  # ...and as many as fit in this many seconds (at least one)


FULL = Plan(20000, (1, 8, 32), (1000, 10000, 100000), 1000, 1000, 200, 5, 60.0)
QUICK = Plan(2000, (1, 8, 32), (1000, 10000), 50, 1000, 100, 3, 3.0)


# -- small helpers ----------------------------------------------------------------------


def file_bytes(path: str) -> Dict[str, int]:
    """Sizes of a database file and its WAL (0 where absent)."""
    sizes = {}
    for key, p in (("db", path), ("wal", path + "-wal")):
        sizes[key] = os.path.getsize(p) if os.path.exists(p) else 0
    return sizes


# -- Add throughput ---------------------------------------------------------------------


def add_workload(n_threads: int, total: int, seed: int, vocabulary: int) -> List[List[Dict[str, Any]]]:
    """Add bodies for `n_threads` clients, `total` messages in all, each client its own users.

    Every client gets a multiple of 20 messages, so every Add holds 20. The user ids
    depend only on the thread count and index, so the in-process run and the
    one-thread HTTP run send exactly the same Adds.
    """
    gen = TextGen(seed, vocabulary)
    per_thread = max(ADD_SIZE, total // n_threads // ADD_SIZE * ADD_SIZE)
    workload = []
    for t in range(n_threads):
        bodies: List[Dict[str, Any]] = []
        left, u = per_thread, 0
        while left:
            n = min(ADD_USER_MESSAGES, left)
            user = "c%d-t%02d-u%02d" % (n_threads, t, u)
            sessions = user_sessions(gen, seed, user, n, (ADD_SESSION_LEN, ADD_SESSION_LEN))
            bodies.extend(add_bodies(user, sessions, ADD_SIZE))
            left -= n
            u += 1
        workload.append(bodies)
    return workload


def throughput(label: str, n_messages: int, wall_s: float, latencies_ms: List[float], errors: int) -> Dict[str, Any]:
    """The figures of one Add setting."""
    return {
        "setting": label,
        "adds": len(latencies_ms),
        "messages": n_messages,
        "wall_s": wall_s,
        "msgs_per_s": n_messages / wall_s if wall_s else float("nan"),
        "latency": summary(latencies_ms),
        "errors": errors,
    }


def measure_add_inprocess(plan: Plan, workdir: str, seed: int, vocabulary: int) -> Dict[str, Any]:
    """Phase: every Add through Memory.add on a fresh database, one after another."""
    path = os.path.join(workdir, "add-inprocess.db")
    remove_db(path)
    bodies = add_workload(1, plan.add_messages, seed, vocabulary)[0]
    n_messages = sum(len(b["messages"]) for b in bodies)
    memory = Memory(load({"db": path}, environ={}))  # default config: synchronous FULL
    try:
        gc.collect()
        latencies = []
        start = time.perf_counter()
        for body in bodies:
            t0 = time.perf_counter()
            memory.add(body)
            latencies.append((time.perf_counter() - t0) * 1000.0)
        wall = time.perf_counter() - start
        live = file_bytes(path)
    finally:
        memory.close()
    out = throughput("in-process", n_messages, wall, latencies, 0)
    out.update(files_live=live, files_closed=file_bytes(path), **rss_figures())
    remove_db(path)
    return out


def _client(port: int, bodies: Sequence[bytes], start: threading.Barrier, out: List[Any], index: int) -> None:
    """One client thread: its own keep-alive connection, its Adds one after another."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        # Connect before the clock starts: the figure is about Adds, not TCP handshakes.
        conn.request("GET", "/health")
        conn.getresponse().read()
        start.wait(60)
        latencies, errors = [], 0
        for body in bodies:
            t0 = time.perf_counter()
            conn.request("POST", "/add", body=body, headers=JSON_HEADERS)
            response = conn.getresponse()
            response.read()
            latencies.append((time.perf_counter() - t0) * 1000.0)
            errors += response.status != 200
        out[index] = (latencies, errors)
    except BaseException as e:  # reported by the caller; never leave the others waiting
        start.abort()
        out[index] = e
    finally:
        conn.close()


def measure_add_http(n_threads: int, plan: Plan, workdir: str, seed: int, vocabulary: int) -> Dict[str, Any]:
    """Phase: Adds over HTTP from `n_threads` concurrent clients to a fresh server."""
    path = os.path.join(workdir, "add-http.db")
    remove_db(path)
    workload = add_workload(n_threads, plan.add_messages, seed, vocabulary)
    n_messages = sum(len(b["messages"]) for bodies in workload for b in bodies)
    # Encoded up front, so the clients (sharing the CPUs with the server) do little but send.
    encoded = [[json.dumps(b).encode("utf-8") for b in bodies] for bodies in workload]
    del workload
    server = ServerProcess(path, os.path.join(workdir, "serve-c%d.log" % n_threads))
    try:
        results: List[Any] = [None] * n_threads
        start = threading.Barrier(n_threads + 1)
        threads = [
            threading.Thread(target=_client, args=(server.port, encoded[i], start, results, i))
            for i in range(n_threads)
        ]
        for t in threads:
            t.start()
        gc.collect()
        start.wait(60)
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        live = file_bytes(path)
        server_peak = vm_hwm_kib(server.proc.pid)
    finally:
        exit_code = server.stop()
    failed = [r for r in results if not isinstance(r, tuple)]
    if failed:
        raise RuntimeError("a client thread failed: %r" % (failed[0],))
    latencies = [ms for times, _ in results for ms in times]
    out = throughput("HTTP, %d client thread%s" % (n_threads, "s" if n_threads > 1 else ""),
                     n_messages, wall, latencies, sum(errors for _, errors in results))
    conn = sqlite3.connect(path)
    try:
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    finally:
        conn.close()
    out.update(threads=n_threads, stored_messages=stored, server_exit_code=exit_code, files_live=live,
               files_closed=file_bytes(path), server_peak_rss_kib=server_peak, **rss_figures())
    remove_db(path)
    return out


# -- the stores searched ----------------------------------------------------------------


def store_specs(plan: Plan, workdir: str, seed: int) -> List[StoreSpec]:
    """The single-user stores, then the measured user among the others."""
    specs = [
        StoreSpec("%dk messages, one user" % (n // 1000), os.path.join(workdir, "user-t%d-s%d.db" % (n, seed)), n, 0, 0)
        for n in plan.store_sizes
    ]
    others = plan.other_users * plan.messages_per_other
    # Same file name as bench_isolation.py's main() gives DB B, so both tools share the cache.
    name = "B-u%d-m%d-t%d-s%d.db" % (plan.other_users, plan.messages_per_other, 1000, seed)
    specs.append(StoreSpec("1k-message user + %s others' messages" % human(others), os.path.join(workdir, name),
                           1000, plan.other_users, plan.messages_per_other))
    return specs


# -- Search latency ---------------------------------------------------------------------


def match_expression(user_key: int, query: str) -> str:
    """The FTS5 MATCH of flowmem's query terms over message views: each user-prefixed term quoted, ORed."""
    return " OR ".join('"%s"' % fts.term(user_key, "message", t) for t in query_terms(query))


def timed_bare(conn: sqlite3.Connection, expressions: Sequence[str],
               top_k: int) -> Tuple[List[float], List[List[float]]]:
    """Run the bare FTS5 bm25() query once per expression: latencies in ms, and scores."""
    sql = ("SELECT rowid, bm25(%s) FROM %s WHERE %s MATCH ? ORDER BY bm25(%s) LIMIT ?"
           % (fts.TABLE, fts.TABLE, fts.TABLE, fts.TABLE))
    times, rows = stats.timed_bare(conn, sql, expressions, top_k)
    return times, [[-score for _, score in hits] for hits in rows]


def score_agreement(flowmem_results: Sequence[str], bare_scores: Sequence[List[float]]) -> Dict[str, int]:
    """How many queries got the same number of hits, and the same top scores, from both.

    On a single-user database FTS5's table-wide statistics are the user's, so the
    top-k scores must agree (bm25.py mirrors fts5_aux.c); compared as sorted lists,
    which ties at the cut cannot change.
    """
    same_count = same_scores = 0
    for result, bare in zip(flowmem_results, bare_scores):
        ours = sorted((item["score"] for item in json.loads(result)["data"]), reverse=True)
        same_count += len(ours) == len(bare)
        same_scores += len(ours) == len(bare) and all(
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(ours, sorted(bare, reverse=True)))
    return {"same_hit_count": same_count, "same_scores": same_scores}


def measure_search(spec: StoreSpec, plan: Plan, seed: int, vocabulary: int, top_k: int) -> Dict[str, Any]:
    """Phase: flowmem Search and bare FTS5 on one store, warm, interleaved round by round."""
    memory = Memory(load({"db": spec.path}, environ={}))
    bare = sqlite3.connect(spec.path, isolation_level=None, check_same_thread=False)
    try:
        (user_key,) = bare.execute("SELECT user_key FROM users WHERE user_id = ?", (TARGET_USER,)).fetchone()
        queries = [q for q in store_queries(bare, TARGET_USER, plan.queries, seed, vocabulary)
                   if query_terms(q)]
        expressions = [match_expression(user_key, q) for q in queries]

        # Warm-up pass: fills both connections' caches; its results feed the checks.
        t0 = time.perf_counter()
        _, results = timed_searches(memory, queries, top_k)
        _, bare_scores = timed_bare(bare, expressions, top_k)
        pass_s = time.perf_counter() - t0
        rounds = max(1, min(plan.max_rounds, int(plan.round_budget_s / pass_s)))
        log("[search] %s: %d queries, warm-up pass %.1f s, %d timed round%s"
            % (spec.label, len(queries), pass_s, rounds, "s" if rounds > 1 else ""))

        samples: Dict[str, List[float]] = {"flowmem": [], "bare": []}
        for r in range(rounds):
            # Alternate which goes first, so drift (caches, clocks, a neighbour's load) hits both alike.
            steps = [("flowmem", lambda: timed_searches(memory, queries, top_k)[0]),
                     ("bare", lambda: timed_bare(bare, expressions, top_k)[0])]
            for name, run in steps if r % 2 == 0 else steps[::-1]:
                samples[name].extend(run())
        stats = memory.stats()
    finally:
        bare.close()
        memory.close()
    flowmem, fts_only = summary(samples["flowmem"]), summary(samples["bare"])
    hits = [len(json.loads(r)["data"]) for r in results]
    return {
        "store": spec.label,
        "path": spec.path,
        "user_messages": spec.target_messages,
        "db_messages": stats["messages"],
        "db_users": stats["users"],
        "db_views": stats["views"],
        "files": file_bytes(spec.path),
        "queries": len(queries),
        "rounds": rounds,
        "flowmem": flowmem,
        "bare_fts5": fts_only,
        "ratio": {p: flowmem[p + "_ms"] / fts_only[p + "_ms"] for p in ("p50", "p95", "p99")},
        "mean_hits": sum(hits) / len(hits) if hits else 0.0,
        "agreement": score_agreement(results, bare_scores),
        "example_queries": queries[:3],
        **rss_figures(),
    }


# -- report -----------------------------------------------------------------------------


def add_table(adds: Sequence[Dict[str, Any]]) -> str:
    """The Add throughput table."""
    rows: List[List[Any]] = [["setting", "Adds", "messages", "wall s", "msgs/s", "Add p50 ms", "p95 ms", "p99 ms",
                              "errors"]]
    for a in adds:
        lat = a["latency"]
        rows.append([a["setting"], a["adds"], a["messages"], fmt(a["wall_s"], "%.1f"), fmt(a["msgs_per_s"], "%.0f"),
                     fmt(lat["p50_ms"]), fmt(lat["p95_ms"]), fmt(lat["p99_ms"]), a["errors"]])
    return markdown(rows)


def search_table(searches: Sequence[Dict[str, Any]]) -> str:
    """The Search latency table, flowmem beside bare FTS5."""
    rows: List[List[Any]] = [["store", "samples"]]
    for p in ("p50", "p95", "p99"):
        rows[0] += ["flowmem %s ms" % p, "bare FTS5 %s ms" % p, "ratio"]
    rows[0] += ["hits/query"]
    for s in searches:
        row = [s["store"], "%d x %d" % (s["queries"], s["rounds"])]
        for p in ("p50", "p95", "p99"):
            row += [fmt(s["flowmem"][p + "_ms"]), fmt(s["bare_fts5"][p + "_ms"]), fmt(s["ratio"][p], "%.1fx")]
        row.append(fmt(s["mean_hits"], "%.1f"))
        rows.append(row)
    return markdown(rows)


def add_resources_table(adds: Sequence[Dict[str, Any]]) -> str:
    """Peak RSS and file sizes of the Add settings."""
    rows: List[List[Any]] = [["Add setting", "peak RSS MiB", "server peak RSS MiB", "DB MB", "WAL MB",
                              "bytes/msg (DB+WAL)", "bytes/msg after close"]]
    for a in adds:
        live, closed, n = a["files_live"], a["files_closed"], a["messages"]
        rows.append([a["setting"], mib(a["peak_rss_kib"]), mib(a.get("server_peak_rss_kib")),
                     fmt(live["db"] / 1e6, "%.1f"), fmt(live["wal"] / 1e6, "%.1f"),
                     fmt((live["db"] + live["wal"]) / n, "%.0f"), fmt((closed["db"] + closed["wal"]) / n, "%.0f")])
    return markdown(rows)


def store_resources_table(builds: Sequence[Dict[str, Any]], searches: Sequence[Dict[str, Any]]) -> str:
    """Size and peak RSS (build, search) of each searched store."""
    rows: List[List[Any]] = [["store", "messages", "views", "DB+WAL MB", "bytes/msg", "build peak RSS MiB",
                              "search peak RSS MiB"]]
    for build, s in zip(builds, searches):
        size = s["files"]["db"] + s["files"]["wal"]
        rows.append([s["store"], s["db_messages"], s["db_views"], fmt(size / 1e6, "%.1f"),
                     fmt(size / s["db_messages"], "%.0f"), mib(build["peak_rss_kib"]), mib(s["peak_rss_kib"])])
    return markdown(rows)


def print_report(figures: Dict[str, Any]) -> None:
    """All tables and notes, as Markdown on stdout."""
    m = figures["machine"]
    print("# flowmem speed benchmark\n")
    print("command: `%s`  " % figures["command"])
    print("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    print("mode: %s\n" % figures["mode"])

    print("## Add throughput (Adds of %d messages, synchronous FULL)\n" % ADD_SIZE)
    print(add_table(figures["add"]))
    print("\nmsgs/s = messages / wall time of the whole setting; HTTP clients share the machine's CPUs "
          "with the server.\n")

    print("## Search latency (top_k=%d, warm) beside a bare FTS5 bm25() query\n" % figures["top_k"])
    print(search_table(figures["search"]))
    print("\nsamples = queries x timed rounds (after one warm-up pass); ratio = flowmem / bare FTS5 "
          "(`SELECT rowid, bm25(..) .. MATCH '\"<key>_<term>\" OR ..' ORDER BY bm25(..) LIMIT %d` on its own "
          "connection).  " % figures["top_k"])
    for s in figures["search"]:
        a, n = s["agreement"], s["queries"]
        # On a shared database FTS5's bm25() uses every user's statistics, so scores differ by design.
        note = "" if s["db_users"] == 1 else " (differ by design: FTS5 uses all %d users' statistics)" % s["db_users"]
        print("- %s: same hit count as FTS5 on %d/%d queries; same top-%d scores as FTS5's bm25() on %d/%d%s  "
              % (s["store"], a["same_hit_count"], n, figures["top_k"], a["same_scores"], n, note))
    print("\n## Memory and disk\n")
    print(add_resources_table(figures["add"]))
    print()
    print(store_resources_table(figures["builds"], figures["search"]))
    print("\npeak RSS: each phase runs in its own process (VmHWM of /proc/self, ru_maxrss where there is no "
          "/proc); server: VmHWM of the `flowmem serve` child just before it was stopped. Add DB and WAL: at the "
          "end of the Adds, database still open; after close: WAL checkpointed and truncated. Stores: as cached "
          "(closed).  ")
    for build, s in zip(figures["builds"], figures["search"]):
        print("- %s: %s in %.0f s (%.0f msg/s, synchronous OFF)  " % (
            s["store"], "cached, built" if build["reused"] else "built", build["build_s"],
            build["build_msgs_per_s"]))
    print("\ntotal time: %.0f s (phases: %s)" % (
        figures["total_s"], ", ".join("%s %.0f s" % kv for kv in figures["phase_s"].items())))


# -- main -------------------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--quick", action="store_true",
                   help="small run: %d messages per Add setting, stores of %s messages, %s others; under 2 minutes"
                   % (QUICK.add_messages, "/".join(human(n) for n in QUICK.store_sizes),
                      human(QUICK.other_users * QUICK.messages_per_other)))
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--workdir", default="/tmp/flowmem-bench", help="cached databases and scratch files")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached stores even if they match")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vocabulary", type=int, default=5000, help="pseudo-words besides the common words (5000)")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    os.makedirs(args.workdir, exist_ok=True)
    started = time.perf_counter()
    phase_s: Dict[str, float] = {}

    def timed(name: str, fn: Callable[..., Dict[str, Any]], *fn_args: Any) -> Dict[str, Any]:
        t0 = time.perf_counter()
        result = run_phase(fn, *fn_args)
        phase_s[name] = phase_s.get(name, 0.0) + time.perf_counter() - t0
        return result

    log("[add] in-process, %d messages" % plan.add_messages)
    adds = [timed("add", measure_add_inprocess, plan, args.workdir, args.seed, args.vocabulary)]
    for n in plan.threads:
        log("[add] HTTP, %d client thread(s)" % n)
        adds.append(timed("add", measure_add_http, n, plan, args.workdir, args.seed, args.vocabulary))

    builds, searches = [], []
    for spec in store_specs(plan, args.workdir, args.seed):
        log("[store] %s: %s" % (spec.label, spec.path))
        builds.append(timed("build", build_store, spec, args.seed, args.vocabulary, args.rebuild))
        searches.append(timed("search", measure_search, spec, plan, args.seed, args.vocabulary, args.top_k))

    others = human(plan.other_users * plan.messages_per_other)
    mode = ("full" if not args.quick else
            "quick (%d messages per Add setting; stores of %s messages; the others database holds %s messages of "
            "%d users, not 1M of 1,000)" % (plan.add_messages, ", ".join(human(n) for n in plan.store_sizes),
                                             others, plan.other_users))
    figures = {
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "machine": machine(),
        "mode": mode,
        "plan": plan._asdict(),
        "params": vars(args),
        "top_k": args.top_k,
        "add": adds,
        "builds": builds,
        "search": searches,
        "phase_s": phase_s,
        "total_s": time.perf_counter() - started,
        "orchestrator_ru_maxrss_kib": ru_maxrss_kib(),
    }
    print_report(figures)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
    bad = [a["setting"] for a in adds if a["errors"] or a.get("stored_messages", a["messages"]) != a["messages"]
           or a.get("server_exit_code", 0) != 0]
    for setting in bad:
        print("FAIL: %s: some Adds failed or were not stored, or the server did not stop cleanly" % setting)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
