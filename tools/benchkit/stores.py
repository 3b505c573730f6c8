"""The benches' databases: built once through the in-process API, cached with what made them.

A large database (a million messages of a thousand users) takes minutes to build, so it is
kept in a work folder beside a JSON sidecar of the parameters that made it and a hash of
flowmem's write path (the modules that decide what a database holds): a change to either
rebuilds it, nothing else does. Built under a temporary name and renamed at the end, so an
interrupted build is never taken for a complete one.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sqlite3
import sys
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from flowmem.config import load
from flowmem.memory import Memory
from flowmem.storage import schema as flowmem_schema
from tools.benchkit.corpus import (
    GENERATOR_VERSION,
    TARGET_USER,
    TextGen,
    interleave,
    make_queries,
    other_adds_round_robin,
    target_adds,
)
from tools.benchkit.process import rss_figures
from tools.benchkit.server import REPO_ROOT

BULK_ADD_MESSAGES = 200  # the other users' session length, and so Add size (build speed only)


# Modules whose code decides what a database holds (every module of the text and storage
# layers, and these): a change to any of them makes a cached DB B stale (its views or
# index terms could differ from a fresh DB A's).
WRITE_PATH_PACKAGES = ("text", "storage")
WRITE_PATH_MODULES = ("validation.py", "config.py")


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


def store_args(other_users: int, messages_per_user: int, target_messages: int, seed: int, vocabulary: int,
               rebuild: bool = False, bulk_add_messages: int = BULK_ADD_MESSAGES) -> argparse.Namespace:
    """The parameters build_b reads (bench_isolation's options of the same names), for a caller without them."""
    return argparse.Namespace(other_users=other_users, messages_per_user=messages_per_user,
                              target_messages=target_messages, seed=seed, vocabulary=vocabulary,
                              rebuild=rebuild, bulk_add_messages=bulk_add_messages)


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

QUERY_SOURCE_MESSAGES = 5000  # queries are drawn from at most this many of the user's messages


class StoreSpec(NamedTuple):
    """One database searched: the measured user's messages among `other_users` others."""

    label: str
    path: str
    target_messages: int
    other_users: int
    messages_per_other: int


def build_store(spec: StoreSpec, seed: int, vocabulary: int, rebuild: bool) -> Dict[str, Any]:
    """Phase: make sure `spec`'s database exists, reusing the cache (build_b)."""
    args = store_args(spec.other_users, spec.messages_per_other, spec.target_messages, seed, vocabulary, rebuild)
    gen = TextGen(args.seed, args.vocabulary)
    record = build_b(spec.path, gen, args, target_adds(gen, args))
    record.update(rss_figures())
    return record


def store_queries(conn: sqlite3.Connection, user_id: str, count: int, seed: int, vocabulary: int) -> List[str]:
    """`count` queries drawn from the user's own stored messages (bench_isolation's recipe).

    Read from the database so that the queries of a 100k store need not regenerate its
    text; every k-th message, in the order they were added. For a 1k user all messages
    are read, in the order of bench_isolation's Adds, so its queries are its queries.
    """
    (n,) = conn.execute(
        "SELECT coalesce(sum(s.n_messages), 0) FROM sessions s JOIN users u ON u.user_key = s.user_key"
        " WHERE u.user_id = ?", (user_id,)).fetchone()
    step = max(1, -(-n // QUERY_SOURCE_MESSAGES))
    contents = [row[0] for row in conn.execute(
        "SELECT m.content FROM messages m JOIN sessions s ON s.session_key = m.session_key"
        " JOIN users u ON u.user_key = s.user_key WHERE u.user_id = ? AND m.rowid % ? = 0 ORDER BY m.rowid",
        (user_id, step))]
    # make_queries only reads body["messages"][i]["content"]; one pseudo-body holds them all.
    gen = TextGen(seed, vocabulary)
    return make_queries(gen, [{"messages": [{"content": c} for c in contents]}], seed, count)
