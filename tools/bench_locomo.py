#!/usr/bin/env python3
"""Search speed on real conversation text: one heavy user, flowmem beside a bare FTS5 query.

    python -m tools.bench_locomo PATH/locomo10-dev.json [--sizes 1000,10000,100000] [--questions 200]
                                 [--seed 7] [--set NAME=VALUE] [--workdir DIR] [--json OUT] [--no-http]

`make bench`'s own corpus (tools/benchkit/corpus.py's generator) is kinder than real
conversation, where the speakers' names and everyday words hit a large share of all
messages. Here one user's memory is LoCoMo development text, as the platform sends it:
the conversations' sessions in order, "Speaker: text" messages with each session's
timestamp, in Adds of at most 20. Past the end of the file the sessions are added again
with new session ids and dates shifted by whole years, until the user holds N messages.
The questions are `--questions` development questions drawn with a fixed seed.

For each N, in fresh processes (so each phase's peak RSS is its own):

1. index: the Adds into a new database with the default config (synchronous FULL):
   seconds, messages per second, peak RSS. The bare baseline indexes the same
   contents in its own file (one FTS5 table, `porter unicode61` tokenizer).
2. search, warm (one untimed pass, then timed passes, alternating which engine goes
   first): flowmem's in-process Search at top_k 100 (the whole pipeline), and the
   bare baseline: the question's words less flowmem's question stopwords, ORed, in
   `bm25()` order, LIMIT 100. p50/p95/p99 of each and flowmem / bare at each.
3. HTTP (`--no-http` skips it): `python -m flowmem serve` on the same database, one
   keep-alive connection, the same questions at top_k 10 and 100; the overhead is the
   HTTP p50 less the in-process p50 measured in the same phase.

Databases are cached in `--workdir` (default: a directory under the system's temporary
directory) by their parameters and flowmem's index version; `--rebuild` forces.
Standard library only. bm25s or tantivy rows are not measured here.
"""
from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import sqlite3
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from flowmem.config import load
from flowmem.memory import Memory
from flowmem.storage.settings import INDEX_VERSION
from tools import data_paths
from tools.benchkit.heavy_user import USER, corpus, questions
from tools.benchkit.process import rss_figures, run_phase
from tools.benchkit.report import human, log, markdown, mib
from tools.benchkit.server import JSON_HEADERS, ServerProcess
from tools.benchkit.stats import rank_summary, timed_bare
from tools.evalkit import dataset as datasets
from tools.evalkit.bare import BARE_SQL, bare_expression

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- phases (each runs in a fresh process) ---------------------------------------------


def build(data_path: str, n: int, db: str, bare_db: str) -> Dict[str, Any]:
    """Phase: index `n` messages into flowmem's database and into the bare FTS5 table."""
    data = datasets.load_locomo(data_path)
    bodies = list(corpus(data, n))
    memory = Memory(load({"db": db}, environ={}))
    started = time.perf_counter()
    for body in bodies:
        memory.add(body)
    seconds = time.perf_counter() - started
    memory.close()
    conn = sqlite3.connect(bare_db, isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE bare USING fts5(content, tokenize='porter unicode61')")
    started = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO bare(content) VALUES (?)",
                     ((m["content"],) for body in bodies for m in body["messages"]))
    conn.execute("COMMIT")
    bare_seconds = time.perf_counter() - started
    conn.close()
    return {"messages": n, "adds": len(bodies), "index_s": seconds, "messages_per_s": n / seconds,
            "bare_index_s": bare_seconds, **rss_figures()}


def timed_flowmem(memory: Memory, asked: Sequence[str], top_k: int) -> List[float]:
    """One pass of in-process Searches: latencies in ms."""
    times = []
    gc.collect()  # no collection owed by earlier work lands in this pass
    for question in asked:
        t0 = time.perf_counter()
        memory.search({"user_id": USER, "query": question, "top_k": top_k})
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def search(db: str, bare_db: str, asked: Sequence[str], rounds: int, top_k: int,
           settings: Dict[str, Any]) -> Dict[str, Any]:
    """Phase: flowmem (with `settings`) and the bare baseline, warm, `rounds` timed passes each, alternating."""
    memory = Memory(load(dict(settings, db=db), environ={}))
    model_ms = embedder_times(memory, asked)
    conn = sqlite3.connect(bare_db, isolation_level=None)
    expressions = [bare_expression(q) for q in asked]
    kept = [i for i, e in enumerate(expressions) if e]  # a question of stopwords alone: no bare query
    try:
        timed_flowmem(memory, asked, top_k)
        timed_bare(conn, BARE_SQL, [expressions[i] for i in kept], top_k)[0]
        samples: Dict[str, List[float]] = {"flowmem": [], "bare": []}
        for r in range(rounds):
            steps = [("flowmem", lambda: timed_flowmem(memory, asked, top_k)),
                     ("bare", lambda: timed_bare(conn, BARE_SQL, [expressions[i] for i in kept], top_k)[0])]
            for name, run in steps if r % 2 == 0 else steps[::-1]:
                samples[name].extend(run())
    finally:
        conn.close()
        memory.close()
    flowmem, bare = rank_summary(samples["flowmem"]), rank_summary(samples["bare"])
    return {"questions": len(asked), "bare_questions": len(kept), "rounds": rounds, "flowmem": flowmem,
            "bare_fts5": bare, "ratio": {p: flowmem[p + "_ms"] / bare[p + "_ms"] for p in ("p50", "p95", "p99")},
            **({"embedder": rank_summary(model_ms)} if model_ms else {}), **rss_figures()}


def embedder_times(memory: Memory, asked: Sequence[str]) -> List[float]:
    """With an embedder set (--set embedder_url=...): every message's vector in before any search is timed
    (the database in --workdir gets them: give such runs a workdir of their own), then the embedder's own
    time for each question's vector, in ms, which every search then pays once more. [] without one."""
    if memory.embedding is None:
        return []
    if not memory.embedding.drain(3600):
        raise RuntimeError("the embedder failed: %s" % memory.embedding.last_error)
    times = []
    for question in asked:
        t0 = time.perf_counter()
        memory.embedding.embed([question])
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def http_overhead(db: str, asked: Sequence[str], workdir: str) -> Dict[str, Any]:
    """Phase: HTTP p50 against in-process p50 on the same database, at top_k 10 and 100."""
    out: Dict[str, Any] = {}
    server = ServerProcess(db, os.path.join(workdir, "serve.log"))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
        for top_k in (10, 100):
            bodies = [json.dumps({"user_id": USER, "query": q, "top_k": top_k}).encode() for q in asked]
            times = []
            for timed in (False, True):
                for body in bodies:
                    t0 = time.perf_counter()
                    conn.request("POST", "/search", body=body, headers=JSON_HEADERS)
                    response = conn.getresponse()
                    response.read()
                    if timed:
                        times.append((time.perf_counter() - t0) * 1000.0)
            out["http_top_k_%d" % top_k] = rank_summary(times)
        conn.close()
    finally:
        server.stop()
    memory = Memory(load({"db": db}, environ={}))
    try:
        for top_k in (10, 100):
            timed_flowmem(memory, asked, top_k)
            local = rank_summary(timed_flowmem(memory, asked, top_k))
            out["in_process_top_k_%d" % top_k] = local
            out["overhead_p50_ms_top_k_%d" % top_k] = out["http_top_k_%d" % top_k]["p50_ms"] - local["p50_ms"]
    finally:
        memory.close()
    return out


# -- the run and its report -------------------------------------------------------------


def cached_store(args: argparse.Namespace, n: int) -> Tuple[str, str, Optional[Dict[str, Any]]]:
    """The databases for `n` messages, built unless a build with the same parameters is cached."""
    stamp = {"data": os.path.abspath(args.data), "data_bytes": os.path.getsize(args.data), "messages": n,
             "index_version": INDEX_VERSION}
    base = os.path.join(args.workdir, "locomo-%d" % n)
    db, bare_db, sidecar = base + ".db", base + "-bare.db", base + ".json"
    if not args.rebuild and os.path.exists(sidecar):
        with open(sidecar, encoding="utf-8") as f:
            cached = json.load(f)
        if cached.get("stamp") == stamp:
            return db, bare_db, cached["build"]
    for path in (db, db + "-wal", db + "-shm", bare_db):
        if os.path.exists(path):
            os.remove(path)
    log("[build] %d messages" % n)
    built = run_phase(build, args.data, n, db, bare_db)
    with open(sidecar, "w", encoding="utf-8") as f:
        json.dump({"stamp": stamp, "build": built}, f, sort_keys=True)
    return db, bare_db, built


def report(sizes: Sequence[Dict[str, Any]]) -> str:
    """The Markdown tables of a run."""
    rows: List[List[Any]] = [["messages", "flowmem p50 ms", "p95", "p99", "bare FTS5 p50 ms", "p95", "p99",
                              "p50 ratio", "p95 ratio", "flowmem p95 / own p50"]]
    for s in sizes:
        f, b = s["search"]["flowmem"], s["search"]["bare_fts5"]
        rows.append([human(s["messages"]), "%.1f" % f["p50_ms"], "%.1f" % f["p95_ms"], "%.1f" % f["p99_ms"],
                     "%.2f" % b["p50_ms"], "%.2f" % b["p95_ms"], "%.2f" % b["p99_ms"],
                     "%.1fx" % s["search"]["ratio"]["p50"], "%.1fx" % s["search"]["ratio"]["p95"],
                     "%.1fx" % (f["p95_ms"] / f["p50_ms"])])
    out = ["Search, warm, in-process, top_k 100:", "", markdown(rows), ""]
    model = ["The embedder's own time for one question's vector, p50: %.1f ms (%s messages), within each search "
             "above." % (s["search"]["embedder"]["p50_ms"], human(s["messages"])) for s in sizes
             if "embedder" in s["search"]]
    out += model + [""] if model else []
    rows = [["messages", "flowmem index s", "messages/s", "bare index s", "peak RSS index MiB",
             "peak RSS search MiB"]]
    for s in sizes:
        b = s["build"]
        rows.append([human(s["messages"]), "%.1f" % b["index_s"], "%.0f" % b["messages_per_s"],
                     "%.2f" % b["bare_index_s"], mib(b["peak_rss_kib"]), mib(s["search"]["peak_rss_kib"])])
    out += ["Index (Adds of at most 20, synchronous FULL) and memory:", "", markdown(rows), ""]
    with_http = [s for s in sizes if s.get("http")]
    if with_http:
        rows = [["messages", "in-process p50 top_k 10", "HTTP p50", "overhead", "in-process p50 top_k 100",
                 "HTTP p50", "overhead"]]
        for s in with_http:
            h = s["http"]
            rows.append([human(s["messages"])] + [
                "%.1f" % v for k in (10, 100) for v in (h["in_process_top_k_%d" % k]["p50_ms"],
                                                       h["http_top_k_%d" % k]["p50_ms"],
                                                       h["overhead_p50_ms_top_k_%d" % k])])
        out += ["HTTP (one keep-alive connection) against in-process, ms:", "", markdown(rows), ""]
    return "\n".join(out)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="LoCoMo-format file (the development split)")
    parser.add_argument("--sizes", default="1000,10000,100000", help="messages of the user, comma-separated")
    parser.add_argument("--questions", type=int, default=200, help="development questions asked")
    parser.add_argument("--seed", type=int, default=7, help="seed of the questions' draw")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the questions per engine")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "flowmem-bench-locomo"))
    parser.add_argument("--rebuild", action="store_true", help="build the databases even if cached")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP overhead phase")
    parser.add_argument("--http-sizes", default="1000,10000", help="sizes whose HTTP overhead is measured")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a flowmem setting for the searches (ranking, results, pause_gc ...)")
    parser.add_argument("--json", help="write every figure here")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    asked = questions(data_paths.load_locomo(args.data), args.questions, args.seed)
    settings = dict(item.split("=", 1) for item in args.set)
    http_sizes = set() if args.no_http else {int(s) for s in args.http_sizes.split(",") if s}
    sizes = []
    for n in (int(s) for s in args.sizes.split(",")):
        db, bare_db, built = cached_store(args, n)
        log("[search] %d messages, %d questions, %d rounds" % (n, len(asked), args.rounds))
        figures: Dict[str, Any] = {"messages": n, "build": built,
                                   "search": run_phase(search, db, bare_db, asked, args.rounds, 100, settings)}
        if n in http_sizes:
            log("[http] %d messages" % n)
            figures["http"] = run_phase(http_overhead, db, asked, args.workdir)
        sizes.append(figures)
    print(report(sizes))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"sizes": sizes, "questions": asked, "seed": args.seed, "settings": settings}, f, indent=1,
                      sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
