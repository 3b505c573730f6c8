"""Meaning probes: questions a user asks in other words than their memories use, and how Search ranks them.

Two groups, written for this probe (plain everyday chat, not taken from any benchmark):

- LIFE: one user's life told to their assistant in 8 sessions, and LIFE_QUESTIONS about it;
  6 ask in the memory's own words, 10 in other words (`paraphrased`: no content word of the
  question, stemmed, is in any of its evidence messages; tests/test_probe_meaning.py checks it).
- PAIRS: twelve (question, memory) pairs sharing no content word, each measured as a user of
  its own whose memory is the 40 FILLER messages with the one memory among them.

run() replays each probe into a fresh in-process memory (a temporary folder, one database per
probe), searches every question with top_k 10 and records the rank of the first item holding an
evidence message, whether that item came through the "meaning" signal, and whether the results
were the latest-messages fallback (nothing matched, not even in meaning: the summaries count those
not found; a fallback by meaning, retrieval/fallback.py, is the channel finding it).
tools/probe_meaning.py prints it.

Evidence is (session index, position): the session's index in its probe, from 0, and the
message's position in that session, from 1 (flowmem's own numbering of a session's messages).
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from flowmem import config as flowmem_config
from flowmem.memory import Memory
from tools.evalkit.probe_data import LIFE, LIFE_QUESTIONS, LIFE_USER, PAIRS, Evidence, Question, pair_probe

TOP_K = 10
MEANING = "meaning"  # the signal of the meaning (word vector) channel
FALLBACK = "fallback"  # retrieval/fallback.py: what a fallback item's signals hold
LATEST = "latest_session"  # the fallback of the latest messages; "meaning" (nearest in meaning) counts as found


# -- settings ---------------------------------------------------------------------------------


class UnknownSetting(ValueError):
    """A --set NAME that is no flowmem setting (the message names it and the weight_* ones there are)."""


def parse_settings(pairs: Sequence[str]) -> Dict[str, str]:
    """`NAME=VALUE` texts into {name: value}; the values stay text, which flowmem.config.load()
    reads as it reads FLOWMEM_<NAME> (bad values then raise ConfigError there)."""
    names = flowmem_config.field_names()
    out: Dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UnknownSetting("--set takes NAME=VALUE, got %r" % pair)
        if name not in names:
            weights = [n for n in names if n.startswith("weight_")]
            raise UnknownSetting("unknown setting %r (this flowmem has no such setting); the weight_* ones are: %s"
                                 % (name, ", ".join(weights)))
        out[name] = value
    return out


def check_settings(settings: Mapping[str, Any]) -> None:
    """Raise UnknownSetting for any name that is no flowmem setting."""
    names = set(flowmem_config.field_names())
    unknown = sorted(set(settings) - names)
    if unknown:
        raise UnknownSetting("unknown setting%s %s (this flowmem has no such setting); the weight_* ones are: %s"
                             % ("s" if len(unknown) > 1 else "", ", ".join(map(repr, unknown)),
                                ", ".join(n for n in flowmem_config.field_names() if n.startswith("weight_"))))


# -- the runner ---------------------------------------------------------------------------------


def _add_all(memory: Any, user_id: str, sessions: Sequence[Mapping[str, Any]]) -> None:
    for s, session in enumerate(sessions):
        memory.add({"user_id": user_id, "session_id": session["session_id"],
                    "request_id": "%s-%d" % (user_id, s), "messages": list(session["messages"])})


def _positions(memory: Any, user_id: str) -> Dict[str, Tuple[str, int]]:
    """message id -> (session_id, position) of every stored message of the user."""
    out: Dict[str, Tuple[str, int]] = {}
    cursor = None
    while True:
        page = memory.list_messages(user_id, limit=1000, cursor=cursor)
        for message in page["data"]:
            out[message["id"]] = (message["session_id"], message["position"])
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def _ask(memory: Any, user_id: str, question: str, evidence: Sequence[Evidence],
         sessions: Sequence[Mapping[str, Any]], positions: Mapping[str, Tuple[str, int]]) -> Dict[str, Any]:
    wanted = {(sessions[s]["session_id"], p) for s, p in evidence}
    items = memory.search({"query": question, "user_id": user_id, "top_k": TOP_K})["data"]
    rank, meaning = None, False
    for place, item in enumerate(items, 1):
        if any(positions.get(i) in wanted for i in item.get("source_message_ids") or ()):
            rank, meaning = place, MEANING in (item.get("signals") or {})
            break
    return {"question": question, "rank": rank, "meaning": meaning,
            "fallback": any((item.get("signals") or {}).get(FALLBACK) == LATEST for item in items), "items": len(items)}


def _probe(memory: Any, user_id: str, sessions: Sequence[Mapping[str, Any]],
           questions: Sequence[Tuple[str, Sequence[Evidence]]]) -> List[Dict[str, Any]]:
    _add_all(memory, user_id, sessions)
    positions = _positions(memory, user_id)
    return [_ask(memory, user_id, q, evidence, sessions, positions) for q, evidence in questions]


def _summary(rows: Sequence[Mapping[str, Any]]) -> Dict[str, int]:
    """Counts of rows; evidence that only came back among the fallback's latest messages is not counted found."""
    ranks = [None if r["fallback"] else r["rank"] for r in rows]
    return {"questions": len(rows),
            "ranked_1st": sum(1 for r in ranks if r == 1),
            "in_first_3": sum(1 for r in ranks if r is not None and r <= 3),
            "in_top_10": sum(1 for r in ranks if r is not None),
            "through_meaning": sum(1 for r in rows if r["meaning"]),
            "fallback": sum(1 for r in rows if r["fallback"])}


MemoryFactory = Callable[[flowmem_config.Config], Any]


def run(settings: Optional[Mapping[str, Any]] = None, memory_factory: Optional[MemoryFactory] = None,
        life_questions: Optional[Sequence[Question]] = None, pairs: Optional[Sequence[int]] = None) -> Dict[str, Any]:
    """Every probe, each in a fresh memory in a temporary folder; returns the figures and one row per question.

    settings: flowmem settings by name ({"weight_meaning": "0"}; text is read as FLOWMEM_<NAME> is),
    an unknown name raises UnknownSetting; memory_factory(config) makes the memory (default Memory);
    life_questions and pairs (indexes into PAIRS) narrow the run (default: all).
    """
    settings = dict(settings or {})
    check_settings(settings)
    factory = memory_factory or Memory
    life_questions = LIFE_QUESTIONS if life_questions is None else list(life_questions)
    pair_indexes = range(len(PAIRS)) if pairs is None else list(pairs)
    with tempfile.TemporaryDirectory(prefix="flowmem-probe-") as workdir:
        def fresh(name: str) -> Any:
            flags: Dict[str, Any] = {"synchronous": "OFF"}  # durability is not measured here
            flags.update(settings)
            flags["db"] = os.path.join(workdir, name + ".db")
            return factory(flowmem_config.load(flags, environ={}))

        memory = fresh("life")
        try:
            life = _probe(memory, LIFE_USER, LIFE, [(q.question, q.evidence) for q in life_questions])
        finally:
            memory.close()
        for row, q in zip(life, life_questions):
            row["paraphrased"] = q.paraphrased
        pair_rows = []
        for index in pair_indexes:
            sessions, where = pair_probe(index)
            memory = fresh("pair-%d" % index)
            try:
                row, = _probe(memory, "probe-pair-%d" % index, sessions, [(PAIRS[index].question, (where,))])
            finally:
                memory.close()
            row["memory"] = PAIRS[index].memory
            pair_rows.append(row)
    return {
        "settings": settings,
        "top_k": TOP_K,
        "life": {"all": _summary(life),
                 "own_words": _summary([r for r in life if not r["paraphrased"]]),
                 "paraphrased": _summary([r for r in life if r["paraphrased"]]),
                 "questions": life},
        "pairs": {"all": _summary(pair_rows), "questions": pair_rows},
    }


def channel(table_path: Optional[str] = None) -> Dict[str, Any]:
    """The meaning channel alone, no search around it: for each probe question, the rank of its first
    evidence message among its probe's messages by cosine with the question (text/meaning.py vectors,
    the question's words weighted by their idf among those messages as search weighs them).

    table_path: another word-vector file (tools/build_meaning/ --out) instead of the shipped one, to
    compare how the vectors are made without indexing anything.
    """
    from flowmem.retrieval import bm25
    from flowmem.text import meaning
    from flowmem.text.tokenize import query_terms, split_speaker

    table = meaning.read_table(table_path) if table_path else meaning.table()
    saved, meaning._table = meaning._table, table
    try:
        def ranks(sessions: Sequence[Mapping[str, Any]],
                  questions: Sequence[Tuple[str, Sequence[Evidence]]]) -> List[int]:
            said = [(si, p, m["content"]) for si, s in enumerate(sessions) for p, m in enumerate(s["messages"], 1)]
            stems = [meaning.text_stems(split_speaker(text)[1]) for _, _, text in said]
            vectors = [meaning.mean_vector(s) for s in stems]
            df: Dict[str, int] = {}
            for s in stems:
                for word in set(s):
                    df[word] = df.get(word, 0) + 1
            out = []
            for question, evidence in questions:
                words = meaning.content_words(query_terms(question))
                idf = {w: bm25.idf(len(said), df.get(w, 0)) for w in words}
                most = max(idf.values(), default=0.0)
                q = meaning.mean_vector(words, [max(1, round(8 * idf[w] / most)) if most else 1 for w in words])
                if q is None:
                    out.append(len(said) + 1)
                    continue
                score = [-2.0 if v is None else _cosine(q, v) for v in vectors]
                order = sorted(range(len(said)), key=lambda i: (-score[i], i))
                wanted = set(evidence)
                out.append(next(r for r, i in enumerate(order, 1) if said[i][:2] in wanted))
            return out

        life = ranks(LIFE, [(q.question, q.evidence) for q in LIFE_QUESTIONS])
        pairs = []
        for index in range(len(PAIRS)):
            sessions, where = pair_probe(index)
            pairs += ranks(sessions, [(PAIRS[index].question, [where])])
    finally:
        meaning._table = saved
    paraphrased = [r for r, q in zip(life, LIFE_QUESTIONS) if q.paraphrased]
    return {"life_first_3": sum(r <= 3 for r in life), "paraphrased_first_3": sum(r <= 3 for r in paraphrased),
            "pairs_first": sum(r == 1 for r in pairs), "pairs_first_3": sum(r <= 3 for r in pairs),
            "life_ranks": life, "pair_ranks": pairs}


def _cosine(a: Sequence[int], b: Sequence[int]) -> float:
    """a . b / |b|: the same order as the cosine for one question `a`."""
    return sum(x * y for x, y in zip(a, b)) / (sum(y * y for y in b) ** 0.5 or 1.0)
