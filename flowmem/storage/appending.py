"""An Add's rows: its user, its session, its messages, their metadata and views, its idempotency record.

add() runs inside the Store's write transaction (Store.writing()), on the writer
connection, like everything in writer.py, whose sync_views() brings the session's views
and their index entries up to date with the messages appended. The session's row, and
the numbers its messages' ids get, are session_rows.py's.
"""
from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple, Optional, Sequence

from ..errors import Conflict, FlowmemError
from ..text.features import Derived
from . import ids, metadata_index
from .rows import NewMessage, lookup_user_key
from .session_rows import Placement, numbers, returned_floor, session_row
from .settings import ViewSettings
from .writer import insert_row, sync_views


class Stored(NamedTuple):
    """What one Add did: `new` False when its (request_id, user) was stored before and nothing was
    written; `fingerprint` then the earlier Add's (None when it predates fingerprints); the
    `request_id` it is stored under, and its user's key."""

    new: bool
    fingerprint: Optional[str] = None
    request_id: str = ""
    user_key: int = 0


class Refused(Exception):
    """An Add of Store.add_many()'s that the writer refused (`error`, an InvalidField or a Conflict),
    the `position`-th: its transaction is rolled back whole."""

    def __init__(self, position: int, error: FlowmemError):
        super().__init__(error.reason)
        self.position, self.error = position, error


def add(conn: sqlite3.Connection, settings: ViewSettings, user_id: str, session_id: str, request_id: str,
        messages: Sequence[NewMessage], derived: Sequence[Derived], fingerprint: Optional[str] = None,
        anchored: bool = False, placement: Optional[Placement] = None, user_key: Optional[int] = None) -> Stored:
    """Store one Add (its messages' index features `derived` with `settings`, and the digest of its
    body `fingerprint`); Stored(False, the first one's fingerprint) if stored before.

    `anchored`: `request_id` names the Add's body only (an SDK call that gave none): the id
    stored is anchored_id() of it and of the id its first message gets, so the same words
    said again later are a new Add. `placement`: the ids an imported Add's messages keep
    (session_rows.py). `user_key`: the key the user had when an import began (Conflict if the user
    was deleted since: a delete wins over the rest of an import)."""
    user_key = _user_key(conn, user_id, user_key)
    session = None
    if anchored:
        session = session_row(conn, user_key, user_id, session_id)
        request_id = ids.anchored_id(request_id, ids.message_id(session.tag, session.next_number()))
    seen = conn.execute(
        "SELECT fingerprint FROM requests WHERE user_key = ? AND request_id = ?", (user_key, request_id)
    ).fetchone()
    if seen:
        return Stored(False, seen[0], request_id, user_key)
    session = session or session_row(conn, user_key, user_id, session_id, placement)
    n_before = session.n_messages
    n = n_before + len(messages)
    given = numbers(session, len(messages), placement)
    rows = [(session.key, n_before + i + 1, m.role, m.content, m.timestamp_ms, request_id, d.speaker,
             " ".join(d.tokens), d.times, d.meaning, m.metadata, int(m.dated_on_receipt),
             number if number != n_before + i + 1 else None)
            for i, (m, d, number) in enumerate(zip(messages, derived, given))]
    conn.executemany(
        "INSERT INTO messages (session_key, seq, role, content, timestamp_ms, request_id, speaker, tokens, times,"
        " meaning, metadata, dated_on_receipt, number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    last = given[-1] if placement is None else placement.given
    if last != n + session.deleted:  # an import's ids skipped numbers: the next message's comes after them
        conn.execute("UPDATE sessions SET deleted_messages = ? WHERE session_key = ?", (last - n, session.key))
    tagged = [(row[1], row[10]) for row in rows if row[10] is not None]  # (position, metadata)
    conn.executemany(metadata_index.INSERT_SQL, [
        r for seq, text in tagged for r in metadata_index.index_rows(user_key, session.key, seq, text)])
    sync_views(conn, settings, user_key, session.key, n_before, n, session.segment_start)
    conn.execute(
        "INSERT INTO requests (user_key, request_id, session_key, n_messages, received_ms, fingerprint)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (user_key, request_id, session.key, len(messages), int(time.time() * 1000), fingerprint),
    )
    return Stored(True, None, request_id, user_key)


def _user_key(conn: sqlite3.Connection, user_id: str, expected: Optional[int] = None) -> int:
    """The user's key, the user created if new; Conflict if it is not `expected` (when given)."""
    key = lookup_user_key(conn, user_id)
    if expected is not None and key != expected:
        raise Conflict("user %r was deleted while this import ran: a delete wins, and the import's "
                       "later records are not stored" % user_id)
    if key is not None:
        return key
    return insert_row(conn, "INSERT INTO users (user_id, tag_floor) VALUES (?, ?)",
                      (user_id, returned_floor(conn, user_id)))


