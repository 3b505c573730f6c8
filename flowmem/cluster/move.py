"""Move one user from the flowmem node that owns it to another, on purpose, losing no acknowledged Add.

    flowmem cluster move-user --cluster DIR USER_ID TO_NODE
    flowmem cluster move-user --front URL --admin-socket SOCK --map FILE --from URL --to URL USER_ID TO_NODE

A sharded deployment (docs/cluster.md) routes each user to one node by a
hash of its id (its slot's node, in the slot map), overridden by HAProxy's shard map.
Moving a user is six steps, each printed:

1. copy: whatever the new node holds of the user is deleted (it does not own the user, so
   that is a leftover of an unfinished move), then the old node's export is imported into it,
   while the old node goes on serving the user: the long part costs the user nothing.
2. freeze: the user's map entry becomes `frozen` (HAProxy's runtime API, and the map file),
   so the front answers that user 503 with Retry-After and no request of theirs reaches any
   node. Requests already sent to a node before the freeze are waited for: HAProxy's own list
   of streams (`show sess all`) is read once the map has changed, and the move goes on when
   every stream that was then routed to a backend has ended (each has a unique id), so no Add
   can be acknowledged by the old node after step 3 read it. A probe through the front must get 503.
3. copy the rest: the export is read on from where step 1 ended (its order is stable), so only
   the Adds acknowledged meanwhile are imported.
4. verify: both nodes list the same sessions with the same message counts, the count is what
   was exported, and a fixed set of searches (queries drawn from the user's own messages by a
   hash, so the same every run) answers byte for byte alike. A difference (a session deleted
   during step 1) gets one whole copy, made frozen, and a second verification; a difference
   then, or a node failing before step 5, aborts: the map entry goes back to what it was and
   the copy on the new node is deleted.
5. switch: the map entry becomes the new node (removed when the user's slot names it),
   live through the runtime API and in the map file, so a restart of HAProxy keeps it.
6. delete: the user is deleted from the old node, a session at a time so that no other
   user's Add there waits long (after importing again, idempotently, any Add that reached
   it after the copy, should one have).

The user sees 503 from step 2 to step 5: the time to copy the Adds acknowledged during
step 1 and to verify, not the time to copy the whole user.

Restartable: a journal (`<map>.moves/<hash of the user>.json`) is written before step 1 and
removed at the end. If the tool dies, the user is still served by the old node (step 1),
stays frozen (steps 2-5: 503, which the platform retries) or is served by the new node
(step 6); running the same command again resumes from step 1 (the copy redone from scratch)
or, once verified, from the switch. `--abort` undoes an unfinished move that has not
switched. One move at a time per map file (a lock file beside it). Exit status: 0 moved
(or already there), 1 aborted (the user is back on the old node), 2 stopped by an error
(the journal says where: run it again to resume, or --abort).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import heapq
import sys
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from ..client import Client
from ..errors import FlowmemError
from . import control, placement
from .haproxy import FROZEN
from .placement import (
    MoveAborted,
    Plan,
    Runtime,
    drop_journal,
    explicit_plan,
    locked,
    plan_for,
    read_journal,
    resolve_key,
    say,
    sessions,
    set_entry,
    write_journal,
)

QUERY_WORDS = 12  # words of a message that make a verification query


def freeze(plan: Plan, journal: Dict[str, Any], drain_timeout: float) -> None:
    """The front answers the user 503, and every request routed before that has ended."""
    set_entry(plan, journal["user_id"], FROZEN)
    started, journal["frozen_at"] = time.monotonic(), time.time()
    in_flight = drain(plan.runtime, drain_timeout)
    status, _ = plan.search_bytes(plan.front, {"user_id": journal["user_id"], "query": "frozen", "top_k": 1})
    if status != 503:
        raise MoveAborted("the front answered the frozen user %d, not 503: is the map key right?" % status)
    say("2 freeze: %s answers 503 at the front; %d requests in flight at the freeze (HAProxy's streams), "
        "all ended after %.2f s" % (journal["user_id"], in_flight, time.monotonic() - started))


def drain(runtime: Runtime, timeout: float) -> int:
    """Wait until every request HAProxy has routed to a node now has ended; how many there were.

    MoveAborted if some still run after `timeout` seconds."""
    started = time.monotonic()
    waiting = runtime.routed_streams()
    time.sleep(0.1)  # and any request caught between its map lookup and its backend at that instant
    waiting |= runtime.routed_streams()
    in_flight = len(waiting)
    while waiting:
        if time.monotonic() - started > timeout:
            raise MoveAborted("%d requests routed before the freeze still running after %.0f s"
                              % (len(waiting), timeout))
        time.sleep(0.05)
        waiting &= runtime.routed_streams()
    return in_flight


class Tap:
    """The exported records passed through, counted, with the verification queries drawn from them."""

    def __init__(self, queries: int):
        self.adds = self.messages = 0
        self.queries, self.best = queries, []  # type: int, List[Tuple[int, str]]

    def records(self, source: Iterable[Dict[str, Any]]) -> Iterator[Dict[str, Any]]:
        for record in source:
            self.adds += 1
            for i, message in enumerate(record["messages"]):
                self.messages += 1
                # The messages of smallest hash: the same every run, spread over the whole memory.
                digest = hashlib.sha256(("%s\0%d" % (record["request_id"], i)).encode("utf-8")).digest()
                text = " ".join(message["content"].split()[:QUERY_WORDS])
                if text:
                    heapq.heappush(self.best, (-int.from_bytes(digest[:8], "big"), text))  # the largest on top
                    if len(self.best) > self.queries:
                        heapq.heappop(self.best)
            yield record

    def query_texts(self) -> List[str]:
        return [text for _, text in sorted(self.best, reverse=True)]


Position = Tuple[Optional[str], Set[str]]  # the export cursor of the last page read, and that page's request ids
START: Position = (None, set())


def transfer(plan: Plan, journal: Dict[str, Any], tap: Tap, position: Position) -> Tuple[Position, int]:
    """The old node's Adds of the user after `position` imported into the new node, a page at a time:
    (where the export ended, Adds stored). The last page is read again next time (its cursor is the
    last one there is), its Adds skipped: the export's order is stable, so the rest is what came since."""
    user, source, target = journal["user_id"], plan.client(journal["from"]), plan.client(journal["to"])
    cursor, seen = position
    stored = 0
    while True:
        page = source.export_page(user, Client.export_page_size, cursor)
        fresh = [record for record in page["data"] if record["request_id"] not in seen]
        if fresh:
            stored += target.import_records(tap.records(fresh))["stored"]
        if page["next_cursor"] is None:
            return (cursor, {record["request_id"] for record in page["data"]}), stored
        cursor, seen = page["next_cursor"], set()


def copy_whole(plan: Plan, journal: Dict[str, Any], tap: Tap) -> Position:
    """The new node's copy of the user made afresh (what it held was a leftover: it does not own the user)."""
    leftover = plan.delete_user(journal["to"], journal["user_id"])
    position, stored = transfer(plan, journal, tap, START)
    say("   %d Adds (%d messages) exported from %s, %d stored on %s%s"
        % (tap.adds, tap.messages, journal["from"], stored, journal["to"],
           " (a leftover copy there deleted first)" if leftover else ""))
    return position


def both(plan: Plan, journal: Dict[str, Any], body: Dict[str, Any]) -> List[Tuple[int, bytes]]:
    """The Search's answers from the old node and the new, asked at once."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda node: plan.search_bytes(plan.nodes[journal[node]], body), ("from", "to")))


def verify(plan: Plan, journal: Dict[str, Any], tap: Tap, top_k: int) -> None:
    """The same sessions and counts on both nodes, and byte-identical searches; MoveAborted if not."""
    user = journal["user_id"]
    old, new = sessions(plan.client(journal["from"]), user), sessions(plan.client(journal["to"]), user)
    counts = [sum(s["messages"] for s in listing) for listing in (old, new)]
    if old != new or counts[0] != tap.messages:
        raise MoveAborted("sessions differ: %s holds %d messages in %d sessions, %s %d in %d, %d exported"
                          % (journal["from"], counts[0], len(old), journal["to"], counts[1], len(new),
                             tap.messages))
    texts = tap.query_texts()
    for text in texts:
        body = {"user_id": user, "query": text, "top_k": top_k}
        here, there = both(plan, journal, body)
        if here != there or here[0] != 200:
            raise MoveAborted("the search %r answers differently: %s %d, %s %d"
                              % (text, journal["from"], here[0], journal["to"], there[0]))
    journal["messages"] = counts[0]
    say("4 verify: %d sessions and %d messages on both nodes; %d searches byte-identical"
        % (len(old), counts[0], len(texts)))


def copy_and_verify(plan: Plan, journal: Dict[str, Any], queries: int, top_k: int, drain_timeout: float) -> Tap:
    """Steps 1-4: copy while the user is served, freeze, copy what came since, verify."""
    say("1 copy, %s still served by %s:" % (journal["user_id"], journal["from"]))
    tap = Tap(queries)
    position = copy_whole(plan, journal, tap)
    for text in tap.query_texts():  # once while served too: both nodes then have the user in cache when it counts
        both(plan, journal, {"user_id": journal["user_id"], "query": text, "top_k": top_k})
    freeze(plan, journal, drain_timeout)
    adds = tap.adds
    _, stored = transfer(plan, journal, tap, position)
    say("3 copy the rest: %d Adds since, %d stored on %s" % (tap.adds - adds, stored, journal["to"]))
    try:
        verify(plan, journal, tap, top_k)
    except MoveAborted as e:  # changed otherwise than by Adds (a session deleted meanwhile): once more, whole
        say("4 verify: %s; copying again, whole, while frozen:" % e)
        tap = Tap(queries)
        copy_whole(plan, journal, tap)
        verify(plan, journal, tap, top_k)
    return tap


def switch(plan: Plan, journal: Dict[str, Any], first_query: Optional[str]) -> None:
    """Step 5: the map names the new node (or nothing, when its slot does), live and in the file."""
    value = None if journal["to"] == plan.hash_owner else journal["to"]
    set_entry(plan, journal["user_id"], value)
    body = {"user_id": journal["user_id"], "query": first_query or "switched", "top_k": 10}
    front, node = plan.search_bytes(plan.front, body), plan.search_bytes(plan.nodes[journal["to"]], body)
    say("5 switch: %s -> %s in %s (%s), after %.2f s of 503; a search through the front answers %d, %s"
        % (journal["user_id"], journal["to"], plan.map, "its slot's node: entry removed" if value is None
           else "map entry", time.time() - journal.get("frozen_at", time.time()), front[0],
           "as %s does" % journal["to"] if front == node else "not as %s does (an Add in between?)" % journal["to"]))


def finish(plan: Plan, journal: Dict[str, Any]) -> None:
    """Step 6: anything that reached the old node late is copied, then the user is deleted there."""
    user, old, new = journal["user_id"], plan.client(journal["from"]), plan.client(journal["to"])
    late, listed = 0, sessions(old, user)
    if sum(s["messages"] for s in listed) != journal.get("messages"):
        late = new.import_records(old.export(user))["stored"]
    deleted = plan.delete_user(journal["from"], user, listed)
    drop_journal(plan, user)
    say("6 delete: %s %s from %s%s; moved" % (user, "deleted" if deleted else "was already gone",
                                             journal["from"], ", after copying %d late Adds" % late if late else ""))


def abort(plan: Plan, journal: Dict[str, Any], why: str) -> None:
    """Undo an unfinished move: the map entry as it was, the copy on the new node deleted."""
    say("abort: %s" % why)
    set_entry(plan, journal["user_id"], journal["previous"])
    say("abort: %s is served by %s again" % (journal["user_id"], journal["from"]))
    plan.delete_user(journal["to"], journal["user_id"])
    drop_journal(plan, journal["user_id"])
    say("abort: the copy on %s deleted" % journal["to"])


def move(plan: Plan, user_id: str, to: str, queries: int = 8, top_k: int = 10, drain_timeout: float = 130.0) -> int:
    """Move `user_id` to node `to` (or resume its unfinished move); the exit status."""
    if to not in plan.nodes:
        raise FlowmemError("no node %r (nodes: %s)" % (to, ", ".join(plan.nodes)))
    journal = read_journal(plan, user_id)
    if journal is None:
        journal = start(plan, user_id, to)
        if journal is None:
            return 0
    elif journal["to"] != to:
        raise FlowmemError("%s's unfinished move goes to %s: run it again, or --abort" % (user_id, journal["to"]))
    else:
        say("resuming %s's move %s -> %s from %s" % (user_id, journal["from"], to, journal["step"]))
    first_query = None
    if journal["step"] != "switched":
        try:
            tap = copy_and_verify(plan, journal, queries, top_k, drain_timeout)
        except (MoveAborted, FlowmemError) as e:  # a difference, or a node failing: the user goes back
            abort(plan, journal, str(e))
            return 1
        first_query = next(iter(tap.query_texts()), None)
        # Journalled before the map changes: from here on the new node may acknowledge Adds, so a
        # rerun must never copy again (that deletes the new node's copy first), only switch and finish.
        journal["step"] = "switched"
        write_journal(plan, journal)
    switch(plan, journal, first_query)
    finish(plan, journal)
    return 0


def start(plan: Plan, user_id: str, to: str) -> Optional[Dict[str, Any]]:
    """A new move's journal (written), or None when the user is already on `to`."""
    previous = control.entry(plan.shard_map, user_id)
    if previous == FROZEN:
        raise FlowmemError("%s is frozen in %s but no move of it is journalled: set its entry by hand"
                           % (user_id, plan.map))
    source = previous or plan.hash_owner
    if source is None:
        raise FlowmemError("%s has no map entry: say which node holds it (--from-node)" % user_id)
    if source not in plan.nodes:
        raise FlowmemError("%s is on %s, which is not a known node" % (user_id, source))
    if source == to:
        say("%s is already on %s: nothing to move" % (user_id, to))
        return None
    for node in (source, to):  # both answer, with this key, before anything changes
        plan.client(node).list_sessions(user_id, limit=1)
    journal = {"user_id": user_id, "from": source, "to": to, "previous": previous, "step": "freeze"}
    write_journal(plan, journal)
    say("moving %s: %s -> %s" % (user_id, source, to))
    return journal


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """`flowmem cluster move-user`; the exit status (0 moved, 1 aborted, 2 stopped by an error)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("user_id")
    parser.add_argument("to_node", help="the node (HAProxy backend) that is to own the user")
    parser.add_argument("--cluster", metavar="DIR", help="a loopback cluster's directory (flowmem cluster up)")
    parser.add_argument("--front", help="HAProxy's URL")
    parser.add_argument("--admin-socket", help="HAProxy's runtime API socket (level admin)")
    parser.add_argument("--map", help="the shard map file, as HAProxy's configuration names it")
    parser.add_argument("--from", dest="source", metavar="URL", help="the old node's URL")
    parser.add_argument("--to", metavar="URL", help="the new node's URL")
    parser.add_argument("--from-node", help="the old node's backend name (default: the user's map entry)")
    parser.add_argument("--api-key-file", help="a file whose first line is the nodes' API key")
    parser.add_argument("--queries", type=int, default=8, help="verification searches (default 8)")
    parser.add_argument("--drain-timeout", type=float, default=130.0, help="seconds to wait for requests in "
                        "flight at the freeze (default 130: the front's timeouts end a routed request within 127)")
    parser.add_argument("--abort", action="store_true", help="undo the user's unfinished move (before its switch)")
    args = parser.parse_args(argv)
    placement.STARTED = time.monotonic()  # what each printed step's time counts from
    explicit = (args.front, args.admin_socket, args.map, args.source, args.to)
    if bool(args.cluster) == any(explicit) or (not args.cluster and not all(explicit)):
        parser.error("give --cluster DIR, or all of --front, --admin-socket, --map, --from and --to")
    plan: Optional[Plan] = None
    try:
        cluster = control.load(args.cluster) if args.cluster else None
        api_key = resolve_key(args.api_key_file, cluster)
        plan = plan_for(cluster, args.user_id, api_key) if cluster else explicit_plan(args, api_key)
        with locked(plan.map):
            if args.abort:
                return abort_unfinished(plan, args.user_id)
            return move(plan, args.user_id, args.to_node, queries=args.queries, drain_timeout=args.drain_timeout)
    except (FlowmemError, OSError, ValueError, KeyError) as e:
        print("flowmem cluster move-user: stopped: %s" % e, file=sys.stderr)
        if plan is not None and read_journal(plan, args.user_id) is not None:
            print("flowmem cluster move-user: the move is unfinished: run the same command again to resume it, "
                  "or add --abort", file=sys.stderr)
        return 2


def abort_unfinished(plan: Plan, user_id: str) -> int:
    journal = read_journal(plan, user_id)
    if journal is None:
        say("%s has no unfinished move" % user_id)
        return 0
    if journal["step"] == "switched":
        raise FlowmemError("%s's move has switched to %s: run it again to finish it" % (user_id, journal["to"]))
    abort(plan, journal, "asked for (--abort)")
    return 1
