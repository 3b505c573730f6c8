"""From ranked messages to the result set: which views fill the `top_k` slots.

The first `message_share` of the slots hold single messages, best first: that is
where precision lives, and a message costs the reader one message. The remaining
slots each hold a window (or segment) around the next best message not yet shown,
so the reader gets more of the conversation around the evidence. Rules:

- nothing repeats: a message already shown is never shown again, and a view whose
  messages are all shown already gives its slot to new evidence;
- raw messages keep a guaranteed share of the slots (`message_share`);
- every item keeps the score of the message that earned it, so scores never rise.
"""
from __future__ import annotations

import math
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ..storage.views import MESSAGE
from .pool import Key, Pool


class Pick(NamedTuple):
    """One result slot: a view (a message, or a window or segment around one) and its score."""

    kind: str
    session_key: int
    first: int
    last: int
    score: float
    anchor: Key  # the ranked message that earned the slot

    def keys(self) -> List[Key]:
        """The keys of the view's messages, in order."""
        return [(self.session_key, seq) for seq in range(self.first, self.last + 1)]


class _ViewsAround:
    """For a message, the (first, last) of the pool's views of one kind that contain it, found when asked.

    Only the messages that reach the view slots are asked about (a few dozen), so the
    views are grouped by session once and each message looks only through its own
    session's: no map of every pool message is built.
    """

    def __init__(self, pool: Pool, kind: str):
        self.by_session: Dict[int, List[Tuple[int, int]]] = {}
        for view in pool.views.values():
            if view.kind == kind:
                self.by_session.setdefault(view.session_key, []).append((view.first, view.last))

    def of(self, key: Key) -> List[Tuple[int, int]]:
        """The (first, last) of the views holding message `key`, in order (none: an empty list)."""
        seq = key[1]
        return sorted(span for span in self.by_session.get(key[0], ()) if span[0] <= seq <= span[1])


def select_views(order: Sequence[Key], scores: Mapping[Key, float], pool: Pool, top_k: int,
                 view_kind: str, message_share: float, spare: int = 0) -> List[Pick]:
    """The result set for messages ranked in `order` (best first), plus up to `spare` more picks.

    scores: each message's final score; view_kind: the kind of view (a storage.views
    kind) that fills the slots past the first `message_share` of `top_k`.
    """
    picks: List[Pick] = []
    shown: Set[Key] = set()
    around: Optional[_ViewsAround] = None
    messages_first = math.ceil(top_k * message_share)
    for key in order:
        if len(picks) >= top_k + spare:
            break
        if key in shown:
            continue
        pick = Pick(MESSAGE, key[0], key[1], key[1], scores[key], key)
        if len(picks) == messages_first and view_kind != MESSAGE and around is None:
            around = _ViewsAround(pool, view_kind)  # only once views are due
        if len(picks) >= messages_first and around is not None:
            best = None
            for first, last in around.of(key):
                fresh = [(key[0], seq) for seq in range(first, last + 1) if (key[0], seq) not in shown]
                value = sum(scores.get(m, 0.0) for m in fresh)
                if len(fresh) > 1 and (best is None or value > best[0]):
                    best = (value, first, last)
            if best is not None:
                pick = Pick(view_kind, key[0], best[1], best[2], scores[key], key)
        picks.append(pick)
        shown.update(pick.keys())
    return picks
