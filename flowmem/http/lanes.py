"""Which workers answer a request: the lanes of the server's thread pool (server.py).

Requests wait for a worker in the queue of their lane, and each lane has threads of its own:

- "read": searches, listings, pages, everything that does not write;
- "write": Adds and deletes, a quarter of the workers (at least one): they wait for the
  database's one write lock, and in a shared pool a long write (a delete-user, a reindex by
  another process) would leave every worker waiting on it and searches none;
- "import": imports, as many threads again as the writes' (beside the workers), so that
  long imports never hold the threads that answer Adds. An import writes in chunks, each one
  transaction (Memory.import_records), under a write lock granted in the order asked for
  (storage/fair_lock.py): an Add waits for one chunk, not for the import.

A route names its lane in its record (table.py, Route.lane) when it is neither of the others.
"""
from __future__ import annotations

from typing import List

from .table import ROUTER

LANES = ("read", "write", "import")
THREAD_NAMES = {"read": "worker", "write": "writer", "import": "importer"}


def lanes_of_workers(workers: int) -> List[str]:
    """The lane of each thread of a server of `workers` workers (at least two), importers after them."""
    writers = max(1, workers // 4)
    return ["write"] * writers + ["read"] * (max(2, workers) - writers) + ["import"] * writers


def lane_of(head: bytes) -> str:
    """The lane of the workers that answers a request (its head): its route's own ("import"),
    "write" for the other routes that write (their workers may wait for the write lock), else "read"."""
    words = head.split(b"\n", 1)[0].split()
    if len(words) < 2:
        return "read"
    method, target = words[0].decode("latin-1"), words[1].decode("latin-1")
    for route in ROUTER.find(target).routes:
        if route.method == method:
            return route.lane or ("write" if route.writes else "read")
    return "read"
