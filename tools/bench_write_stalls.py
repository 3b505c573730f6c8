"""Another user's Adds while one message of a long session is forgotten, or one large Add is written
(issue 31, items 5 and 6): what a write that holds the write lock costs every other writer.

    python -m tools.bench_write_stalls forget [--messages 20000] [--no-pauses] [--rounds 3] [--flowmem PATH]
    python -m tools.bench_write_stalls add [--sizes 20,200,1000,5000] [--max-add-messages N] [--flowmem PATH]

Both start a real server (`python -m flowmem serve` of the checkout `--flowmem`, default this
one, on a new database in a temporary directory, default settings but for `--max-add-messages`).
A probe user's Adds (one message each, a new connection each, one at a time) are timed first
alone, `--probes` of them: the warm figure. Then each write under test runs in a thread while
the probe's Adds go on back to back until it is answered; reported are the write's own latency,
the probes' that overlapped it (p50 and max), and the ratio of their max to the warm p50: how
much longer another user's Add took because of the write.

`forget` first stores one session of `--messages` messages (Adds of 20, as the challenge platform
sends them; one a minute, an hour's pause before every 20th unless `--no-pauses`, where a
session's segments are all cut by size), then forgets its first, a middle and its last message,
`--rounds` times each (DELETE /users/{user}/messages/{id}). `add` sends `--rounds` Adds of each
of `--sizes` messages (a new session each); past the server's cap each is refused (422), as the
answers column says. Figures are medians over the rounds, but the max, the worst round's.
"""
from __future__ import annotations

import argparse
import functools
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

from tools.benchkit.report import command_line, machine, markdown
from tools.benchkit.server import REPO_ROOT, ServerProcess

T0 = 1683554160000  # 2023-05-08 13:56 UTC
MINUTE = 60_000
LONG, PROBE, BULK = "long-user", "probe-user", "bulk-user"
Answer = Tuple[Optional[int], float, bytes]  # status (None: no answer), latency in ms, body


def request(port: int, method: str, path: str, body: Optional[Dict[str, Any]] = None, timeout: float = 600) -> Answer:
    """One request on a new connection: (status, ms, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.perf_counter()
    try:
        conn.request(method, path, None if body is None else json.dumps(body).encode(),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        return response.status, (time.perf_counter() - started) * 1000, data
    except OSError as e:
        return None, (time.perf_counter() - started) * 1000, str(e).encode()
    finally:
        conn.close()


def messages(n: int, first: int, pauses: bool) -> List[Dict[str, Any]]:
    """Messages `first` to `first` + n - 1 of the long session: a minute apart, an hour's pause before every 20th."""
    out = []
    for i in range(first, first + n):
        pause = i // 20 * 60 * MINUTE if pauses else 0
        out.append({"role": "user" if i % 2 else "assistant", "timestamp": T0 + i * MINUTE + pause,
                    "content": "%s: note %d about the kites at the pier and lantern %d" % ("Kim" if i % 2 else "Lee",
                                                                                            i, i % 7)})
    return out


class Probe:
    """The probe user's Adds, one at a time, each timed."""

    def __init__(self, port: int) -> None:
        self.port, self.sent = port, 0

    def add(self) -> float:
        self.sent += 1
        status, ms, body = request(self.port, "POST", "/add", {
            "request_id": "p%d" % self.sent, "user_id": PROBE, "session_id": "p", "messages": [
                {"role": "user", "content": "Pat: probe %d" % self.sent, "timestamp": T0 + self.sent}]})
        if status != 200:
            raise SystemExit("a probe Add got %s: %r" % (status, body[:200]))
        return ms

    def during(self, work: Callable[[], Answer]) -> Tuple[Answer, List[float]]:
        """Run `work` in a thread, the probe's Adds back to back until it is answered."""
        done: List[Answer] = []
        thread = threading.Thread(target=lambda: done.append(work()))
        thread.start()
        time.sleep(0.002)  # the write's request first
        probes = [self.add()]
        while thread.is_alive():
            probes.append(self.add())
        thread.join()
        return done[0], probes


def ids_of(port: int, user: str) -> List[str]:
    """Every message id of `user`, oldest first, through the listing's pages."""
    out: List[str] = []
    cursor: Optional[str] = None
    while True:
        query = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
        status, _, body = request(port, "GET", "/users/%s/messages?%s" % (user, urllib.parse.urlencode(query)))
        page = json.loads(body)
        out += [m["id"] for m in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def row(label: str, answers: List[Answer], probes: List[List[float]], warm: float) -> List[Any]:
    """A table row: the write's answers and latency, the overlapping probes' p50 and max, max / warm p50."""
    statuses = sorted({str(a[0]) for a in answers})
    overlapped = [ms for run in probes for ms in run]
    worst = max(max(run) for run in probes)
    return [label, "/".join(statuses), "%.1f" % statistics.median(a[1] for a in answers),
            "%.1f" % statistics.median(overlapped), "%.1f" % worst, "%.2f" % (worst / warm)]


def forget(args: argparse.Namespace, port: int, probe: Probe, warm: float) -> List[List[Any]]:
    for start in range(0, args.messages, 20):
        status, _, body = request(port, "POST", "/add", {"request_id": "l%d" % start, "user_id": LONG,
                                                         "session_id": "long", "messages": messages(
                                                             min(20, args.messages - start), start, args.pauses)})
        if status != 200:
            raise SystemExit("storing the long session got %s: %r" % (status, body[:200]))
    ids = ids_of(port, LONG)
    rows = []
    for label, at in (("first", lambda: 0), ("middle", lambda: len(ids) // 2), ("last", lambda: len(ids) - 1)):
        answers, probes = [], []
        for _ in range(args.rounds):
            gone = ids.pop(at())
            path = "/users/%s/messages/%s" % (LONG, gone)
            answer, overlapped = probe.during(functools.partial(request, port, "DELETE", path))
            answers.append(answer)
            probes.append(overlapped)
        rows.append(row("forget the %s of %d" % (label, args.messages), answers, probes, warm))
    return rows


def add(args: argparse.Namespace, port: int, probe: Probe, warm: float) -> List[List[Any]]:
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        answers, probes = [], []
        for n in range(args.rounds):
            body = {"request_id": "b%d-%d" % (size, n), "user_id": BULK, "session_id": "b%d-%d" % (size, n),
                    "messages": messages(size, 0, True)}
            answer, overlapped = probe.during(functools.partial(request, port, "POST", "/add", body))
            answers.append(answer)
            probes.append(overlapped)
        rows.append(row("an Add of %d messages" % size, answers, probes, warm))
    return rows


def run(args: argparse.Namespace) -> Dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix="flowmem-bench-stalls-")
    env = {"FLOWMEM_MAX_ADD_MESSAGES": str(args.max_add_messages)} if args.max_add_messages else {}
    server = ServerProcess(os.path.join(workdir, "bench.db"), os.path.join(workdir, "server.log"),
                           repo=os.path.abspath(args.flowmem), env_extra=env)
    try:
        probe = Probe(server.port)
        probe.add()  # the server warmed up
        alone = [probe.add() for _ in range(args.probes)]
        warm = statistics.median(alone)
        rows = (forget if args.mode == "forget" else add)(args, server.port, probe, warm)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    header = ["write", "its answers", "its latency, p50 ms", "another user's Adds meanwhile, p50 ms", "their max ms",
              "max / warm p50"]
    return {"command": command_line(), "machine": machine(), "flowmem": os.path.abspath(args.flowmem),
            "warm_add_p50_ms": round(warm, 1), "warm_add_max_ms": round(max(alone), 1),
            "table": markdown([header] + rows)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("forget", "add"))
    parser.add_argument("--messages", type=int, default=20000, help="forget: the long session's messages")
    parser.add_argument("--no-pauses", dest="pauses", action="store_false",
                        help="forget: no pause in the long session (its segments all cut by size)")
    parser.add_argument("--rounds", type=int, default=3, help="messages forgotten at each place, Adds of each size")
    parser.add_argument("--sizes", default="20,200,1000,5000", help="add: the Adds' sizes in messages")
    parser.add_argument("--max-add-messages", type=int, help="the server's cap (default: its own default)")
    parser.add_argument("--probes", type=int, default=30, help="the probe's Adds timed alone, for the warm figure")
    parser.add_argument("--flowmem", default=REPO_ROOT, help="the flowmem checkout to run (default: this one)")
    args = parser.parse_args()
    figures = run(args)
    print(figures.pop("table"))
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
