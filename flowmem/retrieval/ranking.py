"""How search weighs and bounds its work: one Ranking, read by every step of the pipeline.

The service builds it from its settings (config.Config.ranking()); retrieval takes it
as given and knows nothing of where its values come from, so it declares no defaults:
every value is passed, and by keyword only. Twenty values, most of them numbers,
passed by position are one swap away from a search that silently ranks differently;
by keyword, a misspelt or forgotten one is a TypeError at once.
"""
from __future__ import annotations

from typing import Any, Dict, NamedTuple, Tuple


class _Fields(NamedTuple):
    k1: float  # BM25
    b: float  # BM25
    rrf_k: float  # reciprocal rank fusion: a ranking adds weight / (rrf_k + rank)
    weights: Tuple[Tuple[str, float], ...]  # (signal, weight) in the head of the ranking
    adjacency_top: int
    options_boost_max: float  # the most signals.options_boost() multiplies weight_options by
    pool_size: int
    context_size: int
    head_size: int
    feedback_docs: int
    feedback_terms: int
    postings_budget: int
    period_size: int  # messages dated in the question's period that join the pool without its words, at most
    related_share: float  # share of a related word's idf x strength counted in the BM25 signals (bridges.py)
    meaning_pool: int  # messages nearest the question in meaning that join the pool (meaning.py)
    meaning_scan: int  # the user's latest messages the meaning channel scores
    meaning_places: Tuple[int, ...]  # places the nearest in meaning are moved up to (meaning.placed())
    meaning_unseen: float  # the share of the question's words never said at which head places apply
    meaning_rrf_k: float  # the meaning signal's own constant in weight / (k + rank)
    meaning_closed_at: float  # the word match at which the meaning gate is shut (meaning.gate())
    tail_weights: Tuple[Tuple[str, float], ...]  # (signal, weight) that differ past the head
    view_kind: str
    message_share: float
    state_update_window: int
    spread_keep: int  # spread.py: places left as fused
    spread_slots: int  # spread.py: places spread over the conversation
    spread_gap: int  # spread.py: how near (in positions) a placed message a message waits
    stem: bool  # questions are stemmed as the index is (search() takes it from the snapshot it reads)
    resolve_times: bool  # questions' dates become date tokens as the index's do (likewise)
    date_prefix: bool  # output: each item's lines start with their day, "[2023-05-08] "
    time_annotations: bool  # output: resolved relative times follow the text, "(yesterday = 2023-05-07)"


class Ranking(_Fields):
    """How search weighs and bounds its work; built by keyword, from a Config by `Config.ranking()`.

    Every field is required and named: `Ranking(k1=1.2, b=0.75, ...)`. `_replace()`
    works as on any named tuple.
    """

    __slots__ = ()

    def __new__(cls, **fields: Any) -> "Ranking":
        return super().__new__(cls, **fields)

    def __getnewargs_ex__(self) -> Tuple[Tuple[()], Dict[str, Any]]:
        # copy and pickle rebuild a named tuple from its values by position; hand them over by name.
        return (), self._asdict()

    def weight(self, name: str) -> float:
        return dict(self.weights).get(name, 0.0)
