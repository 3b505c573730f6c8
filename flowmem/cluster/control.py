"""What the operator's tools share about a running cluster: its description, its maps, HAProxy's runtime API.

cluster.json (nodes.py's `up` writes it: the front's URL, the admin socket, the maps, each
node's url, db and pids) is read with load(); every file the tools keep (cluster.json, a
move's or a handover's journal) is written whole or not at all (write_json). Ownership
changes (a move, move.py; a slot handed over, rebalance.py) go through set_owner() and
set_slot(): the map file is rewritten and the same entry set live through HAProxy's admin
socket (its runtime API), so HAProxy answers from memory at once and a restart keeps it.
"""
from __future__ import annotations

import json
import os
import socket
from typing import Any, Dict, Mapping, Optional

from ..errors import FlowmemError
from . import haproxy
from .haproxy import FROZEN, map_key, read_map, read_slots, write_slots


def load(directory: str) -> Dict[str, Any]:
    """DIR/cluster.json, as `up` wrote it."""
    with open(os.path.join(directory, "cluster.json"), encoding="utf-8") as f:
        return json.load(f)


def read_json(path: str) -> Optional[Dict[str, Any]]:
    """The JSON object in `path`, or None when there is no such file."""
    try:
        with open(path, encoding="utf-8") as f:
            return dict(json.load(f))
    except FileNotFoundError:
        return None


def write_json(path: str, data: Mapping[str, Any], indent: Optional[int] = None, ensure_ascii: bool = True) -> None:
    """`data` as JSON in `path` (its folder made if need be), whole or not at all: written beside it, then
    renamed over it. Indented JSON, written for people to read, ends with a newline."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=indent, ensure_ascii=ensure_ascii)
        if indent is not None:
            f.write("\n")
    os.replace(path + ".tmp", path)


def owner(cluster: Mapping[str, Any], user_id: str) -> str:
    """The node that owns `user_id` now (or "frozen"): its shard map entry, else its slot's node."""
    return haproxy.owner(user_id, read_slots(cluster["slots"]), read_map(cluster["map"]))


def admin(cluster: Mapping[str, Any], command: str) -> str:
    """Send one command to HAProxy's runtime API (the admin socket); its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(cluster["admin_socket"])
        s.sendall(command.encode("utf-8") + b"\n")
        chunks = []
        while True:
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def _check_value(cluster: Mapping[str, Any], value: Optional[str]) -> None:
    names = [n["name"] for n in cluster["nodes"]]
    if value is not None and value not in names and value != FROZEN:
        raise ValueError("owner must be one of %s or %s, got %r" % (names, FROZEN, value))


def _live(cluster: Mapping[str, Any], command: str) -> None:
    answer = admin(cluster, command).strip()
    if answer:
        raise RuntimeError("HAProxy refused the map change %r: %s" % (command, answer))


def entry(cluster: Mapping[str, Any], user_id: str) -> Optional[str]:
    """The user's entry in the live shard map `cluster["map"]` (None when absent), read from `show map`."""
    key = map_key(user_id)
    for line in admin(cluster, "show map %s" % cluster["map"]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == key:
            return parts[2]
    return None


def put_entry(cluster: Mapping[str, Any], user_id: str, value: Optional[str]) -> None:
    """Set (`value`) or remove (None) the user's shard map entry, live and in the file; FlowmemError if
    HAProxy's map did not take it.

    `cluster` needs only "admin_socket" and "map". The live map changes first (HAProxy answers from
    memory; `add` or `set` as the live map holds the user or not, read back after), then the file, so
    a restart keeps it.
    """
    present, key = entry(cluster, user_id) is not None, map_key(user_id)
    if value is None:
        command = "del map %s %s" % (cluster["map"], key) if present else ""
    else:
        command = "%s map %s %s %s" % ("set" if present else "add", cluster["map"], key, value)
    answer = admin(cluster, command).strip() if command else ""
    if answer or entry(cluster, user_id) != value:
        raise FlowmemError("HAProxy's map %s did not take %s -> %s: %s" % (cluster["map"], key, value, answer))
    overrides = read_map(cluster["map"])
    if value is None:
        overrides.pop(user_id, None)
    else:
        overrides[user_id] = value
    haproxy.write_map(cluster["map"], overrides)


def set_owner(cluster: Mapping[str, Any], user_id: str, value: Optional[str]) -> None:
    """Make `value` (a node name, "frozen", or None: back to its slot's node) own `user_id`, live and in the file."""
    _check_value(cluster, value)
    put_entry(cluster, user_id, value)


def set_slot(cluster: Mapping[str, Any], slot: int, value: str) -> None:
    """Make `value` (a node name or "frozen") the node of `slot`, live and in the slot map file."""
    _check_value(cluster, value)
    slots = read_slots(cluster["slots"])
    _live(cluster, "set map %s %d %s" % (cluster["slots"], slot, value))
    slots[slot] = value
    write_slots(cluster["slots"], slots)
