"""`python3 -m tools.eval natural`: found@1/3/10 on the natural lives, by kind and by life, at two sizes.

Each system (bare FTS5, flowmem, and the small sentence model where it is installed:
dense.py) replays the lives of one half of the frozen split (natural.py) and answers
their questions, first at each life's own size, then with each life among everyday
filler of the same user up to `--haystack` messages (10,000 by default). found@k is
the share of questions with an evidence message among the first k messages returned
(message-budget rank, metrics.py). For `current` questions the report also gives how
often the latest statement ranks above every stale one.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from flowmem import config as flowmem_config

from . import dense, metrics, natural
from .bare import BareFts5Client
from .dataset import Dataset
from .replay import InProcessClient, TurnMap, ask, replay

FOUND = ("hit@1", "hit@3", "hit@10")


class Answer:
    """One question's outcome and where its stale statements landed."""

    def __init__(self, question: Any, life: str, outcome: metrics.Outcome, stale_best: Optional[int]):
        self.question, self.life, self.outcome, self.stale_best = question, life, outcome, stale_best


def run_system(dataset: Dataset, client: Any, top_k: int) -> Tuple[List[Answer], float, List[float]]:
    """Replay and ask every life through `client`: the answers, Add seconds, search latencies (ms)."""
    answers: List[Answer] = []
    seconds = 0.0
    latencies: List[float] = []
    for c in dataset.conversations:
        seconds += replay(client, c)
        turn_map = TurnMap(c)
        for q in c.questions:
            items, latency = ask(client, c, q, top_k)
            latencies.append(latency)
            turns = [turn_map.turns_of(i) for i in items]
            outcome = metrics.outcome(q.qid, q.category, q.gold, items, turns, turn_map.text, latency)
            stale = set((q.labels or {}).get("old", []))
            ranks = _message_ranks(turns)
            stale_best = min((ranks[t] for t in stale if t in ranks), default=None)
            answers.append(Answer(q, c.user_id, outcome, stale_best))
    return answers, seconds, latencies


def _message_ranks(item_turns: Sequence[Sequence[Optional[str]]]) -> Dict[str, int]:
    ranks: Dict[str, int] = {}
    for turns in item_turns:
        for t in turns:
            if t is not None and t not in ranks:
                ranks[t] = len(ranks) + 1
    return ranks


def groups(answers: Sequence[Answer]) -> Dict[str, Dict[str, float]]:
    """found@k over all, the paraphrased, each kind and each life."""
    out: Dict[str, List[Answer]] = {"all": list(answers)}
    out["paraphrased"] = [a for a in answers if (a.question.labels or {}).get("paraphrased")]
    for kind in natural.KINDS:
        out[kind] = [a for a in answers if a.question.category == kind]
    for life in sorted(set(a.life for a in answers)):
        out["life " + life] = [a for a in answers if a.life == life]
    return {name: _found(group) for name, group in out.items()}


def _found(answers: Sequence[Answer]) -> Dict[str, float]:
    n = len(answers)
    summary: Dict[str, float] = {"n": n}
    for name in FOUND + ("mrr",):
        summary[name] = sum(a.outcome.values()[name] for a in answers) / n if n else 0.0
    ordered = [a for a in answers if (a.question.labels or {}).get("old")]  # current and past: evidence and stale
    if ordered:
        def best_rank(a: Answer) -> int:
            return min((r for r in a.outcome.message_ranks.values() if r is not None), default=10**9)
        summary["above_stale"] = sum(best_rank(a) < (a.stale_best or 10**9) for a in ordered) / len(ordered)
        summary["stale_in_20"] = sum((a.stale_best or 10**9) <= 20 for a in ordered) / len(ordered)
    return summary


def systems(settings: Dict[str, str], workdir: str, reference: bool) -> List[Tuple[str, Callable[[], Any]]]:
    """(name, a function making a fresh client) for each system compared."""
    def flowmem_client() -> Any:
        path = os.path.join(workdir, "natural-%d.db" % time.monotonic_ns())
        return InProcessClient(flowmem_config.load(dict(settings, db=path), environ={}))

    out: List[Tuple[str, Callable[[], Any]]] = [("bare FTS5", BareFts5Client), ("flowmem", flowmem_client)]
    model = dense.load_model() if reference else None
    if model is not None:
        cache: Dict[str, Any] = {}
        out.append(("all-MiniLM-L6-v2", lambda: dense.DenseClient(model, cache)))
    return out


def table(results: Dict[str, Dict[str, Dict[str, float]]], rows: Sequence[str]) -> str:
    """Markdown: one row per group, found@1/3/10 of each system side by side."""
    names = list(results)
    head = "| group | n | " + " | ".join("%s @1 | @3 | @10" % name for name in names) + " |"
    lines = [head, "|---|---:|" + "---:|---:|---:|" * len(names)]
    for row in rows:
        first = results[names[0]].get(row, {})
        if not first.get("n"):
            continue
        cells = []
        for name in names:
            g = results[name][row]
            cells.append(" | ".join("%.3f" % g[k] for k in FOUND))
        lines.append("| %s | %d | %s |" % (row, first["n"], " | ".join(cells)))
    return "\n".join(lines)


def run(which: str, haystack: int, settings: Dict[str, str], top_k: int = 100, reference: bool = True,
        sizes: Sequence[str] = ("own", "filler"), out: Optional[str] = None,
        directory: str = natural.HERE) -> Dict[str, Any]:
    """Every system on the lives of `which` in `directory` (the natural lives, or natural.CHANGES), at their
    own size and among `haystack` messages; printed and returned."""
    base, absent = natural.load(which, directory)
    summary: Dict[str, Any] = {"lives": [c.user_id for c in base.conversations], "absent": len(absent),
                               "questions": sum(len(c.questions) for c in base.conversations)}
    print("# %s lives, %s half: %s" % (os.path.basename(directory), which, ", ".join(summary["lives"])))
    print("%d answerable questions (%d paraphrased), %d absent ones not scored here" % (
        summary["questions"], sum(1 for c in base.conversations for q in c.questions
                                  if (q.labels or {}).get("paraphrased")),
        len(absent)))
    with tempfile.TemporaryDirectory(prefix="flowmem-natural-") as workdir:
        for size in sizes:
            dataset = base if size == "own" else natural.with_filler(base, haystack)
            results: Dict[str, Dict[str, Dict[str, float]]] = {}
            for name, make in systems(settings, workdir, reference):
                client = make()
                try:
                    answers, seconds, latencies = run_system(dataset, client, top_k)
                finally:
                    client.close()
                results[name] = groups(answers)
                p50 = sorted(latencies)[len(latencies) // 2]
                results[name]["timing"] = {"add_seconds": seconds, "search_p50_ms": p50}
                if out and name == "flowmem":
                    _write(out, size, answers)
            label = "own size" if size == "own" else "among %d messages" % haystack
            lives = sorted(k for k in results["flowmem"] if k.startswith("life "))
            rows = ["all", "paraphrased"] + list(natural.KINDS) + lives
            print("\n## %s\n\n%s" % (label, table(results, rows)))
            for kind in ("current", "past"):
                shares = {name: r[kind] for name, r in results.items() if "above_stale" in r.get(kind, {})}
                if shares:
                    print("\n%s: the evidence above every stale statement: %s; a stale one in the first 20: %s" % (
                        kind, ", ".join("%s %.3f" % (n, v["above_stale"]) for n, v in shares.items()),
                        ", ".join("%s %.3f" % (n, v["stale_in_20"]) for n, v in shares.items())))
            summary[size] = results
    return summary


def _write(path: str, size: str, answers: Sequence[Answer]) -> None:
    with open("%s.%s.jsonl" % (path, size), "w", encoding="utf-8") as f:
        for a in answers:
            f.write(json.dumps({"qid": a.question.qid, "kind": a.question.category, "life": a.life,
                                "paraphrased": a.question.labels["paraphrased"],
                                "ranks": a.outcome.message_ranks, "stale_best": a.stale_best,
                                "top_ids": a.outcome.top_ids}, sort_keys=True) + "\n")
