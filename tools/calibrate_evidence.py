#!/usr/bin/env python3
"""Calibrate a search's `evidence` grade (flowmem/retrieval/strength.py) on answerable and unanswerable questions.

    python3 -m tools.calibrate_evidence [--locomo PATH] [--haystack 10000] [--write] [--features F.json]

Every dataset is indexed once in a temporary database and each question prepared and
ranked as search ranks it (tools/evalkit/tuning.py, pipeline.final_order); its features
(strength.features()) are those search grades. Unanswerable are LoCoMo's adversarial
category, the synthetic suites' unanswerable group and the absent questions of the
natural lives and the change lives; every other question is answerable.

Halves, fixed before anything was fitted: the natural and change lives by their own
frozen splits (tools/evalkit/natural/split.json, tools/evalkit/changes/split.json), every
other dataset by the parity of the CRC-32 of the question's id. The weights (logistic
regression, every dataset weighing alike and within one the two kinds alike) and the two
thresholds are fitted on the tuning half only: `none_below` the highest at which at most
NONE_AT_MOST of the tuning half's answerable questions grade "none", `weak_below` the
lowest at which at least WEAK_AT_LEAST of its unanswerable ones grade "weak" or "none". The
report gives both halves; `--write` ships the model and the figures
(flowmem/retrieval/data/evidence.json). `--features F.json` saves (or, when F exists,
reads) every question's features, so a refit does not index again.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import zlib
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from flowmem.retrieval import pipeline, strength
from flowmem.retrieval.ranking import Ranking
from tools import data_paths
from tools.evalkit import dataset as datasets, natural, tuning
from tools.evalkit.chatstyle import chat_style

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(REPO, "flowmem", "retrieval", "data", "evidence.json")
UNANSWERABLE = ("adversarial", "unanswerable", natural.ABSENT)
NONE_AT_MOST = 0.04  # the bound is 5%: a margin for the report half
WEAK_AT_LEAST = 0.85  # the bound is 80%: a margin for the report half
STEPS, RATE, L2 = 3000, 0.5, 0.001


class Case(NamedTuple):
    dataset: str
    qid: str
    tuning: bool  # in the tuning half
    unanswerable: bool
    vector: Optional[List[float]]  # None: nothing matched in words (graded "none")


def _with_absent(data: datasets.Dataset, absent: Sequence[Dict[str, Any]]) -> datasets.Dataset:
    """`data` with its lives' absent questions asked too (no evidence)."""
    by_life: Dict[str, List[datasets.Question]] = {}
    for q in absent:
        by_life.setdefault(q["life"], []).append(datasets.Question("%s/%s" % (q["life"], q["id"]), q["question"],
                                                                   natural.ABSENT, []))
    return data._replace(conversations=[c._replace(questions=list(c.questions) + by_life.get(c.user_id, []))
                                        for c in data.conversations])


def _lives(directory: str, which: str, haystack: int = 0) -> datasets.Dataset:
    data, absent = natural.load(which, directory)
    data = _with_absent(data, absent)
    return natural.with_filler(data, haystack) if haystack else data


def datasets_to_grade(locomo: str, haystack: int) -> Dict[str, Any]:
    """Each dataset by name, loaded when called: (dataset, halves by life or None for the id's parity)."""
    out: Dict[str, Any] = {
        "locomo": lambda: data_paths.load_locomo(locomo),
        "locomo-chat": lambda: chat_style(data_paths.load_locomo(locomo)),
        "synthetic": lambda: datasets.load_json(os.path.join(REPO, "fixtures", "synthetic-small.json")),
        "synthetic-chat": lambda: datasets.load_json(os.path.join(REPO, "fixtures", "synthetic-chat.json")),
    }
    for kind, directory in (("natural", natural.HERE), ("changes", natural.CHANGES)):
        out[kind] = (lambda d=directory: _lives(d, "all"))
        out[kind + "-10k"] = (lambda d=directory: _lives(d, "all", haystack))
    return out


def _tuning_half(name: str, qid: str) -> bool:
    if name.startswith(("natural", "changes")):
        directory = natural.HERE if name.startswith("natural") else natural.CHANGES
        return qid.split("/")[0] in natural.split(directory)["tune"]
    return zlib.crc32(qid.encode("utf-8")) % 2 == 0


def cases_of(name: str, data: datasets.Dataset, ranking: Ranking) -> List[Case]:
    out = []
    for q in tuning.index_with(data, {}):
        vector = None
        prepared = q.prepared
        if prepared is not None and not prepared.pool.meaning_only and prepared.pool.messages:
            ordered = pipeline.final_order(prepared, ranking)
            vector = list(strength.features(prepared.query, prepared.pool, ordered.order)) if ordered.order else None
        out.append(Case(name, q.qid, _tuning_half(name, q.qid), q.category in UNANSWERABLE, vector))
    return out


def _weights(cases: Sequence[Case]) -> List[float]:
    """Each case's weight: every dataset alike, and within one the answerable and unanswerable alike."""
    counts: Dict[Tuple[str, bool], int] = {}
    for c in cases:
        counts[(c.dataset, c.unanswerable)] = counts.get((c.dataset, c.unanswerable), 0) + 1
    return [1.0 / counts[(c.dataset, c.unanswerable)] for c in cases]


def fit(cases: Sequence[Case]) -> Tuple[List[float], float]:
    """Logistic regression (answerable = 1) by full-batch gradient descent from zero: deterministic."""
    rows = [(c.vector, 0.0 if c.unanswerable else 1.0, w) for c, w in zip(cases, _weights(cases)) if c.vector]
    total = sum(w for _, _, w in rows)
    n = len(strength.FEATURES)
    weights, bias = [0.0] * n, 0.0
    for _ in range(STEPS):
        grad, grad_bias = [0.0] * n, 0.0
        for x, y, w in rows:
            z = bias + sum(a * b for a, b in zip(x, weights))
            p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
            err = (p - y) * w
            grad_bias += err
            for i in range(n):
                grad[i] += err * x[i]
        weights = [wt - RATE * (g / total + L2 * wt) for wt, g in zip(weights, grad)]
        bias -= RATE * grad_bias / total
    return [round(w, 4) for w in weights], round(bias, 4)


def _share(cases: Sequence[Case], model: strength.Model, grades: Sequence[str]) -> float:
    """The share of `cases` whose grade is among `grades` (every dataset weighing alike)."""
    by_set: Dict[str, List[bool]] = {}
    for c in cases:
        by_set.setdefault(c.dataset, []).append(strength.grade(c.vector, model) in grades)
    return sum(sum(v) / len(v) for v in by_set.values()) / len(by_set) if by_set else 0.0


def thresholds(cases: Sequence[Case], weights: Sequence[float], bias: float) -> Tuple[float, float]:
    """(none_below, weak_below) on `cases` (a tuning half), as the module docstring says."""
    answerable = [c for c in cases if not c.unanswerable]
    unanswerable = [c for c in cases if c.unanswerable]
    grid = [i / 1000 for i in range(1001)]

    def model(none_below: float, weak_below: float) -> strength.Model:
        return strength.Model(tuple(weights), bias, none_below, weak_below)

    none_below = max(t for t in grid if _share(answerable, model(t, t), (strength.NONE,)) <= NONE_AT_MOST)
    weak_below = next((t for t in grid if t >= none_below and
                       _share(unanswerable, model(none_below, t), (strength.WEAK, strength.NONE)) >= WEAK_AT_LEAST),
                      1.0)
    return none_below, weak_below


def figures(cases: Sequence[Case], model: strength.Model) -> Dict[str, Dict[str, float]]:
    """Per dataset and over all (datasets alike): the shares of each grade among answerable and unanswerable."""
    out: Dict[str, Dict[str, float]] = {}
    names = sorted({c.dataset for c in cases})
    for name in names + ["all"]:
        mine = [c for c in cases if name == "all" or c.dataset == name]
        row: Dict[str, float] = {}
        for label, unanswerable in (("answerable", False), ("unanswerable", True)):
            group = [c for c in mine if c.unanswerable == unanswerable]
            row[label] = len(group)
            for g in strength.GRADES:
                row["%s %s" % (label, g)] = round(_share(group, model, (g,)), 3) if group else float("nan")
        out[name] = row
    return out


def table(title: str, rows: Dict[str, Dict[str, float]]) -> str:
    head = "%-16s %6s %7s %7s %7s %6s %7s %7s %7s" % ("dataset", "ans", "strong", "weak", "none",
                                                       "unans", "strong", "weak", "none")
    lines = [title, head]
    for name, r in rows.items():
        lines.append("%-16s %6d %7.3f %7.3f %7.3f %6d %7.3f %7.3f %7.3f" % (
            name, r["answerable"], r["answerable strong"], r["answerable weak"], r["answerable none"],
            r["unanswerable"], r["unanswerable strong"], r["unanswerable weak"], r["unanswerable none"]))
    return "\n".join(lines)


def _load_cases(args: argparse.Namespace) -> List[Case]:
    if args.features and os.path.isfile(args.features):
        with open(args.features, encoding="utf-8") as f:
            return [Case(*row) for row in json.load(f)]
    ranking = tuning.ranking_of({})
    cases: List[Case] = []
    for name, load in datasets_to_grade(args.locomo, args.haystack).items():
        if args.only and name not in args.only:
            continue
        cases += cases_of(name, load(), ranking)
        print("%s: %d questions" % (name, sum(c.dataset == name for c in cases)), flush=True)
    if args.features:
        with open(args.features, "w", encoding="utf-8") as f:
            json.dump([list(c) for c in cases], f)
    return cases


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", default=data_paths.DEFAULT_LOCOMO)
    parser.add_argument("--haystack", type=int, default=10_000)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--features", help="save (or read, when it exists) every question's features here")
    parser.add_argument("--write", action="store_true", help="ship the fitted model and figures")
    args = parser.parse_args(argv)
    cases = _load_cases(args)
    tune = [c for c in cases if c.tuning]
    weights, bias = fit(tune)
    none_below, weak_below = thresholds(tune, weights, bias)
    model = strength.Model(tuple(weights), bias, none_below, weak_below)
    print("weights %s bias %s none_below %s weak_below %s" % (dict(zip(strength.FEATURES, weights)), bias,
                                                              none_below, weak_below))
    tuned, reported = figures(tune, model), figures([c for c in cases if not c.tuning], model)
    print(table("\ntuning half (fitted on)", tuned))
    print(table("\nreport half (held out)", reported))
    if args.write:
        shipped = {"weights": dict(zip(strength.FEATURES, weights)), "bias": bias, "none_below": none_below,
                   "weak_below": weak_below,
                   "command": "python3 -m tools.calibrate_evidence --locomo LOCOMO_DEV_JSON --write",
                   "tuning_half": tuned, "report_half": reported}
        with open(SHIPPED, "w", encoding="utf-8") as f:
            json.dump(shipped, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
