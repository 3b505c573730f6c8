"""One user of the suite: their language, random stream, sessions and the lines planted in them."""
from __future__ import annotations

import datetime
import random
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.evalkit import synthetic_hard
from tools.evalkit.synthetic.dates import DAY
from tools.evalkit.synthetic.plan import (
    FIRST_DAY,
    GAP_DAYS,
    HARD_GAP_DAYS,
    HARD_LAST_START_DAY,
    LAST_START_DAY,
    REACTION_SHARE,
    SESSIONS_PER_USER,
)
from tools.evalkit.synthetic.text import WORDS


class _Line:
    """A turn being built: speaker index (0 = A, role user; 1 = B) and text; its id comes later."""

    def __init__(self, speaker: int, text: str):
        self.speaker = speaker
        self.text = text
        self.turn_id = ""


class _User:
    """One user's conversation under construction."""

    last_start_day, gap_days = LAST_START_DAY, GAP_DAYS

    def __init__(self, lang: str, user_id: str, rng: random.Random):
        self.lang = lang
        self.user_id = user_id
        self.rng = rng
        self.pools: Dict[str, List[Any]] = {}
        self.names = self.draw("speaker"), self.draw("speaker")
        self.days, self.stamps = self._session_dates()
        self.blocks: List[List[List[_Line]]] = [[] for _ in self.days]
        self.load = [0] * len(self.days)
        self.questions: List[Dict[str, Any]] = []  # Question fields, with planted lines in place of ids
        self.relative: List[Tuple[_Line, str, Optional[datetime.date], Optional[datetime.date]]] = []
        self.entities: List[Tuple[str, str]] = []
        self.dated: List[datetime.date] = []  # single days already planted (kept distinct)
        self.unused: Dict[str, List[str]] = {}  # small-talk templates not yet used, per kind

    # drawing words and sessions

    def draw(self, pool: str) -> Any:
        """A word from a list, never the same one twice for this user."""
        if pool not in self.pools:
            words = list(self.word_list(pool))
            self.rng.shuffle(words)
            self.pools[pool] = words
        if not self.pools[pool]:
            raise ValueError("word list %r exhausted for %s" % (pool, self.user_id))
        return self.pools[pool].pop()

    def word_list(self, pool: str) -> List[Any]:
        return WORDS[self.lang][pool]

    def _session_dates(self) -> Tuple[List[datetime.date], List[int]]:
        day = FIRST_DAY + self.rng.randint(0, (self.last_start_day - FIRST_DAY).days) * DAY
        days, stamps = [], []
        for i in range(SESSIONS_PER_USER):
            if i:
                day += self.rng.randint(*self.gap_days) * DAY
            moment = datetime.datetime(day.year, day.month, day.day, self.rng.randint(8, 21), self.rng.randint(0, 59),
                                       tzinfo=datetime.timezone.utc)
            days.append(day)
            stamps.append(int(moment.timestamp()) * 1000)
        return days, stamps

    def session(self, lo: int = 0, hi: Optional[int] = None, avoid: Sequence[int] = ()) -> int:
        """A session in [lo, hi] among the least loaded ones, chosen at random."""
        hi = len(self.days) - 1 if hi is None else hi
        candidates = [s for s in range(lo, hi + 1) if s not in avoid] or list(range(lo, hi + 1))
        least = min(self.load[s] for s in candidates)
        return self.rng.choice([s for s in candidates if self.load[s] <= least + 1])

    def speakers(self) -> Tuple[int, int]:
        me = self.rng.randrange(2)
        return me, 1 - me

    def values(self, me: int, slots: Dict[Any, str]) -> Dict[str, Any]:
        v: Dict[str, Any] = {"me": self.names[me], "you": self.names[1 - me]}
        for slot, pool in slots.items():
            word = self.draw(pool)
            if isinstance(slot, tuple):
                v.update(zip(slot, word))
            else:
                v[slot] = word
        return v

    # placing turns and questions

    def line(self, speaker: int, template: str, v: Dict[str, Any]) -> _Line:
        return _Line(speaker, self.polish(template.format(**v)))

    def polish(self, text: str) -> str:
        """English articles agree with the word that follows ("an architect")."""
        return re.sub(r"\b([Aa]) (?=[AEIOaeio])", r"\1n ", text) if self.lang == "en" else text

    def place(self, session: int, lines: List[_Line]) -> None:
        self.blocks[session].append(lines)
        self.load[session] += len(lines)

    def place_with_reaction(self, session: int, line: _Line, reaction: Optional[str], v: Dict[str, Any]) -> None:
        """The fact, sometimes followed by the other speaker's reply (which is not evidence)."""
        if reaction and self.rng.random() < REACTION_SHARE:
            self.place(session, [line, self.line(1 - line.speaker, reaction, v)])
        else:
            self.place(session, [line])

    def place_near(self, templates: Sequence[str], you: int, v: Dict[str, Any], avoid: Sequence[int],
                   lo: int = 0) -> None:
        """Distractors said by `you`, from session `lo` on, in other sessions than `avoid`."""
        for template in templates:
            self.place(self.session(lo, avoid=avoid), [self.line(you, template, v)])

    def ask(self, category: str, question: str, gold: List[_Line], answer: str,
            options: Optional[List[str]] = None, labels: Optional[Dict[str, Any]] = None) -> str:
        qid = "%s/q%03d" % (self.user_id, len(self.questions) + 1)
        self.questions.append({"qid": qid, "question": question, "category": category, "gold": gold,
                               "answer": answer, "options": options, "labels": labels})
        return qid

    def register(self, kind: str, name: str) -> None:
        if (kind, name) not in self.entities:
            self.entities.append((kind, name))


class _HardUser(_User):
    """A user of the harder groups: sessions over several months, and that module's word lists too."""

    last_start_day, gap_days = HARD_LAST_START_DAY, HARD_GAP_DAYS

    def word_list(self, pool: str) -> List[Any]:
        return synthetic_hard.WORDS[self.lang].get(pool) or WORDS[self.lang][pool]
