"""A session's row as an Add finds it: made on its first Add, or placed where an import's ids say.

A new session takes the first free attempt of its tag from its user's tag floor
(ids.free_attempt()), which every deleted session of the user has raised past its own: no
id of a deleted session is given again. The floor is the user's own, so a user's ids (and
the order of their ties, broken by tag: retrieval/pipeline.py) never depend on what other
users did. A user removed with their last session (delete-session, or forgetting their
last message) leaves their floor in `retired_users` until they come back; a user deleted
whole (delete-user) leaves nothing, floor included, so a user of that id sent again may be
given the ids the deleted one had. An Add's messages get the session's next numbers, each
past the last it gave (`deleted_messages` counts the numbers skipped by deletions).

An imported Add may carry its messages' ids (an export writes them, portable.py): it is
then a Placement, and its messages keep those ids, so a memory moved or restored answers
with the ids it had. A placed session that is new here takes the tag the ids name, which
must be one of its user and session's (and not another session's); one that exists must
have that tag, and the numbers must come after every number it gave. Anything else is
refused (InvalidField naming the first message's id), inside the Add's transaction, so
nothing of it is written.
"""
from __future__ import annotations

import sqlite3
from typing import NamedTuple, Optional, Sequence, Tuple

from ..errors import InvalidField
from . import ids

MAX_IMPORTED_ATTEMPT = 100_000  # how far an imported tag is looked for among its session's attempts


class Placement(NamedTuple):
    """Where an imported Add's messages go: their session's tag, each message's number, and the last
    number the session gave (more than the last message's when later ones were deleted)."""

    tag: str
    numbers: Tuple[int, ...]
    given: int


class SessionRow(NamedTuple):
    key: int
    n_messages: int
    segment_start: int  # where its last segment starts (writer.sync_views())
    deleted: int  # its messages' numbers skipped: a message's number is its position plus those before it
    tag: str

    def next_number(self) -> int:
        """The number the session's next message gets."""
        return self.n_messages + self.deleted + 1


def session_row(conn: sqlite3.Connection, user_key: int, user_id: str, session_id: str,
                placement: Optional[Placement] = None) -> SessionRow:
    """The session's row, made if new: with the next free tag from the floor, or `placement`'s."""
    row = conn.execute(
        "SELECT session_key, n_messages, segment_start, deleted_messages, tag FROM sessions"
        " WHERE user_key = ? AND session_id = ?", (user_key, session_id)).fetchone()
    if row is not None:
        found = SessionRow(*row)
        if placement is not None:
            _check_placed(found, placement)
        return found
    if placement is None:
        floor = conn.execute("SELECT tag_floor FROM users WHERE user_key = ?", (user_key,)).fetchone()[0]
        attempt = ids.free_attempt(user_id, session_id, lambda tag: _taken(conn, tag), floor)
    else:
        attempt = _imported_attempt(conn, user_id, session_id, placement.tag)
    tag = ids.session_tag(user_id, session_id, attempt)
    key = conn.execute("INSERT INTO sessions (user_key, session_id, tag, attempt) VALUES (?, ?, ?, ?)",
                       (user_key, session_id, tag, attempt)).lastrowid
    if key is None:  # sqlite3 sets it after every INSERT that made a row
        raise RuntimeError("INSERT made no session row")
    return SessionRow(key, 0, 1, 0, tag)


def numbers(session: SessionRow, count: int, placement: Optional[Placement]) -> Sequence[int]:
    """The numbers of an Add's `count` messages appended to `session`."""
    if placement is not None:
        return placement.numbers
    first = session.next_number()
    return range(first, first + count)


def retire(conn: sqlite3.Connection, session_key: int) -> None:
    """A session about to be deleted: raise its user's tag floor past its attempt, so that its tag is
    never given again."""
    user_key, attempt = conn.execute("SELECT user_key, attempt FROM sessions WHERE session_key = ?",
                                     (session_key,)).fetchone()
    conn.execute("UPDATE users SET tag_floor = max(tag_floor, ?) WHERE user_key = ?", (attempt + 1, user_key))


def keep_floor(conn: sqlite3.Connection, user_key: int) -> None:
    """A user about to be removed with their last session: keep their tag floor for their return."""
    conn.execute("INSERT OR REPLACE INTO retired_users (user_id, tag_floor) SELECT user_id, tag_floor FROM users"
                 " WHERE user_key = ? AND tag_floor > 0", (user_key,))


def returned_floor(conn: sqlite3.Connection, user_id: str) -> int:
    """The tag floor a user created now starts with: what they left when removed with their last
    session (taken out of `retired_users`), else 0."""
    row = conn.execute("SELECT tag_floor FROM retired_users WHERE user_id = ?", (user_id,)).fetchone()
    if row is None:
        return 0
    forget_floor(conn, user_id)
    return row[0]


def forget_floor(conn: sqlite3.Connection, user_id: str) -> None:
    """Nothing of `user_id` kept (delete-user)."""
    conn.execute("DELETE FROM retired_users WHERE user_id = ?", (user_id,))


def _taken(conn: sqlite3.Connection, tag: str) -> bool:
    return conn.execute("SELECT 1 FROM sessions WHERE tag = ?", (tag,)).fetchone() is not None


def _refused(reason: str) -> InvalidField:
    return InvalidField("messages[0].id", reason)


def _check_placed(session: SessionRow, placement: Placement) -> None:
    if placement.tag != session.tag:
        raise _refused("names session tag %s, but this session's messages here have the tag %s: its ids cannot "
                       "be kept (import it into a memory without this session)" % (placement.tag, session.tag))
    if placement.numbers[0] < session.next_number():
        raise _refused("names message number %d, but this session has given numbers up to %d here"
                       % (placement.numbers[0], session.next_number() - 1))


def _imported_attempt(conn: sqlite3.Connection, user_id: str, session_id: str, tag: str) -> int:
    """The attempt of session_tag() that `tag` is for this user and session: stored with the session,
    so that deleting it here raises the floor past it (retire()) and it never gets that tag again."""
    if _taken(conn, tag):
        raise _refused("names session tag %s, which another session holds here" % tag)
    attempt = next((a for a in range(MAX_IMPORTED_ATTEMPT) if ids.session_tag(user_id, session_id, a) == tag), None)
    if attempt is None:
        raise _refused("names session tag %s, which is not a tag of user %r's session %r"
                       % (tag, user_id, session_id))
    return attempt
