"""Add throughput: in process on a fresh database, and over HTTP with 1, 8 and 32 keep-alive client threads."""
from __future__ import annotations

import gc
import http.client
import json
import os
import sqlite3
import threading
import time
from typing import Any, Dict, List, Sequence

from flowmem.config import load
from flowmem.memory import Memory
from tools.bench.plan import ADD_SESSION_LEN, ADD_SIZE, ADD_USER_MESSAGES, Plan, file_bytes
from tools.benchkit.corpus import TextGen, add_bodies, user_sessions
from tools.benchkit.process import rss_figures, vm_hwm_kib
from tools.benchkit.server import JSON_HEADERS, ServerProcess
from tools.benchkit.stats import summary
from tools.benchkit.stores import remove_db


def add_workload(n_threads: int, total: int, seed: int, vocabulary: int) -> List[List[Dict[str, Any]]]:
    """Add bodies for `n_threads` clients, `total` messages in all, each client its own users.

    Every client gets a multiple of 20 messages, so every Add holds 20. The user ids
    depend only on the thread count and index, so the in-process run and the
    one-thread HTTP run send exactly the same Adds.
    """
    gen = TextGen(seed, vocabulary)
    per_thread = max(ADD_SIZE, total // n_threads // ADD_SIZE * ADD_SIZE)
    workload = []
    for t in range(n_threads):
        bodies: List[Dict[str, Any]] = []
        left, u = per_thread, 0
        while left:
            n = min(ADD_USER_MESSAGES, left)
            user = "c%d-t%02d-u%02d" % (n_threads, t, u)
            sessions = user_sessions(gen, seed, user, n, (ADD_SESSION_LEN, ADD_SESSION_LEN))
            bodies.extend(add_bodies(user, sessions, ADD_SIZE))
            left -= n
            u += 1
        workload.append(bodies)
    return workload


def throughput(label: str, n_messages: int, wall_s: float, latencies_ms: List[float], errors: int) -> Dict[str, Any]:
    """The figures of one Add setting."""
    return {
        "setting": label,
        "adds": len(latencies_ms),
        "messages": n_messages,
        "wall_s": wall_s,
        "msgs_per_s": n_messages / wall_s if wall_s else float("nan"),
        "latency": summary(latencies_ms),
        "errors": errors,
    }


def measure_add_inprocess(plan: Plan, workdir: str, seed: int, vocabulary: int) -> Dict[str, Any]:
    """Phase: every Add through Memory.add on a fresh database, one after another."""
    path = os.path.join(workdir, "add-inprocess.db")
    remove_db(path)
    bodies = add_workload(1, plan.add_messages, seed, vocabulary)[0]
    n_messages = sum(len(b["messages"]) for b in bodies)
    memory = Memory(load({"db": path}, environ={}))  # default config: synchronous FULL
    try:
        gc.collect()
        latencies = []
        start = time.perf_counter()
        for body in bodies:
            t0 = time.perf_counter()
            memory.add(body)
            latencies.append((time.perf_counter() - t0) * 1000.0)
        wall = time.perf_counter() - start
        live = file_bytes(path)
    finally:
        memory.close()
    out = throughput("in-process", n_messages, wall, latencies, 0)
    out.update(files_live=live, files_closed=file_bytes(path), **rss_figures())
    remove_db(path)
    return out


def _client(port: int, bodies: Sequence[bytes], start: threading.Barrier, out: List[Any], index: int) -> None:
    """One client thread: its own keep-alive connection, its Adds one after another."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        # Connect before the clock starts: the figure is about Adds, not TCP handshakes.
        conn.request("GET", "/health")
        conn.getresponse().read()
        start.wait(60)
        latencies, errors = [], 0
        for body in bodies:
            t0 = time.perf_counter()
            conn.request("POST", "/add", body=body, headers=JSON_HEADERS)
            response = conn.getresponse()
            response.read()
            latencies.append((time.perf_counter() - t0) * 1000.0)
            errors += response.status != 200
        out[index] = (latencies, errors)
    except BaseException as e:  # reported by the caller; never leave the others waiting
        start.abort()
        out[index] = e
    finally:
        conn.close()


def measure_add_http(n_threads: int, plan: Plan, workdir: str, seed: int, vocabulary: int) -> Dict[str, Any]:
    """Phase: Adds over HTTP from `n_threads` concurrent clients to a fresh server."""
    path = os.path.join(workdir, "add-http.db")
    remove_db(path)
    workload = add_workload(n_threads, plan.add_messages, seed, vocabulary)
    n_messages = sum(len(b["messages"]) for bodies in workload for b in bodies)
    # Encoded up front, so the clients (sharing the CPUs with the server) do little but send.
    encoded = [[json.dumps(b).encode("utf-8") for b in bodies] for bodies in workload]
    del workload
    server = ServerProcess(path, os.path.join(workdir, "serve-c%d.log" % n_threads))
    try:
        results: List[Any] = [None] * n_threads
        start = threading.Barrier(n_threads + 1)
        threads = [
            threading.Thread(target=_client, args=(server.port, encoded[i], start, results, i))
            for i in range(n_threads)
        ]
        for t in threads:
            t.start()
        gc.collect()
        start.wait(60)
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        live = file_bytes(path)
        server_peak = vm_hwm_kib(server.proc.pid)
    finally:
        exit_code = server.stop()
    failed = [r for r in results if not isinstance(r, tuple)]
    if failed:
        raise RuntimeError("a client thread failed: %r" % (failed[0],))
    latencies = [ms for times, _ in results for ms in times]
    out = throughput("HTTP, %d client thread%s" % (n_threads, "s" if n_threads > 1 else ""),
                     n_messages, wall, latencies, sum(errors for _, errors in results))
    conn = sqlite3.connect(path)
    try:
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    finally:
        conn.close()
    out.update(threads=n_threads, stored_messages=stored, server_exit_code=exit_code, files_live=live,
               files_closed=file_bytes(path), server_peak_rss_kib=server_peak, **rss_figures())
    remove_db(path)
    return out
