"""Planting each category of the typed-chat set in a user's blocks."""
from __future__ import annotations

import datetime
from typing import Any, Dict, List, Tuple

from tools.evalkit.synthetic_chat.facts import MENTIONS, UNANSWERABLE
from tools.evalkit.synthetic_chat.plan import KEY_EXPOSED, UNANSWERABLE_ANSWER, UTC
from tools.evalkit.synthetic_chat.talk import (
    FACT_REACTIONS,
    FOLLOWUPS,
    OPENERS,
    OWN_CLOSERS,
    OWN_OPENERS,
    OWN_REACTIONS,
    PRE_REPLY,
    REACTIONS,
    SINGLE_REACTIONS,
)
from tools.evalkit.synthetic_chat.user import _Block, _lines, _Msg, _plain, _User


def _plant_burst_reply(u: _User, kind: Dict[str, Any]) -> None:
    asker = u.rng.randrange(2)
    answerer = 1 - asker
    x = u.draw(kind["pool"])
    words = u.words(answerer, x=x)
    ask_words = u.words(asker)
    ask_words["partner"] = u.partners[answerer]
    msgs = [u.msg(asker, t, ask_words) for t in u.rng.sample(OPENERS, u.rng.randint(0, 2))]
    msgs.append(u.msg(asker, kind["ask"], ask_words, planted=True))
    followups = u.rng.sample(FOLLOWUPS + kind["fu"] * 2, u.rng.randint(1, 3))
    msgs += [u.msg(asker, t, ask_words) for t in dict.fromkeys(followups)]
    if u.rng.random() < 0.6:
        msgs.append(u.msg(answerer, u.rng.choice(PRE_REPLY), words))
    reply, gold = _lines(u, answerer, u.rng.choice(kind["reply"]), words)
    u.blocks[u.session()].append(_Block(msgs + reply))
    u.ask("burst-reply", _plain(kind["q"]).format(**words), gold, x)
    if "entity" in kind:
        u.register(kind["entity"], x)
    if kind.get("partner"):
        u.register("person", u.partners[answerer])


def _plant_burst_fact(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    x = u.draw(kind["pool"])
    words = u.words(speaker, x=x)
    msgs, gold = _lines(u, speaker, kind["say"], words)
    msgs.append(u.msg(1 - speaker, u.rng.choice(FACT_REACTIONS[kind["mood"]]), words))
    u.blocks[u.session()].append(_Block(msgs))
    u.ask("burst-fact", kind["q"].format(**words), gold, x)
    if "entity" in kind:
        u.register(kind["entity"], x)
    if kind.get("partner"):
        u.register("person", u.partners[speaker])


def _plant_single(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    x = u.draw(kind["pool"])
    words = u.words(speaker, x=x)
    msgs = [u.chat(speaker)] if u.rng.random() < 0.4 else []
    fact = u.msg(speaker, kind["say"], words, planted=True)
    msgs += [fact, u.msg(1 - speaker, u.rng.choice(SINGLE_REACTIONS), words)]
    u.blocks[u.session()].append(_Block(msgs))
    u.ask("single", kind["q"].format(**words), [fact], x)
    if "entity" in kind:
        u.register(kind["entity"], x)


def _plant_update(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    if kind["pool"] == "clinic":
        a, b = u.draw("clinic")
    else:
        a, b = u.draw(kind["pool"]), u.draw(kind["pool"])
    words = u.words(speaker, a=a, b=b)
    n = len(u.kinds)
    old_s = u.session(0, max(0, n // 2 - 1))
    new_s = u.session(min(n - 1, old_s + 2))
    old_msgs, old = _lines(u, speaker, kind["old"], words)
    new_msgs, new = _lines(u, speaker, kind["new"], words)
    for s, msgs in ((old_s, old_msgs), (new_s, new_msgs)):
        msgs.append(u.msg(1 - speaker, u.rng.choice(SINGLE_REACTIONS + REACTIONS), words))
        u.blocks[s].append(_Block(msgs))
    u.ask("update", kind["q"].format(**words), [new[0], old[0]], b, labels={"new": [new[0]], "old": [old[0]]})


def _at(u: _User, s: int, after_midnight: bool) -> int:
    """A late-night moment of session s: 23:05-23:55 of its (resumed) day, or 00:05-01:40 the day after."""
    base = u.resume.get(s, u.starts[s])
    day = datetime.datetime.fromtimestamp(base, UTC).date()
    midnight = int(datetime.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
    minute = u.rng.randint(24 * 60 + 5, 25 * 60 + 40) if after_midnight else u.rng.randint(23 * 60 + 5, 23 * 60 + 55)
    return midnight + minute * 60 + u.rng.randint(0, 59)


def _plant_own_time(u: _User, events: Dict[str, List[Tuple[str, str, List[str]]]]) -> None:
    timed = [s for s, kind in enumerate(u.kinds) if kind != "day"]
    s = min(timed, key=lambda t: (len(u.timed[t]), u.rng.random()))
    tense = "past" if u.rng.random() < 0.5 else "future"
    template, question, forms = events[tense].pop()
    speaker = u.rng.randrange(2)
    words = u.words(speaker)
    msgs = [u.msg(speaker, t, words) for t in u.rng.sample(OWN_OPENERS, u.rng.randint(0, 2))]
    evidence = _Msg(speaker, template.replace("{when}", "\0").format(**words).replace("\0", "{when}"),
                    exposed=u.rng.random() < KEY_EXPOSED, when=u.rng.choice(forms))
    msgs.append(evidence)
    if u.rng.random() < 0.5:
        msgs.append(u.msg(speaker, u.rng.choice(OWN_CLOSERS), words))
    msgs.append(u.msg(1 - speaker, u.rng.choice(OWN_REACTIONS[tense]), words))
    after_midnight = len(u.timed[s]) > 0 or u.rng.random() < 0.6
    block = _Block(msgs, at=_at(u, s, after_midnight))
    u.timed[s].append(block)
    u.ask("own-time", question.format(**words), [evidence], "")  # the answer needs the message's day


def _plant_mentions(u: _User) -> None:
    for kind, name in u.entities:
        speaker = u.rng.randrange(2)
        msgs = [u.msg(speaker, u.rng.choice(MENTIONS[kind]), {"x": name}), u.reaction(1 - speaker)]
        u.blocks[u.session()].append(_Block(msgs))


def _plant_unanswerable(u: _User, count: int) -> List[str]:
    names = []
    for kind, name in u.rng.sample(u.entities, min(count, len(u.entities))):
        question = u.rng.choice(UNANSWERABLE[kind]).format(x=name)
        u.ask("unanswerable", question, [], UNANSWERABLE_ANSWER, labels={"unanswerable": True})
        names.append(name)
    return names
