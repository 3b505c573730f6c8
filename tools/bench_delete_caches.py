"""What other users' deletions cost a heavy user's searches (issue 22, item 5).

    python -m tools.bench_delete_caches [--messages 20000] [--deletes 40] [--flowmem PATH]

One heavy user of `--messages` messages (sessions of 40, Adds of 20, synthetic text of
a 5,000-word vocabulary) and `--deletes` other users with one one-message session each,
in a new database in a temporary directory. The heavy user's searches (top_k 10, three
of its own words each) are timed warm (one pass to warm up, then the p50 of one
timed pass), then each right after one other user's session is deleted: by the same
Store (as the server's DELETE does), and by another Store on the file (as
`flowmem delete-user` or `flowmem cluster move-user` beside a live server does: a Store in
another process reads the file the same way). Reported: the p50s and each ratio to
warm; issue 22's target is 1.5x at most.

`--flowmem PATH` imports flowmem from another checkout (e.g. `git worktree add
/tmp/base f53c956`), to measure the code before the change with the same tool.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

from tools.benchkit.checkout import use_flowmem

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SESSION_MESSAGES, ADD_MESSAGES, WORDS_PER_MESSAGE, VOCABULARY = 40, 20, 14, 5000


def words(rng: random.Random) -> List[str]:
    """A synthetic vocabulary, Zipf-ish: some words common, most rare."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(VOCABULARY)]


def text(rng: random.Random, vocabulary: List[str]) -> str:
    picks = [vocabulary[min(int(rng.paretovariate(1.1)) - 1, VOCABULARY - 1)] if rng.random() < 0.5
             else rng.choice(vocabulary) for _ in range(WORDS_PER_MESSAGE)]
    return "Kim: " + " ".join(picks)


def build(memory: Any, rng: random.Random, vocabulary: List[str], messages: int, others: int) -> List[str]:
    """Store the heavy user and the others; the heavy user's messages, for its queries."""
    contents = []
    for start in range(0, messages, ADD_MESSAGES):
        batch = [text(rng, vocabulary) for _ in range(min(ADD_MESSAGES, messages - start))]
        contents += batch
        memory.add({"request_id": "h%d" % start, "user_id": "heavy", "session_id": "s%d" % (start // SESSION_MESSAGES),
                    "messages": [{"role": "user", "content": c, "timestamp": 1683554160000 + start} for c in batch]})
    for i in range(others):
        memory.add({"request_id": "o%d" % i, "user_id": "other%d" % i, "session_id": "brief",
                    "messages": [{"role": "user", "content": text(rng, vocabulary)}]})
    return contents


def timed(memory: Any, query: str) -> float:
    t0 = time.perf_counter()
    memory.search({"query": query, "user_id": "heavy", "top_k": 10})
    return (time.perf_counter() - t0) * 1000


def after_each(deleter: Callable[[int], Any], memory: Any, queries: List[str], first: int, count: int) -> List[float]:
    """The heavy user's search right after each of `count` deletions (other users first..first+count-1)."""
    out = []
    for i in range(count):
        deleter(first + i)
        out.append(timed(memory, queries[i % len(queries)]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20000, help="the heavy user's messages")
    parser.add_argument("--deletes", type=int, default=40, help="deletions timed, by each of the two deleters")
    parser.add_argument("--flowmem", default=REPO_ROOT, help="the flowmem checkout to import (default: this one)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    use_flowmem(args.flowmem)  # before anything imports flowmem
    from flowmem.config import load
    from flowmem.memory import Memory

    workdir = tempfile.mkdtemp(prefix="flowmem-bench-delete-")
    try:
        rng = random.Random(args.seed)
        vocabulary = words(rng)
        config = load({"db": os.path.join(workdir, "bench.db"), "synchronous": "NORMAL"}, environ={})
        memory, beside = Memory(config), Memory(config)
        contents = build(memory, rng, vocabulary, args.messages, 2 * args.deletes)
        queries = [" ".join(rng.sample(c.split()[1:], 3)) for c in rng.sample(contents, min(200, len(contents)))]
        for q in queries:
            timed(memory, q)  # warm: every session the queries reach is in memory, and the postings
        warm = [timed(memory, q) for q in queries]
        same = after_each(lambda i: memory.delete_session("other%d" % i, "brief"), memory, queries, 0, args.deletes)
        other = after_each(lambda i: beside.delete_session("other%d" % i, "brief"), memory, queries,
                           args.deletes, args.deletes)
        memory.close()
        beside.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    p50 = {name: statistics.median(times) for name, times in
           (("warm", warm), ("after_delete_same_store", same), ("after_delete_other_store", other))}
    figures: Dict[str, Any] = {"flowmem": os.path.abspath(args.flowmem), "messages": args.messages,
                               "deletes": args.deletes, "p50_ms": {k: round(v, 2) for k, v in p50.items()},
                               "ratio_to_warm": {k: round(v / p50["warm"], 2) for k, v in p50.items() if k != "warm"}}
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
