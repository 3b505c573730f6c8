"""Run a dataset through a client and collect per-question outcomes, timings and output."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

from flowmem.text import timeexpr
from tools.benchkit.stats import nearest_rank as percentile

from . import metrics
from .dataset import Dataset
from .replay import TurnMap, ask, replay

# Categories whose questions have no answer in memory; "answerable" summaries leave them out.
UNANSWERABLE = ("adversarial", "unanswerable")


class Run(NamedTuple):
    dataset: Dataset
    outcomes: List[metrics.Outcome]
    questions: Dict[str, Dict[str, Any]]  # qid -> question text, answer
    index_seconds: float
    messages: int

    def latencies(self) -> List[float]:
        return [o.latency_ms for o in self.outcomes]

    def timing(self) -> Dict[str, float]:
        lat = self.latencies()
        return {"index_seconds": self.index_seconds, "messages": self.messages,
                "messages_per_second": self.messages / self.index_seconds if self.index_seconds else 0.0,
                "search_p50_ms": percentile(lat, 50), "search_p95_ms": percentile(lat, 95)}


def evaluate(dataset: Dataset, client: Any, top_k: int = 100,
             progress: Optional[Callable[[str], None]] = None) -> Run:
    """Replay every conversation, ask every question, and score the answers."""
    index_seconds = 0.0
    for conversation in dataset.conversations:
        index_seconds += replay(client, conversation)
        if progress:
            progress("%s: added" % conversation.user_id)
    return ask_all(dataset, client, top_k, index_seconds)


def ask_all(dataset: Dataset, client: Any, top_k: int = 100, index_seconds: float = 0.0) -> Run:
    """Ask every question of an already replayed dataset and score the answers."""
    outcomes: List[metrics.Outcome] = []
    questions: Dict[str, Dict[str, Any]] = {}
    for conversation in dataset.conversations:
        turn_map = TurnMap(conversation)
        for question in conversation.questions:
            items, latency = ask(client, conversation, question, top_k)
            outcomes.append(metrics.outcome(question.qid, question.category, question.gold, items,
                                            [turn_map.turns_of(i) for i in items], turn_map.text, latency,
                                            turn_map.parts))
            questions[question.qid] = {"question": question.question, "answer": question.answer}
    messages = sum(len(s.turns) for c in dataset.conversations for s in c.sessions)
    return Run(dataset, outcomes, questions, index_seconds, messages)


def update_order(run: Run, category: Optional[str] = None) -> Dict[str, float]:
    """Knowledge updates with labelled old and new turns: how often the new one ranks first.

    `category` restricts it to the questions of one category (knowledge-update,
    update-cue); None takes every question with such labels.

    `new_first`: the new turn's message rank is better than the old one's (a missing
    old turn counts as worse); `old_kept@20`: the old turn is still within the first 20
    messages; `both`: the two at once. Empty when the dataset has no such labels.
    """
    labels = {q.qid: q.labels for c in run.dataset.conversations for q in c.questions
              if q.labels and q.labels.get("new") and q.labels.get("old") and category in (None, q.category)}
    rows = []
    for o in run.outcomes:
        if o.qid not in labels:
            continue
        new = min((o.message_ranks.get(t) or 10**9) for t in labels[o.qid]["new"])
        old = min((o.message_ranks.get(t) or 10**9) for t in labels[o.qid]["old"])
        rows.append((new < old, old <= 20))
    if not rows:
        return {}
    n = len(rows)
    return {"n": n, "new_first": sum(a for a, _ in rows) / n, "old_kept@20": sum(b for _, b in rows) / n,
            "both": sum(a and b for a, b in rows) / n}


def update_categories(dataset: Dataset) -> List[str]:
    """The categories whose questions label old and new turns, in order of first appearance."""
    out: List[str] = []
    for q in (q for c in dataset.conversations for q in c.questions):
        if q.labels and q.labels.get("new") and q.labels.get("old") and q.category not in out:
            out.append(q.category)
    return out


def time_resolution(dataset: Dataset) -> Dict[str, float]:
    """How flowmem's resolver (flowmem/timeexpr.py) reads the dataset's labelled relative times.

    Every labelled expression is looked up among the resolutions of its turn (same
    words, any case): `right` when the dates agree, `wrong` when they differ, `missed`
    when it was not resolved. Vague expressions (labelled without dates) must stay
    unresolved (`vague_resolved` counts those that were not). `spurious` counts relative
    resolutions that no label asked for. Empty when the dataset has no labels.
    """
    counts: Dict[str, float] = {"labelled": 0, "right": 0, "wrong": 0, "missed": 0, "vague": 0, "vague_resolved": 0,
                                "spurious": 0}
    for conversation in dataset.conversations:
        if not conversation.relative_times:
            continue
        turns = conversation.turns()
        labels_by_turn: Dict[str, List[Dict[str, Any]]] = {}
        for label in conversation.relative_times:
            labels_by_turn.setdefault(label["turn_id"], []).append(label)
        for turn_id, labels in sorted(labels_by_turn.items()):
            turn = turns[turn_id]
            found = [r for r in timeexpr.resolve(turn.content, timeexpr.day_of(turn.timestamp_ms)) if r.relative]
            by_words = {r.expression.lower(): r for r in found}
            for label in labels:
                r = by_words.pop(label["expression"].lower(), None)
                if label.get("start") is None:
                    counts["vague"] += 1
                    counts["vague_resolved"] += r is not None
                    continue
                counts["labelled"] += 1
                if r is None:
                    counts["missed"] += 1
                elif (r.start.isoformat(), r.end.isoformat()) == (label["start"], label["end"]):
                    counts["right"] += 1
                else:
                    counts["wrong"] += 1
            counts["spurious"] += len(by_words)
    return counts if counts["labelled"] or counts["vague"] else {}


def write_jsonl(run: Run, path: str) -> None:
    """One line per question: text, gold, where each gold turn landed, top ids, metrics."""
    with open(path, "w", encoding="utf-8") as f:
        for o in run.outcomes:
            line = {"qid": o.qid, "category": o.category, "question": run.questions[o.qid]["question"],
                    "answer": run.questions[o.qid]["answer"], "gold": o.gold,
                    "message_ranks": o.message_ranks, "item_ranks": o.item_ranks, "context_ends": o.context_ends,
                    "top_ids": o.top_ids, "latency_ms": round(o.latency_ms, 3), "metrics": o.values()}
            f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


def read_jsonl(path: str) -> List[Dict[str, Any]]:
    """Per-question lines written by write_jsonl."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def groups(run: Run, categories: Sequence[str]) -> Dict[str, Dict[str, float]]:
    return metrics.by_group(run.outcomes, categories, UNANSWERABLE)
