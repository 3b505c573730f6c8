"""What search reads of a session, kept in memory between searches.

A search reads every candidate message's speaker, time and tokens, and the windows
and segments around them, and shows the stored text of the best. Questions come in
bursts per user, so the same sessions are read again and again; this cache keeps
them, least recently used first out, up to a bound on the messages held. A session
only ever grows (Adds append), so its message count is its version: an entry whose
count is behind the database's is extended with the messages appended since
(session_load.py), whichever process wrote: reading it whole again made an agent that stores
a turn and then searches pay for its whole session at every turn (docs/caches.md).

A rebuilt index clears it; a deleted session (or message: the session is then rebuilt) drops
its entry, and a deleted user the entries of all its sessions (SessionData.user_key), in every
Store on the file (bounded_cache.py): session keys are never reused, so a session deleted and
sent again is a new entry, and an entry is only ever extended by appended messages.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Dict, Mapping, NamedTuple, Optional, Tuple

from .bounded_cache import BoundedCache
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
    # position -> (first, last) of its turn, the run of one speaker's messages it is part of (views.turn_spans()),
    # for the turns of two or more messages only: a position without one is a turn of its own
    turns: Mapping[int, Tuple[int, int]] = MappingProxyType({})
    user_key: int = 0  # whose session it is: a deleted user's entries are forgotten by it
    # where the session's last segment began as read: views ending before it never change (views.py),
    # so an extension reads again only those ending at or after it (session_load.py)
    segment_start: int = 1

    def weight(self) -> int:
        return self.cost or len(self.messages)


class SessionCache(BoundedCache[SessionData]):
    """Sessions by session key, holding at most `max_messages` messages (SessionData.weight:
    a long message counts as several, so the bound is one of memory too)."""

    def __init__(self, max_messages: int):
        super().__init__(max_messages, lambda entry: entry.n_messages, SessionData.weight,
                         group=lambda entry: entry.user_key)

    def get_session(self, session_key: int, n_messages: int,
                    load: Callable[[Optional[SessionData]], SessionData],
                    generation: int = 0, deletions: int = 0) -> SessionData:
        """The session's data at `n_messages` messages, from memory or from `load(the entry held, or
        None)`: one held at fewer messages is what load() extends (session_load.py)."""
        return self.get(session_key, n_messages, load, generation, deletions)
