"""A user's sessions assembled from planted lines and small talk, and the whole dataset from a seed."""
from __future__ import annotations

import json
import random
import re
from typing import Any, List, Optional, Tuple

from tools.evalkit import synthetic_hard
from tools.evalkit.dataset import Conversation, Dataset, Question, Session, Turn, to_json
from tools.evalkit.synthetic.facts import (
    ABSOLUTE_EVENTS,
    ABSOLUTE_FORMS,
    KNOWLEDGE_UPDATE,
    MULTI_SESSION,
    MULTIPLE_CHOICE,
    RELATIVE_EVENTS,
    SINGLE_HOP,
)
from tools.evalkit.synthetic.plan import (
    FILLER_RELATIVE,
    FILLER_VAGUE,
    HARD_FIRST,
    HARD_SIZES,
    MAX_TURNS,
    MIN_TURNS,
    PAST_SHARE,
    PLAN,
    SIZES,
)
from tools.evalkit.synthetic.plant import (
    _plant_entity_mentions,
    _plant_knowledge_update,
    _plant_multi_session,
    _plant_multiple_choice,
    _plant_relative_filler,
    _plant_single_hop,
    _plant_temporal_absolute,
    _plant_temporal_relative,
    _plant_unanswerable,
)
from tools.evalkit.synthetic.text import FAREWELLS, FILLER, FILLER_WORDS, GREETINGS
from tools.evalkit.synthetic.user import _HardUser, _Line, _User

SMALL_TALK = {"greeting": GREETINGS, "farewell": FAREWELLS, "filler": FILLER}


def _filler_text(u: _User, speaker: int, kind: str) -> str:
    """Small talk: each template once per user before any repeats (then a new round)."""
    if not u.unused.get(kind):
        templates = SMALL_TALK[kind][u.lang]
        u.unused[kind] = u.rng.sample(templates, len(templates))
    template = u.unused[kind].pop()
    words = {k: u.rng.choice(vs) for k, vs in FILLER_WORDS[u.lang].items()}
    return u.polish(template.format(me=u.names[speaker], you=u.names[1 - speaker], **words))


def _skeleton(order: List[Optional[List[_Line]]]) -> List[Any]:
    """Turn slots: planted lines in order, a filler marker (its speaker) wherever alternation needs one."""
    slots: List[Any] = [0]  # the greeting, by A
    for item in order:
        speaker = len(slots) % 2
        if item is None:
            slots.append(speaker)
            continue
        if item[0].speaker != speaker:
            slots.append(speaker)
        slots.extend(item)
    return slots


def _assemble(u: _User, s: int) -> List[_Line]:
    blocks = u.blocks[s]
    planted = sum(len(b) for b in blocks)
    target = u.rng.randint(MIN_TURNS, MAX_TURNS)
    order: List[Optional[List[_Line]]] = list(blocks) + [None] * max(0, target - 2 - planted)
    u.rng.shuffle(order)
    slots = _skeleton(order)
    while len(slots) + 1 > MAX_TURNS and None in order:
        order.remove(None)
        slots = _skeleton(order)
    while len(slots) + 1 < MIN_TURNS:
        slots.append(len(slots) % 2)
    slots.append(len(slots) % 2)  # the farewell
    if len(slots) > MAX_TURNS:
        raise ValueError("session %d of %s has %d turns" % (s + 1, u.user_id, len(slots)))
    lines = []
    for i, slot in enumerate(slots):
        if isinstance(slot, _Line):
            lines.append(slot)
            continue
        kind = "greeting" if i == 0 else "farewell" if i == len(slots) - 1 else "filler"
        lines.append(_Line(slot, _filler_text(u, slot, kind)))
    return lines


def _mentions(lang: str, name: str, text: str) -> bool:
    if lang == "zh":
        return name in text
    return re.search(r"(?<![A-Za-z])%s(?![A-Za-z])" % re.escape(name), text) is not None


def _user(lang: str, number: int, seed: int) -> Conversation:
    user_id = "syn-%s-%02d" % (lang, number)
    u = _User(lang, user_id, random.Random(seed * 100003 + number + (500 if lang == "zh" else 0)))
    for i, kind in enumerate(u.rng.sample(SINGLE_HOP, PLAN["single-hop"])):
        _plant_single_hop(u, kind, paraphrase=i < PLAN["paraphrase"])
    for case in u.rng.sample(MULTI_SESSION, PLAN["multi-session"]):
        _plant_multi_session(u, case)
    for kind in u.rng.sample(KNOWLEDGE_UPDATE, PLAN["knowledge-update"]):
        _plant_knowledge_update(u, kind)
    events = {tense: u.rng.sample(lst, len(lst)) for tense, lst in RELATIVE_EVENTS[lang].items()}
    for _ in range(PLAN["temporal-relative"]):
        _plant_temporal_relative(u, events)
    for _ in range(u.rng.randint(*FILLER_RELATIVE)):
        _plant_relative_filler(u, "past" if u.rng.random() < PAST_SHARE else "future")
    for _ in range(FILLER_VAGUE):
        _plant_relative_filler(u, "vague")
    absolute = u.rng.sample(ABSOLUTE_EVENTS[lang], len(ABSOLUTE_EVENTS[lang]))
    forms = u.rng.sample(ABSOLUTE_FORMS[lang], PLAN["temporal-absolute"])
    for form in forms:
        _plant_temporal_absolute(u, absolute, form)
    for kind in u.rng.sample(MULTIPLE_CHOICE, PLAN["multiple-choice"]):
        _plant_multiple_choice(u, kind)
    _plant_entity_mentions(u)
    unanswerable = _plant_unanswerable(u, PLAN["unanswerable"])
    return _finish(u, unanswerable)


def _hard_user(lang: str, number: int, seed: int) -> Conversation:
    """A user with only the harder groups (synthetic_hard.py) and two vague filler expressions."""
    user_id = "syn-%s-%02d" % (lang, number)
    u = _HardUser(lang, user_id, random.Random(seed * 100003 + number + (500 if lang == "zh" else 0)))
    synthetic_hard.plant_all(u)
    for _ in range(FILLER_VAGUE):
        _plant_relative_filler(u, "vague")
    return _finish(u, [])


def _finish(u: _User, unanswerable: List[Tuple[str, str]]) -> Conversation:
    """Assemble the sessions, give turns their ids, and turn planted lines into ids."""
    sessions = []
    all_lines: List[_Line] = []
    for s in range(len(u.days)):
        lines = _assemble(u, s)
        turns = []
        for i, line in enumerate(lines):
            assert line.speaker == i % 2, "speakers must alternate"
            line.turn_id = "S%d:%d" % (s + 1, i + 1)
            turns.append(Turn(line.turn_id, "user" if i % 2 == 0 else "assistant", line.text, u.stamps[s]))
            all_lines.append(line)
        sessions.append(Session("%s/s%02d" % (u.user_id, s + 1), turns))
    names = iter(unanswerable)
    questions = []
    for q in u.questions:
        ids = [line.turn_id for line in q["gold"]]
        labels = q["labels"]
        if q["category"] == "unanswerable":
            _, name = next(names)
            ids = [line.turn_id for line in all_lines if _mentions(u.lang, name, line.text)]
        elif labels and "new" in labels:  # knowledge-update and update-cue questions
            labels = {"new": [labels["new"][0].turn_id], "old": [labels["old"][0].turn_id]}
        questions.append(Question(q["qid"], q["question"], q["category"], ids, q["answer"], q["options"], labels))
    position = {line.turn_id: i for i, line in enumerate(all_lines)}
    relative = sorted(u.relative, key=lambda r: position[r[0].turn_id])
    relative_times = [{"turn_id": line.turn_id, "expression": expr,
                       "start": start.isoformat() if start else None, "end": end.isoformat() if end else None}
                      for line, expr, start, end in relative]
    return Conversation(u.user_id, sessions, questions, u.lang, relative_times)


def generate(seed: int = 1, size: str = "small") -> Dataset:
    """The synthetic suite for `seed` and `size` ("small" or "medium"); the same every time."""
    if size not in SIZES:
        raise ValueError("size must be one of %s" % ", ".join(SIZES))
    conversations = [_user(lang, n, seed) for lang, count in SIZES[size].items() for n in range(1, count + 1)]
    conversations += [_hard_user(lang, HARD_FIRST + n, seed) for lang, count in HARD_SIZES[size].items()
                      for n in range(count)]
    return Dataset("synthetic-%s-seed%d" % (size, seed), conversations, [])


def dumps(dataset: Dataset) -> str:
    """The suite's JSON text, exactly as tools/synthetic.py writes it."""
    return json.dumps(to_json(dataset), ensure_ascii=False, indent=1, sort_keys=False) + "\n"
