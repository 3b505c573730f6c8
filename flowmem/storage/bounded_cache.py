"""A thread-safe cache of versioned entries under a bound on their total weight, least recently used out.

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
their entries without keeping them). An entry may belong to a group (a session to its user):
forget_groups() forgets every entry of a group as forget() does a key, those being read too.

What a full cache keeps: with `admission`, a loaded entry that needs room pushes out only entries
idle longer than its key took to come back (admission.py), so that a loop over more users than fit
serves those held from memory instead of none; without, every entry loaded is kept (LRU).
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Dict, Generic, Hashable, Iterable, Optional, TypeVar

from .admission import Recency

E = TypeVar("E")

MAX_FLOORS = 10_000  # keys whose last deletion is remembered one by one (then: one number for all)


class BoundedCache(Generic[E]):
    """Entries by key, least recently used first out while their weights sum past `bound`.

    version(entry) is what get() compares with the version asked for; weight(entry) is
    what the entry counts against the bound (for the caches of users' postings and vectors,
    an estimate of its bytes); group(entry), if given, what forget_groups() forgets it by. An
    entry heavier than the bound is served but not kept; with `admission`, a new one that needs
    room only if the entries it would push out are idle longer than it (admission.py).
    """

    def __init__(self, bound: int, version: Callable[[E], int], weight: Callable[[E], int],
                 group: Optional[Callable[[E], Hashable]] = None, admission: bool = False):
        self.bound = bound
        self._version, self._weight, self._group = version, weight, group
        self._entries: "collections.OrderedDict[Hashable, E]" = collections.OrderedDict()
        self._held = 0
        self._generation = 0
        self._floors: Dict[Hashable, int] = {}  # key -> the deletion that last forgot it
        self._group_floors: Dict[Hashable, int] = {}  # group -> the deletion that last forgot it
        self._floor = 0  # the deletion that forgot every key (forget_all(), or the floors folded)
        self._recency = Recency() if admission else None
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: int, load: Callable[[Optional[E]], E], generation: int = 0,
            deletions: int = 0) -> E:
        """The entry for `key` at `version`, from memory or from `load(the entry held, or None)`.

        `generation` is the index generation of the snapshot `load()` reads and `deletions`
        the last deletion it holds: only what was read at the cache's generation (the newest,
        see clear()) and after the key (or its group) was last forgotten is kept or served.
        """
        entry = self._get(key, version, load, generation, deletions, None)
        assert entry is not None  # loaded whatever its weight: no `expected` weight to refuse it by
        return entry

    def get_kept(self, key: Hashable, version: int, load: Callable[[Optional[E]], E], expected: int,
                 generation: int = 0, deletions: int = 0) -> Optional[E]:
        """get(), but None, loading nothing, when no entry for `key` is held and one weighing
        `expected` would not be kept (heavier than the bound, or refused room: admission.py)."""
        return self._get(key, version, load, generation, deletions, expected)

    def _get(self, key: Hashable, version: int, load: Callable[[Optional[E]], E], generation: int,
             deletions: int, expected: Optional[int]) -> Optional[E]:
        with self._lock:
            distance = self._ask(key)
            held = self._entries.get(key)
            if held is not None and not self._current(key, generation, deletions, held):
                held = None
            if held is not None and self._version(held) == version:
                self._entries.move_to_end(key)
                return held
            if held is None and expected is not None and not self._admits(key, expected, distance):
                return None
        entry = load(held)
        with self._lock:
            if self._current(key, generation, deletions, entry):
                self._keep(key, entry, distance)
        return entry

    def _ask(self, key: Hashable) -> Optional[int]:
        """Count a request for `key` (admission.py); the ticks since its previous one."""
        if self._recency is None:
            return None
        return self._recency.ask(key, self._entries.__contains__, len(self._entries))

    def _admits(self, key: Hashable, weight: int, distance: Optional[int]) -> bool:
        """Whether an entry for `key` weighing `weight`, its key back after `distance` ticks, would be kept."""
        if weight > self.bound:
            return False
        if key in self._entries or self._recency is None:
            return True
        victims = ((k, self._weight(e)) for k, e in self._entries.items())  # least recently used first
        return self._recency.admits(distance, victims, weight - (self.bound - self._held), len(self._entries))

    def _keep(self, key: Hashable, entry: E, distance: Optional[int]) -> None:
        """Hold `entry` for `key`, if admitted, evicting the least recently used others past the bound."""
        if not self._admits(key, self._weight(entry), distance):
            self._drop(key)  # a version too heavy to keep: the older one held is of no more use
            return
        self._drop(key)
        self._entries[key] = entry
        self._held += self._weight(entry)
        while self._held > self.bound:
            _, evicted = self._entries.popitem(last=False)
            self._held -= self._weight(evicted)

    def _current(self, key: Hashable, generation: int, deletions: int, entry: E) -> bool:
        """Whether a snapshot at `generation` holding deletions up to `deletions` may use `entry`, of `key`."""
        floor = max(self._floor, self._floors.get(key, 0))
        if self._group is not None and self._group_floors:
            floor = max(floor, self._group_floors.get(self._group(entry), 0))
        return generation == self._generation and deletions >= floor

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
                self._drop(key)
                self._floors[key] = max(deletion, self._floors.get(key, 0))
            self._fold_floors()

    def forget_groups(self, groups: Iterable[Hashable], deletion: int) -> None:
        """Drop the entries of `groups`; from now on use theirs only as read after `deletion`."""
        groups = set(groups)
        if self._group is None or not groups:
            return
        with self._lock:
            group = self._group
            for key in [k for k, entry in self._entries.items() if group(entry) in groups]:
                self._drop(key)
            for g in groups:
                self._group_floors[g] = max(deletion, self._group_floors.get(g, 0))
            self._fold_floors()

    def _drop(self, key: Hashable) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._held -= self._weight(old)

    def _fold_floors(self) -> None:
        """Past MAX_FLOORS keys and groups remembered, one floor for all: the highest."""
        if len(self._floors) + len(self._group_floors) > MAX_FLOORS:
            self._floor = max(self._floor, *self._floors.values(), *self._group_floors.values())
            self._floors.clear()
            self._group_floors.clear()

    def forget_all(self, deletion: int) -> None:
        """Drop every entry; from now on use only what is read after `deletion`."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._floor = max(self._floor, deletion)
            self._floors.clear()
            self._group_floors.clear()

    def held_weight(self) -> int:
        """What the entries held weigh together (for the caches of postings and vectors: their bytes)."""
        with self._lock:
            return self._held

    def __len__(self) -> int:
        """How many entries are held."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether an entry for `key` is held."""
        with self._lock:
            return key in self._entries
