"""What metadata costs an Add, a filtered Search and the disk (issues 25 and 31).

    python -m tools.bench_metadata [--adds 300] [--others 30] [--rounds 3] [--keys 32]

One user of `--adds` Adds of 20 messages (sessions of 100 messages, synthetic text of a
3,000-word vocabulary, timestamps given), in a new database in a temporary directory.
With metadata, an Add carries `--keys` - 1 small pairs for all its messages (`source`:
"chat" and `k01`...: "v01"...) and one message in ten its own `{"topic": "rare"}`.

- Add: the same Adds with no metadata and with it, each into its own fresh database,
  alternating `--rounds` times; reported as Adds per second and the ratio of the two
  (this run's own baseline). Disk: both databases of the first round vacuumed, the bytes
  a message's metadata adds, beside the bytes of its JSON.
- Search: 60 questions of six of the user's words and 20 that match nothing (the
  fallback), top_k 100, timed warm: unfiltered, role-filtered, and filtered by metadata
  (one pair every message holds, one in ten holds, none holds; all the Add's pairs; all
  of them and the topic, which one message in ten holds); each p50 and its ratio to the
  unfiltered p50 of the same pass. Then `--others` users of the same size and metadata
  are added and the pass is timed again: a user's filtered search reads that user's
  metadata only (storage/metadata_index.py).
- The worst case for a filter: a user of the same size each of whose messages holds a
  random three quarters of `--keys` pairs (every pair differs from message to message),
  searched unfiltered and with a filter of FEW_PAIRS of them and of all of them.

`--flowmem PATH` imports flowmem from another checkout (an older commit's, for a figure
before a change: `git worktree add /tmp/base <commit>`, then this tool with `--flowmem
/tmp/base` and without, alternately); with `--plain-adds` only the Adds without metadata
are timed, which a checkout from before metadata can take too.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from tools.benchkit.checkout import use_flowmem

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["w%d" % i for i in range(3000)]
T0 = 1683554160000
FEW_PAIRS = 8  # storage/metadata_filter.py's SCAN_LOOKUPS: what reading a message's rows costs, in lookups


def shared(keys: int) -> Dict[str, Any]:
    """The metadata of a tagged Add: `keys` - 1 small pairs."""
    return dict({"source": "chat"}, **{"k%02d" % i: "v%02d" % i for i in range(1, keys - 1)})


def filters(keys: int) -> List[Tuple[str, Optional[Dict[str, Any]]]]:
    """(name, filters) of the search pass, unfiltered first."""
    add = shared(keys)
    return [("none", None), ("role", {"role": "user"}), ("1 pair, every message", {"metadata": {"source": "chat"}}),
            ("1 pair, 1 in 10", {"metadata": {"topic": "rare"}}), ("1 pair, none", {"metadata": {"topic": "none"}}),
            ("%d pairs, every message" % len(add), {"metadata": add}),
            ("%d pairs, 1 in 10" % (len(add) + 1), {"metadata": dict(add, topic="rare")})]


def adds(user: str, n: int, rng: random.Random, keys: int, mixed: bool = False) -> List[Dict[str, Any]]:
    """`n` Adds of 20 messages for `user`: with metadata when `keys`, each message's own when `mixed`."""
    out = []
    pairs = sorted(shared(keys).items()) + [("topic", "rare")]
    for i in range(n):
        messages = []
        for j in range(20):
            text = "Ana: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25)))
            message: Dict[str, Any] = {"role": "user" if j % 2 == 0 else "assistant", "content": text,
                                       "timestamp": T0 + i * 100_000 + j}
            if mixed:
                message["metadata"] = dict(rng.sample(pairs, len(pairs) * 3 // 4))
            elif keys and (i * 20 + j) % 10 == 0:
                message["metadata"] = {"topic": "rare"}
            messages.append(message)
        body: Dict[str, Any] = {"request_id": "r%d" % i, "user_id": user, "session_id": "s%d" % (i // 5),
                                "messages": messages}
        if keys and not mixed:
            body["metadata"] = shared(keys)
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


def vacuumed_bytes(path: str) -> int:
    """The size of the database at `path` once vacuumed (a copy: its own free pages left out)."""
    copy = path + ".vacuumed"
    conn = sqlite3.connect(path)
    conn.execute("VACUUM INTO ?", (copy,))
    conn.close()
    size = os.path.getsize(copy)
    os.remove(copy)
    return size


def disk(directory: str, tagged: List[Dict[str, Any]]) -> str:
    """What a message's metadata adds on disk, beside its JSON (the first round's databases)."""
    added = vacuumed_bytes(os.path.join(directory, "tagged0.db")) - vacuumed_bytes(os.path.join(directory, "plain0.db"))
    messages = sum(len(body["messages"]) for body in tagged)
    memory = open_memory(directory, "tagged0.db")
    with memory.store.reading() as reader:
        text = reader.conn.execute("SELECT sum(length(CAST(metadata AS BLOB))) FROM messages").fetchone()[0] or 0
    memory.close()
    return ("Disk: metadata adds %.0f bytes a message, %.2fx its JSON (%.0f bytes)"
            % (added / messages, added / text, text / messages))


def p50(memory: Any, user: str, filters: Optional[Dict[str, Any]], questions: List[str]) -> float:
    times = []
    for question in questions:
        body: Dict[str, Any] = {"query": question, "user_id": user, "top_k": 100}
        if filters:
            body["filters"] = filters
        started = time.perf_counter()
        memory.search(body)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def search_pass(memory: Any, user: str, questions: List[str], label: str,
                named: List[Tuple[str, Optional[Dict[str, Any]]]]) -> None:
    for _, f in named:
        p50(memory, user, f, questions[:10])  # warm
    figures = [(name, p50(memory, user, f, questions)) for name, f in named]
    base = figures[0][1]
    print("| %s | %s |" % (label, " | ".join("%.2f ms (%.2fx)" % (ms, ms / base) for _, ms in figures)))


def header(named: List[Tuple[str, Any]]) -> None:
    print("| users | %s |" % " | ".join(name for name, _ in named))
    print("|---|%s" % ("---|" * len(named)))


def timed_adds(args: argparse.Namespace, directory: str) -> List[Dict[str, Any]]:
    """Time the Adds without metadata and with it, alternately; the tagged Adds."""
    plain = adds("u", args.adds, random.Random(1), 0)
    tagged = adds("u", args.adds, random.Random(1), args.keys)
    rates: Dict[str, List[float]] = {"without": [], "with": []}
    for r in range(args.rounds):
        rates["without"].append(add_rate(directory, plain, "plain%d.db" % r))
        if not args.plain_adds:
            rates["with"].append(add_rate(directory, tagged, "tagged%d.db" % r))
    if args.plain_adds:
        print("Adds/s without metadata %s, median %.0f" % (["%.0f" % x for x in rates["without"]],
                                                         statistics.median(rates["without"])))
        return tagged
    ratios = [w / wo for w, wo in zip(rates["with"], rates["without"])]
    print("Adds/s without metadata %s, with %s; ratio per round %s, median %.2f"
          % (["%.0f" % x for x in rates["without"]], ["%.0f" % x for x in rates["with"]],
             ["%.2f" % x for x in ratios], statistics.median(ratios)))
    return tagged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--others", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=32, help="metadata keys a message holds (at most 32)")
    parser.add_argument("--flowmem", default=REPO_ROOT)
    parser.add_argument("--plain-adds", action="store_true", help="time only the Adds without metadata")
    args = parser.parse_args()
    use_flowmem(args.flowmem)  # before anything imports flowmem
    rng = random.Random(1)
    directory = tempfile.mkdtemp(prefix="flowmem-bench-metadata-")
    try:
        tagged = timed_adds(args, directory)
        if args.plain_adds:
            return
        print(disk(directory, tagged))
        memory = open_memory(directory, "tagged0.db")
        questions = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(60)]
        questions += ["zzz nothing matches %d" % i for i in range(20)]
        named = filters(args.keys)
        header(named)
        search_pass(memory, "u", questions, "one", named)
        for body in adds("x", args.adds, random.Random(2), args.keys, mixed=True):
            memory.add(body)
        pairs = sorted(shared(args.keys).items()) + [("topic", "rare")]
        worst = [("none", None), ("%d pairs" % FEW_PAIRS, {"metadata": dict(pairs[:FEW_PAIRS])}),
                 ("%d pairs" % len(pairs), {"metadata": dict(pairs)})]
        for k in range(args.others):
            for body in adds("o%d" % k, args.adds, rng, args.keys):
                memory.add(body)
        search_pass(memory, "u", questions, "one among %d others" % (args.others + 1), named)
        print("\nEvery pair differing from message to message (user x):\n")
        header(worst)
        search_pass(memory, "x", questions, "x", worst)
        memory.close()
    finally:
        shutil.rmtree(directory, True)


if __name__ == "__main__":
    main()
