"""Search latency on one store, warm, beside a bare FTS5 bm25() query on the same file and the same terms."""
from __future__ import annotations

import json
import math
import sqlite3
import time
from typing import Any, Dict, List, Sequence, Tuple

from flowmem.config import load
from flowmem.memory import Memory
from flowmem.storage import fts
from flowmem.text.tokenize import query_terms
from tools.bench.plan import Plan, file_bytes
from tools.benchkit import stats
from tools.benchkit.corpus import TARGET_USER
from tools.benchkit.process import rss_figures
from tools.benchkit.report import log
from tools.benchkit.stats import summary
from tools.benchkit.stores import StoreSpec, store_queries, timed_searches


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
