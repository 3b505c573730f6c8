"""What one user's growth, deletion or weight costs the searches of the caches (issue 31, items 3, 4, 7).

    python -m tools.bench_caches append [--messages 20000] [--turns 40]
    python -m tools.bench_caches delete [--messages 20000] [--sessions 10001] [--rounds 3]
    python -m tools.bench_caches heavy [--users 5] [--messages 6000] [--rounds 6]
    ... [--flowmem PATH] [--seed 7]

Each builds a new database in a temporary directory through the in-process API (English-
like text of tools/benchkit/corpus.py, Adds of 20) and times searches (top_k 10, three of
the user's own words each) in the case the item is about, and the same searches warm,
measured in the same run: reported are the p50s and the ratio to warm, the issue's target
being 1.5x at most. (`pass_p50_ms` is the p50 of a whole pass of 200 searches, warm.)

- append (item 3): one session of `--messages` messages; `--turns` times one message
  added to that session, a search right after it, and the same search again (warm).
- delete (item 4): a heavy user of `--messages` messages in sessions of 40; `--rounds`
  times each, a user of `--sessions` one-message sessions (more than the deletions log
  keeps, writer.DELETION_LOG_ROWS) is deleted, by the same Store and by another Store on
  the file, and the heavy user's next search is timed, and again (warm).
- heavy (item 7): `--users` users of `--messages` messages each, asked questions of two
  words with meaning vectors (so each search compares the user's vectors) and one other;
  warm is a loop over all but one of them, the case a loop over all of them (one more
  than the default vectors cache held before: four users of meaning_scan 5,000 vectors),
  three of each in turn, `--rounds` searches a user each time.
  Reported too: what one user's postings and vectors hold (the caches' estimate, bytes)
  and how many users' entries each cache held at the end.

`--flowmem PATH` imports flowmem from another checkout (e.g. `git archive 50a7fd2 | tar -x -C
/tmp/base`), to measure the code before the change with the same tool.
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
from tools.benchkit.corpus import TextGen

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADD_MESSAGES, SESSION_MESSAGES, QUERIES, T0 = 20, 40, 200, 1672531200000


class Bench:
    """One run's database, text and Memory opener."""

    def __init__(self, workdir: str, seed: int):
        from flowmem.config import load
        from flowmem.memory import Memory
        self.config = load({"db": os.path.join(workdir, "bench.db"), "synchronous": "OFF"}, environ={})
        self.open: Callable[[], Any] = lambda: Memory(self.config)
        self.rng, self.text = random.Random(seed), TextGen(seed, 5000)
        self.said: Dict[str, List[str]] = {}

    def message(self, user: str, i: int) -> Dict[str, Any]:
        content = self.text.sentence(self.rng, self.rng.randint(10, 20))
        self.said.setdefault(user, []).append(content)
        speaker = "Kim: " if i % 2 == 0 else "Amy: "
        return {"role": "user" if i % 2 == 0 else "assistant", "content": speaker + content,
                "timestamp": T0 + 60_000 * i}

    def fill(self, memory: Any, user: str, messages: int, session_messages: int) -> None:
        """Store `messages` of `user`, in sessions of `session_messages`, Adds of 20."""
        for start in range(0, messages, ADD_MESSAGES):
            memory.add({"request_id": "%s-%d" % (user, start), "user_id": user,
                        "session_id": "s%d" % (start // session_messages),
                        "messages": [self.message(user, i) for i in range(start, min(start + ADD_MESSAGES, messages))]})

    def queries(self, user: str, meaning: bool = False) -> List[str]:
        """Three of the user's own words, from 200 of its messages; with `meaning`, two of them words the
        meaning vectors hold (not stopwords), so that every search compares the user's vectors."""
        from flowmem.text.meaning import table, text_stems
        rows = table().rows
        out = []
        for said in self.rng.sample(self.said[user], len(self.said[user])):
            words = said.rstrip(".?!").split()
            meant = [w for w in words if any(s in rows for s in text_stems(w))]
            if meaning and len(meant) < 2:
                continue
            picked = self.rng.sample(meant, 2) + self.rng.sample(words, 1) if meaning else self.rng.sample(words, 3)
            out.append(" ".join(picked))
            if len(out) == QUERIES:
                break
        return out


def timed(memory: Any, user: str, query: str) -> float:
    t0 = time.perf_counter()
    memory.search({"query": query, "user_id": user, "top_k": 10})
    return (time.perf_counter() - t0) * 1000


def warm(memory: Any, user: str, queries: List[str]) -> float:
    """The p50 of a timed pass after one that fills the caches."""
    for q in queries:
        timed(memory, user, q)
    return statistics.median(timed(memory, user, q) for q in queries)


def append(bench: Bench, args: argparse.Namespace) -> Dict[str, Any]:
    """Item 3: a search right after each Add to one long session."""
    memory = bench.open()
    bench.fill(memory, "chat", args.messages, args.messages)
    queries = bench.queries("chat")
    whole_pass = warm(memory, "chat", queries)
    after: List[float] = []
    again: List[float] = []
    for turn in range(args.turns):
        memory.add({"request_id": "turn-%d" % turn, "user_id": "chat", "session_id": "s0",
                    "messages": [bench.message("chat", args.messages + turn)]})
        after.append(timed(memory, "chat", queries[turn % len(queries)]))
        again.append(timed(memory, "chat", queries[turn % len(queries)]))
    memory.close()
    return figures({"warm": statistics.median(again), "after_add": statistics.median(after)},
                   {"pass_p50_ms": round(whole_pass, 2)})


def delete(bench: Bench, args: argparse.Namespace) -> Dict[str, Any]:
    """Item 4: the heavy user's next search after a user of many sessions is deleted."""
    memory, beside = bench.open(), bench.open()
    bench.fill(memory, "heavy", args.messages, SESSION_MESSAGES)
    queries = bench.queries("heavy")
    whole_pass = warm(memory, "heavy", queries)
    after: Dict[str, List[float]] = {"after_delete_same_store": [], "after_delete_other_store": [], "warm": []}
    for i in range(2 * args.rounds):
        deleter, name = (memory, "after_delete_same_store") if i % 2 == 0 else (beside, "after_delete_other_store")
        big = "big%d" % i
        memory.import_records({"request_id": "b%d" % j, "user_id": big, "session_id": "s%d" % j,  # in chunks
                               "messages": [{"role": "user", "content": "Ann: note %d" % j}]}
                              for j in range(args.sessions))
        for q in queries[:10]:
            timed(memory, "heavy", q)  # warm again: the Adds above changed nothing of the heavy user's
        deleter.delete_user(big)
        after[name].append(timed(memory, "heavy", queries[i % len(queries)]))
        after["warm"].append(timed(memory, "heavy", queries[i % len(queries)]))
    memory.close()
    beside.close()
    return figures({k: statistics.median(v) for k, v in after.items()},
                   {"pass_p50_ms": round(whole_pass, 2), "sessions_deleted": args.sessions})


def heavy(bench: Bench, args: argparse.Namespace) -> Dict[str, Any]:
    """Item 7: a loop over one more heavy user than the vectors cache held before, and over one fewer."""
    memory = bench.open()
    users = ["heavy%d" % i for i in range(args.users)]
    for user in users:
        bench.fill(memory, user, args.messages, SESSION_MESSAGES)
    queries = {user: bench.queries(user, meaning=True) for user in users}

    def loop(among: List[str]) -> List[float]:
        return [timed(memory, user, queries[user][r]) for r in range(args.rounds) for user in among]

    loop(users[:-1])  # fills the caches with all but one
    fewer: List[float] = []
    every: List[float] = []
    for _ in range(3):  # in turns, so that the machine's other work weighs on both alike
        fewer += loop(users[:-1])
        every += loop(users)
    cost = per_user(memory, users[0])
    memory.close()
    return figures({"warm": statistics.median(fewer), "loop_over_all": statistics.median(every)},
                   {"mean_ms": {"warm": round(statistics.mean(fewer), 2), "loop_over_all": round(
                       statistics.mean(every), 2)}, "per_user": cost})


def per_user(memory: Any, user: str) -> Dict[str, Any]:
    """What one user's postings and vectors hold (the caches' estimates, where the checkout has them),
    and how many users' entries each cache holds."""
    from flowmem.text import meaning
    held = memory.store._held
    with memory.store.reading() as reader:
        key = reader.user_key(user)
        messages, words = reader.bm25_statistics(key)["message"]
        postings = reader.held_postings(key)
        vectors = reader.held_vectors(key, meaning.table().dims, memory.config.meaning_scan)
    out: Dict[str, Any] = {"messages": messages, "words": words, "postings_bytes": getattr(postings, "nbytes", None),
                           "vectors": len(vectors.docs)}
    try:
        from flowmem.storage.vectors import nbytes
        out["vectors_bytes"] = nbytes(vectors)
    except ImportError:  # a checkout from before: its bound counted vectors
        pass
    out["users_held"] = {"postings": len(held.postings), "vectors": len(held.vectors)}
    return out


def figures(p50: Dict[str, float], more: Any = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"p50_ms": {k: round(v, 2) for k, v in p50.items()},
                           "ratio_to_warm": {k: round(v / p50["warm"], 2) for k, v in p50.items() if k != "warm"}}
    out.update(more or {})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", choices=("append", "delete", "heavy"))
    parser.add_argument("--messages", type=int, help="the user's messages (append, delete: 20000; heavy: 6000 each)")
    parser.add_argument("--turns", type=int, default=40, help="append: Adds, each followed by a search")
    parser.add_argument("--sessions", type=int, default=10_001, help="delete: the sessions of the user deleted")
    parser.add_argument("--rounds", type=int, help="delete: deletions by each Store (3); heavy: searches a user (6)")
    parser.add_argument("--users", type=int, default=5, help="heavy: the heavy users")
    parser.add_argument("--flowmem", default=REPO_ROOT, help="the flowmem checkout to import (default: this one)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.messages = args.messages or (6000 if args.case == "heavy" else 20000)
    args.rounds = args.rounds or (6 if args.case == "heavy" else 3)
    use_flowmem(args.flowmem)  # before anything imports flowmem
    workdir = tempfile.mkdtemp(prefix="flowmem-bench-caches-")
    try:
        out = {"append": append, "delete": delete, "heavy": heavy}[args.case](Bench(workdir, args.seed), args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"case": args.case, "flowmem": os.path.abspath(args.flowmem), "messages": args.messages,
                      **out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
