"""What the meaning channel's coarse pass keeps: its nearest messages against an exact scan of all of them.

A user's latest `meaning_scan` messages are compared in meaning whole; older ones by their
first components, the nearest `meaning_rescore` rescored whole (flowmem/retrieval/meaning.py).
For each natural tuning life among `--messages` filler messages of its user, every question's
`meaning_pool` nearest messages are found twice in the same snapshot: with every message held
whole (the exact scan) and with the window at `--scan` and each `--rescore`; printed: the share
of the exact nearest the coarse pass also returns, and the channel's time per question
(in-process, warm, the exact scan's in the same run).

    python3 -m tools.bench_meaning_scan --messages 10000 --scan 2000 --rescore 0,50,200
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any, Dict, List, Sequence

from flowmem import config as flowmem_config
from flowmem.memory import Memory
from flowmem.retrieval import candidates, pipeline
from tools.evalkit import natural
from tools.evalkit.replay import add_bodies

EXACT = 10 ** 9  # a window larger than any memory: every message held whole


def nearest_lists(path: str, user: str, questions: Sequence[str], **settings: int) -> List[Dict[str, Any]]:
    """Per question, the channel's nearest doc ids and the seconds it took, under `settings` (a process's
    own: a Memory of its own, whose caches hold vectors as these settings do)."""
    memory = Memory(flowmem_config.load(dict({k: str(v) for k, v in settings.items()}, db=path), environ={}))
    found: List[Dict[str, Any]] = []
    real = candidates.meaning.nearness

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        out = real(*args, **kwargs)
        found.append({"nearest": list(out.nearest), "seconds": time.perf_counter() - started})
        return out

    candidates.meaning.nearness = timed  # type: ignore[assignment]
    try:
        with memory.store.reading() as reader:
            for question in questions:
                for _ in range(2):  # the first fills the vectors cache for these settings
                    before = len(found)
                    pipeline.prepare(reader, user, question, [], memory._ranking)
                    del found[before:-1]
    finally:
        candidates.meaning.nearness = real  # type: ignore[assignment]
        memory.close()
    return found


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000, help="messages per user, filler added")
    parser.add_argument("--scan", type=int, default=2_000, help="the window of whole vectors")
    parser.add_argument("--rescore", default="0,50,200", help="rescored counts, comma-separated")
    parser.add_argument("--lives", type=int, default=0, help="the first N tuning lives only (0: all)")
    args = parser.parse_args(list(argv) or None)
    dataset, _ = natural.load("tune")
    dataset = natural.with_filler(dataset._replace(conversations=dataset.conversations[:args.lives or None]),
                                  args.messages)
    rescores = [int(r) for r in args.rescore.split(",")]
    overlap: Dict[int, List[float]] = {r: [] for r in rescores}
    seconds: Dict[str, List[float]] = {"exact": []}
    seconds.update({"rescore %d" % r: [] for r in rescores})
    with tempfile.TemporaryDirectory() as workdir:
        for c in dataset.conversations:
            path = os.path.join(workdir, c.user_id + ".db")
            memory = Memory(flowmem_config.load({"db": path}, environ={}))
            for body in add_bodies(c):
                memory.add(body)
            memory.close()
            questions = [q.question for q in c.questions]
            exact = nearest_lists(path, c.user_id, questions, meaning_scan=EXACT)
            seconds["exact"] += [e["seconds"] for e in exact]
            for r in rescores:
                coarse = nearest_lists(path, c.user_id, questions, meaning_scan=args.scan, meaning_rescore=r)
                seconds["rescore %d" % r] += [x["seconds"] for x in coarse]
                overlap[r] += [len(set(e["nearest"]) & set(x["nearest"])) / len(e["nearest"])
                               for e, x in zip(exact, coarse) if e["nearest"]]
    print("%d lives, %d messages each, window %d" % (len(dataset.conversations), args.messages, args.scan))
    print("| | exact nearest also found | channel ms p50 |\n|---|---:|---:|")
    print("| exact | 1.000 | %.2f |" % (1000 * statistics.median(seconds["exact"])))
    for r in rescores:
        print("| rescore %d | %.3f | %.2f |" % (r, statistics.fmean(overlap[r]),
                                               1000 * statistics.median(seconds["rescore %d" % r])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
