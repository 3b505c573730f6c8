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

The synthetic text and the cached databases come from the bench kit (tools/benchkit/
corpus.py and stores.py, shared with tools/bench_isolation.py): every store here is one of
its "DB B" builds (the single-user stores are builds with no
other users), cached in `--workdir` beside a sidecar of the parameters that made it
and a hash of flowmem's write path, so reruns skip the builds; `--rebuild` forces.

Usage (from the clone's root; standard library only, Python 3.9+):

    python -m tools.bench                 # full run (cold caches: ~15 min on 2 cores)
    python -m tools.bench --quick         # small run (under 2 min): no 100k store,
                                          # 50k "others" database instead of 1M
    python -m tools.bench --json out/bench.json --workdir /tmp/flowmem-bench

A package: plan.py says what a run measures, add.py and search.py measure it, report.py
prints it, run.py is the command.
"""
