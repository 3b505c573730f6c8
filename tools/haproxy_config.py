#!/usr/bin/env python3
"""The HAProxy front of a flowmem cluster: its configuration, the ownership hash and the shard map.

A cluster is N flowmem nodes, each holding whole users. HAProxy routes every request to
the node that owns its user (deploy/haproxy/haproxy.cfg.template says how): the user id
is `user_id` in the JSON body for /add and /search, the percent-decoded segment after
/users/ for the management routes. The owner is node `zlib.crc32(user_id UTF-8) % N + 1`
(HAProxy's crc32 converter is the same function), unless the shard map names another
node for the user (a moved user) or `frozen` (a user being moved: 503, Retry-After 1).

The map file holds one line per moved user, `<key> <value>`, the key being the user id's
UTF-8 in upper-case hex (HAProxy's hex converter): a map key ends at whitespace and an
id may hold spaces, `#` or anything else Add accepts. owner() is the same decision in
Python, for tools and tests.

Command line (standard library only):

    python tools/haproxy_config.py --node 127.0.0.1:8401 --node 127.0.0.1:8402 \
        --bind 127.0.0.1:8400 --map /etc/haproxy/shards.map --socket /run/haproxy.sock > haproxy.cfg
"""
from __future__ import annotations

import argparse
import os
import string
import sys
import zlib
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg.template")
LUA = os.path.join(ROOT, "deploy", "haproxy", "flowmem_route.lua")
MAX_BODY_BYTES = 8388608  # flowmem's --max-body-bytes default
HEADER_ROOM = 64 * 1024 + 64 * 1024  # flowmem's largest headers, and HAProxy's rewrite reserve and block overhead
FROZEN = "frozen"
STATES = "0 down\n1 up\n"  # node_state.map: servers up in a backend -> the word /health shows


def node_names(count: int) -> List[str]:
    """The backend names of a cluster of `count` nodes: node1..nodeN."""
    return ["node%d" % i for i in range(1, count + 1)]


def hashed_owner(user_id: str, names: Sequence[str]) -> str:
    """The node the hash gives `user_id`: names[crc32(UTF-8) % len(names)]."""
    return names[zlib.crc32(user_id.encode("utf-8")) % len(names)]


def owner(user_id: str, names: Sequence[str], overrides: Optional[Mapping[str, str]] = None) -> str:
    """The node that owns `user_id` (or "frozen"): the shard map's entry, else the hash."""
    if overrides and user_id in overrides:
        return overrides[user_id]
    return hashed_owner(user_id, names)


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
    lines = ["# flowmem shard map: <user id as UTF-8 hex> <node or frozen>; tools/haproxy_config.py\n"]
    lines += ["%s %s\n" % (map_key(user), value) for user, value in sorted(overrides.items())]
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(temporary, path)


def render(nodes: Sequence[Tuple[str, str]], bind: str, map_path: str, admin_socket: str,
           state_map: str, max_body_bytes: int = MAX_BODY_BYTES, maxconn: int = 1024) -> str:
    """The HAProxy configuration for `nodes` ([(name, "host:port")], names node1..nodeN in order)."""
    names = [name for name, _ in nodes]
    if names != node_names(len(nodes)):
        raise ValueError("nodes must be named node1..node%d in order, got %s" % (len(nodes), names))
    for value in (bind, map_path, admin_socket, state_map, LUA):
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
        bind=bind, lua_path=LUA, map_path=map_path, admin_socket=admin_socket, max_body_bytes=max_body_bytes,
        bufsize=max_body_bytes + HEADER_ROOM, maxconn=maxconn, nodes=len(nodes),
        node_names=" ".join(names), node_list=", ".join(names), health_nodes=health,
        all_up=" ".join("{ nbsrv(%s) ge 1 }" % n for n in names),
        anynode_servers=anynode.rstrip("\n"), node_backends="".join(backends))


def write_config(directory: str, nodes: Sequence[Tuple[str, str]], bind: str, admin_socket: str,
                 max_body_bytes: int = MAX_BODY_BYTES) -> Dict[str, str]:
    """Write haproxy.cfg, node_state.map and (if absent) shards.map into `directory`; returns their paths."""
    paths = {name: os.path.abspath(os.path.join(directory, name))
             for name in ("haproxy.cfg", "node_state.map", "shards.map")}
    with open(paths["node_state.map"], "w", encoding="utf-8") as f:
        f.write(STATES)
    if not os.path.exists(paths["shards.map"]):
        write_map(paths["shards.map"], {})
    text = render(nodes, bind, paths["shards.map"], admin_socket, paths["node_state.map"], max_body_bytes)
    with open(paths["haproxy.cfg"], "w", encoding="utf-8") as f:
        f.write(text)
    return paths


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Write the HAProxy configuration of a flowmem cluster.")
    parser.add_argument("--node", action="append", required=True, help="host:port of node1, node2, ... in order")
    parser.add_argument("--bind", default="127.0.0.1:8400", help="the front's address (default: %(default)s)")
    parser.add_argument("--map", required=True, help="the shard map file's absolute path")
    parser.add_argument("--socket", required=True, help="the admin socket's path")
    parser.add_argument("--state-map", required=True, help="the node_state.map file's path (0 down, 1 up)")
    parser.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES, help="flowmem's --max-body-bytes")
    args = parser.parse_args(argv)
    nodes = list(zip(node_names(len(args.node)), args.node))
    sys.stdout.write(render(nodes, args.bind, args.map, args.socket, args.state_map, args.max_body_bytes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
