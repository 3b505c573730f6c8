"""One heavy user of synthetic text, for the benches that time their searches in process.

A Zipf-ish vocabulary of pseudo-words (words()), messages of WORDS_PER_MESSAGE of them
(text()), Adds of ADD_MESSAGES in sessions of SESSION_MESSAGES (build()), and a search of
that user timed (timed()), in a database of its own (bench_database()).
tools/bench_delete_caches.py and tools/bench_embedder_refresh.py build their users so.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import tempfile
import time
from typing import Any, Iterator, List, Tuple

from .checkout import use_flowmem

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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


def queries(rng: random.Random, contents: List[str], count: int) -> List[str]:
    """`count` searches of three words each, drawn from the user's own messages."""
    return [" ".join(rng.sample(c.split()[1:], 3)) for c in rng.sample(contents, min(count, len(contents)))]


def add_arguments(parser: argparse.ArgumentParser, messages: int) -> None:
    """The options every bench of this user takes: --messages, --flowmem (a checkout to import), --seed."""
    parser.add_argument("--messages", type=int, default=messages, help="the heavy user's messages")
    parser.add_argument("--flowmem", default=REPO_ROOT, help="the flowmem checkout to import (default: this one)")
    parser.add_argument("--seed", type=int, default=7)


@contextlib.contextmanager
def bench_database(args: argparse.Namespace, prefix: str) -> Iterator[Tuple[Any, random.Random, List[str]]]:
    """flowmem imported from `args.flowmem` (add_arguments()), then (a Config of a new database in a
    temporary directory, removed after; a Random seeded with `args.seed`; words() drawn with it)."""
    use_flowmem(args.flowmem)  # before anything imports flowmem
    from flowmem.config import load

    workdir = tempfile.mkdtemp(prefix=prefix)
    try:
        rng = random.Random(args.seed)
        vocabulary = words(rng)
        yield load({"db": os.path.join(workdir, "bench.db"), "synchronous": "NORMAL"}, environ={}), rng, vocabulary
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
