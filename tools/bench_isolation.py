#!/usr/bin/env python3
"""Isolation-cost benchmark: does other users' data slow one user down?

The figure it measures (a requirement of flowmem):

    search latency for a user with 1,000 messages, in a database that also holds
    1,000,000 messages of 1,000 other users, within 1.5x of the same user's latency
    in an otherwise empty database. Add must not slow down as other users' data
    grows either.

It builds two databases with the in-process API (flowmem.memory.Memory):

- DB A: only the measured "target" user (1,000 messages, Adds of at most 20 messages);
- DB B: the same target user, added with the same bodies in the same order, spread
  evenly among the Adds of `--other-users` other users of `--messages-per-user`
  messages each (all users interleaved, as concurrent traffic would leave them).

Every user's text is drawn from one Zipf-like vocabulary, so the target's words are
also everyone else's words (its index terms differ only by the user prefix): the hard
case for isolation. Then it measures, on both, search latency for ~200 fixed queries
(warm, several rounds, interleaving A and B), checks that every result is
byte-identical between A and B, and measures Add latency (synchronous FULL) for a
fresh user and for the target. It prints a Markdown table and exits non-zero when a
result differs or the search p50 ratio B/A exceeds `--max-search-ratio` (1.5).

DB B is cached in `--workdir` with a JSON sidecar of the parameters that made it
(and a hash of flowmem's write path, so a change to indexing forces a rebuild); the
Add phase runs on a scratch copy of it, so the cache is never modified.

Usage (from the repository root):

    python -m tools.bench_isolation                      # full scale: 1,000 x 1,000
    python -m tools.bench_isolation --other-users 20     # quick check
    python -m tools.bench_isolation --json out/isolation.json

Standard library only; Python 3.9 compatible.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from flowmem.memory import Memory
from tools.benchkit.corpus import TARGET_USER, TextGen, extra_adds, make_queries, target_adds
from tools.benchkit.report import command_line, machine
from tools.benchkit.stats import summary
from tools.benchkit.stores import build_a, build_b, fsync_file, open_memory, remove_db, timed_searches

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# -- synthetic conversations ----------------------------------------------------------


# -- databases ------------------------------------------------------------------------


# -- measurements ---------------------------------------------------------------------


def mismatches(a: Sequence[str], b: Sequence[str], queries: Sequence[str], label: str) -> int:
    """Count queries whose results differ; show the first few."""
    bad = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    for i in bad[:3]:
        print("[%s] results differ for query %r" % (label, queries[i]), file=sys.stderr)
    return len(bad)


def measure_search(ma: Memory, mb: Memory, queries: Sequence[str], args) -> Dict[str, Any]:
    """Warm-up pass (compared for identity), then `--rounds` timed passes alternating A and B."""
    first_a, results_a = timed_searches(ma, queries, args.top_k)
    first_b, results_b = timed_searches(mb, queries, args.top_k)
    samples: Dict[str, List[float]] = {"A": [], "B": []}
    for r in range(args.rounds):
        # Alternate which DB goes first, so drift (caches, CPU clocks) hits both alike.
        for label, m in (("A", ma), ("B", mb)) if r % 2 == 0 else (("B", mb), ("A", ma)):
            times, _ = timed_searches(m, queries, args.top_k)
            samples[label].extend(times)
    hits = [len(json.loads(r)["data"]) for r in results_a]
    return {
        "A": summary(samples["A"]),
        "B": summary(samples["B"]),
        "first_pass_A": summary(first_a),
        "first_pass_B": summary(first_b),
        "mismatches": mismatches(results_a, results_b, queries, "search"),
        "mean_results_per_query": sum(hits) / len(hits) if hits else 0.0,
        "results": (results_a, results_b),
    }


def measure_adds(ma: Memory, mb: Memory, bodies: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Send each body to A then B (alternating, so both see the same conditions)."""
    samples: Dict[str, List[float]] = {"A": [], "B": []}
    for i, body in enumerate(bodies):
        for label, m in (("A", ma), ("B", mb)) if i % 2 == 0 else (("B", mb), ("A", ma)):
            t0 = time.perf_counter()
            m.add(body)
            samples[label].append((time.perf_counter() - t0) * 1000.0)
    n_messages = sum(len(b["messages"]) for b in bodies)
    out = {}
    for label, times in samples.items():
        out[label] = dict(summary(times), msgs_per_s=n_messages / (sum(times) / 1000.0))
    return out


# -- report ---------------------------------------------------------------------------


def table(figures: Dict[str, Any]) -> str:
    """The Markdown table: metric | empty DB | with other users | ratio (B/A)."""
    rows = [("metric", "empty DB", "with other users", "ratio"), ("---", "---:", "---:", "---:")]

    def row(name: str, a: float, b: float, fmt: str = "%.2f") -> None:
        ratio = "%.2fx" % (b / a) if a else "-"
        rows.append((name, fmt % a, fmt % b, ratio))

    s = figures["search"]
    for p in ("p50", "p95", "p99"):
        row("search %s ms (top_k=%d)" % (p, figures["top_k"]), s["A"][p + "_ms"], s["B"][p + "_ms"])
    row("search first-pass p50 ms", s["first_pass_A"]["p50_ms"], s["first_pass_B"]["p50_ms"])
    for who in ("fresh_user", "target_user"):
        add = figures["add"][who]
        row("add p50 ms, %s" % who.replace("_", " "), add["A"]["p50_ms"], add["B"]["p50_ms"])
        row("add p95 ms, %s" % who.replace("_", " "), add["A"]["p95_ms"], add["B"]["p95_ms"])
        row("add max ms, %s" % who.replace("_", " "), add["A"]["max_ms"], add["B"]["max_ms"])
        row("add msgs/s, %s" % who.replace("_", " "), add["A"]["msgs_per_s"], add["B"]["msgs_per_s"], "%.0f")
    row("database messages", figures["db"]["A_messages"], figures["db"]["B_messages"], "%d")
    row("database file MB", figures["db"]["A_bytes"] / 1e6, figures["db"]["B_bytes"] / 1e6, "%.1f")
    return "\n".join("| %s |" % " | ".join(r) for r in rows)


def parse_args(argv: Optional[Sequence[str]] = None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--other-users", type=int, default=1000, help="users besides the target in DB B (1000)")
    p.add_argument("--messages-per-user", type=int, default=1000, help="messages of each other user (1000)")
    p.add_argument("--target-messages", type=int, default=1000, help="messages of the measured user (1000)")
    p.add_argument("--bulk-add-messages", type=int, default=200,
                   help="session length, and so Add size, of the other users (200; build speed only)")
    p.add_argument("--vocabulary", type=int, default=5000, help="pseudo-words besides the common words (5000)")
    p.add_argument("--queries", type=int, default=200, help="fixed queries for the target (200)")
    p.add_argument("--rounds", type=int, default=5, help="timed passes over the queries per DB (5)")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--add-requests", type=int, default=500,
                   help="measured Adds per user kind (500: enough to span several index merges)")
    p.add_argument("--add-synchronous", default="FULL", help="SQLite synchronous for the Add phase (FULL)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", default="/tmp/flowmem-bench")
    p.add_argument("--rebuild", action="store_true", help="rebuild DB B even if a matching cache exists")
    p.add_argument("--max-search-ratio", type=float, default=1.5, help="fail above this search p50 ratio (1.5)")
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    return p.parse_args(argv)


def search_phase(path_a: str, path_b: str, queries: List[str], args) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The databases' sizes and the Search figures, on the databases as built (B read-only: the cache stays valid)."""
    ma, mb = open_memory(path_a, "OFF"), open_memory(path_b, "OFF")
    try:
        db = {
            "A_messages": ma.stats()["messages"], "B_messages": mb.stats()["messages"],
            "A_bytes": os.path.getsize(path_a), "B_bytes": os.path.getsize(path_b),
        }
        print("[search] %d queries x %d rounds per DB" % (len(queries), args.rounds), file=sys.stderr)
        return db, measure_search(ma, mb, queries, args)
    finally:
        ma.close()
        mb.close()


def add_phase(path_a: str, path_b: str, scratch_b: str, gen: TextGen, queries: List[str], args) -> Dict[str, Any]:
    """The Add figures: synchronous as configured, B on a scratch copy; then the results must still agree."""
    print("[add] copying B to a scratch file", file=sys.stderr)
    remove_db(scratch_b)
    shutil.copyfile(path_b, scratch_b)
    fsync_file(scratch_b)
    fsync_file(path_a)  # built with synchronous OFF: flush it too, for the same reason
    ma, mb = open_memory(path_a, args.add_synchronous), open_memory(scratch_b, args.add_synchronous)
    try:
        print("[add] %d Adds x 2 users per DB, synchronous %s" % (args.add_requests, args.add_synchronous),
              file=sys.stderr)
        add: Dict[str, Any] = {
            "fresh_user": measure_adds(ma, mb, extra_adds(gen, args.seed, "fresh-user", "fresh", args.add_requests)),
            "target_user": measure_adds(ma, mb, extra_adds(gen, args.seed, TARGET_USER, "extra", args.add_requests)),
        }
        # The target now holds the new messages in both DBs: results must still agree.
        _, after_a = timed_searches(ma, queries, args.top_k)
        _, after_b = timed_searches(mb, queries, args.top_k)
        add["mismatches_after"] = mismatches(after_a, after_b, queries, "after adds")
        return add
    finally:
        ma.close()
        mb.close()
        remove_db(scratch_b)


def print_report(figures: Dict[str, Any], args) -> None:
    """The table and the lines under it."""
    build, search, add = figures["build_b"], figures["search"], figures["add"]
    print(table(figures))
    print()
    print("ratio = with other users / empty DB (for msgs/s, below 1 means slower); "
          "search after a warm-up pass, Add on synchronous %s" % args.add_synchronous)
    m = figures["machine"]
    print("machine: %s CPUs, %s, Python %s, SQLite %s" % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    print("command: %s" % figures["command"])
    print("DB B: %d messages, %s in %.0f s (%.0f msg/s)" % (
        build["messages"], "cached, built" if build["reused"] else "built", build["build_s"],
        build["build_msgs_per_s"]))
    print("queries: %d, mean results per query %.1f" % (figures["queries"], search["mean_results_per_query"]))
    print("result mismatches A vs B: %d (after the Add phase: %d)" % (search["mismatches"], add["mismatches_after"]))


def verdict(figures: Dict[str, Any], args) -> int:
    """PASS or FAIL lines; the exit status (1 when results differ or Search slows past the limit)."""
    search, add = figures["search"], figures["add"]
    failures = []
    if search["mismatches"] or add["mismatches_after"]:
        failures.append("%d search results differ between A and B (%d after the Add phase)"
                        % (search["mismatches"], add["mismatches_after"]))
    if figures["search_p50_ratio"] > args.max_search_ratio:
        failures.append("search p50 with other users is %.2fx the empty DB's, above the %.2fx limit"
                        % (figures["search_p50_ratio"], args.max_search_ratio))
    for why in failures:
        print("FAIL: %s" % why)
    if not failures:
        print("PASS: results identical; search p50 ratio %.2fx <= %.2fx"
              % (figures["search_p50_ratio"], args.max_search_ratio))
    return 1 if failures else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Build (or reuse) both databases, measure Search then Add on each, report; the exit status."""
    args = parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    tag = "u%d-m%d-t%d-s%d" % (args.other_users, args.messages_per_user, args.target_messages, args.seed)
    path_a = os.path.join(args.workdir, "A-%s.db" % tag)
    path_b = os.path.join(args.workdir, "B-%s.db" % tag)

    gen = TextGen(args.seed, args.vocabulary)
    adds = target_adds(gen, args)
    queries = make_queries(gen, adds, args.seed, args.queries)

    t0 = time.perf_counter()
    build_a(path_a, adds)
    print("[A] built in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    build = build_b(path_b, gen, args, adds)
    db, search = search_phase(path_a, path_b, queries, args)
    add = add_phase(path_a, path_b, os.path.join(args.workdir, "B-scratch.db"), gen, queries, args)

    search.pop("results")
    figures = {
        "command": command_line(),
        "machine": machine(),
        "params": vars(args),
        "top_k": args.top_k,
        "queries": len(queries),
        "build_b": build,
        "db": db,
        "search": search,
        "add": add,
        "search_p50_ratio": search["B"]["p50_ms"] / search["A"]["p50_ms"],
        "add_p50_ratio": {k: add[k]["B"]["p50_ms"] / add[k]["A"]["p50_ms"] for k in ("fresh_user", "target_user")},
    }
    print_report(figures, args)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
    return verdict(figures, args)


if __name__ == "__main__":
    sys.exit(main())
