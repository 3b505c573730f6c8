#!/usr/bin/env python3
"""The ablation ladder: every retrieval component switched off in turn (or on, if off by default).

    python -m tools.ablation [--locomo PATH] [--synthetic PATH] [--synthetic-chat PATH] [--json OUT]
                             [--resamples 2000] [--rows N]

Each row evaluates four suites with one setting changed from the defaults (--rows N:
only the first N rows), and prints the four target metrics in
message-budget rank, each with its change against the defaults and, for Hit@1, Hit@10
and MRR, the paired bootstrap 95% interval of that change (question by question,
tools/evalkit/compare.py, fixed seed), and for the synthetic suite the
knowledge-update check (new value ranked first and old value still in the first 20).

A column group per conversation style: LoCoMo as written and LoCoMo recast as typed
chat (tools/evalkit/chatstyle.py: bursts of short noisy messages, each with its own
time; gold stays the written turns, found where their first part lands), then the
written synthetic suite and the synthetic typed-chat set (fixtures/synthetic-chat.json).
Real conversations are typed chat, so a component must earn its place on both styles.

Rows come from the signal registry (retrieval/signals.py SIGNAL_NAMES): "without X"
for every signal with a weight (head `weight_X`, tail `tail_weight_X`), "with X" at a
small weight for one that is off by default, so a new signal gets its row by itself.

Every answer is what Memory.search returns. A row that changes only ranking settings
(the weights and tuning.GRID's names) ranks each question prepared once with the
defaults' index (tools/evalkit/tuning.py: pipeline.prepare, then pipeline.ranked_items, the
path search ends with; tests/test_tuning.py proves the orders equal); a row that
changes the index (stemming, speakers) or the pool (feedback, views) indexes afresh.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from flowmem import config as flowmem_config
from flowmem.retrieval.signals import SIGNAL_NAMES
from flowmem.storage.views import MESSAGE
from tools import data_paths
from tools.evalkit import compare, dataset as datasets, metrics, runner, tuning
from tools.evalkit.chatstyle import chat_style
from tools.evalkit.replay import InProcessClient

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGETS = ("hit@1", "hit@10", "recall@100", "mrr")
WITH_INTERVAL = ("hit@1", "hit@10", "mrr")  # changes shown with their paired bootstrap 95% interval
DEFAULT_LOCOMO = data_paths.DEFAULT_LOCOMO
DEFAULT_SYNTHETIC = os.path.join(REPO, "fixtures", "synthetic-small.json")
DEFAULT_SYNTHETIC_CHAT = os.path.join(REPO, "fixtures", "synthetic-chat.json")
# (key in the JSON rows, column title): one column group each, in this order.
SUITES = (("locomo", "LoCoMo"), ("locomo_chat", "LoCoMo chat"), ("synthetic", "synthetic"),
          ("synthetic_chat", "synthetic chat"))


def signal_rungs(defaults: flowmem_config.Config) -> List[Tuple[str, Dict[str, Any]]]:
    """One row per signal of the registry that has a weight: without it, or with it if off by default."""
    fields = set(flowmem_config.field_names())
    out: List[Tuple[str, Dict[str, Any]]] = []
    for signal in SIGNAL_NAMES:
        names = [n for n in ("weight_" + signal, "tail_weight_" + signal) if n in fields]
        if not names:
            continue
        if any(getattr(defaults, n) > 0 for n in names):
            out.append(("without %s" % signal, {n: 0.0 for n in names}))
        else:
            out.append(("with %s (off by default) at 0.1" % signal, {names[0]: 0.1}))
    return out


def rungs() -> List[Tuple[str, Dict[str, Any]]]:
    """(label, settings) for every component: switched off if on by default, else on at a small weight."""
    defaults = flowmem_config.Config()
    out: List[Tuple[str, Dict[str, Any]]] = [
        ("all defaults", {}),
        ("no stemming", {"stem": False}),
        ("speaker label indexed as text", {"split_speakers": False}),
    ]
    out += signal_rungs(defaults)
    out += [
        ("tail speaker weight as in head", {"tail_weight_speaker": defaults.weight_speaker}),
        ("no separate tail (one fusion)",
         {"tail_weight_feedback": 0.0, "tail_weight_speaker": defaults.weight_speaker}),
        ("no feedback retrieval", {"feedback_terms": 0}),
        ("no meaning channel (no candidates, signal or places)", {"meaning_pool": 0}),
        ("meaning signal and candidates, no places", {"meaning_places": ""}),
        ("messages only, no windows", {"view_kind": MESSAGE}),
        ("no state-update rerank", {"state_update_window": 0}),
    ]
    return out


def ranking_only(settings: Dict[str, Any]) -> bool:
    """Whether `settings` change only how prepared questions are ranked (as tools/evalkit/tuning.py's trials do)."""
    return all("weight_" in name or name in tuning.GRID for name in settings)


class Suite:
    """A dataset, and its questions prepared once with the defaults' index (tuning.index_with)."""

    def __init__(self, data: datasets.Dataset):
        self.data = data
        self.prepared = tuning.index_with(data, {})

    def run(self, settings: Dict[str, Any]) -> runner.Run:
        """Every question's outcome with `settings`: re-ranked if only ranking changes, else indexed afresh."""
        if ranking_only(settings):
            return runner.Run(self.data, tuning.outcomes(self.prepared, settings), {}, 0.0, 0)
        with tempfile.TemporaryDirectory(prefix="flowmem-ablation-") as tmp:
            config = flowmem_config.load(dict(settings, db=os.path.join(tmp, "a.db"), synchronous="OFF"), environ={})
            client = InProcessClient(config)
            try:
                return runner.evaluate(self.data, client)
            finally:
                client.close()


def paired_change(base: Sequence[metrics.Outcome], other: Sequence[metrics.Outcome], metric: str,
                  resamples: int) -> Tuple[float, float, float]:
    """Mean change of `metric` from `base` to `other`, paired by question, and its bootstrap 95% interval."""
    before = {o.qid: o.values()[metric] for o in base}
    diffs = [o.values()[metric] - before[o.qid] for o in other if o.qid in before]
    low, high = compare.bootstrap_ci(diffs, resamples)
    return (sum(diffs) / len(diffs) if diffs else 0.0), low, high


def row_figures(run: runner.Run, base: Optional[runner.Run], resamples: int) -> Dict[str, Any]:
    """The targets of `run`, and for a row other than the defaults their changes with intervals."""
    summary = metrics.summarize(run.outcomes)
    out: Dict[str, Any] = {"summary": summary, "changes": {}}
    if base is not None:
        for metric in TARGETS:
            if metric in WITH_INTERVAL:
                out["changes"][metric] = paired_change(base.outcomes, run.outcomes, metric, resamples)
            else:
                out["changes"][metric] = (summary[metric] - metrics.summarize(base.outcomes)[metric], None, None)
    return out


def cells(figures: Dict[str, Any]) -> str:
    parts = []
    for metric in TARGETS:
        value = figures["summary"][metric]
        if metric not in figures["changes"]:
            parts.append("%.3f" % value)
            continue
        diff, low, high = figures["changes"][metric]
        interval = "" if low is None else " [%+.3f, %+.3f]" % (low, high)
        parts.append("%.3f (%+.3f%s)" % (value, diff, interval))
    return " | ".join(parts)


def load_suites(args: argparse.Namespace) -> Dict[str, Suite]:
    """Every suite of SUITES, each prepared once with the defaults' index."""
    locomo = data_paths.load_locomo(args.locomo)
    data = {"locomo": locomo, "locomo_chat": chat_style(locomo), "synthetic": datasets.load_json(args.synthetic),
            "synthetic_chat": datasets.load_json(args.synthetic_chat)}
    return {name: Suite(data[name]) for name, _ in SUITES}


def header() -> List[str]:
    """The table's header and alignment lines: a column group per suite, then the updates check."""
    groups = ["%s hit@1 | hit@10 | R@100 | MRR" % title for _, title in SUITES]
    columns = ["component"] + groups + ["updates: new first and old in 20"]
    return ["| %s |" % " | ".join(columns), "|---|" + "---:|" * (len(TARGETS) * len(SUITES) + 1)]


def ladder_row(label: str, settings: Dict[str, Any], suites: Dict[str, Suite], base: Dict[str, runner.Run],
               resamples: int) -> Tuple[Dict[str, runner.Run], Dict[str, Any], str]:
    """One rung on every suite: its runs, its JSON row and its table line (changes against `base`)."""
    runs = {name: suite.run(settings) for name, suite in suites.items()}
    row: Dict[str, Any] = {name: row_figures(run, base.get(name), resamples) for name, run in runs.items()}
    row.update(label=label, settings=settings, updates=runner.update_order(runs["synthetic"], "knowledge-update"))
    line = "| %s | %s | %.3f |" % (label, " | ".join(cells(row[name]) for name, _ in SUITES),
                                   row["updates"].get("both", 0.0))
    return runs, row, line


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", default=DEFAULT_LOCOMO, help="LoCoMo development split (default: %(default)s)")
    parser.add_argument("--synthetic", default=DEFAULT_SYNTHETIC)
    parser.add_argument("--synthetic-chat", default=DEFAULT_SYNTHETIC_CHAT, help="synthetic typed-chat set")
    parser.add_argument("--json", help="write every row's figures here")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per interval")
    parser.add_argument("--rows", type=int, help="run only the first N rows, for a quick check (default: all)")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    suites = load_suites(args)
    rows = []
    base: Dict[str, runner.Run] = {}
    print("Changes against the defaults; [low, high]: paired bootstrap 95%% interval (%d resamples, seed 0)."
          % args.resamples)
    print()
    print("\n".join(header()))
    for label, settings in rungs()[:args.rows]:
        runs, row, line = ladder_row(label, settings, suites, base, args.resamples)
        base = base or runs
        print(line, flush=True)
        rows.append(row)
    print()
    print("wall time %.0f s" % (time.perf_counter() - started))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
