"""What metadata costs an Add and a filtered Search (issue 25).

    python -m tools.bench_metadata [--adds 300] [--others 30] [--rounds 3]

One user of `--adds` Adds of 20 messages (sessions of 100 messages, synthetic text of a
3,000-word vocabulary, timestamps given), in a new database in a temporary directory.

- Add: the same Adds with no metadata and with metadata on every message (an Add-level
  `{"source": "chat"}` and a message-level `{"topic": "rare"}` on one message in ten),
  each into its own fresh database, alternating `--rounds` times; reported as Adds per
  second and the ratio of the two (this run's own baseline).
- Search: 60 questions of six of the user's words and 20 that match nothing (the
  fallback), top_k 100, timed warm: unfiltered, role-filtered, and filtered by a
  metadata value every message holds, one in ten holds and none holds; each p50 and its
  ratio to the unfiltered p50 of the same pass. Then `--others` users of the same size
  and metadata are added and the pass is timed again: a user's filtered search reads
  that user's rows of the metadata index only (storage/metadata_index.py).

`--flowmem PATH` imports flowmem from another checkout; with `--plain-adds` only the Adds
without metadata are timed, which a checkout from before metadata can take too (e.g.
`git worktree add /tmp/base 6e9f1c4`, then this tool with `--flowmem /tmp/base` and
without, alternately).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from typing import Any, Dict, List, Optional

from tools.benchkit.checkout import use_flowmem

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["w%d" % i for i in range(3000)]
T0 = 1683554160000
FILTERS: List[Any] = [("none", None), ("role", {"role": "user"}), ("metadata on every message",
                      {"metadata": {"source": "chat"}}), ("metadata on 1 in 10", {"metadata": {"topic": "rare"}}),
                      ("metadata on none", {"metadata": {"topic": "none"}})]


def adds(user: str, n: int, rng: random.Random, tagged: bool) -> List[Dict[str, Any]]:
    """`n` Adds of 20 messages for `user`, with metadata when `tagged`."""
    out = []
    for i in range(n):
        messages = []
        for j in range(20):
            text = "Ana: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25)))
            message: Dict[str, Any] = {"role": "user" if j % 2 == 0 else "assistant", "content": text,
                                       "timestamp": T0 + i * 100_000 + j}
            if tagged and (i * 20 + j) % 10 == 0:
                message["metadata"] = {"topic": "rare"}
            messages.append(message)
        body: Dict[str, Any] = {"request_id": "r%d" % i, "user_id": user, "session_id": "s%d" % (i // 5),
                                "messages": messages}
        if tagged:
            body["metadata"] = {"source": "chat"}
        out.append(body)
    return out


def open_memory(directory: str, name: str) -> Any:
    from flowmem.config import load
    from flowmem.memory import Memory
    return Memory(load({"db": os.path.join(directory, name), "synchronous": "NORMAL"}, environ={}))


def add_rate(directory: str, bodies: List[Dict[str, Any]], name: str) -> float:
    memory = open_memory(directory, name)
    started = time.perf_counter()
    for body in bodies:
        memory.add(body)
    elapsed = time.perf_counter() - started
    memory.close()
    return len(bodies) / elapsed


def p50(memory: Any, filters: Optional[Dict[str, Any]], questions: List[str]) -> float:
    times = []
    for question in questions:
        body: Dict[str, Any] = {"query": question, "user_id": "u", "top_k": 100}
        if filters:
            body["filters"] = filters
        started = time.perf_counter()
        memory.search(body)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def search_pass(memory: Any, questions: List[str], label: str) -> None:
    for _, filters in FILTERS:
        p50(memory, filters, questions[:10])  # warm
    figures = [(name, p50(memory, filters, questions)) for name, filters in FILTERS]
    base = figures[0][1]
    print("| %s | %s |" % (label, " | ".join("%.2f ms (%.2fx)" % (ms, ms / base) for _, ms in figures)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--others", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flowmem", default=REPO_ROOT)
    parser.add_argument("--plain-adds", action="store_true", help="time only the Adds without metadata")
    args = parser.parse_args()
    use_flowmem(args.flowmem)  # before anything imports flowmem
    rng = random.Random(1)
    directory = tempfile.mkdtemp(prefix="flowmem-bench-metadata-")
    try:
        plain, tagged = adds("u", args.adds, random.Random(1), False), adds("u", args.adds, random.Random(1), True)
        rates: Dict[str, List[float]] = {"without": [], "with": []}
        for r in range(args.rounds):
            rates["without"].append(add_rate(directory, plain, "plain%d.db" % r))
            if not args.plain_adds:
                rates["with"].append(add_rate(directory, tagged, "tagged%d.db" % r))
        if args.plain_adds:
            print("Adds/s without metadata %s, median %.0f" % (["%.0f" % x for x in rates["without"]],
                                                             statistics.median(rates["without"])))
            return
        ratios = [w / wo for w, wo in zip(rates["with"], rates["without"])]
        print("Adds/s without metadata %s, with %s; ratio per round %s, median %.2f"
              % (["%.0f" % x for x in rates["without"]], ["%.0f" % x for x in rates["with"]],
                 ["%.2f" % x for x in ratios], statistics.median(ratios)))
        memory = open_memory(directory, "tagged0.db")
        questions = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(60)]
        questions += ["zzz nothing matches %d" % i for i in range(20)]
        print("| users | %s |" % " | ".join(name for name, _ in FILTERS))
        print("|---|%s" % ("---|" * len(FILTERS)))
        search_pass(memory, questions, "one")
        for k in range(args.others):
            for body in adds("o%d" % k, args.adds, rng, True):
                memory.add(body)
        search_pass(memory, questions, "one among %d others" % args.others)
        memory.close()
    finally:
        shutil.rmtree(directory, True)


if __name__ == "__main__":
    main()
