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

Typed chat repeats one fact in another way: a turn is sent as a burst of messages (a
run of one speaker's, storage/views.py turn_spans()), and the windows and segments around
the one that matches the question lift the others, which match nothing themselves
("ok so", "tell me everything"). In a written conversation the burst would be one
message. thin_turns(): once a turn holds a message of the first TURN_SLOTS that matches the
question's words, its messages that match none of their own wait past them, for every
question. Where every turn is one message nothing moves.

Scores are then capped by the score above, so they still never rise down the list.
Every choice follows the fused order, which ends in a stable key (pipeline.py).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Set, Tuple

from .pool import Key, Pool


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
    return _capped(placed + waiting + list(rest), scores)


# The first places in which a turn's messages that match nothing wait once the turn is there
# (thin_turns()): 10 and 20 measured the same on the chat-style evaluations (docs/typed_chat.md).
TURN_SLOTS = 10


def thin_turns(order: Sequence[Key], scores: Mapping[Key, float], pool: Pool) -> Tuple[List[Key], Dict[Key, float]]:
    """`order` with the first TURN_SLOTS places held by no message that matches no question word of its own
    (pool.hits) in a turn already placed there by one that does (module docstring)."""
    if not pool.bursts:
        return list(order), dict(scores)
    placed: List[Key] = []
    shown: Set[Tuple[int, int, int]] = set()  # (session, first, last) of the turns a matching message placed
    waiting: List[Key] = []
    rest = iter(order)
    for key in rest:
        turn = (key[0],) + pool.messages[key].turn_span()
        matches = key in pool.hits
        if turn in shown and not matches:
            waiting.append(key)
            continue
        placed.append(key)
        if matches:
            shown.add(turn)
        if len(placed) == TURN_SLOTS:
            break
    if not waiting:
        return list(order), dict(scores)
    return _capped(placed + waiting + list(rest), scores)


def _capped(order: List[Key], scores: Mapping[Key, float]) -> Tuple[List[Key], Dict[Key, float]]:
    """`order` with each score capped by the one above: scores never rise down the list."""
    capped = dict(scores)
    for above, key in zip(order, order[1:]):
        capped[key] = min(capped[key], capped[above])
    return order, capped
