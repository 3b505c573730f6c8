"""What a heavy user's first search costs once the vectors of their latest Add have landed (issue 35).

    python -m tools.bench_embedder_refresh [--messages 10000] [--adds 10] [--dims 384] [--flowmem PATH]

One user of `--messages` messages (tools/benchkit/synthetic_heavy.py's synthetic text, Adds of 20)
in a new database in a temporary directory, with a stand-in embedder of `--dims` components
(tools/benchkit/hashed_vectors.py: the model's own time is not what is measured). Each of
`--adds` rounds adds 20 messages, waits until they have their vectors, and times the first
search after (top_k 10, three of the user's words), then a second one: the held vectors are
the same for it (the baseline, measured in the same run). Reported: both p50s and their ratio.

`--flowmem PATH` imports flowmem from another checkout (e.g. `git worktree add /tmp/base
4242ae7`), to measure the code before a change with the same tool.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from typing import Any, Dict, List

from tools.benchkit import hashed_vectors
from tools.benchkit.synthetic_heavy import ADD_MESSAGES, add_arguments, bench_database, build, queries, text, timed


def rounds(memory: Any, rng: random.Random, vocabulary: List[str], searches: List[str],
           count: int) -> Dict[str, list]:
    """Per round: an Add of ADD_MESSAGES, its vectors awaited, the first search after it and a second."""
    first, second = [], []
    for i in range(count):
        memory.add({"request_id": "late%d" % i, "user_id": "heavy", "session_id": "late%d" % i,
                    "messages": [{"role": "user", "content": text(rng, vocabulary)} for _ in range(ADD_MESSAGES)]})
        if not memory.embedding.drain(600):
            raise SystemExit("bench_embedder_refresh: the stand-in embedder did not finish")
        first.append(timed(memory, searches[i % len(searches)]))
        second.append(timed(memory, searches[i % len(searches)]))
    return {"first": first, "second": second}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, 10000)
    parser.add_argument("--adds", type=int, default=10, help="rounds: an Add, its vectors, two searches")
    parser.add_argument("--dims", type=int, default=384, help="the stand-in embedder's dimensions")
    args = parser.parse_args()
    with bench_database(args, "flowmem-bench-refresh-") as (config, rng, vocabulary):
        from flowmem.memory import Memory

        memory = Memory(config, embed=lambda texts: [hashed_vectors.vector(t, args.dims) for t in texts])
        contents = build(memory, rng, vocabulary, args.messages, 0)
        if memory.embedding is None or not memory.embedding.drain(3600):
            raise SystemExit("bench_embedder_refresh: the stand-in embedder did not finish")
        searches = queries(rng, contents, 50)
        for q in searches:
            timed(memory, q)  # warm: the user's vectors, postings and sessions held
        times = rounds(memory, rng, vocabulary, searches, args.adds)
        memory.close()
    p50 = {name: statistics.median(values) for name, values in times.items()}
    figures: Dict[str, Any] = {"flowmem": os.path.abspath(args.flowmem), "messages": args.messages,
                               "adds": args.adds, "dims": args.dims,
                               "p50_ms": {"first_search_after_vectors": round(p50["first"], 2),
                                          "second_search": round(p50["second"], 2)},
                               "ratio": round(p50["first"] / p50["second"], 2)}
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
