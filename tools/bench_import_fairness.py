"""Other users' Adds while two long imports run (issue 22, item 6), and what one import chunk holds the lock.

    python -m tools.bench_import_fairness [--records 60000] [--add-every 0.2] [--flowmem PATH]
    python -m tools.bench_import_fairness --chunks 50,200,1000 [--records 4000]

The first form starts a real server (`python -m flowmem serve`, a new database in a
temporary directory, the default settings: request timeout 10 s), then two importers at
once, each POSTing `--records` one-message records of its own user to
/users/{user}/import in batches under the body limit (as Client.import_records sends
them), and meanwhile another user's Adds, one every `--add-every` seconds, each on a new
connection, until both imports are done. Reported: the Adds' p50, p99 and max latency
and their errors (any answer but 200, or none within 60 s), and each import's time and
answers. Issue 22's target: the Adds' p99 within the request timeout during two imports
of 60,000 records.

`--flowmem PATH` runs the server of another checkout (e.g. `git worktree add /tmp/base
f53c956`), to measure the code before the change with the same tool; `--python` the
interpreter that runs it.

The second form (`--chunks`) measures, in this process, how long the write lock is held
per import chunk (Store.add_many) for each chunk size in messages, and the import's
throughput: what an Add waits for behind one chunk (importing.IMPORT_CHUNK_MESSAGES).
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tools.benchkit.checkout import use_flowmem

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BODY_BUDGET = 8 * 1024 * 1024 - 64  # the default max_body_bytes, less `{"records": [...]}`
ADD_TIMEOUT_S = 60.0


def record(user: str, i: int) -> Dict[str, Any]:
    return {"request_id": "%s-%d" % (user, i), "user_id": user, "session_id": "s%d" % (i // 100),
            "messages": [{"role": "user", "timestamp": 1683554160000 + i * 1000,
                          "content": "Kim: imported note %d about the kites of %s at the pier" % (i, user)}]}


def batches(user: str, n: int) -> Iterator[bytes]:
    """The import bodies of `n` records of `user`, each under the default body limit."""
    parts: List[bytes] = []
    size = 0
    for i in range(n):
        encoded = json.dumps(record(user, i), separators=(",", ":")).encode()
        if parts and size + len(encoded) + 1 > BODY_BUDGET:
            yield b'{"records":[' + b",".join(parts) + b"]}"
            parts, size = [], 0
        parts.append(encoded)
        size += len(encoded) + 1
    if parts:
        yield b'{"records":[' + b",".join(parts) + b"]}"


def post(port: int, path: str, body: bytes, timeout: float) -> Tuple[Optional[int], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    except OSError as e:  # a timeout, a reset
        return None, str(e).encode()
    finally:
        conn.close()


@contextlib.contextmanager
def server(flowmem: str, python: str, db: str) -> Iterator[int]:
    """A `flowmem serve` of the checkout `flowmem` on an ephemeral port; yields the port."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
    environ["PYTHONPATH"] = os.path.abspath(flowmem)
    proc = subprocess.Popen([python, "-m", "flowmem", "serve", "--port", "0", "--db", db],
                            cwd=os.path.abspath(flowmem), env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        port = None
        for line in proc.stdout:  # INFO lines: the start-up line, then one a request (read on below)
            found = re.search(r"serving on http://127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
                break
        if port is None:
            raise SystemExit("the server did not start")
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        yield port
    finally:
        proc.terminate()
        proc.wait(30)


def run_imports(args: argparse.Namespace) -> Dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix="flowmem-bench-import-")
    imports: Dict[str, Dict[str, Any]] = {}
    adds: List[Tuple[Optional[int], float]] = []
    try:
        with server(args.flowmem, args.python, os.path.join(workdir, "bench.db")) as port:
            post(port, "/add", json.dumps(record("adder", -1)).encode(), ADD_TIMEOUT_S)  # warm the server up
            bodies = {user: list(batches(user, args.records)) for user in ("importer1", "importer2")}

            def importer(user: str) -> None:
                started, statuses = time.perf_counter(), []
                for body in bodies[user]:
                    statuses.append(post(port, "/users/%s/import" % user, body, 3600)[0])
                imports[user] = {"seconds": round(time.perf_counter() - started, 2), "requests": len(statuses),
                                 "statuses": statuses}

            threads = [threading.Thread(target=importer, args=(user,)) for user in bodies]
            for thread in threads:
                thread.start()
            i = 0
            while any(thread.is_alive() for thread in threads):
                t0 = time.perf_counter()
                status, _ = post(port, "/add", json.dumps(record("adder", i)).encode(), ADD_TIMEOUT_S)
                adds.append((status, (time.perf_counter() - t0) * 1000))
                i += 1
                time.sleep(max(0.0, args.add_every - (time.perf_counter() - t0)))
            for thread in threads:
                thread.join()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    latencies = sorted(ms for _, ms in adds)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else None
    errors: Dict[str, int] = {}
    for status, _ in adds:
        if status != 200:
            errors[str(status)] = errors.get(str(status), 0) + 1
    return {"flowmem": os.path.abspath(args.flowmem), "records_per_import": args.records, "adds": len(adds),
            "add_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "add_p99_ms": None if p99 is None else round(p99, 1),
            "add_max_ms": round(latencies[-1], 1) if latencies else None, "add_errors": errors, "imports": imports}


class HoldTimer:
    """A lock that records how long each hold of `lock` lasted."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.holds: List[float] = []
        self._since = 0.0

    def __enter__(self) -> None:
        self.lock.acquire()
        self._since = time.perf_counter()

    def __exit__(self, *exc: Any) -> None:
        self.holds.append(time.perf_counter() - self._since)
        self.lock.release()


def measure_chunks(args: argparse.Namespace) -> Dict[str, Any]:
    """The write lock's hold per chunk (p50, max) and the import's records/s, per chunk size."""
    use_flowmem(args.flowmem)  # before anything imports flowmem
    from flowmem import memory as memory_module
    from flowmem.config import load
    # Where the chunk size lives: flowmem.importing, or flowmem.memory before it (an older checkout).
    chunking = importlib.import_module("flowmem.importing" if importlib.util.find_spec("flowmem.importing")
                                       else "flowmem.memory")

    workdir = tempfile.mkdtemp(prefix="flowmem-bench-chunks-")
    out = {}
    try:
        for size in [int(s) for s in args.chunks.split(",")]:
            setattr(chunking, "IMPORT_CHUNK_MESSAGES", size)  # noqa: B010  # a module picked by name
            memory = memory_module.Memory(load({"db": os.path.join(workdir, "c%d.db" % size)}, environ={}))
            lock = HoldTimer(memory.store._write_lock)
            memory.store._write_lock = lock  # type: ignore[assignment]  # what writing() takes
            records = [record("importer", i) for i in range(args.records)]
            started = time.perf_counter()
            memory.import_records(records)
            seconds = time.perf_counter() - started
            memory.store._write_lock = lock.lock
            memory.close()
            holds = lock.holds
            out[str(size)] = {"lock_hold_p50_ms": round(statistics.median(holds) * 1000, 1),
                              "lock_hold_max_ms": round(max(holds) * 1000, 1),
                              "records_per_s": round(args.records / seconds)}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"flowmem": os.path.abspath(args.flowmem), "records": args.records, "chunk_messages": out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=60000, help="records per import (one message each)")
    parser.add_argument("--add-every", type=float, default=0.2, help="seconds between the other user's Adds")
    parser.add_argument("--flowmem", default=REPO_ROOT, help="the flowmem checkout to run (default: this one)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs its server")
    parser.add_argument("--chunks", help="chunk sizes in messages to time in this process, e.g. 50,200,1000")
    args = parser.parse_args()
    print(json.dumps(measure_chunks(args) if args.chunks else run_imports(args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
