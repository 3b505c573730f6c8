r"""The HAProxy front of a flowmem cluster: its configuration, the ownership hash and the shard map.

A cluster is N flowmem nodes, each holding whole users. HAProxy routes every request to
the node that owns its user (haproxy.cfg.template, beside this module, says how): the user id
is `user_id` in the JSON body for /add and /search, the percent-decoded {user_id} segment
(or, where it is empty, the query's user_id) for the management routes, read with
flowmem's path rules by lua.flowmem_route (flowmem_route.lua, beside it), which is
the one place the front decides a request's route; a target no route fits is the front's
404, never sent to any node. The user's slot is `zlib.crc32(user_id UTF-8) % SLOTS`
(HAProxy's crc32 converter is the same function) and the slot map names the node of each
slot, unless the shard map names another node for the user (a moved user) or `frozen`
(a user being moved: 503, Retry-After 1). A slot's entry may be `frozen` too (a slot
being handed to another node).

Why slots rather than crc32 % N: N changes when a node is added, and crc32 % N would then
name a different node for most users at once. The number of slots is fixed for the life
of a cluster; adding a node changes the entries of a few slots, one at a time
(rebalance.py), and only the users of those slots move.

The shard map file holds one line per moved user, `<key> <value>`, the key being the user
id's UTF-8 in upper-case hex (HAProxy's hex converter): a map key ends at whitespace and
an id may hold spaces, `#` or anything else Add accepts. The slot map holds one line per
slot, `<slot> <node or frozen>`. owner() is the same decision in Python, for tools and tests.

Command line:

    flowmem cluster haproxy-config --node 127.0.0.1:8401 --node 127.0.0.1:8402 \
        --bind 127.0.0.1:8400 --map /etc/haproxy/shards.map --slots /etc/haproxy/slots.map \
        --socket /run/haproxy.sock --state-map /etc/haproxy/node_state.map > haproxy.cfg
"""
from __future__ import annotations

import argparse
import os
import string
import sys
import zlib
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "haproxy.cfg.template")  # package data, shipped with flowmem (setup.cfg)
LUA = os.path.join(HERE, "flowmem_route.lua")
MAX_BODY_BYTES = 8388608  # flowmem's --max-body-bytes default
HEADER_ROOM = 64 * 1024 + 64 * 1024  # flowmem's largest headers, and HAProxy's rewrite reserve and block overhead
FROZEN = "frozen"
# The number of slots, fixed for the life of a cluster: it bounds the number of nodes, and a slot
# is the unit a new node takes over, so it should hold few users (10,000 users: about 10 a slot).
SLOTS = 1024
STATES = "0 down\n1 up\n"  # node_state.map: servers up in a backend -> the word /health shows


def node_names(count: int) -> List[str]:
    """The backend names of a cluster of `count` nodes: node1..nodeN."""
    return ["node%d" % i for i in range(1, count + 1)]


def slot_of(user_id: str) -> int:
    """The slot of `user_id`: crc32 of its UTF-8, modulo SLOTS."""
    return zlib.crc32(user_id.encode("utf-8")) % SLOTS


def initial_slots(names: Sequence[str]) -> List[str]:
    """A new cluster's slot map: slot s is names[s % len(names)], each node an equal share."""
    return [names[slot % len(names)] for slot in range(SLOTS)]


def hashed_owner(user_id: str, slots: Sequence[str]) -> str:
    """The node the slot map gives `user_id` (or "frozen"): slots[slot_of(user_id)]."""
    return slots[slot_of(user_id)]


def owner(user_id: str, slots: Sequence[str], overrides: Optional[Mapping[str, str]] = None) -> str:
    """The node that owns `user_id` (or "frozen"): the shard map's entry, else its slot's."""
    if overrides and user_id in overrides:
        return overrides[user_id]
    return hashed_owner(user_id, slots)


def map_key(user_id: str) -> str:
    """The shard map's key for `user_id`: its UTF-8 in upper-case hex, as HAProxy's hex converter writes it."""
    return user_id.encode("utf-8").hex().upper()


def read_map(path: str) -> Dict[str, str]:
    """The shard map file as {user_id: node or "frozen"}; a missing file is an empty map."""
    result: Dict[str, str] = {}
    if not os.path.exists(path):
        return result
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#"):
                result[bytes.fromhex(parts[0]).decode("utf-8")] = parts[1]
    return result


def write_map(path: str, overrides: Mapping[str, str]) -> None:
    """Write the shard map file whole (a temporary file renamed over it, so HAProxy never reads half)."""
    lines = ["# flowmem shard map: <user id as UTF-8 hex> <node or frozen>; flowmem/cluster/haproxy.py\n"]
    lines += ["%s %s\n" % (map_key(user), value) for user, value in sorted(overrides.items())]
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(temporary, path)


def read_slots(path: str) -> List[str]:
    """The slot map file as a list: the node (or "frozen") of slot 0, 1, ... SLOTS - 1."""
    slots: Dict[int, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#"):
                slots[int(parts[0])] = parts[1]
    if sorted(slots) != list(range(SLOTS)):
        raise ValueError("%s must name a node for each slot 0..%d" % (path, SLOTS - 1))
    return [slots[slot] for slot in range(SLOTS)]


def write_slots(path: str, slots: Sequence[str]) -> None:
    """Write the slot map file whole (renamed over the old one, so HAProxy never reads half)."""
    if len(slots) != SLOTS:
        raise ValueError("a slot map has %d entries, got %d" % (SLOTS, len(slots)))
    lines = ["# flowmem slot map: <slot = crc32(user id) %% %d> <node or frozen>; flowmem/cluster/haproxy.py\n" % SLOTS]
    lines += ["%d %s\n" % (slot, value) for slot, value in enumerate(slots)]
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(temporary, path)


def render(nodes: Sequence[Tuple[str, str]], bind: str, map_path: str, slots_path: str, admin_socket: str,
           state_map: str, max_body_bytes: int = MAX_BODY_BYTES, maxconn: int = 1024) -> str:
    """The HAProxy configuration for `nodes` ([(name, "host:port")], names node1..nodeN in order)."""
    names = [name for name, _ in nodes]
    if names != node_names(len(nodes)):
        raise ValueError("nodes must be named node1..node%d in order, got %s" % (len(nodes), names))
    for value in (bind, map_path, slots_path, admin_socket, state_map, LUA):
        if any(c.isspace() or c in "'\"#\\" for c in value):
            raise ValueError("no whitespace, quote, '#' or backslash allowed in %r" % value)
    health = ",".join('"%s":"%%[nbsrv(%s),map_int(%s,down)]"' % (n, n, state_map) for n in names)
    backends = []
    for name, address in nodes:
        backends.append("\nbackend %s\n" % name
                        + "    option httpchk\n"
                        + "    http-check send meth GET uri /health ver HTTP/1.1 hdr Host localhost\n"
                        + "    http-check expect status 200\n"
                        + "    server %s %s check inter 1s fall 2 rise 1\n" % (name, address))
    anynode = "".join("    server %s %s check inter 1s fall 2 rise 1\n" % (n, a) for n, a in nodes)
    with open(TEMPLATE, encoding="utf-8") as f:
        template = string.Template(f.read())
    return template.substitute(
        bind=bind, lua_path=LUA, map_path=map_path, slots_path=slots_path, slots=SLOTS, admin_socket=admin_socket,
        max_body_bytes=max_body_bytes, bufsize=max_body_bytes + HEADER_ROOM, maxconn=maxconn,
        node_names=" ".join(names), node_list=", ".join(names), health_nodes=health,
        all_up=" ".join("{ nbsrv(%s) ge 1 }" % n for n in names),
        anynode_servers=anynode.rstrip("\n"), node_backends="".join(backends))


def write_config(directory: str, nodes: Sequence[Tuple[str, str]], bind: str, admin_socket: str,
                 max_body_bytes: int = MAX_BODY_BYTES) -> Dict[str, str]:
    """Write haproxy.cfg, node_state.map and (if absent) shards.map and slots.map into `directory`.

    Existing shard and slot maps are kept: a configuration written again for more nodes (a node
    added) changes nobody's owner. Returns the files' paths.
    """
    paths = {name: os.path.abspath(os.path.join(directory, name))
             for name in ("haproxy.cfg", "node_state.map", "shards.map", "slots.map")}
    with open(paths["node_state.map"], "w", encoding="utf-8") as f:
        f.write(STATES)
    if not os.path.exists(paths["shards.map"]):
        write_map(paths["shards.map"], {})
    if not os.path.exists(paths["slots.map"]):
        write_slots(paths["slots.map"], initial_slots([name for name, _ in nodes]))
    text = render(nodes, bind, paths["shards.map"], paths["slots.map"], admin_socket, paths["node_state.map"],
                  max_body_bytes)
    with open(paths["haproxy.cfg"], "w", encoding="utf-8") as f:
        f.write(text)
    return paths


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """`flowmem cluster haproxy-config`: the configuration on stdout; the exit status."""
    parser = argparse.ArgumentParser(prog=prog, description="Write the HAProxy configuration of a flowmem cluster.")
    parser.add_argument("--node", action="append", required=True, help="host:port of node1, node2, ... in order")
    parser.add_argument("--bind", default="127.0.0.1:8400", help="the front's address (default: %(default)s)")
    parser.add_argument("--map", required=True, help="the shard map file's absolute path")
    parser.add_argument("--slots", required=True, help="the slot map file's absolute path (written if absent: "
                        "slot s on node s %% N + 1, as for a new cluster)")
    parser.add_argument("--socket", required=True, help="the admin socket's path")
    parser.add_argument("--state-map", required=True, help="the node_state.map file's path (0 down, 1 up)")
    parser.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES, help="flowmem's --max-body-bytes")
    args = parser.parse_args(argv)
    nodes = list(zip(node_names(len(args.node)), args.node))
    if not os.path.exists(args.slots):
        write_slots(args.slots, initial_slots([name for name, _ in nodes]))
        print("wrote %s: %d slots shared out over %d nodes" % (args.slots, SLOTS, len(nodes)), file=sys.stderr)
    sys.stdout.write(render(nodes, args.bind, args.map, args.slots, args.socket, args.state_map,
                            args.max_body_bytes))
    return 0
