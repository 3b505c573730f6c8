"""The Store's write lock: granted in the order asked for, handed from each holder to the next.

Every write of a Store goes through one connection under one lock (store.py). Python's
threading.Lock promises no order: a thread that releases it and asks again at once (an
import writing its next chunk) usually gets it back before a thread that has waited the
whole time (another user's Add) is even woken, so long imports kept Adds waiting past the
request timeout (issue 22, item 6). FairLock queues its waiters and, on release, hands the
lock to the first of them: an Add that asks while an import writes a chunk is served
before that import's next chunk, whatever the scheduler does.
"""
from __future__ import annotations

import collections
import threading
from types import TracebackType
from typing import Deque, Optional, Type


class FairLock:
    """A non-reentrant lock granted first come, first served; usable as threading.Lock is in `with`."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()  # guards the two fields below, held only for a moment
        self._held = False
        self._waiting: Deque[threading.Lock] = collections.deque()  # each waiter's gate, oldest first

    def acquire(self) -> bool:
        """Wait until every earlier caller has had the lock and released it; then hold it."""
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            gate = threading.Lock()
            gate.acquire()
            self._waiting.append(gate)
        try:
            gate.acquire()  # released by release(): the lock is then ours, never free in between
        except BaseException:  # interrupted (KeyboardInterrupt): give up our place, or what was handed to us
            with self._mutex:
                if gate in self._waiting:
                    self._waiting.remove(gate)
                    raise
            self.release()
            raise
        return True

    def release(self) -> None:
        """Hand the lock to the longest waiter, or free it if none waits."""
        with self._mutex:
            if not self._held:
                raise RuntimeError("release of an unheld FairLock")
            if self._waiting:
                self._waiting.popleft().release()  # still held: now by the waiter
            else:
                self._held = False

    def locked(self) -> bool:
        """Whether someone holds the lock."""
        with self._mutex:
            return self._held

    def waiting(self) -> int:
        """How many callers wait for the lock (what tests wait for to order their threads)."""
        with self._mutex:
            return len(self._waiting)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.release()
