"""One user of the typed-chat set: messages in blocks, the lines planted in them."""
from __future__ import annotations

import datetime
import random
import re
from typing import Any, Dict, List, Optional, Tuple

from tools.evalkit.synthetic_chat.plan import (
    DAY,
    FIRST_DAY,
    GAP_DAYS,
    KEY_EXPOSED,
    MULTI_DAY_SESSIONS,
    NIGHT_SESSIONS,
    SESSIONS,
    START_SPREAD_DAYS,
    UTC,
)
from tools.evalkit.synthetic_chat.talk import REACTIONS, SLOT_WORDS, SMALL_TALK, SMALL_TALK_SLOTS
from tools.evalkit.synthetic_chat.words import POOLS, SPEAKERS


class _Msg:
    """One message under construction: its text keeps `*key*` marks and `{when}` until rendered."""

    def __init__(self, speaker: int, text: str, exposed: bool = False, when: Optional[str] = None):
        self.speaker = speaker
        self.raw = text
        self.exposed = exposed  # a planted fact whose key word the noise may touch
        self.when = when  # own-time: the relative form, chosen against the message's day
        self.text = ""
        self.expression: Optional[str] = None
        self.stamp = 0  # Unix seconds
        self.turn_id = ""


class _Block:
    def __init__(self, msgs: List[_Msg], at: Optional[int] = None, interruptible: bool = True):
        self.msgs = msgs
        self.at = at  # Unix seconds the block does not start before (a late-night message, a resumed session)
        self.interruptible = interruptible


class _User:
    def __init__(self, number: int, seed: int):
        self.rng = random.Random(seed * 100003 + number)
        self.user_id = "chat-en-%d" % number
        pair = self.rng.sample(SPEAKERS, 2)
        self.names = [pair[0][0], pair[1][0]]
        self.their = [pair[0][1], pair[1][1]]
        self.pools: Dict[str, List[Any]] = {}
        self.partners = [self.draw("person"), self.draw("person")]
        self.groups: List[str] = []
        self.entities: List[Tuple[str, str]] = []
        self.questions: List[Dict[str, Any]] = []
        self.deck: List[str] = []
        n = self.rng.randint(*SESSIONS)
        self.kinds = ["day"] * n
        timed = self.rng.sample(range(1, n), NIGHT_SESSIONS + MULTI_DAY_SESSIONS)
        for i, s in enumerate(timed):
            self.kinds[s] = "night" if i < NIGHT_SESSIONS else "days"
        self.resume: Dict[int, int] = {}  # multi-day session -> when it resumes
        self.starts = self._starts()
        self.blocks: List[List[_Block]] = [[] for _ in range(n)]
        self.timed: List[List[_Block]] = [[] for _ in range(n)]  # own-time blocks, in time order

    def _starts(self) -> List[int]:
        """Session starts; a multi-day session's resumption (self.resume) ends before the next one starts."""
        day = FIRST_DAY + self.rng.randint(0, START_SPREAD_DAYS) * DAY
        starts = []
        for s, kind in enumerate(self.kinds):
            if s:
                day += (self.rng.randint(*GAP_DAYS) + (3 if self.kinds[s - 1] == "days" else 0)) * DAY
            minute = self.rng.randint(21 * 60, 22 * 60 + 50) if kind == "night" else \
                self.rng.randint(19 * 60, 21 * 60) if kind == "days" else self.rng.randint(8 * 60, 19 * 60 + 30)
            moment = datetime.datetime(day.year, day.month, day.day, tzinfo=UTC) + datetime.timedelta(minutes=minute)
            starts.append(int(moment.timestamp()) + self.rng.randint(0, 59))
            if kind == "days":
                self.resume[s] = starts[-1] + self.rng.randint(1, 2) * 86400 + self.rng.randint(-3600, 3600)
        return starts

    def draw(self, pool: str) -> Any:
        """A value from a pool, never the same one twice for this user."""
        if pool not in self.pools:
            values = list(POOLS[pool])
            self.rng.shuffle(values)
            self.pools[pool] = values
        return self.pools[pool].pop()

    def pick(self, kinds: List[Dict[str, Any]], count: int) -> List[Dict[str, Any]]:
        """`count` fact kinds at random, at most one per contradiction group for this user."""
        out = []
        for kind in self.rng.sample(kinds, len(kinds)):
            group = kind.get("group")
            if group and group in self.groups:
                continue
            if group:
                self.groups.append(group)
            out.append(kind)
            if len(out) == count:
                break
        return out

    def session(self, lo: int = 0, hi: Optional[int] = None) -> int:
        """A session in [lo, hi], the less loaded of two drawn at random."""
        hi = len(self.kinds) - 1 if hi is None else hi
        a, b = self.rng.randint(lo, hi), self.rng.randint(lo, hi)
        return a if len(self.blocks[a]) <= len(self.blocks[b]) else b

    def words(self, speaker: int, **extra: Any) -> Dict[str, Any]:
        return dict(name=self.names[speaker], you=self.names[1 - speaker], their=self.their[speaker],
                    partner=self.partners[speaker], **extra)

    def msg(self, speaker: int, template: str, words: Dict[str, Any], planted: bool = False) -> _Msg:
        exposed = planted and self.rng.random() < KEY_EXPOSED
        text = template.format(**words) if "{" in template else template
        if "a {" in template:
            text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)  # "an oat latte"
        return _Msg(speaker, text, exposed)

    def ask(self, category: str, question: str, gold: List[_Msg], answer: str, labels: Any = None) -> None:
        self.questions.append({"qid": "%s/q%03d" % (self.user_id, len(self.questions) + 1), "category": category,
                               "question": question, "gold": gold, "answer": answer, "labels": labels})

    def register(self, kind: str, name: str) -> None:
        if (kind, name) not in self.entities:
            self.entities.append((kind, name))

    def reaction(self, speaker: int) -> _Msg:
        return _Msg(speaker, self.rng.choice(REACTIONS))

    def chat(self, speaker: int) -> _Msg:
        """Small talk: every line once before any repeats, some of them with slots filled."""
        if not self.deck:
            self.deck = self.rng.sample(SMALL_TALK + SMALL_TALK_SLOTS * 2, len(SMALL_TALK) + 2 * len(SMALL_TALK_SLOTS))
        template = self.deck.pop()
        words = {k: self.rng.choice(v) for k, v in SLOT_WORDS.items()}
        text = template.format(**words) if "{" in template else template
        return _Msg(speaker, text[0].upper() + text[1:])


def _lines(u: _User, speaker: int, templates: List[str], words: Dict[str, Any]) -> Tuple[List[_Msg], List[_Msg]]:
    """Messages from templates; the second list holds the gold ones ("+" marked)."""
    msgs, gold = [], []
    for template in templates:
        m = u.msg(speaker, template.lstrip("+"), words, planted=template.startswith("+"))
        msgs.append(m)
        if template.startswith("+"):
            gold.append(m)
    return msgs, gold


def _plain(template: str) -> str:
    return template.replace("*", "")
