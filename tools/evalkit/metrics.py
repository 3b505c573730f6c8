"""Retrieval metrics over returned items, in message-budget rank and in item rank.

Message-budget rank: the returned items are expanded, in order, into the messages
they contain, a message counting at its first occurrence; a gold turn's rank is its
position in that list. A 3-message window thus uses 3 ranks, so windows and segments
cannot look better than the messages they spend.

Item rank: each returned item is one rank, as the platform's `top_k` counts them.

Context budget: the returned contents joined by newlines, as the answering model reads
them; a gold turn counts within B characters when its text ends within the first B.

Per question, every metric is a number in [0, 1]; a summary is their mean.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence

MESSAGE_METRICS = ["hit@1", "hit@3", "hit@10", "recall@10", "recall@20", "recall@50", "recall@100", "full@100", "mrr"]
CONTEXT_METRICS = ["ctx@2000", "ctx@8000"]
ITEM_METRICS = ["item_hit@1", "item_hit@10", "item_recall@100", "item_mrr"]
ALL_METRICS = MESSAGE_METRICS + CONTEXT_METRICS + ITEM_METRICS


class Outcome(NamedTuple):
    """What one question got back, reduced to where its gold turns landed."""

    qid: str
    category: str
    gold: List[str]
    message_ranks: Dict[str, Optional[int]]
    item_ranks: Dict[str, Optional[int]]
    context_ends: Dict[str, Optional[int]]
    top_ids: List[str]
    latency_ms: float

    def values(self) -> Dict[str, float]:
        """Every metric of this question."""
        return question_metrics(self)


def outcome(qid: str, category: str, gold: Sequence[str], items: Sequence[Dict[str, Any]],
            item_turns: Sequence[Sequence[Optional[str]]], turn_text: Dict[str, str], latency_ms: float,
            parts: Optional[Mapping[str, Sequence[str]]] = None) -> Outcome:
    """Reduce a search answer to gold-turn positions.

    `item_turns[i]` lists the turn ids (None for unknown messages) of `items[i]`, in order.
    `parts`: a gold turn sent as several messages (tools/evalkit/chatstyle.py) -> their ids;
    such a turn lands where the first of its parts does.
    """
    message_rank: Dict[str, int] = {}
    item_rank: Dict[str, int] = {}
    position = 0
    for index, turns in enumerate(item_turns, 1):
        for turn in turns:
            if turn is None:
                position += 1  # a message we cannot name still uses a rank
                continue
            if turn not in message_rank:
                position += 1
                message_rank[turn] = position
            item_rank.setdefault(turn, index)
    members = {g: list((parts or {}).get(g) or [g]) for g in gold}
    ends: Dict[str, int] = {}
    offset = 0
    for item in items:
        content = str(item.get("content", ""))
        for turn in (m for g in gold for m in members[g]):
            if turn not in ends:
                found = content.find(turn_text.get(turn, "\0"))
                if found >= 0:
                    ends[turn] = offset + found + len(turn_text[turn])
        offset += len(content) + 1  # the newline that joins it to the next item

    def first(found: Mapping[str, int], g: str) -> Optional[int]:
        return min((found[m] for m in members[g] if m in found), default=None)

    return Outcome(qid, category, list(gold), {g: first(message_rank, g) for g in gold},
                   {g: first(item_rank, g) for g in gold}, {g: first(ends, g) for g in gold},
                   [str(i.get("id", "")) for i in items[:10]], latency_ms)


def _within(ranks: Iterable[Optional[int]], k: int) -> List[bool]:
    return [r is not None and r <= k for r in ranks]


def _reciprocal_first(ranks: Iterable[Optional[int]]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def question_metrics(o: Outcome) -> Dict[str, float]:
    """All metrics of one outcome, each in [0, 1]."""
    m = list(o.message_ranks.values())
    it = list(o.item_ranks.values())
    ends = list(o.context_ends.values())
    n = len(o.gold)
    out = {
        "hit@1": float(any(_within(m, 1))),
        "hit@3": float(any(_within(m, 3))),
        "hit@10": float(any(_within(m, 10))),
        "recall@10": sum(_within(m, 10)) / n,
        "recall@20": sum(_within(m, 20)) / n,
        "recall@50": sum(_within(m, 50)) / n,
        "recall@100": sum(_within(m, 100)) / n,
        "full@100": float(all(_within(m, 100))),
        "mrr": _reciprocal_first(m),
        "ctx@2000": sum(_within(ends, 2000)) / n,
        "ctx@8000": sum(_within(ends, 8000)) / n,
        "item_hit@1": float(any(_within(it, 1))),
        "item_hit@10": float(any(_within(it, 10))),
        "item_recall@100": sum(_within(it, 100)) / n,
        "item_mrr": _reciprocal_first(it),
    }
    return out


def summarize(outcomes: Sequence[Outcome]) -> Dict[str, float]:
    """Mean of every metric over `outcomes` (plus their count as `n`)."""
    if not outcomes:
        return {"n": 0}
    per_question = [o.values() for o in outcomes]
    out: Dict[str, float] = {"n": len(outcomes)}
    for name in ALL_METRICS:
        out[name] = sum(q[name] for q in per_question) / len(per_question)
    return out


def by_group(outcomes: Sequence[Outcome], categories: Sequence[str],
             unanswerable: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """Summaries: `overall`, `answerable` (without the unanswerable categories) and one per category."""
    groups: Dict[str, Dict[str, float]] = {"overall": summarize(outcomes)}
    answerable = [o for o in outcomes if o.category not in unanswerable]
    if len(answerable) != len(outcomes):
        groups["answerable"] = summarize(answerable)
    for category in categories:
        groups[category] = summarize([o for o in outcomes if o.category == category])
    return groups
