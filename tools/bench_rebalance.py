#!/usr/bin/env python3
"""What adding a node costs: HAProxy's reload under load, and handing slots (and their users) to the new node.

    python -m tools.bench_rebalance [--users 3000] [--messages 20] [--slots 16]

A fresh loopback cluster of three nodes (flowmem/cluster/nodes.py, no Litestream) in a temporary
directory gets `--users` users of `--messages` messages each (synthetic sentences, Adds of
at most 20, through the front). Then, with one client searching through the front all
along (its refusals counted): `flowmem cluster add-node` (node4 and HAProxy's reload),
and the first `--slots` handovers of flowmem/cluster/rebalance.py's plan, each timed: from the
slot's freeze to its switch (the 503 its users without an entry of their own see), and
the moves of its users. Prints a table and the extrapolation to the whole plan. Needs
haproxy (apt-get install haproxy).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

from flowmem.client import Client
from flowmem.cluster import control, nodes as cluster_nodes, placement, rebalance
from flowmem.cluster.haproxy import node_names, read_slots

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORDS = ("river garden coffee piano museum hiking recipe budget vacation painting guitar soccer novel camera "
         "bakery library concert puppy marathon festival").split()


def fill(front: str, users: int, messages: int, seed: int) -> None:
    rnd = random.Random(seed)
    client = Client(front, timeout=60)
    for u in range(users):
        texts = ["user %d spoke of the %s and the %s, turn %d" % (u, rnd.choice(WORDS), rnd.choice(WORDS), i)
                 for i in range(messages)]
        for start in range(0, messages, 20):
            client.add({"request_id": "bench-%d-%d" % (u, start), "user_id": "bench-%d" % u, "session_id": "s",
                        "messages": [{"role": "user", "content": t, "timestamp": 1700000000000 + i}
                                     for i, t in enumerate(texts[start:start + 20], start)]})


class Searcher(threading.Thread):
    """One client searching random users through the front until stopped; its answers by status."""

    def __init__(self, front: str, users: int):
        super().__init__(daemon=True)
        self.front, self.users = front, users
        self.statuses: Dict[int, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        rnd = random.Random(1)
        while not self.stop.is_set():
            body = {"user_id": "bench-%d" % rnd.randrange(self.users), "query": rnd.choice(WORDS), "top_k": 10}
            status, _ = placement.search_bytes(self.front, body)
            self.statuses[status] = self.statuses.get(status, 0) + 1


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=3000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--slots", type=int, default=16, help="handovers of the plan carried out and timed")
    args = parser.parse_args(argv)
    if not cluster_nodes.haproxy_binary():
        print("haproxy not found (apt-get install haproxy)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="flowmem-bench-rebalance-") as directory:
        cluster = cluster_nodes.up(directory, nodes=3, base_port=0, replicate=False)
        try:
            started = time.monotonic()
            fill(cluster["front"], args.users, args.messages, seed=7)
            print("%d users of %d messages added through the front in %.1f s"
                  % (args.users, args.messages, time.monotonic() - started))
            searcher = Searcher(cluster["front"], args.users)
            searcher.start()
            started = time.monotonic()
            cluster_nodes.add_node(directory)
            print("add-node (node4 started, HAProxy reloaded): %.1f s; searches meanwhile: %s"
                  % (time.monotonic() - started, dict(searcher.statuses)))
            cluster = control.load(directory)
            moves = rebalance.plan(read_slots(cluster["slots"]), node_names(4))
            reports = []
            for slot, _, to in moves[:args.slots]:
                started = time.monotonic()
                with contextlib.redirect_stdout(io.StringIO()):  # each step's lines: not wanted here
                    report = rebalance.hand_over(cluster, slot, to, None, 130.0)
                report["total_s"] = time.monotonic() - started
                reports.append(report)
            searcher.stop.set()
            searcher.join()
            summarise(reports, len(moves), args, searcher.statuses)
        finally:
            cluster_nodes.down(directory)
    return 0


def summarise(reports: List[Dict[str, Any]], planned: int, args: argparse.Namespace,
              statuses: Dict[int, int]) -> None:
    print("| slot | users moved | frozen (503 for its users without an entry) s | handover s |")
    print("| ---: | ---: | ---: | ---: |")
    for r in reports:
        print("| %d | %d | %.2f | %.2f |" % (r["slot"], r["users"], r["frozen_s"], r["total_s"]))
    users = sum(r["users"] for r in reports)
    total = sum(r["total_s"] for r in reports)
    print("frozen per slot: median %.2f s, max %.2f s; %d users moved in %.1f s (%.2f s a user); aborted %d"
          % (statistics.median(r["frozen_s"] for r in reports), max(r["frozen_s"] for r in reports), users,
             total, total / max(users, 1), sum(r["aborted"] for r in reports)))
    print("the whole plan: %d handovers, about %.0f s at this rate; searches through the front meanwhile: %s"
          % (planned, total / len(reports) * planned, dict(statuses)))


if __name__ == "__main__":
    sys.exit(main())
