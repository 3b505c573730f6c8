#!/usr/bin/env python3
"""Learn the rerank's weights (flowmem/retrieval/data/rerank.json) by coordinate ascent, every dataset alike.

    python3 -m tools.learn_rerank [--locomo PATH] [--rounds 3] [--write] [--cv] [--only NAME ...]
                                  [--set NAME=VALUE ...] [--cases FILE]

Each dataset is indexed once in a temporary database and each question prepared once
(tools/evalkit/tuning.py, as search prepares it); the fused order (pipeline.fused_order)
and every candidate's evidence (retrieval/rerank.py features()) are computed once. A
trial of weights then only re-sorts each question's candidates: the objective is the
mean over datasets of their quality, the mean of found@1, found@3, found@10 and the
reciprocal rank of the first evidence message, so that LoCoMo's thousand questions weigh
no more than a life's twenty-five; a trial that takes
any dataset's MRR, found@1 or found@10 more than TOLERANCE below its fused figure is
refused, so no dataset pays for another's gain.

Datasets: LoCoMo development as written, as typed chat and with each user made to hold
`--haystack` messages (dataset.with_haystack), the two synthetic suites
(fixtures/), the natural lives of the tuning half (tools/evalkit/natural.py) at their
own size and among 10,000 filler messages. Never the natural report half.

Coordinate ascent: `fused` stays 1 (the scale); every other weight in turn takes the
best of GRID, for `--rounds` rounds, from the fused order alone (every other weight 0) or,
with `--from-shipped`, from the weights shipped now. `--cv` reports leave-one-dataset-out and
leave-one-life-out figures: the weights learned without a dataset (or a life) rank it.
`--write` writes the learned weights and the figures to the shipped file.

With an embedder (`--set embedder_url=URL --set embedder_model=NAME`, docs/embedder.md) every
dataset's messages get their vectors and every question is embedded as search embeds it; the
meaning features are then the embedder's cosines, and `--write` writes the weights search uses
when they are (data/rerank-model.json, the setting rerank_model_weights). `--cases FILE` keeps
the prepared questions, so that a second run (`--cv`, other rounds) skips the preparing.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from flowmem.retrieval import pipeline, rerank
from flowmem.retrieval.ranking import Ranking
from flowmem.storage.ids import message_id
from tools import data_paths
from tools.evalkit import dataset as datasets, natural, tuning
from tools.evalkit.chatstyle import chat_style
from tools.evalkit.settings import parse_settings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(REPO, "flowmem", "retrieval", "data", "rerank.json")
SHIPPED_MODEL = os.path.join(REPO, "flowmem", "retrieval", "data", "rerank-model.json")  # rerank.MODEL_DATA
GRID = (-4.0, -2.0, -1.0, -0.5, -0.25, -0.1, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
FIXED = "fused"
TOLERANCE = 0.002  # how far below its fused figure a dataset's GUARDED figures may fall in a trial
GUARDED = ("mrr", "hit@1", "hit@10")


class Case(NamedTuple):
    """One question as the ascent sees it: its candidates' evidence, which are evidence, and the rank past them."""

    dataset: str
    life: str  # the natural life or LoCoMo conversation it asks about: a fold of the cross-validation ("" none)
    vectors: List[Tuple[float, ...]]  # per candidate, in fused order position
    gold: List[int]  # indexes into vectors of the evidence messages among the candidates
    beyond: Optional[int]  # the best rank of an evidence message outside the candidates (fixed), None if none


def datasets_to_learn(locomo: str, haystack: int) -> Dict[str, Callable[[], datasets.Dataset]]:
    """The tuning datasets by name (module docstring), each loaded when called."""
    def natural_tune() -> datasets.Dataset:
        return natural.load("tune")[0]

    return {"locomo": lambda: data_paths.load_locomo(locomo),
            "locomo-chat": lambda: chat_style(data_paths.load_locomo(locomo)),
            "locomo-10k": lambda: datasets.with_haystack(data_paths.load_locomo(locomo), haystack),
            "synthetic": lambda: datasets.load_json(os.path.join(REPO, "fixtures", "synthetic-small.json")),
            "synthetic-chat": lambda: datasets.load_json(os.path.join(REPO, "fixtures", "synthetic-chat.json")),
            "natural": natural_tune, "natural-10k": lambda: natural.with_filler(natural_tune(), haystack)}


def cases_of(name: str, data: datasets.Dataset, ranking: Ranking,
             settings: Optional[Dict[str, Any]] = None) -> List[Case]:
    """Every answerable question of `data` as a Case, prepared in a fresh database with `settings`."""
    out = []
    for q in tuning.index_with(data, settings or {}):
        if q.prepared is None or not q.gold:
            continue
        prepared = q.prepared
        ordered = pipeline.fused_order(prepared, ranking)
        if pipeline.reranks(prepared, ranking):  # the features whichever weights: those learned here
            keys = rerank.candidates(ordered.order, prepared.pool, ranking.rerank_depth, ranking.rerank_nearest)
            evidence = rerank.features(prepared.query, prepared.pool, ordered.order, ordered.scores, keys,
                                       prepared.pool.asked)
        else:  # kept in fused order by search: the fused rank alone, whatever the weights
            keys = list(ordered.order[:ranking.rerank_depth])
            evidence = {k: (1.0 / (i + 1),) + (0.0,) * (len(rerank.FEATURES) - 1) for i, k in enumerate(keys)}
        parts = q.turn_map.parts  # a gold turn sent as several messages (chat style) is found in any of them
        gold = set(q.gold) | {p for g in q.gold for p in parts.get(g, ())}

        def is_gold(key: Tuple[int, int], prepared: pipeline.Prepared = prepared, q: Any = q,
                    gold: Set[str] = gold) -> bool:
            m = prepared.pool.messages[key]
            return q.turn_map.by_message_id.get(message_id(m.tag, key[1])) in gold

        inside = [i for i, key in enumerate(keys) if is_gold(key)]
        chosen = set(keys)
        rest = [key for key in ordered.order if key not in chosen]
        beyond = next((len(keys) + i + 1 for i, key in enumerate(rest) if is_gold(key)), None)
        out.append(Case(name, q.qid.split("/")[0] if name.startswith(("natural", "locomo")) else "",
                        [evidence[k] for k in keys], inside, beyond))
    return out


def scores_of(case: Case, weights: Sequence[float]) -> List[float]:
    return [rerank.score(vector, weights) for vector in case.vectors]


def first_rank(case: Case, scores: Sequence[float]) -> Optional[int]:
    """The rank of the case's first evidence message once its candidates are sorted by `scores`."""
    if not case.gold:
        return case.beyond
    best = min(case.gold, key=lambda i: (-scores[i], i))
    top = scores[best]
    return 1 + sum(1 for i, s in enumerate(scores) if s > top or (s == top and i < best))


def summary(cases: Sequence[Case], weights: Sequence[float]) -> Dict[str, float]:
    return summary_of(cases, [scores_of(c, weights) for c in cases])


def summary_of(cases: Sequence[Case], scores: Sequence[Sequence[float]]) -> Dict[str, float]:
    """found@1/3/10, MRR and their mean (`quality`, what the ascent maximises) of cases scored so."""
    ranks = [first_rank(c, s) for c, s in zip(cases, scores)]
    n = len(ranks) or 1
    out = {"n": len(ranks), "mrr": sum(1.0 / r for r in ranks if r) / n}
    for k in (1, 3, 10):
        out["hit@%d" % k] = sum(1 for r in ranks if r and r <= k) / n
    out["quality"] = (out["mrr"] + out["hit@1"] + out["hit@3"] + out["hit@10"]) / 4
    return out


def objective(groups: Dict[str, List[Case]], scores: Dict[str, List[List[float]]],
              floors: Optional[Dict[str, Dict[str, float]]] = None) -> float:
    """Mean over the groups (datasets) of their quality; -1 when a group falls below a floor of its own."""
    summaries = {name: summary_of(cases, scores[name]) for name, cases in groups.items()}
    for name, floor in (floors or {}).items():
        if name in summaries and any(summaries[name][m] < value for m, value in floor.items()):
            return -1.0
    return sum(s["quality"] for s in summaries.values()) / len(groups)


def fused_weights() -> List[float]:
    return [1.0 if name == FIXED else 0.0 for name in rerank.FEATURES]


def floors_of(groups: Dict[str, List[Case]]) -> Dict[str, Dict[str, float]]:
    """Each group's GUARDED figures in fused order less TOLERANCE: no dataset may pay for another's gain."""
    out = {}
    for name, cases in groups.items():
        fused = summary(cases, fused_weights())
        out[name] = {m: fused[m] - TOLERANCE for m in GUARDED}
    return out


def ascend(groups: Dict[str, List[Case]], rounds: int, start: Optional[Sequence[float]] = None,
           log: bool = False) -> List[float]:
    """Coordinate ascent from `start` (the fused order alone by default): each weight in turn the best of GRID.

    For weight i, every case's scores without it are made once; a trial adds value x feature i.
    """
    weights = list(start or fused_weights())
    floors = floors_of(groups)
    best = objective(groups, {n: [scores_of(c, weights) for c in cases] for n, cases in groups.items()}, floors)
    for round_ in range(rounds):
        changed = False
        for i, name in enumerate(rerank.FEATURES):
            if name == FIXED:
                continue
            without = weights[:i] + [0.0] + weights[i + 1:]
            base = {n: [scores_of(c, without) for c in cases] for n, cases in groups.items()}
            for value in GRID:
                if value == weights[i]:
                    continue
                trial = {n: [[b + value * v[i] for b, v in zip(bs, c.vectors)] for bs, c in zip(base[n], cases)]
                         for n, cases in groups.items()}
                got = objective(groups, trial, floors)
                if got > best + 1e-9:
                    best, weights, changed = got, weights[:i] + [value] + weights[i + 1:], True
            if log:
                print("round %d %-22s %6.2f  objective %.4f" % (round_ + 1, name, weights[i], best), file=sys.stderr)
        if not changed:
            break
    return weights


def cross_validate(groups: Dict[str, List[Case]], rounds: int,
                   folds: str = "both") -> Dict[str, Dict[str, Dict[str, float]]]:
    """Leave one dataset out, then one natural life or LoCoMo conversation out (in every dataset that holds
    it: written, typed, among the haystack): the held-out figures, fused order beside learned."""
    fused = fused_weights()
    out: Dict[str, Dict[str, Dict[str, float]]] = {}
    for name in (groups if folds in ("datasets", "both") else ()):
        weights = ascend({n: c for n, c in groups.items() if n != name}, rounds)
        out["dataset " + name] = {"fused": summary(groups[name], fused), "learned": summary(groups[name], weights)}
    everything = [c for cases in groups.values() for c in cases]
    held_out: Dict[str, List[float]] = {}  # life -> the weights learned without it
    for life in sorted(set(c.life for c in everything if c.life)) if folds in ("lives", "both") else ():
        train = {n: [c for c in cases if c.life != life] for n, cases in groups.items()}
        weights = held_out[life] = ascend({n: c for n, c in train.items() if c}, rounds)
        held = [c for c in everything if c.life == life]
        out["life " + life] = {"fused": summary(held, fused), "learned": summary(held, weights)}
    for name, cases in groups.items():  # each dataset's questions, each ranked by the weights learned without its life
        if cases and all(c.life in held_out for c in cases):
            out["lives out " + name] = {"fused": summary(cases, fused), "learned": summary_of(
                cases, [scores_of(c, held_out[c.life]) for c in cases])}
    return out


def prepared_groups(args: argparse.Namespace, ranking: Ranking, settings: Dict[str, Any]) -> Dict[str, List[Case]]:
    """Every dataset's Cases (--only's), read from --cases when it exists, else prepared (and saved there)."""
    if args.cases and os.path.exists(args.cases):
        with open(args.cases, encoding="utf-8") as f:
            saved = json.load(f)
        return {name: [Case(*c) for c in cases] for name, cases in saved.items()
                if not args.only or name in args.only}
    groups: Dict[str, List[Case]] = {}
    for name, load in datasets_to_learn(args.locomo, args.haystack).items():
        if args.only and name not in args.only:
            continue
        groups[name] = cases_of(name, load(), ranking, settings)
        print("%s: %d questions prepared" % (name, len(groups[name])), file=sys.stderr)
    if args.cases:
        with open(args.cases, "w", encoding="utf-8") as f:
            json.dump(groups, f)
    return groups


def _figures(summary: Dict[str, float]) -> str:
    return "hit@1 %.3f hit@3 %.3f hit@10 %.3f mrr %.3f" % tuple(summary[m] for m in ("hit@1", "hit@3", "hit@10", "mrr"))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", default=data_paths.DEFAULT_LOCOMO, help="LoCoMo development file")
    parser.add_argument("--haystack", type=int, default=10000, help="messages a user holds in the heavy datasets")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="learn on these datasets only")
    parser.add_argument("--cv", nargs="?", const="both", choices=("datasets", "lives", "both"),
                        help="cross-validated figures: leave one dataset out, one life (or LoCoMo conversation) out")
    parser.add_argument("--from-shipped", action="store_true", help="start the ascent from the shipped weights")
    parser.add_argument("--cases", help="a file keeping the prepared questions: read if it exists, else written")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a flowmem setting for the datasets' databases and ranking, e.g. embedder_url=URL")
    parser.add_argument("--write", action="store_true",
                        help="write the weights to %s (with an embedder, %s)" % (SHIPPED, SHIPPED_MODEL))
    args = parser.parse_args(argv)
    settings = parse_settings(args.set)
    ranking = tuning.ranking_of(settings)
    by_model = bool(settings.get("embedder_url")) and ranking.model_meaning
    groups = prepared_groups(args, ranking, settings)
    shipped = rerank.weights(rerank.MODEL_DATA if by_model else rerank.DATA)
    start = [shipped[name] for name in rerank.FEATURES] if args.from_shipped else None
    weights = ascend(groups, args.rounds, start, log=True)
    fused = fused_weights()
    figures = {name: {"fused": summary(cases, fused), "learned": summary(cases, weights)}
               for name, cases in groups.items()}
    for name, figure in figures.items():
        print("%-15s n=%4d  fused mrr %.3f hit@1 %.3f hit@10 %.3f  ->  learned mrr %.3f hit@1 %.3f hit@10 %.3f" % (
            name, figure["fused"]["n"], figure["fused"]["mrr"], figure["fused"]["hit@1"], figure["fused"]["hit@10"],
            figure["learned"]["mrr"], figure["learned"]["hit@1"], figure["learned"]["hit@10"]))
    print("weights: " + ", ".join("%s=%g" % kv for kv in zip(rerank.FEATURES, weights)))
    command = "python3 -m tools.learn_rerank --rounds %d%s%s%s --write" % (
        args.rounds, " --from-shipped" if args.from_shipped else "", " --cv " + args.cv if args.cv else "",
        "".join(" --set " + s for s in args.set))
    record: Dict[str, Any] = {"learned_by": command,
              "weights": dict(zip(rerank.FEATURES, weights)), "as_tuned": figures}
    if args.cv:
        record["cross_validated"] = cross_validate(groups, args.rounds, args.cv)
        for name, figure in record["cross_validated"].items():
            print("held out %-22s n=%4d  fused %s  ->  learned %s" % (
                name, figure["fused"]["n"], _figures(figure["fused"]), _figures(figure["learned"])))
    if args.write:
        with open(SHIPPED_MODEL if by_model else SHIPPED, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=1, sort_keys=True)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
