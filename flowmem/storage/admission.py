"""Which entry a full BoundedCache keeps: the one asked for again soonest, not always the newest.

A cache that keeps whatever it loads, evicting the least recently used entry (LRU), fails
whole when more users are searched in turn than it holds: with room for four heavy users'
meaning vectors, a fifth's load evicts the user searched next, whose load evicts the next,
and no search is answered from memory (docs/caches.md). A stream of users searched once
(an evaluation, a batch job) evicts everyone the same way.

So the cache keeps a clock, one tick per request, and the tick each key was last asked at
(Recency: for the keys held and those asked within the last `horizon()` ticks). A loaded
entry that needs room is kept only if its key came back sooner (the ticks between its last
two requests) than each entry it would push out has been idle (the ticks since it was last
asked): one idle longer is the less likely to be asked for first. A key not asked within the
horizon counts as coming back after it: a newcomer then takes the room of entries idle longer
than that, as LRU would (a user's burst of questions is cached from its first), while a loop
over more users than fit, or users asked for once, leave the held entries where they are.
The horizon is twice the entries held, plus two: a loop over all of them and one more
comes back later than that, a user asking again between others' questions sooner.

An entry already held is always replaced by its newer version (an extension), room made
by evicting the least recently used others: it is asked for, it stays.
"""
from __future__ import annotations

from typing import Callable, Dict, Hashable, Iterable, Optional, Tuple

PRUNE_FACTOR = 4  # the ticks remembered are pruned to the horizon once they number this many horizons


class Recency:
    """The cache's clock and the tick each key was last asked at."""

    def __init__(self) -> None:
        self.tick = 0
        self._last: Dict[Hashable, int] = {}

    def ask(self, key: Hashable, held: Callable[[Hashable], bool], n_held: int) -> Optional[int]:
        """Count a request for `key`; the ticks since its previous one (None if not remembered).

        `held(key)` tells the keys held (always remembered) and `n_held` how many there are."""
        self.tick += 1
        previous = self._last.get(key)
        self._last[key] = self.tick
        horizon = self.horizon(n_held)
        if len(self._last) > PRUNE_FACTOR * horizon + 64:
            self._last = {k: t for k, t in self._last.items() if self.tick - t <= horizon or held(k)}
        return None if previous is None else self.tick - previous

    @staticmethod
    def horizon(n_held: int) -> int:
        """How far back a request still counts: twice the entries held, plus two (the module's docstring)."""
        return 2 * n_held + 2

    def admits(self, distance: Optional[int], victims: Iterable[Tuple[Hashable, int]], needed: int,
               n_held: int) -> bool:
        """Whether a newcomer whose key came back after `distance` ticks may push out entries, least
        recently used first (`victims`: (key, weight)), until `needed` is freed."""
        horizon = self.horizon(n_held)
        comes_back = horizon if distance is None or distance > horizon else distance
        for key, weight in victims:
            if needed <= 0:
                break
            if self.tick - self._last.get(key, 0) <= comes_back:
                return False  # asked for since the newcomer was last: likely to be asked for before it
            needed -= weight
        return True
