"""Public ids: a session's tag, and the message and view ids made from it.

Ids are readable, stable across restarts and rebuilds, and unique in the database:
a session's tag is derived from (user_id, session_id) (session_tag()), a message's
id is its session's tag and its number (its position when added), a view's its tag and its
range. A deleted id is never given again: a deleted message's number is skipped by the
session's later messages, and a session deleted and sent again takes the next attempt of
its tag (free_attempt()).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, List

from . import views


def session_tag(user_id: str, session_id: str, attempt: int = 0) -> str:
    """A short stable name for a user's session, used in message and view ids.

    The first 16 hex digits of sha256(json.dumps([user_id, session_id])) (ASCII JSON):
    no two pairs share an input, so two users' sessions of one session_id get
    different tags. `attempt` 1, 2, ... appends itself to the array: the next
    candidates when a tag is already taken (free_tag()).
    """
    key: List[Any] = [user_id, session_id] + ([attempt] if attempt else [])
    return hashlib.sha256(json.dumps(key).encode("ascii")).hexdigest()[:16]


def free_tag(user_id: str, session_id: str, taken: Callable[[str], bool], start: int = 0) -> str:
    """The first candidate tag of a session (session_tag()) from attempt `start` on that `taken` says
    no other session holds."""
    return session_tag(user_id, session_id, free_attempt(user_id, session_id, taken, start))


def free_attempt(user_id: str, session_id: str, taken: Callable[[str], bool], start: int = 0) -> int:
    """The attempt of free_tag(): the first from `start` whose tag `taken` says is free.

    A session created anew starts at the database's tag floor (writer.py), which every deleted
    session raises past its own attempt: a session deleted and sent again gets a tag no earlier
    session of it had, so no id of its deleted messages is ever given again."""
    attempt = start
    while taken(session_tag(user_id, session_id, attempt)):
        attempt += 1
    return attempt


def anchored_id(body_id: str, first_message_id: str) -> str:
    """The request_id of an Add whose id `body_id` names its body only (an SDK call that gave none),
    stored as its first message `first_message_id`: `sdk-` and 32 hex digits of the sha256 of the
    two. No message id is given twice, so no two such Adds share one: the same words said again
    later are a new Add."""
    return "sdk-" + hashlib.sha256(("%s@%s" % (body_id, first_message_id)).encode("utf-8")).hexdigest()[:32]


def message_id(tag: str, seq: int) -> str:
    return "m-%s-%d" % (tag, seq)


def view_id(kind: str, tag: str, first: int, last: int) -> str:
    """The public id of a view: a message view's id is its message's id."""
    if kind == views.MESSAGE:
        return message_id(tag, first)
    return "%s-%s-%d-%d" % (kind[0], tag, first, last)
