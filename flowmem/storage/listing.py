"""The management reads: users, a user's sessions and messages, one message, a user's Adds.

Small functions over one read snapshot's connection (Reader.conn), each returning rows;
Memory turns them into pages. Every read of one user's data starts from that user's
key and reaches only their rows through the existing indexes: sessions through
UNIQUE (user_key, session_id), messages through their primary key (session_key, seq),
the Adds' records through theirs (user_key, request_id). So a user's listing costs
what that user holds, however many others there are; messages are read session by
session in Python, not by one join, so that SQLite can never choose to walk the
messages of every user in rowid or key order (CROSS JOIN pins the join order where
there is one).

Positions are what cursors hold: a user's key, a session's key, (session key,
position) for a message, a message's rowid for an Add. User and session keys are
AUTOINCREMENT, never reused, and positions in a session only grow, so "after this
position" stays meaningful while rows are added. A new message's rowid is above every
message there is, but once the newest messages are deleted (delete-session, delete-user)
the next ones may take their rowids again: an export paged across such a deletion can
miss Adds stored after it (export again, or import twice: importing is idempotent).
"""
from __future__ import annotations

import sqlite3
from typing import List, NamedTuple, Optional, Tuple

from .reader import message_conditions

Position = Tuple[int, int]  # a message's (session key, position in the session)


class ListedMessage(NamedTuple):
    session_key: int
    session_id: str
    tag: str
    seq: int
    role: str
    content: str
    timestamp_ms: Optional[int]
    request_id: str


class StoredAdd(NamedTuple):
    """One Add as stored: a run of one session's messages with one request_id, inserted together."""

    rowid: int  # its first message's rowid: where it stands in the order Adds were stored
    last_rowid: int  # its last message's: what a cursor holds, so that every message after it is a whole Add's
    session_id: str
    request_id: str
    messages: List[Tuple[str, str, Optional[int]]]  # (role, content, timestamp ms) each, in order


def users(conn: sqlite3.Connection, after: int, limit: int) -> List[Tuple[int, str, int, int]]:
    """(user key, user id, sessions, messages) of the users after key `after`, in creation order."""
    return conn.execute(
        "SELECT u.user_key, u.user_id, count(s.session_key), coalesce(sum(s.n_messages), 0)"
        " FROM users u LEFT JOIN sessions s ON s.user_key = u.user_key WHERE u.user_key > ?"
        " GROUP BY u.user_key ORDER BY u.user_key LIMIT ?", (after, limit)).fetchall()


def sessions(conn: sqlite3.Connection, user_key: int, after: int,
             limit: int) -> List[Tuple[int, str, int, Optional[int], Optional[int]]]:
    """(session key, session id, messages, earliest and latest timestamp) of the user's sessions
    after key `after`, in creation order. The times are the least and greatest known (a message
    may have none), read through the session's primary key range."""
    return conn.execute(
        "SELECT s.session_key, s.session_id, s.n_messages,"
        " (SELECT min(timestamp_ms) FROM messages m WHERE m.session_key = s.session_key),"
        " (SELECT max(timestamp_ms) FROM messages m WHERE m.session_key = s.session_key)"
        " FROM sessions s WHERE s.user_key = ? AND s.session_key > ? ORDER BY s.session_key LIMIT ?",
        (user_key, after, limit)).fetchall()


def session_key(conn: sqlite3.Connection, user_key: int, session_id: str) -> Optional[int]:
    """The key of the user's session `session_id`, None if they have none of that id."""
    row = conn.execute("SELECT session_key FROM sessions WHERE user_key = ? AND session_id = ?",
                       (user_key, session_id)).fetchone()
    return row[0] if row else None


_MESSAGE_COLUMNS = "m.session_key, s.session_id, s.tag, m.seq, m.role, m.content, m.timestamp_ms, m.request_id"


def messages(conn: sqlite3.Connection, user_key: int, session: Optional[int], since: Optional[int],
             until: Optional[int], after: Optional[Position], limit: int, descending: bool) -> List[ListedMessage]:
    """Up to `limit` of the user's messages after position `after` (None: from the first), by
    session creation then position (`descending`: the reverse), only session key `session` if
    given (read alone: session_key() finds it), only those timed in [since, until) if either is
    given (an untimed one then never, as under a search's time filter: reader.message_conditions())."""
    order = "DESC" if descending else "ASC"
    keys = [session] if session is not None else [k for (k,) in conn.execute(
        "SELECT session_key FROM sessions WHERE user_key = ? ORDER BY session_key " + order, (user_key,))]
    if after is not None:
        keys = [k for k in keys if (k <= after[0] if descending else k >= after[0])]
    tests, params = message_conditions(since, until, None)
    timed = " AND " + tests if tests else ""
    out: List[ListedMessage] = []
    for key in keys:
        if len(out) >= limit:
            break
        start = after[1] if after is not None and key == after[0] else (2 ** 62 if descending else 0)
        # s.user_key: a session key given is read only if it is the user's.
        out += map(ListedMessage._make, conn.execute(
            "SELECT %s FROM sessions s CROSS JOIN messages m ON m.session_key = s.session_key"
            " WHERE s.session_key = ? AND s.user_key = ? AND m.seq %s ?%s ORDER BY m.seq %s LIMIT ?"
            % (_MESSAGE_COLUMNS, "<" if descending else ">", timed, order),
            [key, user_key, start, *params, limit - len(out)]))
    return out


def message(conn: sqlite3.Connection, user_key: int, tag: str, seq: int) -> Optional[ListedMessage]:
    """The message at position `seq` of the session tagged `tag`, if that session is the user's."""
    row = conn.execute(
        "SELECT %s FROM sessions s CROSS JOIN messages m ON m.session_key = s.session_key"
        " WHERE s.tag = ? AND s.user_key = ? AND m.seq = ?" % _MESSAGE_COLUMNS, (tag, user_key, seq)).fetchone()
    return ListedMessage._make(row) if row else None


def adds(conn: sqlite3.Connection, user_key: int, after: int, limit: int) -> List[StoredAdd]:
    """Up to `limit` of the user's Adds stored after the message with rowid `after`, in the order they
    were stored (their first messages' rowids).

    An Add's messages are inserted together (writer.add()): they are consecutive rowids and
    positions of one session with one request_id, and every message after an Add's last is
    another Add's. Each session is read from its first message after `after` on (found through
    its primary key index, which holds the rowid), and only until it has given `limit` Adds;
    a session whose first message comes after the `limit`-th Add found so far ends the walk,
    since sessions begin in key order. So a page costs a lookup per session of the user and the
    page's messages, not the user's whole history.
    """
    found: List[StoredAdd] = []
    for key, session_id in conn.execute(
            "SELECT session_key, session_id FROM sessions WHERE user_key = ? ORDER BY session_key",
            (user_key,)).fetchall():
        if len(found) >= limit:
            first = conn.execute("SELECT rowid FROM messages WHERE session_key = ? ORDER BY seq LIMIT 1",
                                 (key,)).fetchone()
            if first is not None and first[0] > found[limit - 1].rowid:
                break
        start = conn.execute("SELECT seq FROM messages WHERE session_key = ? AND rowid > ? ORDER BY seq LIMIT 1",
                             (key, after)).fetchone()
        if start is None:
            continue
        runs: List[StoredAdd] = []
        for rowid, request_id, role, content, timestamp_ms in conn.execute(
                "SELECT rowid, request_id, role, content, timestamp_ms FROM messages WHERE session_key = ? AND seq >= ?"
                " ORDER BY seq", (key, start[0])):
            if runs and runs[-1].request_id == request_id:
                runs[-1] = runs[-1]._replace(last_rowid=rowid)
            elif len(runs) == limit:
                break
            else:
                runs.append(StoredAdd(rowid, rowid, session_id, request_id, []))
            runs[-1].messages.append((role, content, timestamp_ms))
        found = sorted(found + runs)[:limit]
    return found
