"""What the session cache buys and costs: search latency and peak RSS per `cache_messages` bound.

    python -m tools.bench_cache [--messages 100000] [--bounds 0,20000,50000,200000]

One user's store of `--messages` messages (the bench kit's synthetic text and cached
databases, in `--workdir`) is searched with 200 of its own questions (top_k 100): one
warm-up pass, then three timed passes, the best pass's p50 and p95 reported. Each
bound runs in a fresh process, so its peak RSS (VmHWM) is its own.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time

from flowmem.config import load
from flowmem.memory import Memory
from tools.benchkit.corpus import TARGET_USER
from tools.benchkit.process import peak_rss_kib
from tools.benchkit.stores import StoreSpec, build_store, store_queries

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SEED, VOCABULARY, QUERIES = 7, 5000, 200


def store(messages: int, workdir: str) -> StoreSpec:
    spec = StoreSpec("%d messages" % messages, os.path.join(workdir, "user-t%d-s%d.db" % (messages, SEED)),
                           messages, 0, 0)
    build_store(spec, SEED, VOCABULARY, False)
    return spec


def measure(path: str, bound: int) -> dict:
    """In this process: p50/p95 of the best of three timed passes, and peak RSS."""
    conn = sqlite3.connect(path)
    queries = store_queries(conn, TARGET_USER, QUERIES, SEED, VOCABULARY)
    conn.close()
    memory = Memory(load({"db": path, "cache_messages": bound}, environ={}), read_only=True, create=False)

    def one_pass():
        times = []
        for q in queries:
            t0 = time.perf_counter()
            memory.search({"query": q, "user_id": TARGET_USER, "top_k": 100})
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        return times[len(times) // 2], times[int(len(times) * 0.95)]

    one_pass()
    passes = [one_pass() for _ in range(3)]
    memory.close()
    return {"bound": bound, "p50_ms": min(p[0] for p in passes), "p95_ms": min(p[1] for p in passes),
            "peak_rss_mib": (peak_rss_kib() or 0) / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--bounds", default="0,20000,50000,200000")
    parser.add_argument("--workdir", default=os.path.join("/tmp", "flowmem-bench"))
    parser.add_argument("--measure", nargs=2, metavar=("PATH", "BOUND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]))))
        return 0
    os.makedirs(args.workdir, exist_ok=True)
    spec = store(args.messages, args.workdir)
    print("| cache_messages | search p50 ms | p95 ms | peak RSS MiB |\n| ---: | ---: | ---: | ---: |")
    for bound in (int(b) for b in args.bounds.split(",")):
        # a fresh process per bound, run as this module from the clone's root
        out = subprocess.run([sys.executable, "-m", "tools.bench_cache", "--measure", spec.path, str(bound)],
                             check=True, capture_output=True, text=True, cwd=REPO_ROOT).stdout
        row = json.loads(out.strip().splitlines()[-1])
        print("| %d | %.1f | %.1f | %.0f |" % (row["bound"], row["p50_ms"], row["p95_ms"], row["peak_rss_mib"]),
              flush=True)
    print("\n%d messages, one user; command: `python -m tools.bench_cache --messages %d --bounds %s`"
          % (args.messages, args.messages, args.bounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
