#!/usr/bin/env python3
"""The recovery point of a flowmem node replicated by Litestream: how much acknowledged data a sudden loss loses.

Each trial, in a fresh temporary folder:

1. starts `python -m flowmem serve` (FLOWMEM_CHECKPOINTS=external, or `--checkpoints`)
   on a new database and Litestream beside it (flowmem/cluster/replication.py, a file replica,
   `--sync-interval`);
2. sends Adds from `--clients` threads for `--duration` seconds plus a random part of
   the sync interval (so that the loss falls anywhere between two syncs, not at the
   same point of Litestream's cycle every trial), each Add one message with a unique
   request_id, and records when each was acknowledged (HTTP 200);
3. kills flowmem and Litestream together with SIGKILL (a node lost at once: no
   shutdown sync), deletes the database, its -wal and -shm and Litestream's local
   state, as a lost disk would;
4. restores the database from the replica (`litestream restore`, integrity-checked),
   starts flowmem on it and checks it answers a Search for the oldest and the newest
   restored Add; then reads which acknowledged request_ids the restored file holds.

It reports, per trial, how many acknowledged Adds were lost and how long before the
loss the oldest of them was acknowledged: every Add acknowledged earlier than that was
present. Exit status 1 if any Add acknowledged more than `--bound` seconds before the
loss is missing (default: the sync interval plus 2 s, Litestream's 1 s look at the WAL
and 1 s of slack), or a restore or its checks fail.

    python -m tools.measure_rpo                       # 5 trials, 1 s sync interval, 10 s of Adds
    python -m tools.measure_rpo --trials 3 --sync-interval 5s --out rpo.json
    python -m tools.measure_rpo --sync-interval 5s --clients 1 --rate 20 --duration 15   # a light load
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

from flowmem.client import Client
from flowmem.cluster import replication
from flowmem.errors import FlowmemError
from tools.benchkit.server import ServerProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_flowmem(db: str, log_path: str, checkpoints: str = "external") -> ServerProcess:
    """`flowmem serve` on an ephemeral port, checkpoints left to Litestream unless told."""
    return ServerProcess(db, log_path, extra_args=["--checkpoints", checkpoints], timeout_s=30.0)


def word(request_id: str) -> str:
    """A word only this Add's message holds (letters: a search reads it as one word)."""
    return "zz" + "".join(chr(ord("a") + int(d)) if d.isdigit() else "q" for d in request_id[1:])


def send_adds(endpoint: str, clients: int, duration: float, rate: float = 0.0) -> Dict[str, float]:
    """Adds from `clients` threads for `duration` seconds, each at most `rate` a second (0: no limit);
    request_id -> monotonic time acknowledged."""
    acked: Dict[str, float] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + duration

    def client(n: int) -> None:
        c, i = Client(endpoint, timeout=10), 0
        while time.monotonic() < stop_at:
            i += 1
            request_id = "c%d-%d" % (n, i)
            try:
                c.add({"request_id": request_id, "user_id": "user-%d" % (i % 10), "session_id": "s-%d" % n,
                       "messages": [{"role": "user", "content": "note %s about the garden" % word(request_id)}]})
            except (FlowmemError, OSError):
                continue  # not acknowledged: not counted
            with lock:
                acked[request_id] = time.monotonic()
            if rate:
                time.sleep(1 / rate)

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(duration + 15)
    return acked


def lose_node(server: ServerProcess, litestream: "subprocess.Popen[bytes]", db: str) -> float:
    """SIGKILL flowmem and Litestream at once and delete the node's database files; the moment of the loss."""
    lost_at = time.monotonic()
    for p in (server.proc, litestream):
        p.send_signal(signal.SIGKILL)
    litestream.wait()
    server.stop()  # killed already: reaped, its log closed
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    meta = os.path.join(os.path.dirname(db), "." + os.path.basename(db) + "-litestream")
    shutil.rmtree(meta, ignore_errors=True)
    return lost_at


def check_served(db: str, directory: str, present: List[str]) -> None:
    """flowmem started on the restored file answers /health and finds the oldest and newest restored Adds."""
    server = start_flowmem(db, os.path.join(directory, "flowmem-restored.log"))
    try:
        c = Client(server.endpoint, timeout=30)
        for request_id in (present[0], present[-1]):
            n = int(request_id.split("-")[1])
            found = c.search({"user_id": "user-%d" % (n % 10), "query": word(request_id), "top_k": 5})["data"]
            if not any(word(request_id) in item["content"] for item in found):
                raise RuntimeError("the restored node does not find the Add %s" % request_id)
    finally:
        server.stop(30)


def trial(args: argparse.Namespace, directory: str) -> Dict[str, Any]:
    db = os.path.join(directory, "flowmem.db")
    flowmem = start_flowmem(db, os.path.join(directory, "flowmem.log"), args.checkpoints)
    litestream = replication.start_litestream(db, directory, args.sync_interval)
    time.sleep(args.warmup)
    acked = send_adds(flowmem.endpoint, args.clients, args.duration + random.uniform(0, args.interval_s), args.rate)
    lost_at = lose_node(flowmem, litestream, db)
    restored = os.path.join(directory, "restored.db")
    result = replication.restore(os.path.join(directory, "replica"), restored)
    conn = sqlite3.connect(restored)
    try:
        stored = {row[0] for row in conn.execute("SELECT request_id FROM requests")}
    finally:
        conn.close()
    in_order = sorted(acked, key=acked.get)  # type: ignore[arg-type]
    present = [r for r in in_order if r in stored]
    missing = [r for r in in_order if r not in stored]
    if present:
        check_served(restored, directory, present)
    oldest_lost = lost_at - acked[missing[0]] if missing else 0.0
    return {"acknowledged": len(acked), "restored": len(present), "lost": len(missing),
            "oldest_lost_age_s": round(oldest_lost, 3),
            "newest_restored_age_s": round(lost_at - acked[present[-1]], 3) if present else None,
            "unacknowledged_restored": len(stored - set(acked)), "restored_messages": result["messages"]}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--sync-interval", default=replication.SYNC_INTERVAL, help="Litestream's (Go duration: 1s)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of Adds before the loss")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rate", type=float, default=0.0, help="Adds a second per client, at most (0: no limit)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds Litestream runs before the Adds")
    parser.add_argument("--bound", type=float, help="fail if an Add older than this many seconds is lost")
    parser.add_argument("--checkpoints", choices=("external", "flowmem"), default="external",
                        help="the flowmem setting during the Adds (flowmem: its own checkpointer, for comparison)")
    parser.add_argument("--out", help="write every figure as JSON here")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[0-9.]+s", args.sync_interval):
        parser.error("--sync-interval: seconds, as 1s or 0.5s")
    args.interval_s = float(args.sync_interval[:-1])
    bound = args.bound if args.bound is not None else args.interval_s + 2.0
    trials = []
    for n in range(args.trials):
        with tempfile.TemporaryDirectory(prefix="flowmem-rpo-") as directory:
            trials.append(trial(args, directory))
        t = trials[-1]
        print("trial %d: %d Adds acknowledged, %d lost; the oldest lost was acknowledged %.2f s before the loss, "
              "the newest restored %.2f s before" % (n + 1, t["acknowledged"], t["lost"], t["oldest_lost_age_s"],
                                                   t["newest_restored_age_s"] or 0.0), flush=True)
    worst = max(t["oldest_lost_age_s"] for t in trials)
    print("sync interval %s, %d trials: every Add acknowledged more than %.2f s before the loss was present; "
          "at most %d Adds (%.2f s of Adds) lost" % (args.sync_interval, len(trials), worst,
                                                      max(t["lost"] for t in trials), worst))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"sync_interval": args.sync_interval, "checkpoints": args.checkpoints, "clients": args.clients,
                       "rate": args.rate, "duration_s": args.duration, "trials": trials, "worst_lost_age_s": worst},
                      f, indent=2)
    return 1 if worst > bound else 0


if __name__ == "__main__":
    sys.exit(main())
