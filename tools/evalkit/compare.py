"""Paired comparison of two runs, question by question, with bootstrap confidence intervals."""
from __future__ import annotations

import random
from typing import Any, Dict, List, Sequence, Tuple

from . import metrics


def paired(a: Sequence[Dict[str, Any]], b: Sequence[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """Lines of two per-question outputs matched by qid (questions in only one are dropped)."""
    by_qid = {line["qid"]: line for line in b}
    return [(line, by_qid[line["qid"]]) for line in a if line["qid"] in by_qid]


def bootstrap_ci(differences: Sequence[float], resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> Tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (fixed seed: reproducible)."""
    if not differences:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(differences[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    low = means[int((1 - level) / 2 * resamples)]
    high = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return low, high


def compare(a: Sequence[Dict[str, Any]], b: Sequence[Dict[str, Any]], names: Sequence[str] = metrics.ALL_METRICS,
            resamples: int = 2000) -> List[Dict[str, Any]]:
    """Per metric: mean of A, mean of B, mean difference B - A, its 95% interval, questions won and lost."""
    pairs = paired(a, b)
    rows = []
    for name in names:
        diffs = [y["metrics"][name] - x["metrics"][name] for x, y in pairs]
        n = len(diffs) or 1
        low, high = bootstrap_ci(diffs, resamples)
        rows.append({"metric": name, "n": len(diffs), "a": sum(x["metrics"][name] for x, _ in pairs) / n,
                     "b": sum(y["metrics"][name] for _, y in pairs) / n, "diff": sum(diffs) / n,
                     "ci_low": low, "ci_high": high,
                     "better": sum(1 for d in diffs if d > 0), "worse": sum(1 for d in diffs if d < 0)})
    return rows


def compare_table(rows: Sequence[Dict[str, Any]]) -> str:
    lines = ["| metric | n | A | B | B - A | 95% CI | B better | B worse |", "|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        lines.append("| %s | %d | %.3f | %.3f | %+.3f | [%+.3f, %+.3f] | %d | %d |" % (
            r["metric"], r["n"], r["a"], r["b"], r["diff"], r["ci_low"], r["ci_high"], r["better"], r["worse"]))
    return "\n".join(lines)
