"""Weighted reciprocal rank fusion: many signals' ranks in, one fused score per item out.

Each signal scores some items (higher is better; items it says nothing about are left
out). An item's rank in a signal is 1 + the number of items scored strictly higher
(competition ranking: competition_ranks()), so ties share a rank and a yes/no signal
gives every "yes" the same boost. The fused score of an item is

    sum over signals s of  weight_s / (k + rank_s(item))

which rewards items several signals agree on without letting any one signal's score
scale dominate. Every ordering ends in the item's own key, so results never depend
on dict or set order.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Dict, Hashable, Mapping, Optional, TypeVar

K = TypeVar("K", bound=Hashable)


def competition_ranks(scores: Mapping[K, float]) -> Dict[K, int]:
    """Competition ranks (1 = best) of the items with a positive score.

    scores: one signal's score per item.
    """
    # Highest first, ties in the scores' own order (a reversed sort stays stable): the same
    # order as a stable sort on the negated score, without a Python call per item.
    ordered = sorted([(key, s) for key, s in scores.items() if s > 0], key=itemgetter(1), reverse=True)
    out: Dict[K, int] = {}
    previous = None
    rank = 0
    for position, (key, score) in enumerate(ordered, 1):
        if score != previous:
            rank = position
            previous = score
        out[key] = rank
    return out


def fuse(signal_ranks: Mapping[str, Mapping[K, int]], weights: Mapping[str, float], k: float,
         base: Optional[Mapping[K, float]] = None, own_k: Optional[Mapping[str, float]] = None) -> Dict[K, float]:
    """Fused score of every item some weighted signal ranks.

    signal_ranks: {signal: its competition_ranks()}; weights: {signal: weight}, a signal
    without one adds nothing; k: the constant in weight / (k + rank). With `base` (an
    earlier fuse()), the signals' terms are added to its scores: a signal computed
    later, or a change of weights, costs only its own items. own_k: signals fused with a
    constant of their own (a smaller one separates their first ranks more).
    """
    fused: Dict[K, float] = dict(base or {})
    for name in sorted(signal_ranks):
        weight = weights.get(name, 0.0)
        if weight == 0:
            continue  # (a negative weight only comes as a change of weight over a base)
        constant = k if own_k is None else own_k.get(name, k)
        for key, rank in signal_ranks[name].items():
            fused[key] = fused.get(key, 0.0) + weight / (constant + rank)
    return fused
