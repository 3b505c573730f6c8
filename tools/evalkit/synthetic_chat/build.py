"""A user's sessions: small talk around the planted blocks, the clock, the noise, and the dataset from a seed."""
from __future__ import annotations

import datetime
import re
from typing import List

from tools.evalkit.dataset import Conversation, Dataset, Question, Session, Turn
from tools.evalkit.synthetic_chat.facts import BURST_FACT, BURST_REPLY, OWN_FUTURE, OWN_PAST, SINGLE, UPDATE
from tools.evalkit.synthetic_chat.plan import (
    DROP_PUNCT,
    EMOJI,
    INTERRUPT,
    LOWER,
    MESSAGES,
    PLAN,
    TYPO,
    USERS,
    UTC,
    WEEKDAYS,
)
from tools.evalkit.synthetic_chat.plant import (
    _plant_burst_fact,
    _plant_burst_reply,
    _plant_mentions,
    _plant_own_time,
    _plant_single,
    _plant_unanswerable,
    _plant_update,
)
from tools.evalkit.synthetic_chat.talk import FAREWELLS, GREETINGS, REACTIONS, SMALL_ANSWERS, SMALL_QUESTIONS
from tools.evalkit.synthetic_chat.user import _Block, _Msg, _User
from tools.evalkit.synthetic_chat.words import EMOJIS, RELATIVE, TYPO_PATTERNS, resolve_expression


def _background(u: _User) -> _Block:
    a = u.rng.randrange(2)
    b = 1 - a
    words = u.words(a)
    other = u.words(b)
    shape = u.rng.random()
    msgs: List[_Msg] = []
    if shape < 0.3:  # a question, answered
        if u.rng.random() < 0.3:
            msgs.append(u.msg(a, u.rng.choice(REACTIONS), words))
        msgs.append(u.msg(a, u.rng.choice(SMALL_QUESTIONS), words))
        if u.rng.random() < 0.3:
            msgs.append(u.chat(a))
        msgs.append(u.msg(b, u.rng.choice(SMALL_ANSWERS), other))
        if u.rng.random() < 0.5:
            msgs.append(u.chat(b))
        if u.rng.random() < 0.6:
            msgs.append(u.reaction(a))
    elif shape < 0.75:  # a burst of news, a reaction and maybe news back
        msgs += [u.chat(a) for _ in range(u.rng.randint(1, 4))]
        msgs.append(u.reaction(b))
        if u.rng.random() < 0.5:
            msgs += [u.chat(b) for _ in range(u.rng.randint(1, 2))]
            if u.rng.random() < 0.5:
                msgs.append(u.reaction(a))
    else:  # reactions back and forth
        msgs.append(u.chat(a))
        for i in range(u.rng.randint(1, 3)):
            msgs.append(u.reaction(b if i % 2 == 0 else a))
    return _Block(msgs)


def _interrupt(u: _User, block: _Block) -> None:
    """~20% of bursts of 3+ messages get a one-word reaction of the other speaker inside."""
    if not block.interruptible:
        return
    i = 0
    out: List[_Msg] = []
    msgs = block.msgs
    while i < len(msgs):
        j = i
        while j < len(msgs) and msgs[j].speaker == msgs[i].speaker:
            j += 1
        run = msgs[i:j]
        if len(run) >= 3 and u.rng.random() < INTERRUPT:
            cut = u.rng.randint(1, len(run) - 1)
            run = run[:cut] + [u.reaction(1 - run[0].speaker)] + run[cut:]
        out += run
        i = j
    block.msgs = out


def _assemble(u: _User, s: int) -> List[_Msg]:
    """The session's blocks in order, filled with small talk up to its drawn length."""
    speaker = u.rng.randrange(2)
    greeting = _Block([u.msg(speaker, u.rng.choice(GREETINGS), u.words(speaker))])
    if u.rng.random() < 0.7:
        greeting.msgs.append(u.msg(1 - speaker, u.rng.choice(GREETINGS + REACTIONS), u.words(1 - speaker)))
    planted = list(u.blocks[s])
    target = u.rng.randint(*MESSAGES)
    held = len(greeting.msgs) + 2 + sum(len(b.msgs) for b in planted + u.timed[s])
    while held < target:
        block = _background(u)
        if held + len(block.msgs) > MESSAGES[1] - 6:
            break
        planted.append(block)
        held += len(block.msgs)
    u.rng.shuffle(planted)
    order = [greeting] + planted
    if u.kinds[s] == "days":  # breaks off and resumes a day or two later, in the evening
        cut = u.rng.randint(len(order) // 3, max(len(order) // 3, len(order) // 2))
        order[cut].at = u.resume[s]
    timed = sorted(u.timed[s], key=lambda b: b.at or 0)
    if timed:  # the late-night blocks go in the last part, in their time order
        lo = len(order) // 2 + 1
        spots = sorted(u.rng.sample(range(lo, len(order) + 1), len(timed)), reverse=True)
        for spot, block in zip(spots, reversed(timed)):
            order.insert(spot, block)
    speaker = u.rng.randrange(2)
    order.append(_Block([u.msg(speaker, u.rng.choice(FAREWELLS), u.words(speaker))]))
    msgs: List[_Msg] = []
    for block in order:
        _interrupt(u, block)
        _clock(u, s, block, msgs)
        msgs += block.msgs
    return msgs


def _clock(u: _User, s: int, block: _Block, before: List[_Msg]) -> None:
    """Timestamps: seconds within a burst, up to minutes between speakers, a pause now and then."""
    if not before:
        clock = u.starts[s]
    else:
        clock = before[-1].stamp + u.rng.randint(15, 240)
        if u.kinds[s] == "day" and u.rng.random() < 0.06:
            clock += u.rng.randint(3600, 4 * 3600)
    if block.at is not None:
        clock = max(clock, block.at)
    last = before[-1] if before else None
    for i, m in enumerate(block.msgs):
        if i:
            assert last is not None  # the block's previous message
            if m.speaker == last.speaker:
                clock += u.rng.randint(2, 10) + len(m.raw) // 4
            else:
                clock += u.rng.randint(8, 150)
        m.stamp = clock
        last = m


def _misspell(u: _User, word: str) -> str:
    for pattern, replacement in TYPO_PATTERNS:
        if pattern.fullmatch(word):
            return replacement
    letters = [i for i in range(1, len(word) - 2) if word[i].isalpha() and word[i + 1].isalpha()]
    if len(word) < 5 or not letters:
        return word
    i = u.rng.choice(letters)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _render(u: _User, m: _Msg) -> None:
    raw = m.raw
    day = datetime.datetime.fromtimestamp(m.stamp, UTC).date()
    if m.when is not None:
        form = m.when
        if "{wd}" in form:
            wd = u.rng.choice([w for i, w in enumerate(WEEKDAYS) if i != day.weekday()])
            form = form.replace("{wd}", wd.capitalize())
        m.expression = form
        raw = raw.replace("{when}", "*%s*" % form)
    parts = raw.split("*")  # odd parts are key words
    if m.exposed and len(parts) > 1 and u.rng.random() < 0.5:
        k = u.rng.randrange(1, len(parts), 2)
        if m.when is not None:  # a time expression is only ever written the chat way ("tmrw"), still readable
            parts[k] = _misspell(u, parts[k]) if any(p.fullmatch(parts[k]) for p, _ in TYPO_PATTERNS[:4]) \
                else parts[k]
        else:
            parts[k] = " ".join(_misspell(u, w) for w in parts[k].split(" "))
    if u.rng.random() < TYPO:  # a time expression as a whole only (above): "the day after tmrw" would misread
        keys = [i for i in range(1, len(parts), 2)] if m.exposed and m.when is None else []
        free = [i for i in range(0, len(parts), 2)] + keys
        options = [(i, p, r) for i in free for p, r in TYPO_PATTERNS if p.search(parts[i])]
        if options:
            i, p, r = u.rng.choice(options)
            parts[i] = p.sub(r, parts[i], count=1)
    text = "".join(parts)
    if u.rng.random() < LOWER:
        text = text.lower()
    if u.rng.random() < DROP_PUNCT:
        text = re.sub(r"(?<=\w)[.!?]+$", "", text)
    if u.rng.random() < EMOJI:
        text += (" " if u.rng.random() < 0.7 else "") + u.rng.choice(EMOJIS)
    m.text = text


def _user(number: int, seed: int) -> Conversation:
    u = _User(number, seed)
    for kind in u.pick(BURST_REPLY, PLAN["burst-reply"]):
        _plant_burst_reply(u, kind)
    for kind in u.pick(BURST_FACT, PLAN["burst-fact"]):
        _plant_burst_fact(u, kind)
    for kind in u.pick(SINGLE, PLAN["single"]):
        _plant_single(u, kind)
    for kind in u.pick(UPDATE, PLAN["update"]):
        _plant_update(u, kind)
    events = {"past": u.rng.sample(OWN_PAST, len(OWN_PAST)), "future": u.rng.sample(OWN_FUTURE, len(OWN_FUTURE))}
    for _ in range(PLAN["own-time"]):
        _plant_own_time(u, events)
    _plant_mentions(u)
    unanswerable = iter(_plant_unanswerable(u, PLAN["unanswerable"]))

    sessions = []
    everything: List[_Msg] = []
    for s in range(len(u.kinds)):
        msgs = _assemble(u, s)
        turns = []
        for i, m in enumerate(msgs, 1):
            _render(u, m)
            m.turn_id = "S%d:%d" % (s + 1, i)
            turns.append(Turn(m.turn_id, "user" if m.speaker == 0 else "assistant",
                              "%s: %s" % (u.names[m.speaker], m.text), m.stamp * 1000))
        everything += msgs
        sessions.append(Session("%s/s%02d" % (u.user_id, s + 1), turns))

    questions = []
    for q in u.questions:
        gold = [m.turn_id for m in q["gold"]]
        answer, labels = q["answer"], q["labels"]
        if q["category"] == "unanswerable":
            name = next(unanswerable)
            pattern = re.compile(r"(?<!\w)%s(?!\w)" % re.escape(name), re.I)
            gold = [m.turn_id for m in everything if pattern.search(m.text)]
        elif q["category"] == "own-time":
            m = q["gold"][0]
            start, _ = resolve_expression(m.expression or "", _day(m))
            answer = start.isoformat()
        elif labels:
            labels = {"new": [labels["new"][0].turn_id], "old": [labels["old"][0].turn_id]}
        questions.append(Question(q["qid"], q["question"], q["category"], gold, answer, None, labels))

    relative = []
    for m in everything:
        for found in RELATIVE.finditer(m.text):
            start, end = resolve_expression(found.group(1), _day(m))
            relative.append({"turn_id": m.turn_id, "expression": found.group(1), "start": start.isoformat(),
                             "end": end.isoformat()})
    return Conversation(u.user_id, sessions, questions, "en", relative)


def _day(m: _Msg) -> datetime.date:
    return datetime.datetime.fromtimestamp(m.stamp, UTC).date()


def generate(seed: int = 1) -> Dataset:
    """The synthetic chat set for `seed`; the same every time."""
    return Dataset("synthetic-chat-seed%d" % seed, [_user(n, seed) for n in range(1, USERS + 1)], [])
