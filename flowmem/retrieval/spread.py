"""Spread the first places over the conversation: questions asking for several facts get several.

A question like "what activities has Dana done?" or "how many times ...?" has its
answer in many places. The fused order puts the best match first and then, because
windows and segments score a message by its neighbourhood and adjacency and reply lift
its neighbours, much of the same stretch of conversation: the first ten repeat one fact.
For such questions (query.Query.many), past the first `keep` places (left as fused:
precision), up to place `slots` a message within `gap` positions of one already placed
in the same session waits, and the next best message from elsewhere takes its place,
maximal-marginal-relevance style with nearness for similarity. The messages that waited
follow in their fused order: nothing is lost, only moved down.

Scores are then capped by the score above, so they still never rise down the list.
Every choice follows the fused order, which ends in a stable key (pipeline.py).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Set, Tuple

from .candidates import Key


def spread(order: Sequence[Key], scores: Mapping[Key, float], keep: int, slots: int,
           gap: int) -> Tuple[List[Key], Dict[Key, float]]:
    """`order` with places `keep` to `slots` held by no message within `gap` positions of another.

    scores: each message's score; a moved one gets the score above it where that is
    lower. slots <= keep, or gap < 1, leave the order as it is.
    """
    if slots <= keep or gap < 1 or len(order) <= keep:
        return list(order), dict(scores)
    placed: List[Key] = []
    near: Set[Key] = set()  # messages within `gap` of a placed one
    waiting: List[Key] = []
    rest = iter(order)
    for key in rest:
        if len(placed) >= keep and key in near:
            waiting.append(key)
            continue
        placed.append(key)
        near.update((key[0], key[1] + step) for step in range(-gap, gap + 1))
        if len(placed) == slots:
            break
    new_order = placed + waiting + list(rest)
    new_scores = dict(scores)
    for above, key in zip(new_order, new_order[1:]):
        new_scores[key] = min(new_scores[key], new_scores[above])
    return new_order, new_scores
