"""How search weighs and bounds its work, and what it returns: one Ranking, read by every step of the pipeline.

This is where each of these settings is declared, once (storage.declare.setting()):
its name, type, default, group and help. The pool's bounds and BM25's parameters
(bm25_k1 ... meaning_rescore) are read by candidates.py and feedback.py, the weights by
fusion, the rest by the steps after it (pipeline.py). The same name is the setting, the
FLOWMEM_<NAME> variable, the --<name> flag and the field every step reads: config.Config
inherits these fields (it is a Ranking with the service's settings added), and
Config.ranking() hands retrieval a Ranking of the same values, by name.

The defaults are the measured ones; the measurements and the commands that repeat them
are in docs/results/settings.md, not here.

A Ranking is built by keyword only: forty-odd values, most of them numbers, passed by
position are one swap away from a search that silently ranks differently; a misspelt
name is a TypeError at once. A name left out takes its declared default.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, Optional, Tuple

from ..storage import views
from ..storage.declare import setting
from . import rerank, strength

_RERANK_WEIGHTS = ",".join("%s=%g" % kv for kv in rerank.weights().items() if kv[1])  # tools/learn_rerank.py
_RERANK_MODEL_WEIGHTS = ",".join("%s=%g" % kv for kv in rerank.weights(rerank.MODEL_DATA).items() if kv[1])
_MEANING_PLACES = ",".join(map(str, [2, 5] + list(range(10, 101, 5))))  # docs/meaning.md


@dataclasses.dataclass(frozen=True, init=False)
class Ranking:
    """Every setting of how search ranks ("ranking") and what it returns ("results"); see the module docstring."""

    date_prefix: bool = setting(True, "results", "start each item's lines with their day: [2023-05-08]")
    time_annotations: bool = setting(
        True, "results", "follow a resolved relative time with its dates: (yesterday = 2023-05-07)")
    bm25_k1: float = setting(1.2, "ranking", "BM25 k1: how soon repeats of a word stop adding to a score")
    bm25_b: float = setting(0.75, "ranking", "BM25 b: how much a longer text is penalised, 0 (not) to 1")
    rrf_k: float = setting(60.0, "ranking", "rank fusion constant k: each ranking adds weight / (k + rank)")
    weight_bm25: float = setting(0.1, "ranking", "weight of the message's own BM25")
    weight_window: float = setting(1.0, "ranking", "weight of the best BM25 of a window holding the message")
    weight_segment: float = setting(0.5, "ranking", "weight of the BM25 of the message's segment")
    weight_coverage: float = setting(0.05, "ranking", "weight of the share of the question's terms in the message")
    weight_phrase: float = setting(
        0.1, "ranking", "weight of the question's adjacent word pairs found side by side in the message")
    weight_names: float = setting(
        0.0, "ranking", "weight of the names the question mentions (not speakers) in the message's text")
    weight_speaker: float = setting(0.1, "ranking", "weight of the message being said by someone the question names")
    weight_numbers: float = setting(
        0.5, "ranking", 'weight of the question\'s numbers in the message, in any form ("3", "three", "3rd", 三)')
    weight_options: float = setting(0.3, "ranking", "weight of each answer option's BM25 ranking")
    options_boost_max: float = setting(
        10.0, "ranking", "the most weight_options is multiplied by, when the options' words are rarer than the "
        "question's (by the ratio of their idf); 1 turns it off")
    weight_time: float = setting(
        0.1, "ranking", 'weight of time order (earliest or latest first) for "first"/"last" questions')
    weight_adjacency: float = setting(
        0.05, "ranking", "weight of being next to one of the best adjacency_top messages")
    weight_period: float = setting(
        0.3, "ranking", 'weight of the message being said, or naming a date, inside the period a question names')
    weight_reply: float = setting(
        0.12, "ranking", "weight of answering (being the next message after) one of the best adjacency_top "
        "messages that asks a question")
    weight_dated: float = setting(
        0.3, "ranking", 'weight of the message stating or implying a date, for "when" questions')
    weight_related: float = setting(
        0.06, "ranking", "weight of the words related in meaning to the question's (WordNet, CC-CEDICT) in the message")
    weight_typo: float = setting(
        0.2, "ranking", "weight of near spellings of question words the memory never holds in the message")
    related_share: float = setting(
        0.0, "ranking", "share of its idf x strength a related word of a question word the memory never "
        "holds counts for in the message's BM25 (0: related words only feed weight_related)")
    weight_meaning: float = setting(0.5, "ranking", "weight of nearness in meaning in the head, times the gate")
    meaning_closed_at: float = setting(0.15, "ranking", "share of the question's words matched that shuts the gate")
    meaning_places: str = setting(_MEANING_PLACES, "ranking", "places the nearest in meaning move up to, one each")
    meaning_unseen: float = setting(0.5, "ranking", "share of the question's words unseen for head places to apply")
    meaning_rrf_k: float = setting(5.0, "ranking", "the meaning signal's own k in weight / (k + rank)")
    tail_weight_meaning: float = setting(0.05, "ranking", "weight of nearness in meaning past the first head_size")
    meaning_pool: int = setting(20, "ranking", "messages nearest in meaning that join the candidates; 0 turns it off")
    meaning_scan: int = setting(20_000, "ranking", "a user's latest messages compared in meaning whole; older ones "
                                "by their first components, the nearest rescored (meaning_rescore)")
    meaning_rescore: int = setting(200, "ranking", "messages older than meaning_scan's, nearest by their first "
                                   "components, compared in meaning again whole; 0 compares none of them")
    weight_model: float = setting(
        0.0, "ranking", "weight of nearness by the operator's own embedder (embedder_url, Memory(embed=)) in the head")
    tail_weight_model: float = setting(0.0, "ranking", "weight of nearness by the embedder past the first head_size")
    model_rrf_k: float = setting(60.0, "ranking", "the embedder's signal's own k in weight / (k + rank)")
    model_blend: float = setting(
        0.0, "ranking", "weight of the embedder's own ranking fused with the final order (1 for the order's); 0 off")
    model_meaning: bool = setting(
        True, "ranking", "the embedder's cosines stand in for the meaning channel's (its gate, places and rerank)")
    model_closed_at: float = setting(
        1.0, "ranking", "share of the question's words the best message holds that shuts model_blend (as "
        "meaning_closed_at: falling in a line from 1 where none is held)")
    model_pool: int = setting(
        50, "ranking", "messages nearest by the embedder that join the candidates; 0 turns it off")
    adjacency_top: int = setting(3, "ranking", "best messages whose neighbours the adjacency ranking brings up")
    candidate_pool: int = setting(
        500, "ranking", "messages a search considers, at most; past it, those with the best BM25")
    context_pool: int = setting(150, "ranking", "best messages whose windows and segments are scored")
    head_size: int = setting(
        10, "ranking", "places at the top ranked with the weight_* settings; the rest with the tail_weight_* too")
    feedback_docs: int = setting(
        5, "ranking", "best messages whose distinctive words are searched for too (pseudo-relevance feedback); "
        "0 turns it off")
    feedback_terms: int = setting(20, "ranking", "distinctive words that feedback searches for, at most")
    postings_budget: int = setting(
        2000, "ranking", "postings read for the question's words (and again for feedback's), at most; the commonest "
        "words past it are skipped")
    period_pool: int = setting(
        50, "ranking", "messages dated in the period a question names that join the pool without sharing its words")
    tail_weight_feedback: float = setting(
        0.2, "ranking", "weight of pseudo-relevance feedback past the first head_size places")
    tail_weight_speaker: float = setting(
        0.5, "ranking", "weight of the speaker ranking past the first head_size places")
    view_kind: str = setting(
        views.WINDOW, "results", "what fills the slots after the single messages: window, segment, or message (none)")
    message_share: float = setting(
        0.9, "results", "share of the top_k slots that hold single messages, 0 to 1")
    state_update_window: int = setting(
        20, "ranking", "best messages the state-update rerank reads and may reorder; 0 turns it off")
    current_state_window: int = setting(
        20, "ranking", "best messages among which statements of the asked-about thing go newest first for a "
        "question about the present, oldest first for one about the past; 0 turns it off")
    rerank_depth: int = setting(
        30, "ranking", "first places of the fused order the learned rerank reorders by their evidence; 0 turns it off")
    rerank_nearest: int = setting(20, "ranking", "messages nearest in meaning the learned rerank considers too")
    rerank_weights: str = setting(
        _RERANK_WEIGHTS, "ranking", "the learned rerank's weights, feature=weight,... (tools/learn_rerank.py)")
    rerank_model_weights: str = setting(
        _RERANK_MODEL_WEIGHTS, "ranking", "the learned rerank's weights when the embedder's cosines stand in for "
        "the meaning channel's (model_meaning), feature=weight,... (tools/learn_rerank.py with an embedder)")
    spread_keep: int = setting(3, "ranking", "first places a list question keeps in fused order before spreading")
    spread_slots: int = setting(
        10, "ranking", "first places of a list question in which no message is within spread_gap of another")
    spread_gap: int = setting(
        1, "ranking", "positions in a session around a placed message whose messages wait past spread_slots; "
        "0 turns spreading off")

    def __init__(self, **values: Any) -> None:
        names = {f.name: f for f in dataclasses.fields(self)}
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise TypeError("not settings of a Ranking: %s" % ", ".join(unknown))
        for name, field in names.items():
            object.__setattr__(self, name, values.get(name, field.default))

    def weights(self) -> Tuple[Tuple[str, float], ...]:
        """(signal, weight) pairs of every `weight_<signal>` setting, in declaration order: the head's weights."""
        return tuple((f.name[len("weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("weight_"))

    def tail_weights(self) -> Tuple[Tuple[str, float], ...]:
        """(signal, weight) pairs of every `tail_weight_<signal>` setting: weights that differ past the head."""
        return tuple((f.name[len("tail_weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("tail_weight_"))

    def weight(self, name: str) -> float:
        """The head's weight of signal `name` (0 for a signal with no weight_ setting)."""
        return getattr(self, "weight_" + name, 0.0)

    def rerank_vector(self, by_model: bool = False) -> Optional[Tuple[float, ...]]:
        """`rerank_weights` (`by_model`: the meaning cosines are the embedder's, `rerank_model_weights`) in
        rerank.FEATURES order; None when the rerank is off."""
        if self.rerank_depth <= 0:
            return None
        return _weight_vector(self.rerank_model_weights if by_model else self.rerank_weights)

    @property
    def evidence_model(self) -> strength.Model:
        """The model that grades a search's evidence (strength.py): the shipped one, data/evidence.json."""
        return _evidence_model()

    def places(self) -> Tuple[int, ...]:
        """`meaning_places` as numbers: the places the nearest in meaning move up to (meaning.placed())."""
        return tuple(int(p) for p in self.meaning_places.split(",") if p.strip())


@lru_cache(maxsize=1)
def _evidence_model() -> strength.Model:
    return strength.shipped()


@lru_cache(maxsize=16)
def _weight_vector(text: str) -> Optional[Tuple[float, ...]]:
    pairs = dict(pair.split("=", 1) for pair in text.split(",") if pair.strip())
    unknown = sorted(set(pairs) - set(rerank.FEATURES))
    if unknown:
        raise ValueError("rerank_weights: not features of the rerank: %s" % ", ".join(unknown))
    return rerank.vector({name: float(value) for name, value in pairs.items()})
