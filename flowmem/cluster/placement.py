"""Where a user's move happens and what it keeps: the Plan (front, HAProxy's socket and map, the nodes),
the journal a rerun resumes from, the lock that allows one move at a time per map, the key.

move.py moves a user with these, and rebalance.py hands a slot over with them; a Plan
comes from a loopback cluster's cluster.json (plan_for) or from explicit flags
(explicit_plan: any deployment with HAProxy's runtime API). Each step says what it did
with say(): a line on stdout, the seconds since the command began first.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Set, Tuple

from ..client import Client
from ..errors import FlowmemError, Unavailable
from . import control
from .haproxy import FROZEN, hashed_owner, read_slots


class MoveAborted(Exception):
    """The move was undone: the user is back on the old node."""


STARTED = time.monotonic()  # what each printed step's time counts from: a command sets it again


def say(text: str) -> None:
    print("%7.2f s  %s" % (time.monotonic() - STARTED, text), flush=True)


class Runtime:
    """HAProxy's runtime API on its unix socket (level admin): the streams (the shard map: control.py's
    entry() and put_entry())."""

    def __init__(self, path: str):
        self.cluster = {"admin_socket": path}

    def command(self, line: str) -> str:
        return control.admin(self.cluster, line)

    def routed_streams(self) -> Set[str]:
        """The unique ids of the streams (requests) HAProxy has routed to a backend now (`show sess all`)."""
        out, current = set(), None
        for line in self.command("show sess all").splitlines():
            head = re.match(r"^0x[0-9a-f]+: \[[^\]]*\] id=(\d+) ", line)
            if head:
                current = head.group(1)
            elif current is not None and re.match(r"^\s+backend=(?!<NONE>)", line):
                out.add(current)
        return out


class Plan:
    """Where everything is: the front, HAProxy's socket and map, the nodes by name."""

    def __init__(self, front: str, socket_path: str, map_path: str, nodes: Dict[str, str],
                 api_key: Optional[str], hash_owner: Optional[str]):
        self.front, self.map, self.nodes, self.api_key = front.rstrip("/"), map_path, nodes, api_key
        self.runtime = Runtime(socket_path)
        self.shard_map = {"admin_socket": socket_path, "map": map_path}  # for control.entry() and put_entry()
        self.hash_owner = hash_owner  # the node the hash names for the user (None: not known, explicit mode)

    def client(self, node: str, timeout: float = 60.0) -> Client:
        return Client(self.nodes[node], api_key=self.api_key, timeout=timeout)

    def delete_user(self, node: str, user_id: str, listed: Optional[List[Dict[str, Any]]] = None) -> bool:
        """Delete the user on `node` a session at a time (those `listed`, when the caller has just listed
        them); whether it held the user.

        Not with delete-user: that merges the node's whole index in one transaction, and every
        Add of every other user of the node waits for it (measured: 113 s for a user of 1M
        messages, past the 30 s an Add waits for the write lock). Each session's delete is a short
        transaction of its own (that user's 46,379 sessions: 331 s in all); the words leave the
        node's index pages as FTS5's own merges reach them, as after delete-session, and the
        user lives on elsewhere.
        """
        client = self.client(node)
        listed = sessions(client, user_id) if listed is None else listed
        for session in listed:
            client.delete_session(user_id, session["session_id"])
        return bool(listed)

    def search_bytes(self, base: str, body: Dict[str, Any]) -> Tuple[int, bytes]:
        return search_bytes(base, body, self.api_key)


def search_bytes(base: str, body: Dict[str, Any], api_key: Optional[str] = None) -> Tuple[int, bytes]:
    """(status, body bytes) of a Search at `base`, exactly as answered."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    request = urllib.request.Request(base.rstrip("/") + "/search", method="POST", headers=headers,
                                     data=json.dumps(body, ensure_ascii=False).encode("utf-8"))
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()
    except OSError as e:  # URLError, a refused or reset connection, a timeout
        raise Unavailable("cannot reach %s: %s" % (base, getattr(e, "reason", e))) from e


def journal_path(plan: Plan, user_id: str) -> str:
    return os.path.join(plan.map + ".moves", hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32] + ".json")


def read_journal(plan: Plan, user_id: str) -> Optional[Dict[str, Any]]:
    return control.read_json(journal_path(plan, user_id))


def write_journal(plan: Plan, journal: Dict[str, Any]) -> None:
    control.write_json(journal_path(plan, journal["user_id"]), journal, ensure_ascii=False)


def drop_journal(plan: Plan, user_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(journal_path(plan, user_id))


def set_entry(plan: Plan, user_id: str, value: Optional[str]) -> None:
    """The user's map entry, live and in the file."""
    control.put_entry(plan.shard_map, user_id, value)


def sessions(client: Client, user_id: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    cursor: Optional[str] = None
    while True:
        page = client.list_sessions(user_id, limit=1000, cursor=cursor)
        out += page["data"]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def cluster_plan(directory: str, user_id: str, api_key: Optional[str]) -> Plan:
    """The Plan of a loopback cluster (nodes.py's DIR/cluster.json)."""
    return plan_for(control.load(directory), user_id, api_key)


def plan_for(cluster: Mapping[str, Any], user_id: str, api_key: Optional[str],
             slots: Optional[List[str]] = None) -> Plan:
    """The Plan of a loopback cluster as cluster.json describes it; `slots`: its slot map, when already read.
    No `api_key`: resolve_key()'s, as the command line finds it without --api-key-file."""
    nodes = {node["name"]: node["url"] for node in cluster["nodes"]}
    if api_key is None:
        api_key = resolve_key(None, cluster)
    return Plan(cluster["front"], cluster["admin_socket"], cluster["map"], nodes, api_key,
                hashed_owner(user_id, read_slots(cluster["slots"]) if slots is None else slots))


def explicit_plan(args: argparse.Namespace, api_key: Optional[str]) -> Plan:
    """The Plan of explicit flags: the old node's name is --from-node, the journal's or the map's."""
    plan = Plan(args.front, args.admin_socket, args.map, {args.to_node: args.to}, api_key, None)
    journal = read_journal(plan, args.user_id)
    entry = control.entry(plan.shard_map, args.user_id)
    name = args.from_node or (journal or {}).get("from") or (entry if entry != FROZEN else None)
    if name is None:
        raise FlowmemError("%s has no map entry: name the node that holds it (--from-node)" % args.user_id)
    plan.nodes[name] = args.source
    if entry is None:
        plan.hash_owner = name  # no entry: the hash names the old node
    return plan


def read_key(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.readline().strip()


def resolve_key(key_file: Optional[str], cluster: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    """The nodes' API key: the first line of `key_file`, else $FLOWMEM_API_KEY, else the first line of the
    loopback `cluster`'s api_key_file; None when none of them gives one."""
    key = read_key(key_file) if key_file else os.environ.get("FLOWMEM_API_KEY")
    if key is None and cluster is not None and cluster.get("api_key_file"):
        key = read_key(cluster["api_key_file"])
    return key


@contextlib.contextmanager
def locked(map_path: str) -> Iterator[None]:
    """One move at a time on a map file (an exclusive lock on `<map>.lock`)."""
    with open(map_path + ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
