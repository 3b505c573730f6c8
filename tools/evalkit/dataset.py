"""The one dataset shape every evaluation uses, and the LoCoMo loader that produces it.

A dataset is a list of conversations. Each conversation is one user's memory: sessions
of turns (each turn one message, with a stable `turn_id`), and questions whose gold
evidence is a list of turn ids. LoCoMo and the synthetic suite both load into this
shape, so they are replayed and scored by the same code.

JSON form (what tools/synthetic.py writes and `load_json` reads):

    {"name": ..., "conversations": [
      {"user_id": ..., "language": "en",
       "sessions": [{"session_id": ..., "timestamp_ms": 1683554160000,
                     "turns": [{"turn_id": "D1:3", "role": "user", "content": "Dana: ..."}]}],
       "questions": [{"qid": ..., "question": ..., "category": "temporal", "gold": ["D1:3"],
                      "answer": ..., "options": [...]?, "labels": {...}?}],
       "relative_times": [{"turn_id": ..., "expression": "yesterday", "start": "2023-05-07",
                           "end": "2023-05-07"}]?}]}

A turn may carry its own `timestamp_ms`; otherwise it has its session's. `labels` holds
extra per-category truth (for a knowledge update, `old` and `new` turn ids).
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from flowmem import portable


class Turn(NamedTuple):
    turn_id: str
    role: str
    content: str
    timestamp_ms: Optional[int]


class Session(NamedTuple):
    session_id: str
    turns: List[Turn]


class Question(NamedTuple):
    qid: str
    question: str
    category: str
    gold: List[str]
    answer: str = ""
    options: Optional[List[str]] = None
    labels: Optional[Dict[str, Any]] = None


class Conversation(NamedTuple):
    user_id: str
    sessions: List[Session]
    questions: List[Question]
    language: str = "en"
    relative_times: Optional[List[Dict[str, Any]]] = None
    parts: Optional[Dict[str, List[str]]] = None  # a turn sent as several messages -> their turn ids (chatstyle.py)

    def turns(self) -> Dict[str, Turn]:
        """Every turn of the conversation by turn id."""
        return {t.turn_id: t for s in self.sessions for t in s.turns}


class Dataset(NamedTuple):
    name: str
    conversations: List[Conversation]
    skipped: List[Dict[str, Any]]  # questions left out, with the reason (e.g. malformed evidence)


# -- the neutral JSON form ------------------------------------------------------------

def load_json(path: str) -> Dataset:
    """Read a dataset in the JSON form above (the synthetic suite's format)."""
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    conversations = []
    for c in raw["conversations"]:
        sessions = [
            Session(s["session_id"], [Turn(t["turn_id"], t.get("role", "user"), t["content"],
                                           t.get("timestamp_ms", s.get("timestamp_ms"))) for t in s["turns"]])
            for s in c["sessions"]
        ]
        questions = [
            Question(q["qid"], q["question"], str(q["category"]), list(q["gold"]), str(q.get("answer", "")),
                     q.get("options"), q.get("labels"))
            for q in c["questions"]
        ]
        conversations.append(Conversation(c["user_id"], sessions, questions, c.get("language", "en"),
                                          c.get("relative_times")))
    return Dataset(raw.get("name", path), conversations, list(raw.get("skipped", [])))


def to_json(dataset: Dataset) -> Dict[str, Any]:
    """The JSON form of a dataset (inverse of load_json)."""
    def turn(t: Turn) -> Dict[str, Any]:
        out: Dict[str, Any] = {"turn_id": t.turn_id, "role": t.role, "content": t.content}
        if t.timestamp_ms is not None:
            out["timestamp_ms"] = t.timestamp_ms
        return out

    def question(q: Question) -> Dict[str, Any]:
        out: Dict[str, Any] = {"qid": q.qid, "question": q.question, "category": q.category, "gold": q.gold,
                               "answer": q.answer}
        if q.options is not None:
            out["options"] = q.options
        if q.labels is not None:
            out["labels"] = q.labels
        return out

    return {
        "name": dataset.name,
        "conversations": [
            dict({"user_id": c.user_id, "language": c.language,
                  "sessions": [{"session_id": s.session_id, "turns": [turn(t) for t in s.turns]} for s in c.sessions],
                  "questions": [question(q) for q in c.questions]},
                 **({"relative_times": c.relative_times} if c.relative_times else {}))
            for c in dataset.conversations
        ],
        "skipped": dataset.skipped,
    }


# -- LoCoMo -----------------------------------------------------------------------------

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA_ID = re.compile(r"^D\d+:\d+$")


def load_locomo(path: str) -> Dataset:
    """Read the public LoCoMo format: one conversation (one user) per sample.

    Sessions, turns, roles (speaker_a is `user`, speaker_b `assistant`), contents and
    times are flowmem.portable.locomo_sessions()'s, the package's LoCoMo reader.
    Questions whose evidence is empty or not a list of dia ids that exist in the
    conversation are skipped and listed, never guessed.
    """
    with open(path, encoding="utf-8") as f:
        samples = json.load(f)
    conversations = []
    skipped: List[Dict[str, Any]] = []
    for sample in samples:
        # The package's own reading of LoCoMo (flowmem/portable.py): what `flowmem import` loads is what is measured.
        sessions = [Session(session_id, [Turn(*turn) for turn in turns])
                    for session_id, turns in portable.locomo_sessions(sample)]
        known = {t.turn_id for s in sessions for t in s.turns}
        questions = []
        for i, qa in enumerate(sample["qa"]):
            qid = "%s/q%d" % (sample["sample_id"], i)
            evidence = qa.get("evidence") or []
            problem = _evidence_problem(evidence, known)
            if problem:
                skipped.append({"qid": qid, "question": qa["question"], "evidence": evidence, "reason": problem})
                continue
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            questions.append(Question(qid, qa["question"], LOCOMO_CATEGORIES.get(qa["category"], str(qa["category"])),
                                      list(dict.fromkeys(evidence)), str(answer)))
        conversations.append(Conversation(sample["sample_id"], sessions, questions))
    return Dataset(path, conversations, skipped)


def _evidence_problem(evidence: Any, known: set) -> Optional[str]:
    if not isinstance(evidence, list) or not evidence:
        return "no evidence"
    for e in evidence:
        if not isinstance(e, str) or not _DIA_ID.match(e.strip()) or e != e.strip():
            return "malformed evidence id %r" % (e,)
        if e not in known:
            return "evidence id %r is not a turn of the conversation" % e
    return None


def category_order(dataset: Dataset) -> List[str]:
    """Categories in a stable order: LoCoMo's numbering first, then the rest by name."""
    seen = {q.category for c in dataset.conversations for q in c.questions}
    fixed = [name for name in LOCOMO_CATEGORIES.values() if name in seen]
    return fixed + sorted(seen - set(fixed))


def split_ids(turn_ids: List[str]) -> Tuple[str, ...]:
    return tuple(turn_ids)


YEAR_MS = 365 * 24 * 3600 * 1000


def with_haystack(dataset: Dataset, messages: int) -> Dataset:
    """Each conversation's user made a heavy one: the other conversations' sessions added until it holds `messages`.

    The added sessions say what the other conversations said, under this conversation's
    speaker labels (a heavy user talks with the same people), a year later for each
    further pass over them; their turns have ids no question's evidence names
    ("H<pass>:<conversation>:<turn>"), so the questions and their gold stay as they were
    and the figures show what a larger memory costs the ranking.
    """
    return dataset._replace(conversations=[_heavy(c, dataset.conversations, messages) for c in dataset.conversations])


def _heavy(conversation: Conversation, everyone: List[Conversation], messages: int) -> Conversation:
    labels: Dict[str, str] = {}
    for turn in (t for s in conversation.sessions for t in s.turns):
        labels.setdefault(turn.role, turn.content.split(":", 1)[0])
    others = [c for c in everyone if c.user_id != conversation.user_id]
    sessions = list(conversation.sessions)
    held = sum(len(s.turns) for s in sessions)
    rounds = 0
    while held < messages and others:
        for other in others:
            for session in other.sessions:
                turns = []
                for turn in session.turns[: messages - held]:
                    text = turn.content.split(":", 1)[1] if ":" in turn.content else turn.content
                    stamp = None if turn.timestamp_ms is None else turn.timestamp_ms + rounds * YEAR_MS
                    turns.append(Turn("H%d:%s:%s" % (rounds, other.user_id, turn.turn_id), turn.role,
                                      "%s:%s" % (labels.get(turn.role, "Someone"), text), stamp))
                if turns:
                    sessions.append(Session("haystack/%d/%s/%s" % (rounds, other.user_id, session.session_id), turns))
                    held += len(turns)
        rounds += 1
    return conversation._replace(sessions=sessions)
