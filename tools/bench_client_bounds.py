#!/usr/bin/env python3
"""What a hostile server costs a flowmem client: time held by a trickle, memory taken by a runaway answer.

Issue 31 items 11 and 16: `Client(timeout=2)` bounded each socket read, so a server trickling
a byte a second held a call as long as it trickled; and Client and AsyncClient read any
answer whole, so a 256 MiB answer cost twice that. A scripted loopback server (threads in
this process) answers each case; each call runs in a child process of its own (with the
checkout `--root` on its PYTHONPATH, this one by default, so that an archive of an older
commit gives the "before" figures), which reports its seconds, its outcome and its peak RSS
(VmHWM, /proc/self/status). The cases, for Client and AsyncClient alike:

- baseline: a small answer (1 KiB), sent at once: the seconds and the RSS every ratio is to;
- trickled: an answer of `--trickle-bytes` sent at 4 bytes a second, `--timeout` seconds allowed;
- runaway, stated: a Content-Length of `--answer-mib` MiB, then that many bytes as fast as read
  (`--runaway-timeout` allowed, long enough to read them, so that what ends the call is the bound);
- runaway, unstated: the same bytes with no length (ended by closing the connection).

It reports, for each, the call's seconds and their ratio to its timeout, the child's peak
RSS and its ratio to the baseline's, the bytes the server got out before the client hung
up, and what the call ended in (an error's class, or "read whole").

Usage (standard library only, Python 3.9+, Linux for the RSS figures):

    python3 -m tools.bench_client_bounds                       # 256 MiB answers, a 1 s timeout
    python3 -m tools.bench_client_bounds --root /tmp/before    # the same against an older checkout
    python3 -m tools.bench_client_bounds --answer-mib 32       # a quick run
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

from tools.benchkit.report import command_line, fmt, log, machine, markdown, mib
from tools.benchkit.scripted import ScriptedServer

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 1024 * 1024
KINDS = ("Client", "AsyncClient")
CASES = ("baseline", "trickled", "runaway, stated", "runaway, unstated")

# The child: one call, then what it cost, as one JSON line. Its own module's names only, so that an
# older checkout's flowmem (which may lack the answer bound) runs it unchanged.
CHILD = r"""
import asyncio, json, sys, time
kind, origin, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
def hwm():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
from flowmem.async_client import AsyncClient
from flowmem.client import Client
async def call():
    async with AsyncClient(origin, timeout=timeout, retries=0) as client:
        await client.health()
started = time.monotonic()
try:
    if kind == "Client":
        Client(origin, timeout=timeout, retries=0).health()
    else:
        asyncio.run(call())
    outcome = "read whole"
except Exception as e:
    outcome = type(e).__name__
import flowmem
print(json.dumps({"seconds": time.monotonic() - started, "outcome": outcome, "hwm_kib": hwm(),
                  "flowmem": flowmem.__file__}))
"""


def framed(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def trickled_answer(args: argparse.Namespace) -> bytes:
    """The trickled case's whole answer: status line, headers and a body of `--trickle-bytes`."""
    return framed(json.dumps({"status": "ok", "padding": "x" * max(0, args.trickle_bytes - 30)}).encode())


def scripts(args: argparse.Namespace) -> Dict[str, Callable[[Callable[[bytes], None]], None]]:
    """Each case's answer, as what its server writes."""
    small = json.dumps({"status": "ok", "padding": "x" * 1000}).encode()
    size = args.answer_mib * MiB

    def trickle(send: Callable[[bytes], None]) -> None:
        for byte in trickled_answer(args):
            send(bytes([byte]))
            time.sleep(0.25)

    def runaway(head: bytes) -> Callable[[Callable[[bytes], None]], None]:
        def write(send: Callable[[bytes], None]) -> None:
            send(head)
            piece = b"0" * MiB
            for _ in range(args.answer_mib):
                send(piece)
        return write

    return {"baseline": lambda send: send(framed(small)), "trickled": trickle,
            "runaway, stated": runaway(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size),
            "runaway, unstated": runaway(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")}


def run_case(kind: str, write: Callable[[Callable[[bytes], None]], None], timeout: float,
             args: argparse.Namespace) -> Dict[str, Any]:
    """One call by `kind` (its `timeout`) in a child process against a server writing `write`: its figures."""
    server = ScriptedServer(write)
    try:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.root))
        # Run in the checkout: `python -c` puts its working directory first on sys.path, before PYTHONPATH.
        done = subprocess.run([sys.executable, "-c", CHILD, kind, server.origin, str(timeout)], env=env,
                              cwd=os.path.abspath(args.root), capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError("the %s child failed: %s" % (kind, done.stderr[-2000:]))
        figures: Dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        figures["sent"], figures["timeout"] = server.settled(), timeout
        return figures
    finally:
        server.close()


def report(results: Dict[str, Dict[str, Dict[str, Any]]], args: argparse.Namespace) -> str:
    """The figures as Markdown: a row per case and client, each ratio to its timeout and to the baseline's RSS."""
    rows: List[List[Any]] = [["case", "client", "seconds", "x timeout", "peak RSS MiB", "x baseline RSS",
                              "MiB the server got out", "ended in"]]
    for kind in KINDS:
        base = results[kind]["baseline"]["hwm_kib"]
        for case in CASES:
            r = results[kind][case]
            rows.append([case, kind, fmt(r["seconds"]), fmt(r["seconds"] / r["timeout"], "%.2f"),
                         mib(r["hwm_kib"]), fmt(r["hwm_kib"] / base), fmt(r["sent"] / MiB, "%.1f"), r["outcome"]])
    used = sorted({r["flowmem"] for cases in results.values() for r in cases.values()})
    trickle = len(trickled_answer(args))
    setup = ("`%s`, flowmem from %s; answers of %d MiB, a timeout of %g s for the trickled answer (%d bytes at 4 "
             "bytes a second: %.0f s in all), %g s for the others. Seconds are the call's alone (not the child's "
             "start)." % (command_line(), ", ".join(used), args.answer_mib, args.timeout, trickle, trickle / 4.0,
                          args.runaway_timeout))
    lines = ["# What a hostile server costs a client", "", setup, "", markdown(rows), "",
             "Machine: %s" % json.dumps(machine(), sort_keys=True)]
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=REPO_ROOT, help="the flowmem checkout the clients come from (this one)")
    parser.add_argument("--answer-mib", type=int, default=256, help="the runaway answers' size (256)")
    parser.add_argument("--timeout", type=float, default=1.0, help="the trickled call's timeout in seconds (1)")
    parser.add_argument("--runaway-timeout", type=float, default=120.0,
                        help="the other calls' timeout (120 s: long enough to read a runaway answer whole)")
    parser.add_argument("--trickle-bytes", type=int, default=60, help="the trickled answer's body (60 bytes)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    table = scripts(args)
    results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for kind in KINDS:
        results[kind] = {}
        for case in CASES:
            log("%s: %s" % (kind, case))
            timeout = args.timeout if case == "trickled" else args.runaway_timeout
            results[kind][case] = run_case(kind, table[case], timeout, args)
    print(report(results, args), end="")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"args": vars(args), "results": results, "machine": machine()}, f, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
