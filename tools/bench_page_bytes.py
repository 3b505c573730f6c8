#!/usr/bin/env python3
"""What big listings and exports cost a server in memory: issue 22 item 7, before and after.

It starts `python -m flowmem serve --port 0` (tools/benchkit/server.py's ServerProcess) from a flowmem
checkout (`--root`, this one by default, so that a worktree of an older commit gives the
"before" figure) on a fresh database, stores `--messages` messages of `--message-bytes`
each for one user (an Add each), and restarts the server, so that what it measures starts
from a fresh process. Then `--lists` clients walk `GET /users/u/messages?limit=LIMIT` and
`--exports` clients walk `GET /users/u/export?limit=LIMIT`, all at once, each on its own
connection, each following next_cursor to the end (so every client must get every row:
the tool fails if one does not). It reports each client's first response size, its
pages, bytes and rows in all and its seconds, and the server's RSS before (VmRSS) and
its peak (VmHWM, /proc/PID/status) over the six walks.

`--page-max-bytes N` starts the server with that bound (a checkout without the setting
refuses the flag: leave it out there); `--serve-arg` passes any other flag.

Usage (standard library only, Python 3.9+, Linux):

    python -m tools.bench_page_bytes                                     # 120 x 1 MiB, 4 + 2 walks
    python -m tools.bench_page_bytes --root /tmp/base                    # the same on another checkout
    python -m tools.bench_page_bytes --messages 12 --message-bytes 262144  # a quick smoke run
    python -m tools.bench_page_bytes --page-max-bytes 1048576 --json out/page-1m.json
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Optional

from tools.benchkit.process import proc_status
from tools.benchkit.report import command_line, log, machine, markdown, mib
from tools.benchkit.server import ServerProcess

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

USER = "u"


def content(i: int, size: int) -> str:
    """`size` ASCII characters of words, different for each message."""
    words = " ".join("w%d-%d" % (i, n) for n in range(64)) + " "
    return (words * (size // len(words) + 1))[:size]


def store(server: ServerProcess, messages: int, size: int) -> None:
    """`messages` Adds of one message of `size` characters each, for USER."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
    try:
        for i in range(messages):
            body = {"request_id": "r%d" % i, "user_id": USER, "session_id": "s%d" % (i // 10),
                    "messages": [{"role": "user", "content": content(i, size), "timestamp": 1683554160000 + i}]}
            conn.request("POST", "/add", json.dumps(body), {"Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            if response.status != 200:
                raise RuntimeError("Add %d: %d %r" % (i, response.status, answer[:300]))
    finally:
        conn.close()


def walk(server: ServerProcess, route: str, limit: int, out: Dict[str, Any], start: threading.Event) -> None:
    """Every page of `route`, following next_cursor: what came back, into `out`."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=300)
    sizes: List[int] = []
    rows = 0
    cursor: Optional[str] = None
    start.wait()
    began = time.monotonic()
    try:
        while True:
            query = {"limit": str(limit)}
            if cursor:
                query["cursor"] = cursor
            conn.request("GET", "/users/%s/%s?%s" % (USER, route, urllib.parse.urlencode(query)))
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError("GET %s: %d %r" % (route, response.status, body[:300]))
            page = json.loads(body)
            sizes.append(len(body))
            rows += len(page["data"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
    except Exception as e:  # reported with the figures: a walk that failed is a result too
        out["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        conn.close()
    out.update(route=route, pages=len(sizes), first_bytes=sizes[0] if sizes else 0, bytes=sum(sizes), rows=rows,
               seconds=time.monotonic() - began)


def measure(server: ServerProcess, args: argparse.Namespace) -> Dict[str, Any]:
    """The walks, all at once, and the server's memory around them."""
    before = proc_status(server.pid)
    start = threading.Event()
    results: List[Dict[str, Any]] = [{} for _ in range(args.lists + args.exports)]
    routes = ["messages"] * args.lists + ["export"] * args.exports
    threads = [threading.Thread(target=walk, args=(server, route, args.limit, out, start))
               for route, out in zip(routes, results)]
    for t in threads:
        t.start()
    began = time.monotonic()
    start.set()
    for t in threads:
        t.join()
    after = proc_status(server.pid)
    return {"clients": results, "seconds": time.monotonic() - began, "rss_before_kib": before.get("VmRSS"),
            "peak_rss_kib": after.get("VmHWM"), "rss_after_kib": after.get("VmRSS")}


def report(figures: Dict[str, Any], args: argparse.Namespace) -> str:
    rows: List[List[Any]] = [["client", "first response MiB", "pages", "MiB in all", "rows", "seconds"]]
    for n, c in enumerate(figures["clients"]):
        rows.append(["%d: %s" % (n + 1, c["route"]), "%.1f" % (c["first_bytes"] / 2 ** 20), c["pages"],
                     "%.1f" % (c["bytes"] / 2 ** 20), c["rows"], "%.1f" % c["seconds"]])
    lines = [
        "`%s` (flowmem at %s)" % (command_line(), args.root), "",
        "%d messages of %d bytes for one user; %d message walks and %d export walks at once, limit=%d"
        % (args.messages, args.message_bytes, args.lists, args.exports, args.limit), "",
        markdown(rows), "",
        "server RSS before: %s MiB; peak (VmHWM) during: %s MiB; after: %s MiB; all walks done in %.1f s"
        % (mib(figures["rss_before_kib"], "%.1f"), mib(figures["peak_rss_kib"], "%.1f"),
           mib(figures["rss_after_kib"], "%.1f"), figures["seconds"]),
    ]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=REPO_ROOT, help="the flowmem checkout whose server runs (this one)")
    p.add_argument("--messages", type=int, default=120, help="messages stored for the one user (120)")
    p.add_argument("--message-bytes", type=int, default=2 ** 20, help="characters of each message (1 MiB)")
    p.add_argument("--lists", type=int, default=4, help="clients walking the messages at once (4)")
    p.add_argument("--exports", type=int, default=2, help="clients walking the export at once (2)")
    p.add_argument("--limit", type=int, default=1000, help="the limit each page asks for (1000)")
    p.add_argument("--page-max-bytes", type=int, help="the server's page_max_bytes (default: the server's own)")
    p.add_argument("--serve-arg", action="append", default=[], help="another flag for `flowmem serve`")
    p.add_argument("--json", help="write the figures to this file too")
    args = p.parse_args(argv)
    serve_args = list(args.serve_arg) + (["--page-max-bytes", str(args.page_max_bytes)]
                                         if args.page_max_bytes is not None else [])
    with tempfile.TemporaryDirectory(prefix="bench-page-bytes-") as workdir:
        db, log_path = os.path.join(workdir, "pages.db"), os.path.join(workdir, "serve.log")
        server = ServerProcess(db, log_path, args.root, extra_args=serve_args)
        try:
            log("storing %d messages of %d bytes" % (args.messages, args.message_bytes))
            store(server, args.messages, args.message_bytes)
        finally:
            server.stop()
        server = ServerProcess(db, log_path, args.root, extra_args=serve_args)  # a fresh process to measure
        try:
            log("walking: %d message listings and %d exports at once" % (args.lists, args.exports))
            figures = measure(server, args)
        finally:
            server.stop()
    figures.update(machine=machine(), messages=args.messages, message_bytes=args.message_bytes, limit=args.limit,
                   page_max_bytes=args.page_max_bytes, root=args.root)
    print(report(figures, args))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)
    failed = [c for c in figures["clients"] if c.get("error") or c["rows"] != args.messages]
    for c in failed:
        log("a %s walk got %d of %d rows%s" % (c["route"], c["rows"], args.messages,
                                               ": " + c["error"] if c.get("error") else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
