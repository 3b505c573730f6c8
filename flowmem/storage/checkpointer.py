"""Checkpoints off the request path: a thread copies the WAL into the database file after writes
(SQLite's own automatic checkpoint is off; the Store starts one Checkpointer per writer).

Or none: with the setting checkpoints=external the Store never starts it, and never
checkpoints after delete-user or at close either, because another process owns the WAL.
Litestream (docs/cluster.md) holds a read transaction on the
database between its syncs, so that no frame it has not yet copied can be checkpointed
away, and checkpoints the WAL itself (PASSIVE, past 1,000 pages or each minute). A
TRUNCATE checkpoint of ours then waits for that read transaction for the whole busy
timeout: measured beside Litestream 0.5.17, a delete-user took 30.06 s (every write
waiting behind it) and stopping the server 30.09 s, against milliseconds with
checkpoints=external. PASSIVE checkpoints could not lose frames (they stop at the oldest
reader's snapshot), but they are not needed there.

A process that ends without closing its Memory (a script's last line an Add) once left its
writes in the -wal file alone: the thread is a daemon, killed at exit before its next
interval, and no connection was closed to checkpoint. The .db copied alone, as people copy
a file to back it up, was then "empty, not a flowmem database". So the thread copies what
the last writes left before it ends (stop()), and at exit (atexit) every running one is
stopped: an unclosed process leaves a .db that holds its writes, as a closed one does.
"""
from __future__ import annotations

import atexit
import logging
import os
import sqlite3
import threading
from typing import Set

from .connection import connect
from .fair_lock import FairLock

log = logging.getLogger("flowmem.store")

# The background checkpointer's truncating checkpoint runs under the write lock; it gives up
# this soon when a long read (a backup, a big search) holds an old snapshot, and retries later.
CHECKPOINT_BUSY_MS = 100


class Checkpointer(threading.Thread):
    """Copies the WAL back into the database file off the request path.

    SQLite's automatic checkpoint runs inside whichever commit crosses the threshold,
    so one Add in a few dozen would pay for writing pages scattered over the whole
    file: a cost that grows with everyone's data. Here a thread does it instead, after
    writes, with PASSIVE checkpoints that never block readers or the writer. Under
    a steady stream of writes a passive checkpoint never catches up with the end of
    the WAL, so the WAL could grow without bound; past `wal_limit_bytes` the thread
    takes the write lock for one truncating checkpoint. That checkpoint waits for
    readers of older snapshots, so it gives up after CHECKPOINT_BUSY_MS and tries
    again later: a long read (a backup) must not stall writes. A failing checkpoint
    (a full disk) is logged and retried later; the thread never dies of it.
    """

    def __init__(self, path: str, uri: str, synchronous: str, write_lock: FairLock, interval_s: float = 0.5,
                 wal_limit_bytes: int = 64 * 1024 * 1024):
        super().__init__(name="flowmem-checkpoint", daemon=True)
        self._conn = connect(uri, synchronous, CHECKPOINT_BUSY_MS)
        self._wal = path + "-wal"
        self._write_lock = write_lock
        self._interval_s = interval_s
        self.wal_limit_bytes = wal_limit_bytes  # past it, a checkpoint also truncates the WAL (public: tests lower it)
        self.wrote = threading.Event()
        self._stop_requested = threading.Event()

    def start(self) -> None:
        with _RUNNING_LOCK:
            _RUNNING.add(self)
        super().start()

    def run(self) -> None:
        try:
            while not self._stop_requested.wait(self._interval_s):
                self._after_writes()
            self._after_writes()  # stopped (a close, or the process's exit): what the last writes left
        finally:
            self._conn.close()

    def _after_writes(self) -> None:
        if self.wrote.is_set():
            self.wrote.clear()
            self.checkpoint()

    def checkpoint(self) -> bool:
        """One passive checkpoint, and a truncating one if the WAL is past its limit; True if all done."""
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if os.path.exists(self._wal) and os.path.getsize(self._wal) > self.wal_limit_bytes:
                with self._write_lock:
                    busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy:
                    self.wrote.set()  # an older snapshot is still read: try again at the next interval
                    return False
            return True
        except (sqlite3.Error, OSError) as e:
            # The next write retries (none succeeds while the disk is full); meanwhile the WAL just grows a little.
            log.warning("background checkpoint failed: %s", e)
            return False

    def stop(self) -> None:
        """End the thread once it has copied what the writes so far left (the thread's last checkpoint)."""
        self._stop_requested.set()
        if self.ident is None:  # never started: checkpoints are external
            self._conn.close()
        else:
            self.join()
        with _RUNNING_LOCK:
            _RUNNING.discard(self)


_RUNNING: Set[Checkpointer] = set()  # the started ones not yet stopped, for _stop_all_at_exit()
_RUNNING_LOCK = threading.Lock()


@atexit.register
def _stop_all_at_exit() -> None:
    """At the process's exit (before its daemon threads are killed), each running checkpointer's last
    checkpoint: the writes of a Memory never closed reach the database file, as a close's would."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for checkpointer in running:
        checkpointer.stop()
