"""The signals that search fuses: each scores candidate messages on one explainable ground.

A signal function takes the question (query.Query) and the candidate pool and returns
its signal scores, {message key: score}, higher is better, leaving out messages the
signal says nothing about. Scores are only compared within one signal; fusion.py
turns them into ranks.

A signal's name is what its weight setting is called (`weight_<name>`) and what an
item's `signals` report. Each name is spelled once, here: SIGNALS maps the name of
every signal computed from the question and the pool to its function, and OPTIONS,
ADJACENCY and REPLY name the three that need more (one ranking per answer option; a
first fused order). SIGNAL_NAMES lists them all.

Message keys are (session_key, position in session).
"""
from __future__ import annotations

import datetime
from typing import Callable, Dict, List, Mapping, Sequence, Set, Tuple

from ..storage.views import MESSAGE, SEGMENT, WINDOW
from ..text.numbers import number_values
from .candidates import best_per_message
from .pool import Key, Message, Pool
from .query import FIRST, LAST, WHEN, Query

SignalScores = Dict[Key, float]
Signal = Callable[[Query, Pool], SignalScores]


def message_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message itself."""
    return pool.best_bm25[MESSAGE]


def window_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """Best BM25 of a window around the message: the message in its immediate context.

    A message in a window-less session (one message) stands as its own window, so
    short sessions are not put at a disadvantage.
    """
    return _replies_in_context(pool, _fallback(pool.best_bm25[WINDOW], pool.best_bm25[MESSAGE], pool))


def _replies_in_context(pool: Pool, windows: Dict[Key, float]) -> Dict[Key, float]:
    """`windows` with each message of a turn that follows a question (views.turn_spans()) scored at least
    as the question's best window, where either turn is a burst of messages. A question counts when it
    holds a question word of its own, as in reply().

    In a written conversation the reply is the next message, inside the question's windows; in
    typed chat the asker goes on and the reply comes several messages later, outside them, and
    gets no context of its own (docs/typed_chat.md: the synthetic chat set's Hit@10 0.822 -> 0.889,
    LoCoMo unchanged). Where every turn is one message, nothing changes.
    """
    if not pool.bursts:
        return windows
    asked: Dict[Key, Tuple[float, bool]] = {}  # (session, a turn's last position) -> its best question's window,
    for key in pool.hits:  # and whether the turn is a burst; a question in its own words, as reply() asks
        score = windows.get(key, 0.0)
        start, end = pool.messages[key].turn_span()
        if score > asked.get((key[0], end), (0.0, False))[0] and pool.messages[key].asks:
            asked[(key[0], end)] = (score, start < end)
    out = dict(windows)
    for (session_key, end), (question, burst) in sorted(asked.items()):
        after = pool.messages.get((session_key, end + 1))  # the first message of the turn after
        if after is None:
            continue
        first, last = after.turn_span()
        if burst or first < last:
            for key in ((session_key, p) for p in range(first, last + 1)):
                if key in pool.messages and question > out.get(key, 0.0):
                    out[key] = question
    return out


def segment_bm25(query: Query, pool: Pool) -> Dict[Key, float]:
    """BM25 of the message's segment: the stretch of conversation it belongs to.

    Where no segment holds the message because it would repeat a window or the
    message itself (short sessions), that view stands as its segment.
    """
    return _fallback(pool.best_bm25[SEGMENT], window_bm25(query, pool), pool)


def _fallback(scores: Dict[Key, float], instead: Mapping[Key, float], pool: Pool) -> Dict[Key, float]:
    """`scores`, completed with `instead` for messages of sessions where no view of the kind holds them."""
    covered = {key[0] for key in scores}
    out = dict(scores)
    for key, value in instead.items():
        if key not in out and key[0] not in covered:
            out[key] = value
    return out


def coverage(query: Query, pool: Pool) -> Dict[Key, float]:
    """Share of the question's (idf-weighted) terms the message contains."""
    total = sum(pool.idf.get(t, 0.0) for t in query.terms)
    if total <= 0:
        return {}
    # Summed in question order: a float sum in set order would differ with PYTHONHASHSEED.
    return _by_term_set(pool, lambda present: sum(pool.idf.get(t, 0.0) for t in query.terms if t in present) / total)


def _by_term_set(pool: Pool, value: Callable[[frozenset], float]) -> Dict[Key, float]:
    """{message: value(the question terms it holds)} where that is not 0, each distinct set of terms valued
    once: a pool's messages hold few."""
    values: Dict[frozenset, float] = {}
    out = {}
    for key, present in pool.hits.items():
        got = values.get(present)
        if got is None:
            got = values[present] = value(present)
        if got:
            out[key] = got
    return out


def phrase(query: Query, pool: Pool) -> Dict[Key, float]:
    """How many adjacent pairs of the question's words the message has side by side."""
    if not query.pairs:
        return {}
    wanted = set(query.pairs)
    out = {}
    for key, present in pool.hits.items():
        if len(present) < 2:
            continue  # a pair needs both of its words
        tokens = pool.messages[key].tokens
        found = len(wanted.intersection(zip(tokens, tokens[1:])))
        if found:
            out[key] = float(found)
    return out


def names(query: Query, pool: Pool) -> Dict[Key, float]:
    """The rarity (summed idf) of the names the question mentions, other than the speakers', in the message's text.

    Speakers are named all through a conversation ("Thanks, Dana!"), so their
    names say little about which message answers; other names (places, pets,
    titles) say a lot, a rare one more than a common one.
    """
    speakers = sorted(_speakers(pool))
    wanted = [n for n in query.names if pool.idf.get(n, 0.0) > 0 and not _a_speaker(n, speakers)]
    if not wanted:
        return {}
    # Summed in question order: a float sum in set order would differ with PYTHONHASHSEED.
    return _by_term_set(pool, lambda present: sum(pool.idf[n] for n in wanted if n in present))


def _speakers(pool: Pool) -> Set[str]:
    """The speaker-label terms of the pool's messages."""
    return {t for m in pool.messages.values() for t in m.speaker}


def _a_speaker(name: str, speakers: Sequence[str]) -> bool:
    """Whether a name is a speaker's, or the short form of one ("Mel" of Melanie, "Jo" of Joanna)."""
    return any(s.startswith(name) for s in speakers)


def speaker(query: Query, pool: Pool) -> Dict[Key, float]:
    """1 for messages said by someone the question names."""
    wanted = set(query.terms)
    return {key: 1.0 for key, m in pool.messages.items() if wanted.intersection(m.speaker)}


def numbers(query: Query, pool: Pool) -> Dict[Key, float]:
    """How many of the question's numbers the message states, in whatever form (text/numbers.py).

    "three" meets "3", "18th" meets "eighteenth", "a dozen" meets "12", 十二 meets "12":
    both sides are read as values, the message's from its tokens.
    """
    if not query.numbers:
        return {}
    wanted = set(query.numbers)
    out = {}
    for key in pool.matched:
        stated = wanted.intersection(number_values(pool.messages[key].tokens))
        if stated:
            out[key] = float(len(stated))
    return out


def dated(query: Query, pool: Pool) -> Dict[Key, float]:
    """For questions asking when: 1 for messages whose text states or implies a date."""
    if query.intent != WHEN:
        return {}
    return {key: 1.0 for key, m in pool.messages.items() if m.dated}


_EPOCH = datetime.date(1970, 1, 1).toordinal()
_DAY_MS = 86_400_000
# Said inside the period outranks only naming a date inside it. Measured on LoCoMo dev
# (`python tools/tune.py --show --set weight_period=0.3`, the two scores swapped by hand, before
# a month or season without a year needed "in" or "during" to count):
# 2 and 1 gave objective 0.7065, each alone 0.7056 (said) and 0.7037 (named); adding
# both for a message that is both, 0.7059.
_SAID_INSIDE = 2.0
_NAMED_INSIDE = 1.0


def period(query: Query, pool: Pool) -> Dict[Key, float]:
    """For questions scoped to a period (query.scoped()): 2 for messages said inside it, 1 for those
    whose text names a date inside it ("last Friday", said the week after)."""
    if not query.periods:
        return {}
    out = {}
    for key, m in pool.messages.items():
        if m.timestamp_ms is not None:
            day = m.timestamp_ms // _DAY_MS + _EPOCH
            if any(a <= day <= b for a, b in query.periods):
                out[key] = _SAID_INSIDE
                continue
        if any(a <= s and e <= b for s, e in m.spans for a, b in query.periods):
            out[key] = _NAMED_INSIDE
    return out


def time_order(query: Query, pool: Pool) -> Dict[Key, float]:
    """For "first"/"last" questions: relevant messages by time, earliest or latest first.

    Relevant: those with a BM25 of their own, or else (no message matched) of a window.
    """
    if query.intent not in (FIRST, LAST):
        return {}
    relevant = message_bm25(query, pool) or window_bm25(query, pool)
    stamped = [(pool.messages[k].timestamp_ms, k) for k in relevant if pool.messages[k].timestamp_ms is not None]
    if not stamped:
        return {}
    ordered = sorted(stamped, reverse=query.intent == LAST)
    return {key: float(len(ordered) - i) for i, (_, key) in enumerate(ordered)}


def feedback(query: Query, pool: Pool) -> Dict[Key, float]:
    """Pseudo-relevance feedback (candidates.py): the weight of the best hits' distinctive words a message holds."""
    return dict(pool.feedback)


def related(query: Query, pool: Pool) -> Dict[Key, float]:
    """Words related in meaning to the question's (bridges.py): the idf x strength of those a message holds."""
    return dict(pool.related)


def _as_gathered(field: str) -> Signal:
    """The signal that is the pool's `field` ({message: score}) as candidates.py gathered it: typo, the
    near spellings of question words the memory never holds (bridges.py), their weight in the message;
    meaning, the cosine of its meaning vector with the question's (meaning.py); model, the cosine of the
    operator's own embedder's vectors (model_channel.py)."""
    return lambda query, pool: dict(getattr(pool, field))


def option_signals(query: Query, pool: Pool) -> Dict[str, Dict[Key, float]]:
    """One signal per answer option, named option_signal_name(i): messages by BM25 of that option's words.

    All of them are weighed by the OPTIONS weight.
    """
    return {option_signal_name(i): best_per_message(scores, pool.views)[MESSAGE]
            for i, scores in enumerate(pool.option_view_bm25)}


def options_boost(query: Query, pool: Pool, most: float) -> float:
    """How much the options' signals are to count for more than weight_options: 1 to `most`.

    The mean over the options of the idf of each option's most specific word, over the
    idf of the question's most specific word (speakers' names aside: names()). A
    question of common words ("What does Dana like to do?") says little about which
    message answers it, its options' rare words ("pottery") much; rank fusion alone
    gives a best match on common words as much as one on rare words.
    """
    named = [max(pool.idf.get(t, 0.0) for t in option) for option in query.options]
    named = [value for value in named if value > 0]
    if not named or most <= 1:
        return 1.0
    speakers = _speakers(pool)
    asked = max((pool.idf[t] for t in query.terms if t in pool.idf and t not in speakers), default=0.0)
    specific = sum(named) / len(named)
    return most if asked * most <= specific else max(1.0, specific / asked)


def option_signal_name(index: int) -> str:
    """The name of the signal of answer option `index` (0-based)."""
    return "%s%d" % (_OPTION_PREFIX, index)


def is_option_signal(name: str) -> bool:
    """Whether `name` is the name of an answer option's signal (option_signal_name())."""
    return name.startswith(_OPTION_PREFIX) and name[len(_OPTION_PREFIX):].isdigit()


def adjacency(pool: Pool, order: Sequence[Key], top: int) -> Dict[Key, float]:
    """Neighbours of the `top` best messages, the neighbours of better hits first.

    A question's answer is often the reply to, or the line before, the message that
    matches its words; this brings them back together. In typed chat a speaker sends a
    burst of messages (a turn, views.turn_spans()), so the neighbours are the messages just
    before and after the burst (_neighbours()); where every turn is one message, as in
    written conversations, those are the message's own two.
    """
    out: Dict[Key, float] = {}
    for position, key in enumerate(order[:top]):
        for neighbour in _neighbours(pool.messages[key]):
            if neighbour in pool.messages and neighbour not in out:
                out[neighbour] = float(top - position)
    return out


def _neighbours(message: Message) -> List[Key]:
    """A message's neighbours: the messages on either side of its turn (the last of the turn before, the
    first of the turn after). Its own speaker's other messages of the burst are not: measured, counting
    them too cost the chat-style evaluations (docs/typed_chat.md)."""
    session_key = message.key[0]
    first, last = message.turn_span()
    return [(session_key, first - 1), (session_key, last + 1)]


def reply(pool: Pool, order: Sequence[Key], top: int) -> Dict[Key, float]:
    """Replies to the questions among the `top` best messages, the replies to better hits first.

    A message that asks what the question asks ("Where did you go?") is answered by the
    other speaker's next turn, which need share no word with either ("Lisbon, with Priya.").
    A turn is a run of one speaker's messages (views.turn_spans()): in typed chat the asker
    often sends more after the question ("so jealous", "tell me everything") and the reply
    spans several messages, so every message of the turn after the asker's is a reply
    (_answers()); in a written conversation, a turn a message, that is the next message. A generic
    neighbour (adjacency()) is only sometimes the answer, a reply by someone else usually.
    Only a message that matches the question in its own words (a message BM25) counts as
    asking it: on the synthetic suite, replies to messages that were among the best for
    their window's words cost 2 of 203 questions their hit@1. Nor does one that shares
    with the question only the name of whoever replies: "Hi Ana, got a minute?" matches
    every question about Ana, and its reply is small talk (_asks_more_than_name()). Nor is
    a next message that asks something itself taken for the answer: "How was Lisbon?" is
    more often met by "Have you been?" or "Why do you ask?" than by an answer with a question
    after it (LoCoMo dev, `python tools/tune.py --show`: objective 0.7257 -> 0.7277, hit@1 0.489
    -> 0.494, hit@10 0.857 -> 0.858, mrr 0.613 -> 0.615).
    """
    own_words = pool.best_bm25[MESSAGE]
    out: Dict[Key, float] = {}
    for position, key in enumerate(order[:top]):
        asked = pool.messages[key]
        if key not in own_words or not asked.asks:
            continue  # among the best only for its neighbours' words: not the question asked
        for answer in _answers(pool, asked):
            if (not answer.asks and answer.key not in out
                    and _another_speaker(asked, answer) and _asks_more_than_name(pool, asked, answer)):
                out[answer.key] = float(top - position)
    return out


def _answers(pool: Pool, asked: Message) -> List[Message]:
    """The messages of the turn after the one `asked` ends (views.turn_spans()): the other speaker's reply,
    however many messages it spans and however many more the asker sent first."""
    session_key = asked.key[0]
    first = pool.messages.get((session_key, asked.turn_span()[1] + 1))
    if first is None:
        return []
    start, end = first.turn_span()
    return [pool.messages[(session_key, p)] for p in range(start, end + 1)
            if (session_key, p) in pool.messages]


def _asks_more_than_name(pool: Pool, asked: Message, answer: Message) -> bool:
    """Whether `asked` holds a question term other than the words of `answer`'s speaker's name.

    A message that matches the question only by addressing the one who replies
    ("Ana, how are you?" for "Where does Ana work now?") does not ask what it asks.
    """
    return bool(pool.hits.get(asked.key, frozenset()).difference(answer.speaker))


def _another_speaker(first: Message, second: Message) -> bool:
    """Whether two messages are said by different speakers (unlabelled messages may be anyone's)."""
    return not first.speaker or not second.speaker or first.speaker != second.speaker


# The registry: every signal computed from the question and the pool alone, by name. The
# names are the weights' (weight_<name>): "window" and "segment" name signals, not view kinds.
SIGNALS: Mapping[str, Signal] = {
    "bm25": message_bm25,
    "window": window_bm25,
    "segment": segment_bm25,
    "coverage": coverage,
    "phrase": phrase,
    "names": names,
    "speaker": speaker,
    "numbers": numbers,
    "dated": dated,
    "period": period,
    "time": time_order,
    "feedback": feedback,
    "related": related,
    "typo": _as_gathered("typo"),
    "meaning": _as_gathered("meaning"),
    "model": _as_gathered("model"),
}
MEANING = "meaning"  # its weight in the head is gated (meaning.gate())
MODEL = "model"  # the operator's own embedder's nearness, fused with a k of its own (model_channel.py)
OPTIONS = "options"  # the weight of every answer option's signal (option_signals())
ADJACENCY = "adjacency"  # neighbours of the best messages of a first fused order (adjacency())
REPLY = "reply"  # replies to the questions among the best messages of a first fused order (reply())
_OPTION_PREFIX = "option"
SIGNAL_NAMES: Tuple[str, ...] = tuple(SIGNALS) + (OPTIONS, ADJACENCY, REPLY)  # every signal weight's name
