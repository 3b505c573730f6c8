"""The natural-question evaluation: made-up lives written by separate writers, questions asked as people ask.

Each life (tools/evalkit/natural/<life>.json) was written by a writer who saw neither
flowmem's code nor the other lives, to a brief (docs/natural.md) that asked for a style
of its own and for questions of six kinds: paraphrase, lexical, temporal, current (the
latest statement is the evidence, the older ones `stale`), aggregate (one message from
each of several sessions) and absent (no answer in the memory). split.json, frozen by a
seeded shuffle before any life was written, names the half tuned on and the half only
reported.

`load()` reads lives into the evaluation's one dataset shape (dataset.py): a life is
one user; its answerable questions are scored, its absent ones counted apart (they have
no evidence to find). `paraphrased()` is the script's check of "asked in other words":
no content word of the question, after Porter stemming, in any of its evidence
messages. `with_filler()` puts each life among everyday chat (filler.py) of the same
user, interleaved in time, until it holds the given number of messages.
"""
from __future__ import annotations

import json
import os
import re
from datetime import datetime
from typing import Any, Dict, List, Sequence, Set, Tuple

from flowmem.text.stem import stem
from flowmem.text.tokenize import QUESTION_STOPWORDS

from . import filler
from .dataset import Conversation, Dataset, Question, Session, Turn

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "natural")
# The change lives (issue 33): the same format, written to tools/evalkit/changes/BRIEF.md, with
# kinds current, past (the older statement is the evidence, the newer `stale`), coexist and absent.
CHANGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "changes")
KINDS = ("paraphrase", "lexical", "temporal", "current", "aggregate", "past", "coexist")  # the last two: change lives
ABSENT = "absent"
_WORD = re.compile(r"[a-z0-9]+")
# Words that say nothing of what is asked, beyond the question stopwords: asking verbs and fillers.
_PLAIN = frozenset("""do does did done have has had get got go went is was are were be been say said tell told
know now ever still also just really much many thing things one ones kind sort lot lots""".split())


def split(directory: str = HERE) -> Dict[str, List[str]]:
    """The frozen split of the lives in `directory`: {"tune": [life, ...], "report": [life, ...]}."""
    with open(os.path.join(directory, "split.json"), encoding="utf-8") as f:
        raw = json.load(f)
    return {"tune": list(raw["tune"]), "report": list(raw["report"])}


def lives(which: str, directory: str = HERE) -> List[str]:
    """The lives of `which`: "tune", "report" or "all" (those whose file exists in `directory`)."""
    halves = split(directory)
    names = halves["tune"] + halves["report"] if which == "all" else halves[which]
    return [n for n in names if os.path.isfile(os.path.join(directory, n + ".json"))]


def content_stems(text: str) -> Set[str]:
    """A text's content words, Porter-stemmed: what the paraphrase check compares."""
    words = (w for w in _WORD.findall(text.lower()) if w not in QUESTION_STOPWORDS and w not in _PLAIN)
    return {stem(w) for w in words if len(w) > 1}


def paraphrased(question: str, evidence: Sequence[str]) -> bool:
    """Whether `question` shares no content word, in any inflection, with its evidence texts."""
    asked = content_stems(question)
    return not any(asked & content_stems(_unlabelled(text)) for text in evidence)


def _unlabelled(text: str) -> str:
    """A message's text without its leading speaker label ("Sam: "): the label is no content of it."""
    head, colon, rest = text.partition(":")
    return rest if colon and 0 < len(head) <= 24 and len(head.split()) <= 2 else text


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def read_life(name: str, directory: str = HERE) -> Dict[str, Any]:
    with open(os.path.join(directory, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def conversation(name: str, directory: str = HERE) -> Tuple[Conversation, List[Dict[str, Any]]]:
    """One life as a conversation of the dataset shape, and its absent questions apart."""
    life = read_life(name, directory)
    sessions = [Session("%s/%s" % (name, s["session_id"]),
                        [Turn(m["id"], m["role"], m["content"], _ms(m["timestamp"])) for m in s["messages"]])
                for s in life["sessions"]]
    text = {t.turn_id: t.content for s in sessions for t in s.turns}
    questions, absent = [], []
    for q in life["questions"]:
        if q["kind"] == ABSENT:
            absent.append(dict(q, life=name))
            continue
        labels = {"paraphrased": paraphrased(q["question"], [text[m] for m in q["evidence"]]), "life": name}
        if q.get("stale"):
            labels.update(old=list(q["stale"]), new=list(q["evidence"]))
        questions.append(Question("%s/%s" % (name, q["id"]), q["question"], q["kind"], list(q["evidence"]),
                                  str(q.get("answer", "")), None, labels))
    return Conversation(name, sessions, questions), absent


def load(which: str = "tune", directory: str = HERE) -> Tuple[Dataset, List[Dict[str, Any]]]:
    """The lives of `which` ("tune", "report", "all") in `directory` as one dataset, and their absent questions."""
    conversations, absent = [], []
    for name in lives(which, directory):
        c, a = conversation(name, directory)
        conversations.append(c)
        absent += a
    prefix = "natural-" if directory == HERE else os.path.basename(directory) + "-"
    return Dataset(prefix + which, conversations, []), absent


def _labels(c: Conversation) -> List[Tuple[str, str]]:
    """The (role, speaker label) pairs the life's turns use, in order of first use; "" where unlabelled."""
    seen: Dict[Tuple[str, str], None] = {}
    for t in (t for s in c.sessions for t in s.turns):
        head = t.content.split(":", 1)[0]
        label = head if ":" in t.content and 0 < len(head) <= 24 and " " not in head.strip() else ""
        seen.setdefault((t.role, label), None)
    return list(seen)


def with_filler(dataset: Dataset, messages: int, seed: int = 32) -> Dataset:
    """Each life among everyday filler chat of the same user until it holds `messages` messages.

    The filler sessions are spread over the life's own span (a month either side), under its
    speaker labels; their turn ids ("F<n>:<i>") are named by no question.
    """
    out = []
    for c in dataset.conversations:
        stamps = [t.timestamp_ms for s in c.sessions for t in s.turns if t.timestamp_ms is not None]
        month = 30 * 86_400_000
        held = sum(len(s.turns) for s in c.sessions)
        made = filler.sessions(messages - held, min(stamps) - month, max(stamps) + month, _labels(c), seed)
        extra = [Session("filler/%d" % n, [Turn("F%d:%d" % (n, i), role, content, ms)
                                           for i, (role, content, ms) in enumerate(turns)]) for n, turns in made]
        merged = sorted(c.sessions + extra, key=lambda s: (s.turns[0].timestamp_ms or 0, s.session_id))
        out.append(c._replace(sessions=merged))
    return dataset._replace(name=dataset.name + "+filler%d" % messages, conversations=out)
