"""Weighted reciprocal rank fusion: many rankings in, one score per item out.

Each ranking scores some items (higher is better; items it does not score are left
out). An item's rank in a ranking is 1 + the number of items scored strictly higher
(competition ranking), so ties share a rank and a yes/no signal gives every "yes"
the same boost. The fused score of an item is

    sum over rankings r of  weight_r / (k + rank_r(item))

which rewards items several rankings agree on without letting any one ranking's
score scale dominate. Every ordering ends in the item's own key, so results never
depend on dict or set order.
"""
from __future__ import annotations

from typing import Dict, Hashable, Mapping, Optional, TypeVar

K = TypeVar("K", bound=Hashable)


def ranks(scores: Mapping[K, float]) -> Dict[K, int]:
    """Competition ranks (1 = best) of the items with a positive score."""
    ordered = sorted(((s, key) for key, s in scores.items() if s > 0), key=lambda p: -p[0])
    out: Dict[K, int] = {}
    previous = None
    rank = 0
    for position, (score, key) in enumerate(ordered, 1):
        if score != previous:
            rank = position
            previous = score
        out[key] = rank
    return out


def fuse(ranked: Mapping[str, Mapping[K, int]], weights: Mapping[str, float], k: float,
         base: Optional[Mapping[K, float]] = None) -> Dict[K, float]:
    """Fused score of every item some weighted ranking ranks; `ranked` holds each ranking's ranks().

    With `base` (an earlier fuse()), the rankings' terms are added to its scores: a
    ranking computed later, or a change of weights, costs only its own items.
    """
    fused: Dict[K, float] = dict(base or {})
    for name in sorted(ranked):
        weight = weights.get(name, 0.0)
        if weight == 0:
            continue  # (a negative weight only comes as a change of weight over a base)
        for key, rank in ranked[name].items():
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused
