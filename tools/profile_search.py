#!/usr/bin/env python3
"""Where a heavy user's search spends its time: each stage's share, and the candidates each stage holds.

    python3 -m tools.profile_search data/locomo10-dev.json [--size 10000] [--questions 120] [--passes 3]

One user of `--size` messages (tools/benchkit/heavy_user.py, as tools/bench_locomo.py builds
it, here in a temporary database) is asked `--questions` development questions, once to warm
the caches, then `--passes` times. Every stage of the search is timed where the search itself
calls it: the functions are wrapped in place, in the modules that call them, so the searches
run are the served ones (the test compares their answers) and nothing of the pipeline is
restated here. Times are inclusive (a stage holds the ones indented under it), per question,
the fastest pass's; the candidates column is what the pool held after the stage, on average.
"""
from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from flowmem import memory as memory_module
from flowmem.config import load
from flowmem.memory import Memory
from flowmem.retrieval import candidates, context, pipeline, signals, strength
from tools import data_paths
from tools.benchkit.heavy_user import USER, corpus, questions

# (label, module or class, attribute, depth): the stages in the order a search runs them.
STAGES: List[Tuple[str, Any, str, int]] = [
    ("search", memory_module, "search", 0),
    ("prepare", pipeline, "prepare", 1),
    ("the question read", pipeline, "analyze", 2),
    ("its period", pipeline, "scoped", 2),
    ("names respelt", pipeline, "respelt_names", 2),
    ("pool", pipeline, "build", 2),
    ("messages holding a question word", candidates._Gathering, "add_word_matches", 3),
    ("related words, near spellings", candidates._Gathering, "add_bridged", 3),
    ("BM25 of the messages", candidates._Gathering, "score_messages", 3),
    ("feedback words", candidates._Gathering, "add_feedback", 3),
    ("the question's period", candidates._Gathering, "add_period", 3),
    ("nearest in meaning", candidates._Gathering, "add_nearest_in_meaning", 3),
    ("windows, segments, messages", candidates._Gathering, "pool", 3),
    ("context BM25", context, "scores", 4),
    ("pool messages read", candidates, "_messages", 4),
    ("signals", pipeline, "signal_scores", 2),
    ("final order", pipeline, "final_order", 1),
    ("fusion", pipeline, "fused_order", 2),
    ("learned rerank", pipeline, "rerank_head", 2),
    ("state updates", pipeline, "rerank_state_updates", 2),
    ("current state", pipeline, "rerank_current_state", 2),
    ("list spread", pipeline, "spread", 2),
    ("typed-chat turns", pipeline, "thin_turns", 2),
    ("meaning places", pipeline, "place_by_meaning", 2),
    ("items", pipeline, "items_of", 1),
    ("evidence grade", strength, "features", 1),
]
GATHERING = {"add_word_matches", "add_bridged", "add_feedback", "add_period", "add_nearest_in_meaning"}


class Timings:
    """Seconds per stage label and the pool's size after each gathering stage, for the current pass."""

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = {}
        self.found: Dict[str, int] = {}

    def wrap(self, label: str, owner: Any, name: str) -> Callable[[], None]:
        """Time `owner.name` under `label` until the returned function undoes it."""
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        timings = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timings.seconds[label] = timings.seconds.get(label, 0.0) + time.perf_counter() - started
                if name in GATHERING:
                    timings.found[label] = timings.found.get(label, 0) + len(args[0].found)

        setattr(owner, name, timed)
        return lambda: setattr(owner, name, original)


def signal_stages(timings: Timings) -> List[Callable[[], None]]:
    """Each signal of signals.SIGNALS timed apart, under "signals"."""
    held: Dict[str, Any] = signals.SIGNALS  # type: ignore[assignment]  # a dict, declared read-only
    originals = dict(held)
    for signal_name, function in originals.items():
        label = "signal " + signal_name

        def timed(query: Any, pool: Any, _f: Callable[..., Any] = function, _label: str = label) -> Any:
            started = time.perf_counter()
            try:
                return _f(query, pool)
            finally:
                timings.seconds[_label] = timings.seconds.get(_label, 0.0) + time.perf_counter() - started

        held[signal_name] = timed
    return [lambda: held.update(originals)]


def profiled(memory: Memory, asked: Sequence[str], passes: int) -> Tuple[Dict[str, float], Dict[str, float],
                                                                          List[Dict[str, Any]]]:
    """(ms per question by stage, the fastest pass's; candidates after each gathering stage; the answers)."""
    timings = Timings()
    undo = [timings.wrap(label, owner, name) for label, owner, name, _ in STAGES] + signal_stages(timings)
    answers: List[Dict[str, Any]] = []
    best: Optional[Dict[str, float]] = None
    found: Dict[str, int] = {}
    try:
        for _ in range(passes):
            timings.seconds, timings.found = {}, {}
            gc.collect()
            answers = [memory.search({"user_id": USER, "query": q, "top_k": 100}) for q in asked]
            if best is None or timings.seconds["search"] < best["search"]:
                best = dict(timings.seconds)
                found = dict(timings.found)
    finally:
        for restore in reversed(undo):
            restore()
    assert best is not None
    return ({k: v * 1000.0 / len(asked) for k, v in best.items()}, {k: v / len(asked) for k, v in found.items()},
            answers)


def table(ms: Dict[str, float], found: Dict[str, float]) -> str:
    total = ms["search"]
    lines = ["| stage | ms per question | share of search | candidates after |", "|---|---:|---:|---:|"]
    for label, _, _, depth in STAGES:
        if label in ms:
            lines.append("| %s%s | %.2f | %.0f%% | %s |" % ("&nbsp;&nbsp;" * depth, label, ms[label],
                                                          100.0 * ms[label] / total,
                                                          "%.0f" % found[label] if label in found else ""))
        if label == "signals":
            for name in sorted(k for k in ms if k.startswith("signal ")):
                lines.append("| %s%s | %.2f | %.0f%% | |" % ("&nbsp;&nbsp;" * 3, name, ms[name],
                                                            100.0 * ms[name] / total))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="LoCoMo-format file (the development split)")
    parser.add_argument("--size", type=int, default=10_000, help="messages of the user")
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    data = data_paths.load_locomo(args.data)
    with tempfile.TemporaryDirectory(prefix="flowmem-profile-") as tmp:
        memory = Memory(load({"db": os.path.join(tmp, "profile.db"), "synchronous": "OFF"}, environ={}))
        try:
            for body in corpus(data, args.size):
                memory.add(body)
            asked = questions(data, args.questions, args.seed)
            for q in asked:  # warm: the session, postings and vector caches
                memory.search({"user_id": USER, "query": q, "top_k": 100})
            ms, found, _ = profiled(memory, asked, args.passes)
        finally:
            memory.close()
    print("%d questions, one user of %d messages, in-process, top_k 100, fastest of %d passes:\n"
          % (len(asked), args.size, args.passes))
    print(table(ms, found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
