"""Latency statistics, the same for every bench so that two reports compare.

Two percentiles, because published figures were measured with each: `percentile` interpolates
linearly between the closest ranks (the isolation, speed and soak benches); `nearest_rank`
takes a measured value (the LoCoMo bench and the evaluation's latencies).
"""
from __future__ import annotations

import gc
import math
import sqlite3
import time
from typing import Any, Dict, List, Sequence, Tuple


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100), linear between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(samples_ms: Sequence[float]) -> Dict[str, float]:
    """Count, p50/p95/p99 (linear), max and mean of latencies in ms; NaN where there are none."""
    return {
        "n": len(samples_ms),
        "p50_ms": percentile(samples_ms, 50),
        "p95_ms": percentile(samples_ms, 95),
        "p99_ms": percentile(samples_ms, 99),
        "max_ms": max(samples_ms) if samples_ms else float("nan"),
        "mean_ms": sum(samples_ms) / len(samples_ms) if samples_ms else float("nan"),
    }


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def timed_bare(conn: sqlite3.Connection, sql: str, expressions: Sequence[str],
               top_k: int) -> Tuple[List[float], List[List[Any]]]:
    """Run `sql` (bare FTS5: `... MATCH ? ... LIMIT ?`) once per expression: latencies in ms, and the rows.

    The baseline a bench sets flowmem's Search beside; collected garbage first, so that a
    collection owed by earlier work does not land in these timings.
    """
    times, rows = [], []
    gc.collect()
    for expression in expressions:
        t0 = time.perf_counter()
        hits = conn.execute(sql, (expression, top_k)).fetchall()
        times.append((time.perf_counter() - t0) * 1000.0)
        rows.append(hits)
    return times, rows


def rank_summary(times: Sequence[float]) -> Dict[str, float]:
    """p50/p95/p99 by nearest rank and the mean of latencies in ms (0.0 for none): the LoCoMo bench's figures."""
    return {"p50_ms": nearest_rank(times, 50), "p95_ms": nearest_rank(times, 95), "p99_ms": nearest_rank(times, 99),
            "mean_ms": sum(times) / len(times) if times else 0.0}
