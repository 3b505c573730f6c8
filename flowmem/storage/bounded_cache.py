"""A thread-safe LRU of versioned entries under a bound on their total weight.

What search keeps in memory between searches (the sessions it read: session_cache.py;
each user's message postings: postings.py) is held in one of these. An entry has a
version that only grows while the index generation holds (a session's message count,
a user's message count): an entry whose version differs from the snapshot's is
loaded again, and the loader is handed the entry held, so that it can extend it
rather than read everything again.

What does change existing data (a rebuilt index, a deleted user or session) bumps the database's
index generation (settings.py); the Store then clear()s the caches, and an entry read
from an older snapshot than the newest generation is never kept, so no search after a
deletion or a rebuild is answered from what was read before it.
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Generic, Hashable, Optional, TypeVar

E = TypeVar("E")


class BoundedCache(Generic[E]):
    """Entries by key, least recently used first out while their weights sum past `bound`.

    version(entry) is what get() compares with the version asked for; weight(entry) is
    what the entry counts against the bound. An entry heavier than the bound is served
    but not kept.
    """

    def __init__(self, bound: int, version: Callable[[E], int], weight: Callable[[E], int]):
        self.bound = bound
        self._version, self._weight = version, weight
        self._entries: "collections.OrderedDict[Hashable, E]" = collections.OrderedDict()
        self._held = 0
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: int, load: Callable[[Optional[E]], E], generation: int = 0) -> E:
        """The entry for `key` at `version`, from memory or from `load(the entry held, or None)`.

        `generation` is the index generation of the snapshot `load()` reads: only what
        was read at the cache's generation (the newest, see clear()) is kept or served.
        """
        with self._lock:
            held = self._entries.get(key) if generation == self._generation else None
            if held is not None and self._version(held) == version:
                self._entries.move_to_end(key)
                return held
        entry = load(held)
        with self._lock:
            if generation != self._generation:
                return entry
            old = self._entries.pop(key, None)
            if old is not None:
                self._held -= self._weight(old)
            if self._weight(entry) <= self.bound:
                self._entries[key] = entry
                self._held += self._weight(entry)
            while self._held > self.bound:
                _, evicted = self._entries.popitem(last=False)
                self._held -= self._weight(evicted)
        return entry

    def clear(self, generation: int) -> None:
        """Forget every entry; from now on keep only what is read at index `generation`."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._generation = generation

    def __len__(self) -> int:
        """How many entries are held."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether an entry for `key` is held."""
        with self._lock:
            return key in self._entries
