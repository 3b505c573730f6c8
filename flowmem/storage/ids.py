"""Public ids: a session's tag, and the message and view ids made from it.

Ids are readable, stable across restarts and rebuilds, and unique in the database:
a session's tag is derived from (user_id, session_id) (session_tag()), a message's
id is its session's tag and its position, a view's its tag and its range.
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


def free_tag(user_id: str, session_id: str, taken: Callable[[str], bool]) -> str:
    """The first candidate tag of a session (session_tag()) that `taken` says no other session holds."""
    attempt = 0
    while taken(session_tag(user_id, session_id, attempt)):
        attempt += 1
    return session_tag(user_id, session_id, attempt)


def message_id(tag: str, seq: int) -> str:
    return "m-%s-%d" % (tag, seq)


def view_id(kind: str, tag: str, first: int, last: int) -> str:
    """The public id of a view: a message view's id is its message's id."""
    if kind == views.MESSAGE:
        return message_id(tag, first)
    return "%s-%s-%d-%d" % (kind[0], tag, first, last)
