"""What a run of the speed benchmark measures: its plan (FULL or --quick), the Adds' shape, the stores searched."""
from __future__ import annotations

import os
from typing import Dict, List, NamedTuple, Tuple

from tools.benchkit.corpus import PLATFORM_MAX_ADD
from tools.benchkit.report import human
from tools.benchkit.stores import StoreSpec

ADD_SIZE = PLATFORM_MAX_ADD  # messages per Add, as the platform sends them


ADD_SESSION_LEN = 40  # two Adds per session: one opens it, one extends it


ADD_USER_MESSAGES = 1000  # a client thread's messages are spread over users of this size


class Plan(NamedTuple):
    """How big each part of the run is; `--quick` picks smaller values."""

    add_messages: int  # messages per Add setting (in-process, and each thread count)
    threads: Tuple[int, ...]
    store_sizes: Tuple[int, ...]  # single-user stores, in messages
    other_users: int  # the "others" database: users besides the measured one...
    messages_per_other: int  # ...and messages each
    queries: int
    max_rounds: int  # timed passes over the queries per store, at most...
    round_budget_s: float  # ...and as many as fit in this many seconds (at least one)


FULL = Plan(20000, (1, 8, 32), (1000, 10000, 100000), 1000, 1000, 200, 5, 60.0)


QUICK = Plan(2000, (1, 8, 32), (1000, 10000), 50, 1000, 100, 3, 3.0)


def file_bytes(path: str) -> Dict[str, int]:
    """Sizes of a database file and its WAL (0 where absent)."""
    sizes = {}
    for key, p in (("db", path), ("wal", path + "-wal")):
        sizes[key] = os.path.getsize(p) if os.path.exists(p) else 0
    return sizes


def store_specs(plan: Plan, workdir: str, seed: int) -> List[StoreSpec]:
    """The single-user stores, then the measured user among the others."""
    specs = [
        StoreSpec("%dk messages, one user" % (n // 1000), os.path.join(workdir, "user-t%d-s%d.db" % (n, seed)), n, 0, 0)
        for n in plan.store_sizes
    ]
    others = plan.other_users * plan.messages_per_other
    # Same file name as bench_isolation.py's main() gives DB B, so both tools share the cache.
    name = "B-u%d-m%d-t%d-s%d.db" % (plan.other_users, plan.messages_per_other, 1000, seed)
    specs.append(StoreSpec("1k-message user + %s others' messages" % human(others), os.path.join(workdir, name),
                           1000, plan.other_users, plan.messages_per_other))
    return specs
