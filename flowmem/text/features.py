"""What of a message is indexed and shown: its speaker, its text's tokens, the dates it means.

derive() is the one step from a message's stored text to what the index holds of it;
the storage layer calls it at write time and when it rebuilds an index, with the
database's index settings. shown() is the text results show. Both read only the first
MAX_MESSAGE_CHARS characters of a message, which is stored whole.
"""
from __future__ import annotations

import json
from typing import List, NamedTuple, Optional, Protocol

from . import meaning, timeexpr
from .stem import stem
from .tokenize import split_speaker, tokenize


class TextSettings(Protocol):
    """The index settings derive() reads (storage's ViewSettings has them, among others)."""

    @property
    def stem(self) -> bool: ...  # index Porter stems, not surface words

    @property
    def split_speakers(self) -> bool: ...  # a leading "Name: " label is the speaker, not text

    @property
    def resolve_times(self) -> bool: ...  # resolve and index the dates messages mean (timeexpr.py)


class Derived(NamedTuple):
    speaker: str  # the speaker label's tokens, space-separated
    tokens: List[str]  # the text's tokens, then date tokens
    times: str  # JSON list of [expression, first day, last day, relative?]
    meaning: Optional[bytes] = None  # the text's meaning vector (meaning.py), None if no word of it has one


# What of a message is indexed and shown: its first MAX_MESSAGE_CHARS characters (it is stored
# whole). Conversation turns are far shorter (LoCoMo's longest: 450 characters); a message of
# megabytes once took minutes to index and made one search hold over a gigabyte.
MAX_MESSAGE_CHARS = 32_000


def shown(content: str) -> str:
    """A message's text as indexed and shown: whole, or its first MAX_MESSAGE_CHARS and a note."""
    if len(content) <= MAX_MESSAGE_CHARS:
        return content
    return "%s [... %d more characters not shown]" % (content[:MAX_MESSAGE_CHARS], len(content) - MAX_MESSAGE_CHARS)


def derive(content: str, timestamp_ms: Optional[int], settings: TextSettings) -> Derived:
    """What is indexed of a message: its speaker, its text's tokens, and the dates it means.

    Only the first MAX_MESSAGE_CHARS characters are read.

    With `resolve_times`, dates written in the text and relative ones ("yesterday")
    resolved against the message's own day are kept (timeexpr.py), and they and the
    message's own day are indexed as date tokens, so a question naming a day, month
    or year meets the messages of that time.
    """
    content = content[:MAX_MESSAGE_CHARS]
    speaker, text = split_speaker(content) if settings.split_speakers else ("", content)
    tokens = tokenize(text, settings.stem)
    vector = meaning.message_vector(tokens if settings.stem else map(stem, tokens))
    times: List[timeexpr.Resolution] = []
    if settings.resolve_times:
        day = timeexpr.day_of(timestamp_ms)
        times = timeexpr.resolve(text, day)
        if day is not None:
            tokens += timeexpr.tokens(day, day)
        for r in times:
            tokens += timeexpr.tokens(r.start, r.end)
    encoded = json.dumps([[r.expression, r.start.isoformat(), r.end.isoformat(), r.relative] for r in times],
                         ensure_ascii=False) if times else ""
    return Derived(" ".join(tokenize(speaker, settings.stem)), tokens, encoded, vector)
