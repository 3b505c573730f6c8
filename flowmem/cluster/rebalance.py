"""Hand slots to the nodes that hold fewer than their share (a node just added), moving their users.

    flowmem cluster rebalance --cluster DIR [--limit K] [--dry-run]
    flowmem cluster rebalance --cluster DIR --slot S --to NODE

Each user belongs to a slot, crc32(user id) % 1024, and the slot map names each slot's node
(haproxy.py). A node added to the cluster (`flowmem cluster add-node`) owns no
slot. This tool plans the fewest slot handovers that leave every node within one slot of an
equal share (from the node with the most slots, its highest-numbered slot first, to the node
with the fewest; names break ties, so the plan is the same every run) and carries them out
one slot at a time, or the one slot named by --slot. Handing slot S from node A to node B:

1. freeze: S's entry in the slot map becomes `frozen` (HAProxy's runtime API and the file):
   the front answers every user of S that has no entry of its own 503 with Retry-After, and
   the requests already routed to a node are waited for, as move.py waits.
2. pin: each user A holds whose slot is S and who has no shard map entry gets one naming A,
   so it is served by A again at once, and stays there whatever S's entry says.
3. switch: S's entry becomes B. A user of S seen for the first time from now on is B's.
4. move: each user pinned in step 2 (every entry naming A for a user of S) is moved to B by
   move.py, one at a time; its entry goes at the end, as B is now its slot's node.

A user of S sees 503 from step 1 to step 2 (a listing of A's users and one map entry each),
then only for its own move's window (move.py). No user is ever routed to a node
that does not hold it: while S names A, its users are on A; in step 2 each of them gets an
entry naming A before S names B, and S is frozen meanwhile, so no user of S can begin on A
unpinned. Restartable: a journal (`<slots map>.moves/slot-S.json`) is written before step 1
and removed at the end; run the same command again to finish what was begun. The tool holds
move.py's lock on the shard map for its whole run. Exit status: 0 done, 1 some
user's move aborted (it stays pinned to A and is served there: run again to retry it), 2
stopped by an error (run again to resume).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..client import Client
from ..errors import FlowmemError
from . import control, move, placement
from .haproxy import FROZEN, read_map, read_slots, slot_of
from .placement import MoveAborted, say

Handover = Tuple[int, str, str]  # (slot, from node, to node)


def plan(slots: Sequence[str], names: Sequence[str]) -> List[Handover]:
    """The fewest handovers that leave every node of `names` within one slot of an equal share."""
    held = {name: [s for s, node in enumerate(slots) if node == name] for name in names}
    moves: List[Handover] = []
    while True:
        richest = max(names, key=lambda n: (len(held[n]), -names.index(n)))
        poorest = min(names, key=lambda n: (len(held[n]), names.index(n)))
        if len(held[richest]) - len(held[poorest]) <= 1:
            return moves
        slot = held[richest].pop()
        held[poorest].append(slot)
        moves.append((slot, richest, poorest))


def journal_path(cluster: Dict[str, Any], slot: int) -> str:
    return os.path.join(cluster["slots"] + ".moves", "slot-%d.json" % slot)


def write_journal(cluster: Dict[str, Any], journal: Dict[str, Any]) -> None:
    control.write_json(journal_path(cluster, journal["slot"]), journal)


def read_journal(cluster: Dict[str, Any], slot: int) -> Optional[Dict[str, Any]]:
    return control.read_json(journal_path(cluster, slot))


def pin(cluster: Dict[str, Any], journal: Dict[str, Any], api_key: Optional[str], drain_timeout: float) -> int:
    """Steps 1-2: the slot frozen, requests in flight ended, its users on the old node pinned there; how many."""
    slot, source = journal["slot"], journal["from"]
    frozen_at = time.monotonic()
    control.set_slot(cluster, slot, FROZEN)
    try:
        in_flight = move.drain(placement.Runtime(cluster["admin_socket"]), drain_timeout)
    except MoveAborted:  # nothing has changed hands yet: the slot is its old node's again
        control.set_slot(cluster, slot, source)
        os.remove(journal_path(cluster, slot))
        raise
    url = next(node["url"] for node in cluster["nodes"] if node["name"] == source)
    entries = read_map(cluster["map"])
    users = [user for user in Client(url, api_key=api_key).user_ids()
             if slot_of(user) == slot and user not in entries]
    for user in users:
        control.set_owner(cluster, user, source)
    journal["step"] = "pinned"
    write_journal(cluster, journal)
    say("slot %d: frozen, %d requests in flight waited for, %d users of %s pinned there (%.2f s)"
                  % (slot, in_flight, len(users), source, time.monotonic() - frozen_at))
    return len(users)


def hand_over(cluster: Dict[str, Any], slot: int, to: str, api_key: Optional[str],
              drain_timeout: float) -> Dict[str, Any]:
    """Hand `slot` to node `to` (or finish its unfinished handover). What it took: `frozen_s` (from the
    freeze to the switch: the 503 of the slot's users with no entry), `users` moved, `aborted` moves."""
    started = time.monotonic()
    report = {"slot": slot, "frozen_s": 0.0, "users": 0, "aborted": 0}
    journal = read_journal(cluster, slot)
    if journal is None:
        source = read_slots(cluster["slots"])[slot]
        if source == FROZEN:
            raise FlowmemError("slot %d is frozen but no handover of it is journalled: set its entry by hand" % slot)
        if source == to:
            return report
        journal = {"slot": slot, "from": source, "to": to, "step": "freeze"}
        write_journal(cluster, journal)
    elif journal["to"] != to:
        raise FlowmemError("slot %d's unfinished handover goes to %s: finish that first" % (slot, journal["to"]))
    if journal["step"] == "freeze":
        pin(cluster, journal, api_key, drain_timeout)
    control.set_slot(cluster, slot, to)  # step 3: users seen from now on begin on the new node
    report["frozen_s"] = time.monotonic() - started
    pinned = sorted(user for user, node in read_map(cluster["map"]).items()
                    if node == journal["from"] and slot_of(user) == slot)
    say("slot %d: %s -> %s; moving its %d users" % (slot, journal["from"], to, len(pinned)))
    slots = read_slots(cluster["slots"])  # as step 3 left it: the moves change only the shard map
    for user in pinned:  # step 4
        status = move.move(placement.plan_for(cluster, user, api_key, slots), user, to,
                                drain_timeout=drain_timeout)
        report["aborted"] += status != 0
    report["users"] = len(pinned)
    if not report["aborted"]:
        with contextlib.suppress(FileNotFoundError):
            os.remove(journal_path(cluster, slot))
    return report


def unfinished(cluster: Dict[str, Any]) -> List[Handover]:
    """The journalled handovers a stopped run left, by slot."""
    directory = cluster["slots"] + ".moves"
    found = []
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if name.startswith("slot-") and name.endswith(".json"):
            journal = read_journal(cluster, int(name[len("slot-"):-len(".json")]))
            if journal is not None:
                found.append((journal["slot"], journal["from"], journal["to"]))
    return sorted(found)


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """`flowmem cluster rebalance`; the exit status (0 done, 1 some move aborted, 2 stopped by an error)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", metavar="DIR", required=True, help="the cluster's directory (cluster.json)")
    parser.add_argument("--slot", type=int, help="hand over this one slot (with --to)")
    parser.add_argument("--to", help="the node that is to own --slot")
    parser.add_argument("--limit", type=int, help="hand over at most this many slots of the plan")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    parser.add_argument("--api-key-file", help="a file whose first line is the nodes' API key")
    parser.add_argument("--drain-timeout", type=float, default=130.0, help="as move-user's")
    args = parser.parse_args(argv)
    if (args.slot is None) != (args.to is None):
        parser.error("--slot and --to go together")
    cluster = control.load(args.cluster)
    names = [node["name"] for node in cluster["nodes"]]
    if args.to is not None and args.to not in names:
        parser.error("no node %r (nodes: %s)" % (args.to, ", ".join(names)))
    api_key = placement.resolve_key(args.api_key_file, cluster)
    placement.STARTED = time.monotonic()
    try:
        with placement.locked(cluster["map"]):
            todo = unfinished(cluster)
            if args.slot is not None:
                todo += [(args.slot, "", args.to)]
            else:
                todo += plan(read_slots(cluster["slots"]), names)[:args.limit]
            if args.dry_run:
                for slot, source, to in todo:
                    print("slot %d: %s -> %s" % (slot, source or "its node", to))
                return 0
            aborted = sum(hand_over(cluster, slot, to, api_key, args.drain_timeout)["aborted"] for slot, _, to in todo)
    except (FlowmemError, MoveAborted, OSError, ValueError, RuntimeError) as e:
        print("flowmem cluster rebalance: stopped: %s (run it again to finish)" % e, file=sys.stderr)
        return 2
    slots = read_slots(cluster["slots"])
    counts = {name: slots.count(name) for name in names}
    say("slots per node: %s" % ", ".join("%s %d" % item for item in counts.items()))
    return 1 if aborted else 0
