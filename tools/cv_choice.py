#!/usr/bin/env python3
"""Which of several configurations to ship, cross-validated: leave one conversation out.

    python3 -m tools.cv_choice NAME=RUN.jsonl NAME=RUN.jsonl ... [--metrics hit@1,hit@10,recall@100]

Each RUN.jsonl is `python3 -m tools.eval locomo ... --out RUN.jsonl` of one configuration, all
over the same questions. For each conversation held out (a question's qid is
"conversation/q..."), the configuration with the best mean of `--metrics` over the other
conversations' questions is chosen, and scored on the held-out one; the table gives each
fold's choice and the held-out figures, and the pooled figures of the choices beside every
configuration's own. A configuration compared on every conversation is tuned on them; the
pooled row is what choosing among them is worth on conversations the choice never saw.
"""
from __future__ import annotations

import argparse
import json
from typing import Dict, List, Optional, Sequence


def load(path: str) -> Dict[str, Dict[str, float]]:
    """qid -> metrics of one run's --out file."""
    with open(path, encoding="utf-8") as f:
        return {row["qid"]: row["metrics"] for row in map(json.loads, f) if row.get("metrics")}


def mean(rows: Sequence[Dict[str, float]], metric: str) -> float:
    return sum(r[metric] for r in rows) / len(rows) if rows else 0.0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="NAME=RUN.jsonl")
    parser.add_argument("--metrics", default="hit@1,hit@10,recall@100")
    args = parser.parse_args(argv)
    metrics = args.metrics.split(",")
    runs = {name: load(path) for name, path in (r.split("=", 1) for r in args.runs)}
    qids = sorted(set.intersection(*(set(r) for r in runs.values())))
    folds = sorted({q.split("/")[0] for q in qids})
    lines = ["| held out | n | chosen | " + " | ".join(metrics) + " |", "|---|---:|---|" + "---:|" * len(metrics)]
    chosen_rows: List[Dict[str, float]] = []
    for fold in folds:
        train = [q for q in qids if not q.startswith(fold + "/")]
        test = [q for q in qids if q.startswith(fold + "/")]
        # The best mean over the training questions; equal ones by name, so the choice never depends on order.
        best = min(runs, key=lambda n: (-sum(mean([runs[n][q] for q in train], m) for m in metrics), n))
        held = [runs[best][q] for q in test]
        chosen_rows += held
        lines.append("| %s | %d | %s | %s |" % (fold, len(test), best, " | ".join("%.3f" % mean(held, m)
                                                                                for m in metrics)))
    lines += ["", "| configuration | n | " + " | ".join(metrics) + " |", "|---|---:|" + "---:|" * len(metrics),
              "| chosen per fold (held out) | %d | %s |" % (len(chosen_rows), " | ".join(
                  "%.3f" % mean(chosen_rows, m) for m in metrics))]
    for name in sorted(runs):
        rows = [runs[name][q] for q in qids]
        lines.append("| %s | %d | %s |" % (name, len(rows), " | ".join("%.3f" % mean(rows, m) for m in metrics)))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
