#!/usr/bin/env python3
"""What a long question costs, with and without flowmem's caps on query size.

    python -m tools.bench_query_caps [PATH] [--repeat 5]    # about a minute on 2 CPUs

PATH defaults to data/locomo10-dev.json (README, Measuring: how to make it).

Replays the LoCoMo development split into an in-process Memory (as tools/eval.py
does: one user per conversation), then times Memory.search (top_k 100, warm):

1. every LoCoMo question: the typical search, against which the rest is compared;
2. queries of N distinct real words of the asking user's own memory, the most
   frequent first (the worst case: every term has postings) and in random order;
3. the typical question with many options, and with long options;
4. queries of 10,000 and 90,000 distinct words, alone and four at once;
5. analyze() alone on text of growing size, whole and cut to MAX_QUERY_CHARS.

"uncapped" runs with every cap (validation.MAX_QUERY_CHARS, MAX_OPTIONS,
MAX_OPTION_CHARS, query.MAX_*) lifted; "capped" with the caps as they are. Timings
are CPU time (so other load on the machine does not blur them), the fastest of
`--repeat` runs per user; a row shows the worst user. Four concurrent searches are
shown in wall time, which is what a client waits.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

from flowmem import config, validation
from flowmem.memory import Memory
from flowmem.retrieval import query
from flowmem.text.tokenize import QUESTION_STOPWORDS, split_speaker, words
from tools import data_paths
from tools.data_paths import DEFAULT_LOCOMO
from tools.evalkit import dataset as datasets, replay

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CAPS = [(validation, "MAX_QUERY_CHARS"), (validation, "MAX_OPTIONS"), (validation, "MAX_OPTION_CHARS")] + [
    (query, name) for name in dir(query) if name.startswith("MAX_")]


@contextlib.contextmanager
def uncapped() -> Iterator[None]:
    """Every cap lifted for the duration."""
    saved = [(module, name, getattr(module, name)) for module, name in CAPS]
    for module, name, _ in saved:
        setattr(module, name, 10 ** 9)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def analyze_clipped(text: str) -> Any:
    """The query as Search analyzes it: clipped to the longest query first (the clip is part of the cost)."""
    return query.analyze(validation.clip(text, validation.MAX_QUERY_CHARS))


def timed(call: Callable[[], Any], repeat: int) -> float:
    """CPU milliseconds of the fastest of `repeat` calls: the work, whatever else the machine runs.

    The process's CPU time counts SQLite's work too (it runs in this thread).
    """
    times = []
    for _ in range(repeat):
        started = time.process_time()
        call()
        times.append((time.process_time() - started) * 1000)
    return min(times)


def attempt(call: Callable[[], Any], repeat: int) -> str:
    try:
        return "%.1f CPU ms" % timed(call, repeat)
    except Exception as e:  # the uncapped 90,000-word query fails in SQLite
        return "%s (%s)" % (type(e).__name__, e)


def vocabulary(conversation: datasets.Conversation, frequent: bool, seed: int = 1) -> List[str]:
    """The user's distinct non-stopword words, most frequent first, or shuffled."""
    counts: Dict[str, int] = {}
    for session in conversation.sessions:
        for turn in session.turns:
            for w in set(words(split_speaker(turn.content)[1])):
                if w not in QUESTION_STOPWORDS and not w.isdigit():
                    counts[w] = counts.get(w, 0) + 1
    ordered = sorted(counts, key=lambda w: (-counts[w], w))
    if not frequent:
        random.Random(seed).shuffle(ordered)
    return ordered


def search(memory: Memory, user: str, text: str, options: Any = None) -> Callable[[], Any]:
    body: Dict[str, Any] = {"query": text, "user_id": user, "top_k": 100}
    if options:
        body["options"] = options
    return lambda: memory.search(body)


def table(header: List[str], rows: List[List[Any]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", default=DEFAULT_LOCOMO)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = data_paths.load_locomo(args.path)
    with tempfile.TemporaryDirectory(prefix="flowmem-caps-") as workdir:
        memory = Memory(config.load({"db": os.path.join(workdir, "caps.db"), "synchronous": "OFF"}, environ={}))
        try:
            measure(memory, data, args.repeat)
        finally:
            memory.close()
    return 0


def typical(memory: Memory, convs: Sequence[Any]) -> Tuple[float, Any, str]:
    """Every LoCoMo question timed once, warm: the median one's (CPU ms, conversation, question), printed."""
    latencies = []  # (ms, conversation, question)
    for c in convs:
        for q in c.questions:
            search(memory, c.user_id, q.question)()  # warm the session cache
            latencies.append((timed(search(memory, c.user_id, q.question), 1), c, q.question))
    latencies.sort(key=lambda x: x[0])
    typical_ms, typical_conv, typical_q = latencies[len(latencies) // 2]
    ms = [x[0] for x in latencies]
    print("%d LoCoMo questions: p50 %.1f CPU ms, p95 %.1f, max %.1f; the typical one (%s): %r\n" % (
        len(ms), typical_ms, ms[int(len(ms) * 0.95)], ms[-1], typical_conv.user_id, typical_q))

    return typical_ms, typical_conv, typical_q


def words_table(memory: Memory, convs: Sequence[Any], vocabularies: Dict[Any, List[str]], typical_ms: float,
                repeat: int) -> None:
    """Queries of n distinct words of the user's own memory, frequent or random, capped and not."""
    rows = []
    for n in (16, 32, 64, 128, 256, 512, 1024):
        row: List[Any] = [n]
        for frequent in (True, False):
            for lift in (True, False):
                with uncapped() if lift else contextlib.nullcontext():
                    worst = max(timed(search(memory, c.user_id, " ".join(vocabularies[(c.user_id, frequent)][:n])),
                                      repeat) for c in convs)
                row += ["%.1f" % worst, "%.1fx" % (worst / typical_ms)]
        rows.append(row)
    print("Distinct words of the user's own memory per query (worst of %d users; CPU ms, x typical):\n" % len(convs))
    table(["words", "frequent, uncapped", "x", "frequent, capped", "x", "random, uncapped", "x", "random, capped", "x"],
          rows)



def options_table(memory: Memory, pool: List[str], typical_conv: Any, typical_q: str, typical_ms: float,
                  repeat: int) -> None:
    """The typical question with more and longer options, capped and not."""
    rows = []
    for count, length in ((4, 2), (8, 2), (16, 2), (32, 2), (64, 2), (4, 8), (4, 32), (4, 128), (16, 32)):
        options = [" ".join(pool[(i * length) % len(pool):][:length]) for i in range(count)]
        cells = []
        for lift in (True, False):
            with uncapped() if lift else contextlib.nullcontext():
                cells.append(timed(search(memory, typical_conv.user_id, typical_q, options), repeat))
        rows.append([count, length, "%.1f" % cells[0], "%.1fx" % (cells[0] / typical_ms), "%.1f" % cells[1],
                     "%.1fx" % (cells[1] / typical_ms)])
    print("The typical question with options (words each from the user's most frequent):\n")
    table(["options", "words each", "uncapped CPU ms", "x", "capped CPU ms", "x"], rows)



def worst_case(memory: Memory, convs: Sequence[Any], vocabularies: Dict[Any, List[str]], typical_ms: float,
               repeat: int) -> None:
    """Each user's most frequent words filling the query and every option: the worst the caps allow."""
    worst = max(timed(search(memory, c.user_id, " ".join(vocabularies[(c.user_id, True)]),
                           [" ".join(vocabularies[(c.user_id, True)][i * 100:])
                            for i in range(validation.MAX_OPTIONS)]),
                    repeat) for c in convs)
    print("Worst case under the caps (each user's most frequent words filling the query and %d options): %.1f CPU ms,"
          " %.1fx typical\n" % (validation.MAX_OPTIONS, worst, worst / typical_ms))



def huge_queries(memory: Memory, pool: List[str], typical_conv: Any, repeat: int) -> None:
    """Queries of 10,000 and 90,000 distinct words, alone and four at once."""
    for n in (10_000, 90_000):  # 10,000: near the most SQLite takes uncapped (3 bound values a term)
        huge = " ".join(pool + ["zq%dx" % i for i in range(n - len(pool))])
        call = search(memory, typical_conv.user_id, huge)
        with uncapped():
            alone_uncapped = attempt(call, 1)
        alone = attempt(call, repeat)
        walls: List[float] = []

        def one(call=call, walls=walls) -> None:  # bound now: the loop moves on while threads run
            started = time.perf_counter()
            call()
            walls.append((time.perf_counter() - started) * 1000)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("A query of %d distinct words (%d characters): uncapped %s; capped %s alone, %s wall ms each"
              " with four at once\n" % (n, len(huge), alone_uncapped, alone, "/".join("%.0f" % w for w in walls)))



def analyze_table(convs: Sequence[Any], repeat: int) -> None:
    """query.analyze() of LoCoMo text of growing size, whole and clipped."""
    text = "\n".join(t.content for c in convs for s in c.sessions for t in s.turns)
    rows = []
    for size in (validation.MAX_QUERY_CHARS, 64 * 1024, 1024 * 1024, 8 * 1024 * 1024):
        sample = (text * (size // len(text) + 1))[:size]
        whole = timed(functools.partial(query.analyze, sample), 1)
        cut = timed(functools.partial(analyze_clipped, sample), repeat)
        rows.append([size, "%.1f" % whole, "%.1f" % cut])
    print("query.analyze() of LoCoMo text (term caps on):\n")
    table(["characters", "whole, CPU ms", "cut to MAX_QUERY_CHARS, CPU ms"], rows)


def measure(memory: Memory, data: datasets.Dataset, repeat: int) -> None:
    """Replay `data` and print every table, each Search's CPU time beside the typical question's."""
    for conversation in data.conversations:
        replay.replay(memory, conversation)
    convs = data.conversations
    print("caps: %s\n" % ", ".join("%s=%d" % (n, getattr(m, n)) for m, n in CAPS))
    typical_ms, typical_conv, typical_q = typical(memory, convs)
    vocabularies = {(c.user_id, f): vocabulary(c, f) for c in convs for f in (True, False)}
    words_table(memory, convs, vocabularies, typical_ms, repeat)
    pool = vocabularies[(typical_conv.user_id, True)]
    options_table(memory, pool, typical_conv, typical_q, typical_ms, repeat)
    worst_case(memory, convs, vocabularies, typical_ms, repeat)
    huge_queries(memory, pool, typical_conv, repeat)
    analyze_table(convs, repeat)


if __name__ == "__main__":
    sys.exit(main())
