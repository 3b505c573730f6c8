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
import statistics
import sys
from typing import Any, Callable, Dict, List

from tools.benchkit.synthetic_heavy import add_arguments, bench_database, build, queries, timed


def after_each(deleter: Callable[[int], Any], memory: Any, queries: List[str], first: int, count: int) -> List[float]:
    """The heavy user's search right after each of `count` deletions (other users first..first+count-1)."""
    out = []
    for i in range(count):
        deleter(first + i)
        out.append(timed(memory, queries[i % len(queries)]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, 20000)
    parser.add_argument("--deletes", type=int, default=40, help="deletions timed, by each of the two deleters")
    args = parser.parse_args()
    with bench_database(args, "flowmem-bench-delete-") as (config, rng, vocabulary):
        from flowmem.memory import Memory

        memory, beside = Memory(config), Memory(config)
        contents = build(memory, rng, vocabulary, args.messages, 2 * args.deletes)
        searches = queries(rng, contents, 200)
        for q in searches:
            timed(memory, q)  # warm: every session the queries reach is in memory, and the postings
        warm = [timed(memory, q) for q in searches]
        same = after_each(lambda i: memory.delete_session("other%d" % i, "brief"), memory, searches, 0, args.deletes)
        other = after_each(lambda i: beside.delete_session("other%d" % i, "brief"), memory, searches,
                           args.deletes, args.deletes)
        memory.close()
        beside.close()
    p50 = {name: statistics.median(times) for name, times in
           (("warm", warm), ("after_delete_same_store", same), ("after_delete_other_store", other))}
    figures: Dict[str, Any] = {"flowmem": os.path.abspath(args.flowmem), "messages": args.messages,
                               "deletes": args.deletes, "p50_ms": {k: round(v, 2) for k, v in p50.items()},
                               "ratio_to_warm": {k: round(v / p50["warm"], 2) for k, v in p50.items() if k != "warm"}}
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
