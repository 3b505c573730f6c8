"""What search reads of a session, kept in memory between searches.

A search reads every candidate message's speaker, time and tokens, and the windows
and segments around them, and shows the stored text of the best. Questions come in
bursts per user, so the same sessions are read again and again; this cache keeps
them, least recently used first out, up to a bound on the messages held. A session
only ever grows (Adds append), so its message count is its version: an entry whose
count differs from the database's is reloaded, whichever process wrote.

What does change existing data (a rebuilt index, a deleted user) bumps the
database's index generation (settings.py); the Store then clear()s this cache, and an
entry read from an older snapshot than the newest generation is never kept, so no
search after a deletion or a rebuild is answered from what was read before it.
"""
from __future__ import annotations

import collections
import threading
from types import MappingProxyType
from typing import Callable, Dict, Mapping, NamedTuple, Optional, Tuple

from .rows import MessageRow, ViewRow

# (speaker tokens, timestamp ms, tokens, the dates the text mentions or implies: (first, last) day ordinals)
Features = Tuple[Tuple[str, ...], Optional[int], Tuple[str, ...], Tuple[Tuple[int, int], ...]]

# A message counts as one against the session cache's bound per CACHE_UNIT_CHARS of its text.
CACHE_UNIT_CHARS = 2_000


class SessionData(NamedTuple):
    n_messages: int
    messages: Dict[int, Features]  # position -> features
    views: Tuple[ViewRow, ...]  # the session's windows and segments
    doc_freqs: Dict[str, int]  # token -> how many of the session's messages hold it
    rows: Dict[int, MessageRow]  # position -> the stored message: what results show
    cost: int = 0  # what it counts against the bound: its messages, a long one as several (CACHE_UNIT_CHARS)
    # position -> the windows and segments holding it, in `views` order: what a search asks of
    # the messages it scores in context, looked up instead of walking every view of the session
    views_at: Mapping[int, Tuple[ViewRow, ...]] = MappingProxyType({})

    def weight(self) -> int:
        return self.cost or len(self.messages)


class SessionCache:
    """A thread-safe LRU of SessionData by session key, holding at most `max_messages` messages
    (SessionData.weight: a long message counts as several, so the bound is one of memory too)."""

    def __init__(self, max_messages: int):
        self.max_messages = max_messages
        self._entries: "collections.OrderedDict[int, SessionData]" = collections.OrderedDict()
        self._held = 0
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, session_key: int, n_messages: int, load: Callable[[], SessionData],
            generation: int = 0) -> SessionData:
        """The session's data at `n_messages` messages, from memory or from `load()`.

        `generation` is the index generation of the snapshot `load()` reads: only what
        was read at the cache's generation (the newest, see clear()) is kept or served.
        """
        with self._lock:
            entry = self._entries.get(session_key)
            if entry is not None and entry.n_messages == n_messages and generation == self._generation:
                self._entries.move_to_end(session_key)
                return entry
        entry = load()
        with self._lock:
            if generation != self._generation:
                return entry
            old = self._entries.pop(session_key, None)
            if old is not None:
                self._held -= old.weight()
            if entry.weight() <= self.max_messages:
                self._entries[session_key] = entry
                self._held += entry.weight()
            while self._held > self.max_messages:
                _, evicted = self._entries.popitem(last=False)
                self._held -= evicted.weight()
        return entry

    def clear(self, generation: int) -> None:
        """Forget every session; from now on keep only what is read at index `generation`."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._generation = generation

    def __len__(self) -> int:
        """How many sessions are held."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, session_key: object) -> bool:
        """Whether the session is held."""
        with self._lock:
            return session_key in self._entries
