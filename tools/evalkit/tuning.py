"""Tuning: flowmem's ranking weights chosen by measurement, ranked exactly as serving ranks.

The dataset is indexed once, and each question prepared once as search prepares it
(pipeline.prepare: the question analyzed, its candidate pool, every signal's scores),
in a read snapshot of its own as a search has. Every trial then ranks each prepared
question with the trial's settings through pipeline.ranked_items, the very function
search() ends with: fusion, the state-update rerank, the views that fill the slots,
identical contents once. So a trial's figures are those the server would produce with
its settings (tests/test_tuning.py proves the orderings equal). The objective is the
mean of the four target metrics in message-budget rank: Hit@1, Hit@10, Recall@100 and
MRR over all questions; `ascend` is coordinate ascent on it. Questions can be asked of the
conversations as written and as typed chat (chatstyle.py; `index_styles`), so that a
setting is kept only if it earns its place on both.

Used by tools/tune.py (the command), tools/crossval.py and tools/ablation.py.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from flowmem import config as flowmem_config
from flowmem.memory import Memory, make_ranking
from flowmem.retrieval import pipeline
from flowmem.retrieval.ranking import Ranking
from tools import data_paths
from tools.evalkit import dataset as datasets, metrics
from tools.evalkit.chatstyle import chat_style
from tools.evalkit.replay import InProcessClient, TurnMap, replay

DEFAULT_DATA = data_paths.DEFAULT_LOCOMO
TARGETS = ("hit@1", "hit@10", "recall@100", "mrr")
GRID: Dict[str, Sequence[Any]] = {
    "rrf_k": (1, 2, 5, 10, 20, 40, 60, 100),
    "adjacency_top": (1, 2, 3, 5, 10, 20),
    "head_size": (5, 10, 20, 30),
    "state_update_window": (0, 5, 10, 20, 50),
    "message_share": (0.8, 0.85, 0.9, 0.95, 1.0),
    "meaning_closed_at": (0.0, 0.1, 0.15, 0.2, 0.3, 0.5),
    "meaning_unseen": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.1),
    "meaning_places": ("", ",".join(map(str, range(15, 101, 5))), flowmem_config.Config().meaning_places),
}
WEIGHT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)
TOP_K = 100  # items per question, as tools/eval.py asks


class TuningQuestion(NamedTuple):
    """One question of the dataset, prepared once for ranking (None: nothing can match it)."""

    qid: str
    category: str
    gold: List[str]
    prepared: Optional[pipeline.Prepared]
    turn_map: TurnMap


def index_dataset(data: datasets.Dataset, config: flowmem_config.Config) -> List[TuningQuestion]:
    """Add the dataset to a new memory with `config`, and prepare every question (prepare())."""
    client = InProcessClient(config)
    try:
        for conversation in data.conversations:
            replay(client, conversation)
        return prepare(data, client.memory)
    finally:
        client.close()


def prepare(data: datasets.Dataset, memory: Memory) -> List[TuningQuestion]:
    """Every question of `data` (already added to `memory`) prepared as memory.search prepares it.

    The Ranking is the one `memory` searches with, read through public settings: its
    Config for the index the database has. Each question gets a read snapshot of its
    own, as each search does; with an embedder, every message has its vector first and
    the question is embedded as search embeds it (Memory.model_question()).
    """
    ranking = make_ranking(memory.config)
    if memory.embedding is not None and not memory.embedding.drain(3600):
        raise RuntimeError("the embedder did not give every message a vector: %s" % memory.embedding.last_error)
    out = []
    for conversation in data.conversations:
        turn_map = TurnMap(conversation)
        for q in conversation.questions:
            model, failed = memory.model_question(conversation.user_id, q.question)
            if failed is not None:
                raise RuntimeError("the embedder failed on a question: %s" % failed)
            with memory.store.reading() as reader:
                prepared = pipeline.prepare(reader, conversation.user_id, q.question, q.options or (), ranking,
                                            model=model)
            out.append(TuningQuestion(q.qid, q.category, q.gold, prepared, turn_map))
    return out


def as_multiple_choice(data: datasets.Dataset) -> datasets.Dataset:
    """`data` with each question's answer among three other answers of its conversation, as options.

    LoCoMo has no answer options; this measures the options signals (weight_options,
    options_boost_max) on it. The distractors are the answers of the questions 1, 7, 13, ...
    places on (real answers about the same people); the answer's place cycles over four.
    """
    conversations = []
    for conversation in data.conversations:
        questions = conversation.questions
        recast = []
        for i, q in enumerate(questions):
            if not q.answer.strip():
                continue
            others: List[str] = []
            for step in (1, 7, 13, 19, 23, 29):
                other = questions[(i + step) % len(questions)].answer
                if other.strip() and other != q.answer and other not in others and len(others) < 3:
                    others.append(other)
            others.insert(i % 4, q.answer)
            recast.append(q._replace(options=others))
        conversations.append(conversation._replace(questions=recast))
    return data._replace(conversations=conversations)


def ranking_of(settings: Dict[str, Any]) -> Ranking:
    """The Ranking that a Config with `settings` (the rest defaults) searches with."""
    return make_ranking(flowmem_config.load(dict(settings, db="unused"), environ={}))


def ranked_items(question: TuningQuestion, ranking: Ranking, top_k: int = TOP_K) -> List[Dict[str, Any]]:
    """The items memory.search would return for `question` with `ranking`: pipeline.ranked_items itself."""
    return [] if question.prepared is None else pipeline.ranked_items(question.prepared, ranking, top_k)


def outcomes(questions: Sequence[TuningQuestion], settings: Dict[str, Any],
             top_k: int = TOP_K) -> List[metrics.Outcome]:
    """Where every question's gold turns land with `settings`, scored as tools/eval.py scores search's items."""
    ranking = ranking_of(settings)
    out = []
    for q in questions:
        items = ranked_items(q, ranking, top_k)
        out.append(metrics.outcome(q.qid, q.category, q.gold, items, [q.turn_map.turns_of(i) for i in items],
                                   q.turn_map.text, 0.0, q.turn_map.parts))
    return out


def score(questions: Sequence[TuningQuestion], settings: Dict[str, Any], top_k: int = TOP_K) -> Dict[str, float]:
    """Summary metrics of every question with `settings` (outcomes(), averaged)."""
    return metrics.summarize(outcomes(questions, settings, top_k))


def objective(summary: Dict[str, float]) -> float:
    return sum(summary[t] for t in TARGETS) / len(TARGETS)


def describe(summary: Dict[str, float]) -> str:
    return "objective %.4f  " % objective(summary) + "  ".join("%s %.3f" % (t, summary[t]) for t in TARGETS)


Scorer = Callable[[Dict[str, Any]], Dict[str, float]]


def ascend(questions: Sequence[TuningQuestion], settings: Dict[str, Any], rounds: int,
           grid: Optional[Dict[str, Sequence[Any]]] = None, weight_grid: Sequence[float] = WEIGHT_GRID,
           scorer: Optional[Scorer] = None, label: str = "",
           only: Sequence[str] = ()) -> Tuple[Dict[str, Any], Dict[str, float]]:
    """Coordinate ascent: change one setting at a time to its best grid value, until nothing improves.

    `scorer` (default: score() on `questions`) gives a trial's summary; tools/crossval.py
    passes one that scores only a fold's training conversations. `only`: the settings
    that may change (default: every weight and GRID's names), in that order.
    """
    grid = GRID if grid is None else grid
    measure: Scorer = scorer or (lambda trial: score(questions, trial))
    best = measure(settings)
    names = list(only) or sorted(n for n in flowmem_config.field_names() if "weight_" in n) + sorted(grid)
    for round_number in range(1, rounds + 1):
        improved = False
        for name in names:
            for value in grid.get(name, weight_grid):
                if settings.get(name) == value:
                    continue
                trial = dict(settings, **{name: value})
                result = measure(trial)
                if objective(result) > objective(best) + 1e-9:
                    settings, best, improved = trial, result, True
                    print("%sround %d  %s=%s  %s" % (label, round_number, name, value, describe(best)), flush=True)
        if not improved:
            break
    return settings, best


def start_settings(start: Dict[str, Any]) -> Dict[str, Any]:
    """The settings a trial may change (every weight, GRID's names): their defaults, overridden by `start`."""
    defaults = flowmem_config.Config()
    settings = {n: getattr(defaults, n) for n in flowmem_config.field_names() if "weight_" in n or n in GRID}
    settings.update(start)
    return settings


def index_with(data: datasets.Dataset, start: Dict[str, Any]) -> List[TuningQuestion]:
    """index_dataset() in a temporary database with `start`'s index settings (the rest are ranking's)."""
    with tempfile.TemporaryDirectory(prefix="flowmem-tune-") as tmp:
        # Everything else (view sizes, pool and feedback sizes) shapes the pools: fixed for a run.
        index_settings = {k: v for k, v in start.items() if not ("weight_" in k or k in GRID)}
        config = flowmem_config.load(dict(index_settings, db=os.path.join(tmp, "tune.db"), synchronous="OFF"),
                                     environ={})
        return index_dataset(data, config)


STYLES = ("written", "chat")
CHAT_SUFFIX = "/chat"  # a chat-style conversation's owner: its LoCoMo conversation's id and this


def styled(data: datasets.Dataset, style: str) -> List[datasets.Dataset]:
    """The datasets a `style` ("written", "chat" or "both") asks the questions of: `data` as written,
    as typed chat (chatstyle.py), or both in that order."""
    return ([data] if style in ("written", "both") else []) + ([chat_style(data)] if style in ("chat", "both") else [])


def index_styles(data: datasets.Dataset, style: str, start: Dict[str, Any]) -> Tuple[List[TuningQuestion], List[str]]:
    """index_with() every dataset of styled(): the questions of all, and each one's owner, its conversation's
    id (a chat-style one's with CHAT_SUFFIX)."""
    questions: List[TuningQuestion] = []
    owners: List[str] = []
    for each in styled(data, style):
        suffix = CHAT_SUFFIX if each is not data else ""
        questions += index_with(each, start)
        owners += [c.user_id + suffix for c in each.conversations for _ in c.questions]
    return questions, owners
