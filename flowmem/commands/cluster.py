"""`flowmem cluster ACTION ...`: the operator's cluster actions (flowmem/cluster/), one command.

Each action is a command line of its own (its main(argv, prog) in flowmem/cluster/, with
its own flags, help and exit statuses: move-user's 0 moved, 1 aborted, 2 stopped), so this
record only names them and hands the rest of the arguments over: `flowmem cluster up
--nodes 3 --dir cluster`, `flowmem cluster move-user --cluster cluster USER node2`,
`flowmem cluster ACTION --help` for each one's flags. It reads no flowmem settings: the
nodes it starts read theirs.
"""
from __future__ import annotations

import argparse
from typing import Callable, Dict, List, Optional, Tuple

from ..cluster import haproxy, move, nodes, rebalance, replication
from .command import Command

Main = Callable[[Optional[List[str]], Optional[str]], int]

# action -> (what it does, its main, the words put before the rest of its arguments)
ACTIONS: Dict[str, Tuple[str, Main, List[str]]] = {
    "up": ("start a loopback cluster: nodes, Litestream beside each, HAProxy in front", nodes.main, ["up"]),
    "add-node": ("start one more node and reload the front to know it", nodes.main, ["add-node"]),
    "status": ("each process's state and the front's /health, as JSON", nodes.main, ["status"]),
    "down": ("stop the front, then the nodes, then Litestream", nodes.main, ["down"]),
    "move-user": ("move one user to another node, losing no acknowledged Add", move.main, []),
    "rebalance": ("hand slots to nodes holding fewer than their share, moving their users", rebalance.main, []),
    "replication": ("a node's Litestream configuration, or a database restored from its replica",
                    replication.main, []),
    "haproxy-config": ("write the front's HAProxy configuration for the nodes given", haproxy.main, []),
}


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=list(ACTIONS), metavar="ACTION",
                   help="; ".join("%s: %s" % (name, what) for name, (what, _, _) in ACTIONS.items()))
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="...",
                   help="its arguments (flowmem cluster ACTION --help)")


def _cluster(args: argparse.Namespace) -> int:
    _, main, words = ACTIONS[args.action]
    prog = "flowmem cluster" if words else "flowmem cluster " + args.action
    return main(words + args.rest, prog)


CLUSTER = Command(
    "cluster", "a cluster of nodes behind HAProxy: up, down, status, move-user, rebalance, ...",
    "The operator's actions on a cluster of flowmem nodes behind HAProxy, with Litestream beside each "
    "(docs/cluster.md). Each action takes its own arguments: flowmem cluster ACTION --help.",
    _cluster, _arguments, groups=())
