#!/usr/bin/env python3
"""Leave-one-conversation-out cross-validation of tools/evalkit/tuning.py's coordinate ascent.

    python -m tools.crossval [--data PATH] [--rounds 1] [--grid coarse|medium|full] [--set NAME=VALUE]
                             [--only NAME ...] [--style written|chat|both] [--json OUT]

The weights are chosen on the same LoCoMo development conversations that report the
figures, so the as-tuned figures flatter them. Here each conversation in turn is held
out: coordinate ascent (tuning.ascend, from the current defaults or `--set`) chooses the
settings on the other conversations only, and those settings rank the held-out
conversation's questions. The held-out outcomes of all folds together are the
cross-validated figures, printed overall and per category beside the defaults on the
same questions (the as-tuned figures), with a paired bootstrap interval of the change.

Cost: the dataset is indexed once and each question prepared once (tuning.index_with);
only ranking repeats. A trial's outcomes are kept per (conversation, settings), so the
folds, which all start from the same settings, share their common trials; a fold's
training objective is computed from its training conversations' outcomes only, in
question order, so it equals tuning.score() on those questions. `--grid coarse` tries
fewer values per setting and `--rounds` bounds the ascent.

`--style` (default both) asks each question of the conversation as written and as typed chat
(tools/evalkit/tuning.py styled()): a fold holds its conversation out in both styles, trains on the
others' in both, and the figures are reported per style.

`--only` replays a narrower procedure: with `--set NAME=0` for the weights a piece of
work added and `--only NAME` for each, every fold sweeps just those weights on its four
conversations, the way their defaults were chosen on all five, while the older
settings keep their defaults.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from tools import data_paths
from tools.evalkit import compare, dataset as datasets, metrics, report, tuning
from tools.evalkit.settings import parse_settings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COLUMNS = ("hit@1", "hit@10", "recall@10", "recall@100", "mrr")
COARSE_WEIGHT_GRID = (0.0, 0.05, 0.2, 0.5, 1.0, 2.0)
COARSE_GRID: Dict[str, Sequence[Any]] = {
    "rrf_k": (2, 10, 40, 100),
    "adjacency_top": (1, 5, 20),
    "head_size": (5, 20),
    "state_update_window": (0, 10, 50),
    "message_share": (0.8, 1.0),
    "meaning_closed_at": (0.0, 0.15, 0.3),
    "meaning_unseen": (0.4, 0.6, 0.8, 1.1),
    # none, every fifth from 15 to 100, and the default's head ones too
    "meaning_places": tuning.GRID["meaning_places"],
}
# The coarse grid's weights with the steps between 0.05 and 0.5 that the signals added last are
# tuned to (reply 0.12, related 0.06, period 0.3 on all five conversations): the coarse grid
# can only offer those folds 0.05 or 0.2.
MEDIUM_WEIGHT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0)
GRIDS = {"full": (tuning.GRID, tuning.WEIGHT_GRID), "coarse": (COARSE_GRID, COARSE_WEIGHT_GRID),
         "medium": (COARSE_GRID, MEDIUM_WEIGHT_GRID)}
Key = Tuple[Tuple[str, Any], ...]


class TrialCache:
    """Per-question target metrics of each conversation under each trial's settings, computed once."""

    def __init__(self, questions: Sequence[tuning.TuningQuestion], owners: Sequence[str]):
        self.by_conversation: Dict[str, List[tuning.TuningQuestion]] = {}
        for question, owner in zip(questions, owners):
            self.by_conversation.setdefault(owner, []).append(question)
        self.values: Dict[Tuple[str, Key], List[Tuple[float, ...]]] = {}

    def targets(self, conversation: str, settings: Dict[str, Any]) -> List[Tuple[float, ...]]:
        """tuning.TARGETS of every question of `conversation` ranked with `settings`."""
        key = (conversation, tuple(sorted(settings.items())))
        if key not in self.values:
            found = tuning.outcomes(self.by_conversation[conversation], settings)
            self.values[key] = [tuple(o.values()[t] for t in tuning.TARGETS) for o in found]
        return self.values[key]

    def summary(self, conversations: Sequence[str], settings: Dict[str, Any]) -> Dict[str, float]:
        """tuning.score()'s summary of the questions of `conversations` (in that order) with `settings`."""
        rows = [row for c in conversations for row in self.targets(c, settings)]
        out: Dict[str, float] = {"n": len(rows)}
        for index, name in enumerate(tuning.TARGETS):
            out[name] = sum(row[index] for row in rows) / len(rows) if rows else 0.0
        return out


class Fold(NamedTuple):
    held_out: str
    training: List[str]
    settings: Dict[str, Any]
    training_before: Dict[str, float]
    training_after: Dict[str, float]
    seconds: float


FoldTuner = Callable[[List[str], Dict[str, Any], str], Tuple[Dict[str, Any], Dict[str, float]]]


def ascent_tuner(cache: TrialCache, rounds: int, grid: str, only: Sequence[str] = ()) -> FoldTuner:
    """A tuner that runs tuning.ascend on the training conversations' outcomes only.

    `only`: the settings it may move.
    """
    values, weights = GRIDS[grid]

    def tune_fold(training: List[str], start: Dict[str, Any], label: str) -> Tuple[Dict[str, Any], Dict[str, float]]:
        return tuning.ascend([], dict(start), rounds, grid=values, weight_grid=weights,
                           scorer=lambda trial: cache.summary(training, trial), label=label, only=only)
    return tune_fold


def run_folds(conversations: Sequence[str], start: Dict[str, Any], tuner: FoldTuner,
              before: Callable[[List[str]], Dict[str, float]]) -> List[Fold]:
    """One fold per conversation: `tuner` sees every conversation but the held-out one, in every
    style (a chat-style conversation is its written one's id with tuning.CHAT_SUFFIX)."""
    folds = []
    for held_out in (c for c in conversations if not c.endswith(tuning.CHAT_SUFFIX)):
        training = [c for c in conversations if fold_of(c) != held_out]
        started = time.perf_counter()
        settings, after = tuner(training, start, "[%s] " % held_out)
        folds.append(Fold(held_out, training, settings, before(training), after, time.perf_counter() - started))
    return folds


def fold_of(owner: str) -> str:
    """The fold of a question's conversation: its LoCoMo conversation, whatever the style."""
    return owner[: -len(tuning.CHAT_SUFFIX)] if owner.endswith(tuning.CHAT_SUFFIX) else owner


def held_out_outcomes(questions: Sequence[tuning.TuningQuestion], owners: Sequence[str],
                      folds: Sequence[Fold]) -> List[metrics.Outcome]:
    """Each question ranked with the settings of the fold that held its conversation out, in
    `questions` order."""
    out: Dict[int, metrics.Outcome] = {}
    for fold in folds:
        mine = [i for i, owner in enumerate(owners) if fold_of(owner) == fold.held_out]
        out.update(zip(mine, tuning.outcomes([questions[i] for i in mine], fold.settings)))
    return [out[i] for i in range(len(questions))]


def changed(settings: Dict[str, Any], start: Dict[str, Any]) -> str:
    """The settings that differ from `start`, as --set flags (sorted)."""
    return " ".join("%s=%s" % (k, v) for k, v in sorted(settings.items()) if start.get(k) != v) or "(none)"


def fold_table(folds: Sequence[Fold], defaults: Sequence[metrics.Outcome],
               tuned: Sequence[metrics.Outcome], owners: Sequence[str], start: Dict[str, Any]) -> str:
    """Per fold: the held-out figures of the defaults and of the fold's settings, its training gain and cost."""
    lines = ["| held out | n | defaults: objective | hit@1 | hit@10 | fold-tuned: objective | hit@1 | hit@10 |"
             " training objective (defaults -> tuned) | seconds | settings changed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for fold in folds:
        a = metrics.summarize([o for o, w in zip(defaults, owners) if fold_of(w) == fold.held_out])
        b = metrics.summarize([o for o, w in zip(tuned, owners) if fold_of(w) == fold.held_out])
        lines.append("| %s | %d | %.4f | %.3f | %.3f | %.4f | %.3f | %.3f | %.4f -> %.4f | %.0f | %s |" % (
            fold.held_out, a["n"], tuning.objective(a), a["hit@1"], a["hit@10"], tuning.objective(b), b["hit@1"],
            b["hit@10"], tuning.objective(fold.training_before), tuning.objective(fold.training_after), fold.seconds,
            changed(fold.settings, start)))
    return "\n".join(lines)


def paired_table(defaults: Sequence[metrics.Outcome], tuned: Sequence[metrics.Outcome]) -> Tuple[str, List[Dict]]:
    """Cross-validated minus defaults, per metric, on the same questions, with a paired bootstrap 95% interval."""
    assert [o.qid for o in defaults] == [o.qid for o in tuned]
    lines = ["| metric | defaults (as tuned) | cross-validated | change | 95% CI |", "|---|---:|---:|---:|---|"]
    rows: List[Dict[str, Any]] = []
    for name in COLUMNS:
        a = [o.values()[name] for o in defaults]
        b = [o.values()[name] for o in tuned]
        diffs = [y - x for x, y in zip(a, b)]
        low, high = compare.bootstrap_ci(diffs)
        rows.append({"metric": name, "defaults": sum(a) / len(a), "crossval": sum(b) / len(b),
                     "diff": sum(diffs) / len(diffs), "ci_low": low, "ci_high": high})
        lines.append("| %s | %.3f | %.3f | %+.3f | [%+.3f, %+.3f] |" % (
            name, rows[-1]["defaults"], rows[-1]["crossval"], rows[-1]["diff"], low, high))
    return "\n".join(lines), rows


def with_objective(groups: Dict[str, Dict[str, float]]) -> Dict[str, Dict[str, float]]:
    return {name: dict(g, objective=tuning.objective(g)) if g.get("n") else g for name, g in groups.items()}


def style_report(style: str, defaults: Sequence[metrics.Outcome], tuned: Sequence[metrics.Outcome],
                 categories: Sequence[str]) -> Dict[str, Any]:
    """Print one style's as-tuned and cross-validated tables and their paired change; returns them."""
    as_tuned = with_objective(metrics.by_group(defaults, categories, ()))
    crossval = with_objective(metrics.by_group(tuned, categories, ()))
    paired, rows = paired_table(defaults, tuned)
    columns = ("objective",) + COLUMNS
    print("\n## %s\n" % style)
    print("As tuned (the starting settings on every conversation):\n\n" + report.table(as_tuned, columns))
    print("\nCross-validated (each conversation ranked with settings tuned without it):\n\n"
          + report.table(crossval, columns))
    print("\nCross-validated minus as tuned, paired by question:\n\n" + paired)
    return {"as_tuned": as_tuned, "crossval": crossval, "paired": rows}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=tuning.DEFAULT_DATA, help="LoCoMo-format file (development split only)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="start from this setting")
    parser.add_argument("--rounds", type=int, default=1, help="coordinate-ascent rounds per fold (default 1)")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="coarse", help="values tried per setting")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="let the folds move only this setting (repeat; default: every weight and grid setting)")
    parser.add_argument("--style", choices=("written", "chat", "both"), default="both",
                        help="the conversations as written, as typed chat, or both (default)")
    parser.add_argument("--json", help="write the per-fold settings and the summaries here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = data_paths.load_locomo(args.data)
    start = tuning.start_settings(parse_settings(args.set))
    unknown = [name for name in args.only if name not in start]
    if unknown:
        parser.error("--only: not a weight or grid setting: %s" % ", ".join(unknown))
    questions, owners = tuning.index_styles(data, args.style, parse_settings(args.set))
    conversations = list(dict.fromkeys(owners))
    print("indexed and prepared %d questions of %d conversations in %.0f s; %s grid, %d round(s)" % (
        len(questions), len(conversations), time.perf_counter() - started, args.grid, args.rounds), flush=True)
    cache = TrialCache(questions, owners)
    folds = run_folds(conversations, start, ascent_tuner(cache, args.rounds, args.grid, args.only),
                      lambda training: cache.summary(training, start))
    defaults, tuned = tuning.outcomes(questions, start), held_out_outcomes(questions, owners, folds)
    print("\nPer fold (held-out conversation's questions, every style):\n\n"
          + fold_table(folds, defaults, tuned, owners, start))
    summaries = {}
    for style in [s for s in tuning.STYLES if args.style in (s, "both")]:
        mine = [i for i, owner in enumerate(owners) if owner.endswith(tuning.CHAT_SUFFIX) == (style == "chat")]
        summaries[style] = style_report(style, [defaults[i] for i in mine], [tuned[i] for i in mine],
                                        datasets.category_order(data))
    print("\n%d (conversation, settings) rankings; wall time %.0f s"
          % (len(cache.values), time.perf_counter() - started))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"folds": [f._asdict() for f in folds], "styles": summaries, "grid": args.grid,
                       "rounds": args.rounds}, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
