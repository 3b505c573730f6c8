"""LoCoMo as people type it: each written turn recast as a burst of short chat messages.

LoCoMo's conversations are written: one long message per turn, speakers alternating, one
timestamp per session. Real chats are typed: a speaker sends a burst of short messages,
the other reacts in the middle of it or starts answering before it ends, every message
has its own time, seconds to minutes after the last, and case, punctuation and spelling
are loose. `chat_style()` turns any dataset of written turns into that shape,
deterministically (the same seed gives the same messages, whatever PYTHONHASHSEED):

- **Parts.** A turn is cut into its sentences, and a long sentence sometimes once more
  before "and", "but" or "so". Each part is one message under the turn's speaker label,
  with the turn's id and ".1", ".2", ... (a turn of one part keeps its id).
- **Interleaving.** Inside a burst the other speaker sometimes sends a short reaction
  ("haha", "omg really?"; its id ends in ".r"), and sometimes the next turn's first part
  arrives before this turn's last (typing at the same time).
- **Times.** The session's first message has the session's time; each next message comes
  3-25 s later within a burst, 15 s to 4 min later at a change of speaker, and now and
  then after a pause of 20-90 min.
- **Noise.** Each message is lower-cased (half of them), loses its final full stop or
  exclamation mark (60%), gets one common typo where it has a word the table knows (15%)
  or an emoji at its end (10%). The speaker label is never touched: the platform adds it.

Gold evidence is carried to the parts: a question's gold stays its turns, and a turn
sent as several messages is found where the first of its parts is found (the
conversation's `parts`; metrics.outcome()). Each part spends its own message rank, and a
reaction is nobody's evidence.
"""
from __future__ import annotations

import random
import re
from typing import Dict, List, Optional, Sequence, Tuple

from .dataset import Conversation, Dataset, Session, Turn

BURST_GAP_S = (3, 25)  # seconds between two messages of one burst
TURN_GAP_S = (15, 240)  # seconds before the other speaker's next message
PAUSE_S = (20 * 60, 90 * 60)  # now and then a longer pause
P_PAUSE = 0.03
P_SPLIT_LONG = 0.5  # a sentence of over LONG_WORDS words split once more
LONG_WORDS = 18
P_REACTION = 0.2  # the other speaker reacts inside a burst of 2+ parts
P_OVERLAP = 0.15  # the next turn's first part arrives before this turn's last
P_LOWER, P_UNPUNCTUATED, P_TYPO, P_EMOJI = 0.5, 0.6, 0.15, 0.1

REACTIONS = ("haha", "lol", "omg", "nice!", "wait really?", "aww", "no way", "yeah", "mhm", "oh wow", "hmm",
             "\U0001F602", "ooh", "totally", "same")
EMOJI = ("\U0001F602", "\U0001F60A", "\U0001F44D", "\u2764\ufe0f", "\U0001F64C", "\U0001F605", "\U0001F60D")
# Misspellings and chat shorthand people type for common words (never for names or numbers).
TYPOS = {"definitely": "definately", "really": "realy", "you": "u", "your": "ur", "because": "bc",
         "though": "tho", "tomorrow": "tmrw", "tonight": "tonite", "going to": "gonna", "want to": "wanna",
         "probably": "prob", "something": "smth", "people": "ppl", "thanks": "thx", "please": "pls",
         "about": "abt", "great": "gr8", "believe": "beleive", "separate": "seperate", "receive": "recieve",
         "weird": "wierd", "until": "untill", "friend": "freind", "beautiful": "beautifull",
         "awesome": "awsome", "right now": "rn", "to be honest": "tbh", "i don't know": "idk"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_JOIN = re.compile(r",?\s+(?=(?:and|but|so)\s)")
_FINAL = re.compile(r"[.!]+$")
_TYPO_PATTERNS = [(re.compile(r"\b%s\b" % re.escape(w), re.IGNORECASE), t) for w, t in TYPOS.items()]


def chat_style(dataset: Dataset, seed: int = 1) -> Dataset:
    """`dataset` with every conversation's turns recast as typed chat (module docstring); questions' gold
    carried to the parts."""
    return dataset._replace(name="%s (chat style, seed %d)" % (dataset.name, seed),
                            conversations=[_conversation(c, seed) for c in dataset.conversations])


def _conversation(conversation: Conversation, seed: int) -> Conversation:
    rng = random.Random("%d/%s" % (seed, conversation.user_id))  # a str seed: the same on every run
    parts_of: Dict[str, List[str]] = {}
    sessions = [_session(session, rng, parts_of) for session in conversation.sessions]
    return conversation._replace(sessions=sessions, relative_times=None,
                                 parts={turn: ids for turn, ids in parts_of.items() if ids != [turn]})


def _session(session: Session, rng: random.Random, parts_of: Dict[str, List[str]]) -> Session:
    """The session's turns as bursts of parts, interleaved, timed and noised."""
    bursts = [_burst(turn, rng) for turn in session.turns]
    for turn, burst in zip(session.turns, bursts):
        parts_of[turn.turn_id] = [t.turn_id for t in burst]
    order: List[Turn] = []
    for i, burst in enumerate(bursts):
        burst = list(burst)
        if len(burst) > 1 and rng.random() < P_REACTION:
            other = _other(session.turns, i)
            if other is not None:
                at = rng.randrange(1, len(burst))
                burst.insert(at, Turn(session.turns[i].turn_id + ".r", other.role,
                                      "%s: %s" % (_label(other), rng.choice(REACTIONS)), None))
        if order and len(burst) > 0 and rng.random() < P_OVERLAP and _label_of(order[-1]) != _label_of(burst[0]):
            order.insert(len(order) - 1, burst.pop(0))  # this turn's first part overtakes the last one's end
        order.extend(burst)
    start = next((t.timestamp_ms for t in session.turns if t.timestamp_ms is not None), None)
    return session._replace(turns=_timed(order, start, rng))


def _burst(turn: Turn, rng: random.Random) -> List[Turn]:
    """A turn's parts as messages under its speaker label (one part: the turn, noised, with its id)."""
    label, sep, text = turn.content.partition(": ")
    if not sep:
        label, text = "", turn.content
    parts = _parts(text, rng)
    ids = [turn.turn_id] if len(parts) == 1 else ["%s.%d" % (turn.turn_id, k) for k in range(1, len(parts) + 1)]
    return [Turn(i, turn.role, (label + ": " if label else "") + _noised(p, rng), None) for i, p in zip(ids, parts)]


def _parts(text: str, rng: random.Random) -> List[str]:
    out: List[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        pieces = _JOIN.split(sentence, maxsplit=1) if len(sentence.split()) > LONG_WORDS else [sentence]
        if len(pieces) == 2 and rng.random() < P_SPLIT_LONG:
            out.extend(p.strip() for p in pieces if p.strip())
        elif sentence.strip():
            out.append(sentence.strip())
    return out or [text]


def _noised(text: str, rng: random.Random) -> str:
    if rng.random() < P_TYPO:
        known = [(pattern, typo) for pattern, typo in _TYPO_PATTERNS if pattern.search(text)]
        if known:
            pattern, typo = known[rng.randrange(len(known))]
            text = pattern.sub(typo, text, count=1)
    if rng.random() < P_LOWER:
        text = text.lower()
    if rng.random() < P_UNPUNCTUATED:
        text = _FINAL.sub("", text) or text
    if rng.random() < P_EMOJI:
        text = "%s %s" % (text, rng.choice(EMOJI))
    return text


def _timed(order: Sequence[Turn], start: Optional[int], rng: random.Random) -> List[Turn]:
    """Each message its own time: the session's for the first, then a gap by who speaks next."""
    if start is None:
        return list(order)
    out, now = [], start
    for i, turn in enumerate(order):
        if i:
            same = _label_of(order[i - 1]) == _label_of(turn)
            low, high = PAUSE_S if rng.random() < P_PAUSE else (BURST_GAP_S if same else TURN_GAP_S)
            now += rng.randint(low, high) * 1000
        out.append(turn._replace(timestamp_ms=now))
    return out


def _other(turns: Sequence[Turn], i: int) -> Optional[Turn]:
    """The nearest turn of another speaker than turn i's (the one who reacts)."""
    mine = _label_of(turns[i])
    for j in sorted(range(len(turns)), key=lambda j: (abs(j - i), j)):
        if _label_of(turns[j]) != mine:
            return turns[j]
    return None


def _label(turn: Turn) -> str:
    return turn.content.partition(": ")[0] if ": " in turn.content else turn.role


def _label_of(turn: Turn) -> Tuple[str, str]:
    return turn.role, _label(turn)
