#!/usr/bin/env python3
"""Isolation-cost benchmark: does other users' data slow one user down?

The figure it measures (a requirement of flowmem):

    search latency for a user with 1,000 messages, in a database that also holds
    1,000,000 messages of 1,000 other users, within 1.5x of the same user's latency
    in an otherwise empty database. Add must not slow down as other users' data
    grows either.

It builds two databases with the in-process API (flowmem.memory.Memory):

- DB A: only the measured "target" user (1,000 messages, Adds of at most 20 messages);
- DB B: the same target user, added with the same bodies in the same order, spread
  evenly among the Adds of `--other-users` other users of `--messages-per-user`
  messages each (all users interleaved, as concurrent traffic would leave them).

Every user's text is drawn from one Zipf-like vocabulary, so the target's words are
also everyone else's words (its index terms differ only by the user prefix): the hard
case for isolation. Then it measures, on both, search latency for ~200 fixed queries
(warm, several rounds, interleaving A and B), checks that every result is
byte-identical between A and B, and measures Add latency (synchronous FULL) for a
fresh user and for the target. It prints a Markdown table and exits non-zero when a
result differs or the search p50 ratio B/A exceeds `--max-search-ratio` (1.5).

DB B is cached in `--workdir` with a JSON sidecar of the parameters that made it
(and a hash of flowmem's write path, so a change to indexing forces a rebuild); the
Add phase runs on a scratch copy of it, so the cache is never modified.

Usage (from the repository root):

    python tools/bench_isolation.py                      # full scale: 1,000 x 1,000
    python tools/bench_isolation.py --other-users 20     # quick check
    python tools/bench_isolation.py --json out/isolation.json

Standard library only; Python 3.9 compatible.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import random
import shlex
import shutil
import sqlite3
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from flowmem.config import load  # noqa: E402
from flowmem.memory import Memory  # noqa: E402
from flowmem.storage import schema as flowmem_schema  # noqa: E402

# Bump when the generated data changes, so cached databases are rebuilt.
GENERATOR_VERSION = 1

# Modules whose code decides what a database holds (every module of the text and storage
# layers, and these): a change to any of them makes a cached DB B stale (its views or
# index terms could differ from a fresh DB A's).
WRITE_PATH_PACKAGES = ("text", "storage")
WRITE_PATH_MODULES = ("validation.py", "config.py")

TARGET_USER = "target-user"
PLATFORM_MAX_ADD = 20  # the challenge platform sends at most 20 messages per Add
BASE_TIME_MS = 1672531200000  # 2023-01-01T00:00:00Z
DAY_MS = 24 * 3600 * 1000

# Frequent English words first, so that with Zipf weights by rank they dominate
# term frequencies the way function words do in real chat.
COMMON_WORDS = """
the be to of and a in that have i it for not on with he as you do at this but his by
from they we say her she or an will my one all would there their what so up out if
about who get which go me when make can like time no just him know take people into
year your good some could them see other than then now look only come its over think
also back after use two how our work first well way even new want because any these
give day most us is was are been has had did said went got made really very much
today yesterday tomorrow week weekend friend family home house dog cat car book music
movie game trip city school job project plan idea dinner lunch coffee park beach
garden kitchen party birthday holiday morning evening night love happy great sure
maybe thanks always never often sometimes again still yes yeah okay
""".split()

NAMES = """
Dana Priya Jon Gina John Maria Joanna Nate Tim Evan Sam Audrey Andrew James
Deborah Jolene Calvin Dave Priya Omar Lena Hiro Sofia Marco Aisha Tom Grace Ravi
Elena Felix Nora Yusuf Mei Lucas Zara Ben Ines Kofi Hana Leo
""".split()

SYLLABLES = """
ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ha he hi
ho hu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra
re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu bar ter mon
len kin dor fel gar han lim nor pel ran sel tor vin wel
""".split()


# -- synthetic conversations ----------------------------------------------------------


class TextGen:
    """Deterministic English-like text: common words plus pseudo-words, Zipf by rank."""

    def __init__(self, seed: int, n_pseudo_words: int):
        rng = random.Random("vocabulary-%d" % seed)
        words = list(dict.fromkeys(COMMON_WORDS))
        seen = set(words)
        while len(words) < len(COMMON_WORDS) + n_pseudo_words:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        # Zipf-Mandelbrot weights 1/(rank + 2.7): a few words are very frequent,
        # most are rare, so posting lists range from huge to tiny.
        total = 0.0
        self.cum_weights: List[float] = []
        for rank in range(len(words)):
            total += 1.0 / (rank + 2.7)
            self.cum_weights.append(total)

    def sentence(self, rng: random.Random, n_words: int) -> str:
        words = rng.choices(self.words, cum_weights=self.cum_weights, k=n_words)
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))


def session_messages(
    gen: TextGen, rng: random.Random, speakers: Sequence[str], n: int, timestamp_ms: int
) -> List[Dict[str, Any]]:
    """`n` alternating messages of two speakers, "Name: text", all with one timestamp."""
    out = []
    for i in range(n):
        speaker = speakers[i % 2]
        out.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": "%s: %s" % (speaker, gen.sentence(rng, rng.randint(10, 30))),
                "timestamp": timestamp_ms,
            }
        )
    return out


def user_sessions(
    gen: TextGen, seed: int, user_id: str, n_messages: int, session_len: Tuple[int, int]
) -> Iterator[Tuple[str, List[Dict[str, Any]]]]:
    """A user's conversation, lazily, as (session_id, messages) with `n_messages` in all.

    Each user has its own Random seeded from (seed, user_id), so a user's text does
    not depend on which other users exist or in which order they are generated.
    """
    rng = random.Random("%d-%s" % (seed, user_id))
    speakers = rng.sample(NAMES, 2)
    timestamp = BASE_TIME_MS + rng.randrange(365) * DAY_MS
    done = 0
    index = 0
    while done < n_messages:
        n = min(rng.randint(*session_len), n_messages - done)
        timestamp += rng.randint(1, 14) * DAY_MS + rng.randrange(DAY_MS)
        yield "%s-s%04d" % (user_id, index), session_messages(gen, rng, speakers, n, timestamp)
        done += n
        index += 1


def add_bodies(user_id: str, sessions, max_per_add: int) -> Iterator[Dict[str, Any]]:
    """Add bodies for a user's sessions, each session cut into Adds of at most `max_per_add`."""
    for session_id, messages in sessions:
        for part, start in enumerate(range(0, len(messages), max_per_add)):
            yield {
                "request_id": "%s-r%d" % (session_id, part),
                "user_id": user_id,
                "session_id": session_id,
                "messages": messages[start : start + max_per_add],
            }


def target_adds(gen: TextGen, args) -> List[Dict[str, Any]]:
    """The target user's Adds: sessions of 15-25 messages, sent 20 at a time like the platform."""
    sessions = user_sessions(gen, args.seed, TARGET_USER, args.target_messages, (15, 25))
    return list(add_bodies(TARGET_USER, sessions, PLATFORM_MAX_ADD))


def other_user_id(i: int) -> str:
    return "other-%05d" % i


def other_adds_round_robin(gen: TextGen, args) -> Iterator[Dict[str, Any]]:
    """Other users' Adds, one session per user in turn, so every user's data is scattered.

    Their sessions are `--bulk-add-messages` long and sent whole (one Add each): larger
    Adds build faster, and the views a message gets do not depend on session length
    once it exceeds a segment.
    """
    n = args.bulk_add_messages
    streams = [
        add_bodies(other_user_id(i), user_sessions(gen, args.seed, other_user_id(i), args.messages_per_user, (n, n)), n)
        for i in range(args.other_users)
    ]
    while streams:
        alive = []
        for stream in streams:
            body = next(stream, None)
            if body is not None:
                alive.append(stream)
                yield body
        streams = alive


def interleave(others: Iterator[Dict[str, Any]], n_others: int, targets: List[Dict[str, Any]]):
    """All of `others`, with `targets` (in their order) spread evenly among them."""
    step = n_others / (len(targets) + 1) if targets else 0
    next_target = 0
    for i, body in enumerate(others):
        while next_target < len(targets) and i >= int(step * (next_target + 1)):
            yield targets[next_target]
            next_target += 1
        yield body
    for body in targets[next_target:]:
        yield body


def make_queries(gen: TextGen, adds: List[Dict[str, Any]], seed: int, count: int) -> List[str]:
    """`count` fixed queries from words of the target's messages: 2-6 words, some questions."""
    rng = random.Random("queries-%d" % seed)
    messages = [m["content"] for body in adds for m in body["messages"]]
    queries = []
    for _ in range(count):
        speaker, _, text = rng.choice(messages).partition(": ")
        words = [w.strip(".?!").lower() for w in text.split()]
        if rng.random() < 0.3:
            about = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))
            queries.append("What did %s say about %s?" % (speaker, about))
        else:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 6)))))
    return queries


# -- databases ------------------------------------------------------------------------


def open_memory(path: str, synchronous: str) -> Memory:
    return Memory(load({"db": path, "synchronous": synchronous}, environ={}))


def remove_db(path: str) -> None:
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            os.remove(p)


def fsync_file(path: str) -> None:
    """Flush a file to disk, so a later fsync (a FULL checkpoint) does not pay for it.

    Without this, the first WAL checkpoint after copying DB B flushes the whole
    copy (hundreds of MB) and lands in one Add's latency.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_path_hash() -> str:
    """A hash of the flowmem modules that decide what a database holds."""
    h = hashlib.sha256()
    flowmem_dir = os.path.join(REPO_ROOT, "flowmem")
    packaged = sorted(os.path.join(package, name) for package in WRITE_PATH_PACKAGES
                      for name in os.listdir(os.path.join(flowmem_dir, package)) if name.endswith(".py"))
    for name in packaged + list(WRITE_PATH_MODULES):
        with open(os.path.join(flowmem_dir, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def build_params(args) -> Dict[str, Any]:
    """Everything that decides DB B's content: the cache key stored in its sidecar."""
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": args.seed,
        "vocabulary": args.vocabulary,
        "other_users": args.other_users,
        "messages_per_user": args.messages_per_user,
        "bulk_add_messages": args.bulk_add_messages,
        "target_messages": args.target_messages,
        "schema_version": flowmem_schema.SCHEMA_VERSION,
        "flowmem_write_path": write_path_hash(),
    }


class Progress:
    """Prints messages added, elapsed time and throughput to stderr every `every` messages."""

    def __init__(self, label: str, total: int, every: int = 50000):
        self.label, self.total, self.every = label, total, every
        self.start = time.perf_counter()
        self.done = 0
        self._next = every

    def add(self, n: int) -> None:
        self.done += n
        if self.done >= self._next:
            self._next += self.every
            self.report()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def report(self) -> None:
        t = self.elapsed()
        print(
            "[%s] %d/%d messages, %.0f s, %.0f msg/s"
            % (self.label, self.done, self.total, t, self.done / t if t else 0.0),
            file=sys.stderr,
            flush=True,
        )


def load_adds(path: str, bodies, progress: Optional[Progress] = None) -> None:
    """Send Add bodies through Memory with synchronous OFF (bulk loading only)."""
    m = open_memory(path, "OFF")
    try:
        for body in bodies:
            m.add(body)
            if progress:
                progress.add(len(body["messages"]))
    finally:
        m.close()


def build_a(path: str, adds: List[Dict[str, Any]]) -> None:
    """DB A: the target user alone. Small, so rebuilt on every run."""
    remove_db(path)
    load_adds(path, adds)


def build_b(path: str, gen: TextGen, args, adds: List[Dict[str, Any]]) -> Dict[str, Any]:
    """DB B, reused from the cache when its sidecar matches; returns the build record."""
    sidecar = path + ".json"
    params = build_params(args)
    if not args.rebuild and os.path.exists(path) and os.path.exists(sidecar):
        with open(sidecar, encoding="utf-8") as f:
            record = json.load(f)
        if record.get("params") == params:
            print("[B] reusing cached %s (built in %.0f s)" % (path, record["build_s"]), file=sys.stderr)
            return dict(record, reused=True)
        print("[B] cached %s has other parameters; rebuilding" % path, file=sys.stderr)
    # Build under a temporary name and rename at the end, so an interrupted build
    # is never mistaken for a complete one.
    tmp = path + ".building"
    remove_db(tmp)
    remove_db(path)
    if os.path.exists(sidecar):
        os.remove(sidecar)
    n_other_adds = args.other_users * -(-args.messages_per_user // args.bulk_add_messages)
    total = args.other_users * args.messages_per_user + sum(len(b["messages"]) for b in adds)
    progress = Progress("B", total)
    load_adds(tmp, interleave(other_adds_round_robin(gen, args), n_other_adds, adds), progress)
    progress.report()
    os.replace(tmp, path)
    record = {
        "params": params,
        "messages": total,
        "build_s": round(progress.elapsed(), 1),
        "build_msgs_per_s": round(total / progress.elapsed(), 1),
        "file_bytes": os.path.getsize(path),
    }
    with open(sidecar, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, sort_keys=True)
    return dict(record, reused=False)


# -- measurements ---------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100), linear between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(samples_ms: Sequence[float]) -> Dict[str, float]:
    return {
        "n": len(samples_ms),
        "p50_ms": percentile(samples_ms, 50),
        "p95_ms": percentile(samples_ms, 95),
        "p99_ms": percentile(samples_ms, 99),
        "max_ms": max(samples_ms) if samples_ms else float("nan"),
        "mean_ms": sum(samples_ms) / len(samples_ms) if samples_ms else float("nan"),
    }


def timed_searches(m: Memory, queries: Sequence[str], top_k: int) -> Tuple[List[float], List[str]]:
    """Run every query once: latencies in ms and each result as canonical JSON."""
    times, results = [], []
    gc.collect()  # so a collection triggered by earlier work does not land in one DB's timings
    for q in queries:
        body = {"query": q, "user_id": TARGET_USER, "top_k": top_k}
        t0 = time.perf_counter()
        result = m.search(body)
        times.append((time.perf_counter() - t0) * 1000.0)
        results.append(json.dumps(result, sort_keys=True))
    return times, results


def mismatches(a: Sequence[str], b: Sequence[str], queries: Sequence[str], label: str) -> int:
    """Count queries whose results differ; show the first few."""
    bad = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    for i in bad[:3]:
        print("[%s] results differ for query %r" % (label, queries[i]), file=sys.stderr)
    return len(bad)


def measure_search(ma: Memory, mb: Memory, queries: Sequence[str], args) -> Dict[str, Any]:
    """Warm-up pass (compared for identity), then `--rounds` timed passes alternating A and B."""
    first_a, results_a = timed_searches(ma, queries, args.top_k)
    first_b, results_b = timed_searches(mb, queries, args.top_k)
    samples: Dict[str, List[float]] = {"A": [], "B": []}
    for r in range(args.rounds):
        # Alternate which DB goes first, so drift (caches, CPU clocks) hits both alike.
        for label, m in (("A", ma), ("B", mb)) if r % 2 == 0 else (("B", mb), ("A", ma)):
            times, _ = timed_searches(m, queries, args.top_k)
            samples[label].extend(times)
    hits = [len(json.loads(r)["data"]) for r in results_a]
    return {
        "A": summary(samples["A"]),
        "B": summary(samples["B"]),
        "first_pass_A": summary(first_a),
        "first_pass_B": summary(first_b),
        "mismatches": mismatches(results_a, results_b, queries, "search"),
        "mean_results_per_query": sum(hits) / len(hits) if hits else 0.0,
        "results": (results_a, results_b),
    }


def measure_adds(ma: Memory, mb: Memory, bodies: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Send each body to A then B (alternating, so both see the same conditions)."""
    samples: Dict[str, List[float]] = {"A": [], "B": []}
    for i, body in enumerate(bodies):
        for label, m in (("A", ma), ("B", mb)) if i % 2 == 0 else (("B", mb), ("A", ma)):
            t0 = time.perf_counter()
            m.add(body)
            samples[label].append((time.perf_counter() - t0) * 1000.0)
    n_messages = sum(len(b["messages"]) for b in bodies)
    out = {}
    for label, times in samples.items():
        out[label] = dict(summary(times), msgs_per_s=n_messages / (sum(times) / 1000.0))
    return out


def extra_adds(gen: TextGen, seed: int, user_id: str, prefix: str, count: int) -> List[Dict[str, Any]]:
    """`count` new 20-message Adds for `user_id`, each opening a new session."""
    sessions = user_sessions(gen, seed, prefix, count * PLATFORM_MAX_ADD, (PLATFORM_MAX_ADD, PLATFORM_MAX_ADD))
    bodies = list(add_bodies(user_id, sessions, PLATFORM_MAX_ADD))
    for body in bodies:
        body["request_id"] = "%s-%s" % (prefix, body["request_id"])
    return bodies


# -- report ---------------------------------------------------------------------------


def machine() -> Dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }


def table(figures: Dict[str, Any]) -> str:
    """The Markdown table: metric | empty DB | with other users | ratio (B/A)."""
    rows = [("metric", "empty DB", "with other users", "ratio"), ("---", "---:", "---:", "---:")]

    def row(name: str, a: float, b: float, fmt: str = "%.2f") -> None:
        ratio = "%.2fx" % (b / a) if a else "-"
        rows.append((name, fmt % a, fmt % b, ratio))

    s = figures["search"]
    for p in ("p50", "p95", "p99"):
        row("search %s ms (top_k=%d)" % (p, figures["top_k"]), s["A"][p + "_ms"], s["B"][p + "_ms"])
    row("search first-pass p50 ms", s["first_pass_A"]["p50_ms"], s["first_pass_B"]["p50_ms"])
    for who in ("fresh_user", "target_user"):
        add = figures["add"][who]
        row("add p50 ms, %s" % who.replace("_", " "), add["A"]["p50_ms"], add["B"]["p50_ms"])
        row("add p95 ms, %s" % who.replace("_", " "), add["A"]["p95_ms"], add["B"]["p95_ms"])
        row("add max ms, %s" % who.replace("_", " "), add["A"]["max_ms"], add["B"]["max_ms"])
        row("add msgs/s, %s" % who.replace("_", " "), add["A"]["msgs_per_s"], add["B"]["msgs_per_s"], "%.0f")
    row("database messages", figures["db"]["A_messages"], figures["db"]["B_messages"], "%d")
    row("database file MB", figures["db"]["A_bytes"] / 1e6, figures["db"]["B_bytes"] / 1e6, "%.1f")
    return "\n".join("| %s |" % " | ".join(r) for r in rows)


def parse_args(argv: Optional[Sequence[str]] = None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--other-users", type=int, default=1000, help="users besides the target in DB B (1000)")
    p.add_argument("--messages-per-user", type=int, default=1000, help="messages of each other user (1000)")
    p.add_argument("--target-messages", type=int, default=1000, help="messages of the measured user (1000)")
    p.add_argument("--bulk-add-messages", type=int, default=200,
                   help="session length, and so Add size, of the other users (200; build speed only)")
    p.add_argument("--vocabulary", type=int, default=5000, help="pseudo-words besides the common words (5000)")
    p.add_argument("--queries", type=int, default=200, help="fixed queries for the target (200)")
    p.add_argument("--rounds", type=int, default=5, help="timed passes over the queries per DB (5)")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--add-requests", type=int, default=500,
                   help="measured Adds per user kind (500: enough to span several index merges)")
    p.add_argument("--add-synchronous", default="FULL", help="SQLite synchronous for the Add phase (FULL)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", default="/tmp/flowmem-bench")
    p.add_argument("--rebuild", action="store_true", help="rebuild DB B even if a matching cache exists")
    p.add_argument("--max-search-ratio", type=float, default=1.5, help="fail above this search p50 ratio (1.5)")
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    tag = "u%d-m%d-t%d-s%d" % (args.other_users, args.messages_per_user, args.target_messages, args.seed)
    path_a = os.path.join(args.workdir, "A-%s.db" % tag)
    path_b = os.path.join(args.workdir, "B-%s.db" % tag)
    scratch_b = os.path.join(args.workdir, "B-scratch.db")

    gen = TextGen(args.seed, args.vocabulary)
    adds = target_adds(gen, args)
    queries = make_queries(gen, adds, args.seed, args.queries)

    t0 = time.perf_counter()
    build_a(path_a, adds)
    print("[A] built in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    build = build_b(path_b, gen, args, adds)

    # Search phase, on the databases as built (B read-only, so the cache stays valid).
    ma, mb = open_memory(path_a, "OFF"), open_memory(path_b, "OFF")
    try:
        db = {
            "A_messages": ma.stats()["messages"], "B_messages": mb.stats()["messages"],
            "A_bytes": os.path.getsize(path_a), "B_bytes": os.path.getsize(path_b),
        }
        print("[search] %d queries x %d rounds per DB" % (len(queries), args.rounds), file=sys.stderr)
        search = measure_search(ma, mb, queries, args)
    finally:
        ma.close()
        mb.close()

    # Add phase: synchronous as configured, B on a scratch copy.
    print("[add] copying B to a scratch file", file=sys.stderr)
    remove_db(scratch_b)
    shutil.copyfile(path_b, scratch_b)
    fsync_file(scratch_b)
    fsync_file(path_a)  # built with synchronous OFF: flush it too, for the same reason
    ma, mb = open_memory(path_a, args.add_synchronous), open_memory(scratch_b, args.add_synchronous)
    try:
        print("[add] %d Adds x 2 users per DB, synchronous %s" % (args.add_requests, args.add_synchronous),
              file=sys.stderr)
        add = {
            "fresh_user": measure_adds(ma, mb, extra_adds(gen, args.seed, "fresh-user", "fresh", args.add_requests)),
            "target_user": measure_adds(ma, mb, extra_adds(gen, args.seed, TARGET_USER, "extra", args.add_requests)),
        }
        # The target now holds the new messages in both DBs: results must still agree.
        _, after_a = timed_searches(ma, queries, args.top_k)
        _, after_b = timed_searches(mb, queries, args.top_k)
        add["mismatches_after"] = mismatches(after_a, after_b, queries, "after adds")
    finally:
        ma.close()
        mb.close()
        remove_db(scratch_b)

    search.pop("results")
    figures = {
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "machine": machine(),
        "params": vars(args),
        "top_k": args.top_k,
        "queries": len(queries),
        "build_b": build,
        "db": db,
        "search": search,
        "add": add,
        "search_p50_ratio": search["B"]["p50_ms"] / search["A"]["p50_ms"],
        "add_p50_ratio": {k: add[k]["B"]["p50_ms"] / add[k]["A"]["p50_ms"] for k in ("fresh_user", "target_user")},
    }

    print(table(figures))
    print()
    print("ratio = with other users / empty DB (for msgs/s, below 1 means slower); "
          "search after a warm-up pass, Add on synchronous %s" % args.add_synchronous)
    m = figures["machine"]
    print("machine: %s CPUs, %s, Python %s, SQLite %s" % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    print("command: %s" % figures["command"])
    print("DB B: %d messages, %s in %.0f s (%.0f msg/s)" % (
        build["messages"], "cached, built" if build["reused"] else "built", build["build_s"],
        build["build_msgs_per_s"]))
    print("queries: %d, mean results per query %.1f" % (len(queries), search["mean_results_per_query"]))
    print("result mismatches A vs B: %d (after the Add phase: %d)" % (search["mismatches"], add["mismatches_after"]))

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2, sort_keys=True)

    failures = []
    if search["mismatches"] or add["mismatches_after"]:
        failures.append("%d search results differ between A and B (%d after the Add phase)"
                        % (search["mismatches"], add["mismatches_after"]))
    if figures["search_p50_ratio"] > args.max_search_ratio:
        failures.append("search p50 with other users is %.2fx the empty DB's, above the %.2fx limit"
                        % (figures["search_p50_ratio"], args.max_search_ratio))
    for why in failures:
        print("FAIL: %s" % why)
    if not failures:
        print("PASS: results identical; search p50 ratio %.2fx <= %.2fx"
              % (figures["search_p50_ratio"], args.max_search_ratio))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
