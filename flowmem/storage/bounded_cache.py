"""A thread-safe LRU of versioned entries under a bound on their total weight.

What search keeps in memory between searches (the sessions it read: session_cache.py;
each user's message postings: postings.py) is held in one of these. An entry has a
version that only grows while the index generation holds (a session's message count,
a user's message count): an entry whose version differs from the snapshot's is
loaded again, and the loader is handed the entry held, so that it can extend it
rather than read everything again.

What does change existing data is told to the cache in two sizes. A rebuilt index bumps the
database's index generation (settings.py); the Store then clear()s the caches, and an entry
read from an older snapshot than the newest generation is never kept. A deleted session is
an entry of the deletions log (schema.py), numbered: the Store forget()s the keys it touched
(that user's postings, those sessions), and an entry of one of those keys read from a
snapshot older than the deletion (one a search began before it) is neither served to that
snapshot from memory nor kept, nor is one of any key after forget_all(). So no search after
a deletion or a rebuild is answered from what was read before it, and a deletion costs the
other users' entries nothing. The deletion numbers of forgotten keys are held up to
MAX_FLOORS keys; past that, the highest holds for every key (only older snapshots then read
their entries without keeping them).
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Dict, Generic, Hashable, Iterable, Optional, TypeVar

E = TypeVar("E")

MAX_FLOORS = 10_000  # keys whose last deletion is remembered one by one (then: one number for all)


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
        self._floors: Dict[Hashable, int] = {}  # key -> the deletion that last forgot it
        self._floor = 0  # the deletion that forgot every key (forget_all(), or the floors folded)
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: int, load: Callable[[Optional[E]], E], generation: int = 0,
            deletions: int = 0) -> E:
        """The entry for `key` at `version`, from memory or from `load(the entry held, or None)`.

        `generation` is the index generation of the snapshot `load()` reads and `deletions`
        the last deletion it holds: only what was read at the cache's generation (the newest,
        see clear()) and after the key was last forgotten is kept or served.
        """
        with self._lock:
            current = self._current(key, generation, deletions)
            held = self._entries.get(key) if current else None
            if held is not None and self._version(held) == version:
                self._entries.move_to_end(key)
                return held
        entry = load(held)
        with self._lock:
            if not self._current(key, generation, deletions):
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

    def _current(self, key: Hashable, generation: int, deletions: int) -> bool:
        """Whether a snapshot at `generation` holding deletions up to `deletions` may use the entry of `key`."""
        return generation == self._generation and deletions >= max(self._floor, self._floors.get(key, 0))

    def clear(self, generation: int) -> None:
        """Forget every entry; from now on keep only what is read at index `generation`."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._generation = generation

    def forget(self, keys: Iterable[Hashable], deletion: int) -> None:
        """Drop the entries of `keys`; from now on use them only as read after `deletion`."""
        with self._lock:
            for key in keys:
                old = self._entries.pop(key, None)
                if old is not None:
                    self._held -= self._weight(old)
                self._floors[key] = max(deletion, self._floors.get(key, 0))
            if len(self._floors) > MAX_FLOORS:
                self._floor = max(self._floor, *self._floors.values())
                self._floors.clear()

    def forget_all(self, deletion: int) -> None:
        """Drop every entry; from now on use only what is read after `deletion`."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._floor = max(self._floor, deletion)
            self._floors.clear()

    def __len__(self) -> int:
        """How many entries are held."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether an entry for `key` is held."""
        with self._lock:
            return key in self._entries
