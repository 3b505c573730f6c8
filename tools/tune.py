#!/usr/bin/env python3
"""Choose flowmem's ranking weights by measurement on the LoCoMo development split.

    python tools/tune.py                     # coordinate ascent from the current defaults
    python tools/tune.py --show              # only score the current defaults
    python tools/tune.py --set weight_segment=0 --show

The dataset is indexed once; each question's candidates and signal scores are computed
once with flowmem's own search code (pipeline.candidates, pipeline.rankings); then every
trial re-fuses them (pipeline.rank) with other weights, which is the exact ranking the
server would produce for those settings. The objective is the mean of the four target
metrics in message-budget rank: Hit@1, Hit@10, Recall@100 and MRR over all questions.

Only the development split is used (`--data`); never tune on the holdout.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from flowmem import config as flowmem_config  # noqa: E402
from flowmem.memory import make_ranking  # noqa: E402
from flowmem.retrieval import pipeline  # noqa: E402
from flowmem.retrieval.query import analyze  # noqa: E402
from flowmem.retrieval.ranking import Ranking  # noqa: E402
from flowmem.storage.ids import message_id  # noqa: E402
from tools.evalkit import dataset as datasets, metrics, runner  # noqa: E402
from tools.evalkit.replay import InProcessClient, TurnMap  # noqa: E402

DEFAULT_DATA = os.path.join(REPO, "..", "shared", "data", "locomo", "locomo10-dev.json")
TARGETS = ("hit@1", "hit@10", "recall@100", "mrr")
GRID: Dict[str, Sequence[Any]] = {
    "rrf_k": (1, 2, 5, 10, 20, 40, 60, 100),
    "adjacency_top": (1, 2, 3, 5, 10, 20),
    "head_size": (5, 10, 20, 30),
    "state_update_window": (0, 5, 10, 20, 50),
    "message_share": (0.8, 0.85, 0.9, 0.95, 1.0),
}
WEIGHT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)


class Prepared(NamedTuple):
    qid: str
    category: str
    gold: List[str]
    query: Any
    pool: Any
    scored: Dict[str, Dict[Any, float]]
    turn_map: TurnMap

    def text_of(self, key: Any) -> str:
        """A pool message's verbatim text, from the dataset (what the database stores)."""
        tag = self.pool.messages[key].tag
        return self.turn_map.text[self.turn_map.by_message_id[message_id(tag, key[1])]]


def prepare(data: datasets.Dataset, config: flowmem_config.Config) -> List[Prepared]:
    """Index the dataset, then compute every question's pool and signal scores once."""
    client = InProcessClient(config)
    try:
        runner.evaluate(data, client, top_k=1)
        memory = client.memory
        out = []
        with memory.store.reading() as reader:
            for conversation in data.conversations:
                turn_map = TurnMap(conversation)
                user_key = reader.user_key(conversation.user_id)
                for q in conversation.questions:
                    query = analyze(q.question, q.options or (), memory._ranking.stem, memory._ranking.resolve_times)
                    pool = pipeline.candidates(reader, user_key, query, memory._ranking)
                    out.append(Prepared(q.qid, q.category, q.gold, query, pool, pipeline.rankings(query, pool), turn_map))
        return out
    finally:
        client.close()


def ranking_of(settings: Dict[str, Any]) -> Ranking:
    return make_ranking(flowmem_config.load(dict(settings, db="unused"), environ={}))


def score(prepared: Sequence[Prepared], settings: Dict[str, Any], top_k: int = 100) -> Dict[str, float]:
    """Summary metrics of every question under `settings` (items are single messages, as search returns)."""
    ranking = ranking_of(settings)
    outcomes = []
    for p in prepared:
        order, fused, _ = pipeline.rank(p.pool, p.scored, ranking)
        order, fused, _ = pipeline.update_states(p.query, p.pool, order, fused, p.text_of, ranking)
        items = []
        for pick in pipeline.picks(p.pool, order, fused, ranking, top_k)[:top_k]:
            tag = p.pool.messages[pick.anchor].tag
            ids = [message_id(tag, seq) for seq in range(pick.first, pick.last + 1)]
            items.append({"id": ids[0], "source_message_ids": ids})
        outcomes.append(metrics.outcome(p.qid, p.category, p.gold, items, [p.turn_map.turns_of(i) for i in items],
                                        {}, 0.0))
    return metrics.summarize(outcomes)


def objective(summary: Dict[str, float]) -> float:
    return sum(summary[t] for t in TARGETS) / len(TARGETS)


def describe(summary: Dict[str, float]) -> str:
    return "objective %.4f  " % objective(summary) + "  ".join("%s %.3f" % (t, summary[t]) for t in TARGETS)


def ascend(prepared: Sequence[Prepared], settings: Dict[str, Any], rounds: int) -> Tuple[Dict[str, Any], Dict[str, float]]:
    """Coordinate ascent: change one setting at a time to its best grid value, until nothing improves."""
    best = score(prepared, settings)
    names = sorted(n for n in flowmem_config.field_names() if "weight_" in n) + sorted(GRID)
    for round_number in range(1, rounds + 1):
        improved = False
        for name in names:
            for value in GRID.get(name, WEIGHT_GRID):
                if settings.get(name) == value:
                    continue
                trial = dict(settings, **{name: value})
                result = score(prepared, trial)
                if objective(result) > objective(best) + 1e-9:
                    settings, best, improved = trial, result, True
                    print("round %d  %s=%s  %s" % (round_number, name, value, describe(best)), flush=True)
        if not improved:
            break
    return settings, best


def main(argv: Sequence[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="LoCoMo-format file (development split only)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="start from this setting")
    parser.add_argument("--show", action="store_true", help="score the starting settings and stop")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    from tools.eval import parse_settings  # the same NAME=VALUE parsing as eval.py
    start = parse_settings(args.set)
    defaults = flowmem_config.Config()
    settings = {n: getattr(defaults, n) for n in flowmem_config.field_names() if "weight_" in n or n in GRID}
    settings.update(start)
    with tempfile.TemporaryDirectory(prefix="flowmem-tune-") as tmp:
        # Everything else (view sizes, pool and feedback sizes) shapes the pools: fixed for a run.
        index_settings = {k: v for k, v in start.items() if not ("weight_" in k or k in GRID)}
        config = flowmem_config.load(dict(index_settings, db=os.path.join(tmp, "tune.db"), synchronous="OFF"),
                                     environ={})
        prepared = prepare(datasets.load_locomo(args.data), config)
    print("start  %s" % describe(score(prepared, settings)), flush=True)
    if args.show:
        return 0
    settings, best = ascend(prepared, settings, args.rounds)
    print("best   %s" % describe(best))
    print("settings: " + " ".join("--set %s=%s" % (k, v) for k, v in sorted(settings.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
