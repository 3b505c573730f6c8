"""How search weighs and bounds its work: one Ranking, read by every step of the pipeline.

The service builds it from its settings (memory.make_ranking()); retrieval takes it
as given and knows nothing of where its values come from.
"""
from __future__ import annotations

from typing import NamedTuple, Tuple


class Ranking(NamedTuple):
    """How search weighs and bounds its work; built from a Config by `make_ranking()`, whose defaults are measured."""

    k1: float
    b: float
    rrf_k: float
    weights: Tuple[Tuple[str, float], ...]  # (signal, weight) in the head of the ranking
    adjacency_top: int
    pool_size: int
    context_size: int
    head_size: int
    feedback_docs: int
    feedback_terms: int
    postings_budget: int
    tail_weights: Tuple[Tuple[str, float], ...]  # (signal, weight) that differ past the head
    view_kind: str
    message_share: float
    state_update_window: int
    stem: bool  # questions are stemmed as the index is (search() takes it from the snapshot it reads)
    resolve_times: bool  # questions' dates become date tokens as the index's do (likewise)
    date_prefix: bool  # output: each item's lines start with their day, "[2023-05-08] "
    time_annotations: bool  # output: resolved relative times follow the text, "(yesterday = 2023-05-07)"

    def weight(self, name: str) -> float:
        return dict(self.weights).get(name, 0.0)
