#!/usr/bin/env python3
"""What the HAProxy front costs: Add throughput and Search latency through it, with 1 and 3 nodes, beside a node.

    python -m tools.bench_cluster [PATH/locomo10-dev.json] [--users 30] [--adds 600] [--searches 600] [--clients 8]

Three fresh loopback clusters (flowmem/cluster/nodes.py, no Litestream: this measures the routing
hop alone) in a temporary directory: one node asked directly, the same layout asked
through the front, and three nodes through the front. Each gets the same work: `--adds`
Adds of 20 messages over `--users` users from `--clients` keep-alive clients at once
(Adds/s), then `--searches` Searches from one client (p50, p99: the hop's latency) and
the same from all clients at once (Searches/s). Text is LoCoMo's conversations and
questions when its path is given and exists, else synthetic sentences (it says which, in
one line). Needs haproxy (apt-get install haproxy).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Sequence, Tuple

from flowmem.cluster import haproxy, nodes as cluster_nodes
from tools.benchkit.stats import nearest_rank as percentile
from tools.evalkit import dataset as datasets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORDS = ("river garden coffee piano museum hiking recipe budget vacation painting guitar soccer novel camera "
         "bakery library concert puppy marathon festival").split()


def texts(path: str, seed: int) -> Tuple[List[List[str]], List[str], str]:
    """(conversations as lists of message texts, questions, what they are)."""
    if path and os.path.isfile(path):
        data = datasets.load_locomo(path)
        convs = [[t.content for s in c.sessions for t in s.turns] for c in data.conversations]
        questions = [q.question for c in data.conversations for q in c.questions]
        return convs, questions, "LoCoMo text from %s" % os.path.basename(path)
    if path:
        print("LoCoMo file not found: %s; using synthetic text" % path, flush=True)
    rnd = random.Random(seed)
    convs = [["Speaker%d: I talked about the %s and the %s %d times" % (i % 2, rnd.choice(WORDS), rnd.choice(WORDS), j)
              for j in range(400)] for i in range(10)]
    questions = ["What did they say about the %s?" % rnd.choice(WORDS) for _ in range(200)]
    return convs, questions, "synthetic text"


class Conn:
    """One keep-alive connection that posts JSON and times it."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)

    def post(self, path: str, body: Dict[str, Any]) -> float:
        data = json.dumps(body).encode()
        started = time.perf_counter()
        self.conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        resp = self.conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise RuntimeError("%s gave %d" % (path, resp.status))
        return (time.perf_counter() - started) * 1000.0


def in_parallel(url: str, clients: int, jobs: Sequence[Tuple[str, Dict[str, Any]]]) -> Tuple[float, List[float]]:
    """Run `jobs` from `clients` connections at once: (seconds, latencies in ms)."""
    latencies: List[float] = []
    errors: List[BaseException] = []
    lock = threading.Lock()

    def run(mine: Sequence[Tuple[str, Dict[str, Any]]]) -> None:
        conn = Conn(url)
        try:
            for path, body in mine:
                ms = conn.post(path, body)
                with lock:
                    latencies.append(ms)
        except BaseException as e:  # reported after the join
            errors.append(e)

    threads = [threading.Thread(target=run, args=(jobs[i::clients],)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("a client failed: %s" % errors[0])
    return time.perf_counter() - started, latencies


def workload(convs: List[List[str]], questions: List[str], args: argparse.Namespace) -> Tuple[list, list]:
    adds, searches = [], []
    for i in range(args.adds):
        user = i % args.users
        conv = convs[user % len(convs)]
        start = (i // args.users) * 20 % max(1, len(conv) - 20)
        messages = [{"role": "user", "content": text, "timestamp": 1683554160000 + k}
                    for k, text in enumerate(conv[start:start + 20])]
        adds.append(("/add", {"request_id": "r%d" % i, "user_id": "bench user %d é" % user, "session_id": "s%d" % i,
                              "messages": messages}))
    for i in range(args.searches):
        searches.append(("/search", {"query": questions[i % len(questions)], "user_id": "bench user %d é" % (
            i % args.users), "top_k": 10}))
    return adds, searches


def measure(cluster: Dict[str, Any], adds: list, searches: list, clients: int) -> Dict[str, float]:
    """Adds/s and Searches/s through the front; Search latency through the front and at the owner node, paired."""
    slots = haproxy.read_slots(cluster["slots"])  # a fresh cluster: no user has a map entry
    seconds, _ = in_parallel(cluster["front"], clients, adds)
    front = Conn(cluster["front"])
    nodes = {n["name"]: Conn(n["url"]) for n in cluster["nodes"]}
    for path, body in searches[:max(20, len({b["user_id"] for _, b in searches}))]:
        front.post(path, body)
    via_front, direct, extra = [], [], []
    for i, (path, body) in enumerate(searches):
        # The same Search at the owner node and through the front, in turns first: noise and caches hit both.
        owner = nodes[haproxy.hashed_owner(body["user_id"], slots)]
        if i % 2:
            at_node, through = owner.post(path, body), front.post(path, body)
        else:
            through, at_node = front.post(path, body), owner.post(path, body)
        direct.append(at_node)
        via_front.append(through)
        extra.append(through - at_node)
    many_s, _ = in_parallel(cluster["front"], clients, searches)
    return {"adds_per_s": len(adds) / seconds, "direct_p50": percentile(direct, 50),
            "direct_p99": percentile(direct, 99), "p50": percentile(via_front, 50),
            "p99": percentile(via_front, 99), "extra_p50": percentile(extra, 50),
            "searches_per_s": len(searches) / many_s}


def direct_adds(cluster: Dict[str, Any], adds: list, clients: int) -> float:
    """Adds/s sent to the one node directly."""
    seconds, _ = in_parallel(cluster["nodes"][0]["url"], clients, adds)
    return len(adds) / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("locomo", nargs="?", default="", help="LoCoMo JSON (locomo10-dev.json); synthetic without")
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--adds", type=int, default=600)
    parser.add_argument("--searches", type=int, default=600)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-body-bytes", type=int, default=haproxy.MAX_BODY_BYTES,
                        help="nodes' and front's body limit")
    args = parser.parse_args()
    if cluster_nodes.haproxy_binary() is None:
        print("error: haproxy not installed (apt-get install haproxy)", file=sys.stderr)
        return 1
    convs, questions, what = texts(args.locomo, 14)
    adds, searches = workload(convs, questions, args)
    print("%s; %d Adds of 20 messages over %d users from %d clients, %d Searches (top_k 10); %d CPUs"
          % (what, len(adds), args.users, args.clients, len(searches), os.cpu_count() or 0), flush=True)
    rows: List[Tuple[int, Any]] = []  # (nodes, Adds/s directly when 0, else measure()'s figures)
    with tempfile.TemporaryDirectory(prefix="flowmem-bench-cluster-") as tmp:
        for nodes in (0, 1, 3):  # 0: one node asked directly (Adds only; its Searches are paired below)
            directory = os.path.join(tmp, "c%d" % nodes)
            cluster = cluster_nodes.up(directory, max(1, nodes), 0, replicate=False, max_body_bytes=args.max_body_bytes)
            try:
                rows.append((nodes, direct_adds(cluster, adds, args.clients) if nodes == 0
                             else measure(cluster, adds, searches, args.clients)))
            finally:
                cluster_nodes.down(directory)
    print("\nAdds/s: one node directly %.0f" % rows[0][1])
    print("\n| through the front | Adds/s | Search p50 / p99 ms at the owner node | through the front "
          "| extra per Search, median | Searches/s (%d clients) |" % args.clients)
    print("|---|---|---|---|---|---|")
    for nodes, r in rows[1:]:
        print("| %d node%s | %.0f | %.2f / %.2f | %.2f / %.2f | %.2f ms | %.0f |"
              % (nodes, "s" if nodes > 1 else "", r["adds_per_s"], r["direct_p50"], r["direct_p99"], r["p50"],
                 r["p99"], r["extra_p50"], r["searches_per_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
