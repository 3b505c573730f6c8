"""The management reads: users, a user's sessions and messages, one message, a user's Adds.

Small functions over one read snapshot's connection (Reader.conn), each returning a
page of rows and whether more follow; Memory turns them into answers. Every read of one
user's data starts from that user's key and reaches only their rows through the existing
indexes: sessions through UNIQUE (user_key, session_id), messages through their primary
key (session_key, seq), the Adds' records through theirs (user_key, request_id). So a
user's listing costs what that user holds, however many others there are; messages are
read session by session in Python, not by one join, so that SQLite can never choose to
walk the messages of every user in rowid or key order (CROSS JOIN pins the join order
where there is one).

Positions are what cursors hold: a user's key, a session's key, (session key,
position) for a message, a message's rowid for an Add. User and session keys are
AUTOINCREMENT, never reused, and positions in a session only grow, so "after this
position" stays meaningful while rows are added. A new message's rowid is above every
message there is, but once the newest messages are deleted (delete-session, delete-user)
the next ones may take their rowids again: an export paged across such a deletion can
miss Adds stored after it (export again, or import twice: importing is idempotent).

A page is bounded twice: `limit` rows, and `max_bytes` of the text its rows hold (UTF-8
bytes of their ids, roles and contents: what its answer is made of), so that what one
listing holds in memory is set by settings, not by what users stored. take() reads rows
one at a time and stops at the first that would break either bound; that row is dropped
and tells there is a next page. A page always holds its first row, however large (one
row is bounded by the largest Add body), so a listing always gets on. Rows are read from
open statements, never fetched whole: a page of big rows never has more than one row
past the page in memory.
"""
from __future__ import annotations

import bisect
import contextlib
import sqlite3
from typing import Callable, Generator, Iterable, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from . import metadata_filter, metadata_index
from .ids import message_id
from .metadata_index import Pairs
from .reader import message_conditions

Position = Tuple[int, int]  # a message's (session key, position in the session)
T = TypeVar("T")
UserRow = Tuple[int, str, int, int]
SessionRow = Tuple[int, str, int, Optional[int], Optional[int]]


class ListedMessage(NamedTuple):
    session_key: int
    session_id: str
    tag: str
    seq: int
    role: str
    content: str
    timestamp_ms: Optional[int]
    request_id: str
    number: int  # the position its id names (rows.MessageRow.number)
    metadata: Optional[str]  # stored metadata (metadata_index.py), None for none
    dated_on_receipt: int  # 1: timestamp_ms is when its Add arrived (it gave none)


class StoredAdd(NamedTuple):
    """One Add as stored: a run of one session's messages with one request_id, inserted together."""

    rowid: int  # its first message's rowid: where it stands in the order Adds were stored
    last_rowid: int  # its last message's: what a cursor holds, so that every message after it is a whole Add's
    session_id: str
    request_id: str
    # (role, content, timestamp ms, metadata, its id, dated on receipt) each
    messages: List[Tuple[str, str, Optional[int], Optional[str], str, bool]]
    # the last number its session gave, when it holds the session's last message and a later one was deleted
    numbers_given: Optional[int] = None


def text_bytes(*texts: Optional[str]) -> int:
    """The UTF-8 bytes of `texts` together (None counts nothing)."""
    # isascii() is a flag CPython keeps: a long ASCII text is measured without being encoded.
    return sum(len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass")) for t in texts if t)


def _past(rows: int, total_bytes: int, limit: int, max_bytes: int) -> bool:
    """Whether `rows` rows of `total_bytes` in all are past a page: more than `limit`, or more than one
    and over `max_bytes`."""
    return rows > limit or (rows > 1 and total_bytes > max_bytes)


def take(rows: Iterable[T], limit: int, max_bytes: int, size: Callable[[T], int]) -> Tuple[List[T], bool]:
    """The page that `rows` (in order) begin with, read one at a time, and whether a row is left after it."""
    page: List[T] = []
    total = 0
    for row in rows:
        total += size(row)
        if _past(len(page) + 1, total, limit, max_bytes):
            return page, True
        page.append(row)
    return page, False


def _page_length(rows: Sequence[T], limit: int, max_bytes: int, size: Callable[[T], int]) -> int:
    """How many of `rows` (in order, all in memory) the page they begin with holds."""
    total = 0
    for n, row in enumerate(rows):
        total += size(row)
        if _past(n + 1, total, limit, max_bytes):
            return n
    return len(rows)


def _user_bytes(row: UserRow) -> int:
    return text_bytes(row[1])


def _session_bytes(row: SessionRow) -> int:
    return text_bytes(row[1])


def _message_bytes(row: ListedMessage) -> int:
    return text_bytes(row.session_id, row.tag, row.role, row.content, row.request_id, row.metadata)


def _add_bytes(add: StoredAdd) -> int:
    return text_bytes(add.session_id, add.request_id) + sum(
        text_bytes(role, text, metadata, message_id) for role, text, _, metadata, message_id, _ in add.messages)


def users(conn: sqlite3.Connection, after: int, limit: int, max_bytes: int) -> Tuple[List[UserRow], bool]:
    """A page of (user key, user id, sessions, messages) of the users after key `after`, in creation
    order, and whether more follow."""
    with contextlib.closing(conn.execute(
            "SELECT u.user_key, u.user_id, count(s.session_key), coalesce(sum(s.n_messages), 0)"
            " FROM users u LEFT JOIN sessions s ON s.user_key = u.user_key WHERE u.user_key > ?"
            " GROUP BY u.user_key ORDER BY u.user_key LIMIT ?", (after, limit + 1))) as rows:
        return take(rows, limit, max_bytes, _user_bytes)


def sessions(conn: sqlite3.Connection, user_key: int, after: int, limit: int,
             max_bytes: int) -> Tuple[List[SessionRow], bool]:
    """A page of (session key, session id, messages, earliest and latest timestamp) of the user's
    sessions after key `after`, in creation order, and whether more follow. The times are the least
    and greatest known (a message may have none), read through the session's primary key range."""
    with contextlib.closing(conn.execute(
            "SELECT s.session_key, s.session_id, s.n_messages,"
            " (SELECT min(timestamp_ms) FROM messages m WHERE m.session_key = s.session_key),"
            " (SELECT max(timestamp_ms) FROM messages m WHERE m.session_key = s.session_key)"
            " FROM sessions s WHERE s.user_key = ? AND s.session_key > ? ORDER BY s.session_key LIMIT ?",
            (user_key, after, limit + 1))) as rows:
        return take(rows, limit, max_bytes, _session_bytes)


def session_key(conn: sqlite3.Connection, user_key: int, session_id: str) -> Optional[int]:
    """The key of the user's session `session_id`, None if they have none of that id."""
    row = conn.execute("SELECT session_key FROM sessions WHERE user_key = ? AND session_id = ?",
                       (user_key, session_id)).fetchone()
    return row[0] if row else None


_MESSAGE_COLUMNS = ("m.session_key, s.session_id, s.tag, m.seq, m.role, m.content, m.timestamp_ms, m.request_id,"
                    " coalesce(m.number, m.seq), m.metadata, m.dated_on_receipt")


def messages(conn: sqlite3.Connection, user_key: int, session: Optional[int], since: Optional[int],
             until: Optional[int], after: Optional[Position], limit: int, max_bytes: int,
             descending: bool, metadata: Pairs = ()) -> Tuple[List[ListedMessage], bool]:
    """A page of the user's messages after position `after` (None: from the first), by session
    creation then position (`descending`: the reverse), and whether more follow: only session key
    `session` if given (read alone: session_key() finds it), only those timed in [since, until) if
    either is given (an untimed one then never, as under a search's time filter:
    reader.message_conditions()), only those with every (key, value) of `metadata` (then only the
    sessions the metadata index names are read)."""
    with contextlib.closing(_messages(conn, user_key, session, since, until, after, limit + 1, descending,
                                      metadata)) as rows:
        return take(rows, limit, max_bytes, _message_bytes)


def _messages(conn: sqlite3.Connection, user_key: int, session: Optional[int], since: Optional[int],
              until: Optional[int], after: Optional[Position], most: int,
              descending: bool, metadata: Pairs) -> Generator[ListedMessage, None, None]:
    """The messages messages() pages, one at a time, at most `most` of each session."""
    order = "DESC" if descending else "ASC"
    keys = [session] if session is not None else [k for (k,) in conn.execute(
        "SELECT session_key FROM sessions WHERE user_key = ? ORDER BY session_key " + order, (user_key,))]
    if after is not None:
        keys = [k for k in keys if (k <= after[0] if descending else k >= after[0])]
    terms = metadata_filter.terms(conn, user_key, metadata) if metadata else {}
    if metadata:
        tagged = set(metadata_index.tagged_sessions(conn, user_key, metadata)) if terms else set()
        keys = [k for k in keys if k in tagged]
    timed, params = message_conditions(since, until, None)
    for key in keys:
        # Only the pairs this session's messages differ in are tested message by message (metadata_filter.py).
        held = metadata_filter.session_test(conn, terms, key) if terms else ("", [])
        if held is None:
            continue
        tests = " AND ".join(test for test in (timed, held[0]) if test)
        timed_held = " AND " + tests if tests else ""
        start = after[1] if after is not None and key == after[0] else (2 ** 62 if descending else 0)
        # s.user_key: a session key given is read only if it is the user's.
        for row in conn.execute(
                "SELECT %s FROM sessions s CROSS JOIN messages m ON m.session_key = s.session_key"
                " WHERE s.session_key = ? AND s.user_key = ? AND m.seq %s ?%s ORDER BY m.seq %s LIMIT ?"
                % (_MESSAGE_COLUMNS, "<" if descending else ">", timed_held, order),
                [key, user_key, start, *params, *held[1], most]):
            yield ListedMessage._make(row)


def message(conn: sqlite3.Connection, user_key: int, tag: str, number: int) -> Optional[ListedMessage]:
    """The message whose id names position `number` of the session tagged `tag` (its position, unless
    messages before it were deleted: MessageRow.number), if that session is the user's."""
    row = conn.execute(
        "SELECT %s FROM sessions s CROSS JOIN messages m ON m.session_key = s.session_key"
        " WHERE s.tag = ? AND s.user_key = ? AND (m.number = ? OR (m.number IS NULL AND m.seq = ?))"
        % _MESSAGE_COLUMNS, (tag, user_key, number, number)).fetchone()
    return ListedMessage._make(row) if row else None


def adds(conn: sqlite3.Connection, user_key: int, after: int, limit: int,
         max_bytes: int) -> Tuple[List[StoredAdd], bool]:
    """A page of the user's Adds stored after the message with rowid `after`, in the order they were
    stored (their first messages' rowids), and whether more follow.

    An Add's messages are inserted together (writer.add()): they are consecutive rowids and
    positions of one session with one request_id, and every message after an Add's last is
    another Add's. Each session is read from its first message after `after` on (found through
    its primary key index, which holds the rowid), a message at a time, its Adds merged into
    those found so far: the page's, and the first past it once there is one. A session is read
    only until its next Add begins after that one, and a session whose first message does ends
    the walk, since sessions begin in key order. So a page costs a lookup per session of the
    user and the page's messages, not the user's whole history, and holds in memory the page,
    one Add past it and the Add being read.
    """
    found = _Found(limit, max_bytes)
    for key, session_id, tag, given in conn.execute(
            "SELECT session_key, session_id, tag, n_messages + deleted_messages FROM sessions WHERE user_key = ?"
            " ORDER BY session_key",
            (user_key,)).fetchall():
        if found.full():
            first = conn.execute("SELECT rowid FROM messages WHERE session_key = ? ORDER BY seq LIMIT 1",
                                 (key,)).fetchone()
            if first is not None and not found.wants(first[0]):
                break
        start = conn.execute("SELECT seq FROM messages WHERE session_key = ? AND rowid > ? ORDER BY seq LIMIT 1",
                             (key, after)).fetchone()
        if start is not None:
            _read_session(conn, key, session_id, (tag, given), start[0], found)
    return found.page()


class _Found:
    """The Adds a page is made of, in the order stored, and the first Add past it once one is known."""

    def __init__(self, limit: int, max_bytes: int):
        self.limit, self.max_bytes = limit, max_bytes
        self.adds: List[Tuple[StoredAdd, int]] = []  # each with its size, measured once
        self._bytes = 0  # the sizes of `adds` together
        self._length = 0  # how many of `adds` the page holds: made once per insert, asked for per message

    def full(self) -> bool:
        """Whether an Add past the page is known: one stored after it can change nothing."""
        return len(self.adds) > self._length

    def wants(self, rowid: int) -> bool:
        """Whether an Add whose first message has `rowid` may belong to the page (or be the first past it)."""
        return not self.full() or rowid < self.adds[-1][0].rowid

    def insert(self, add: StoredAdd) -> None:
        size = _add_bytes(add)
        bisect.insort(self.adds, (add, size))  # rowids are unique: Adds compare by theirs
        self._bytes += size
        # Within the byte bound all of them, the row limit aside; only past it are the sizes walked.
        self._length = (min(len(self.adds), self.limit) if self._bytes <= self.max_bytes else
                        _page_length(self.adds, self.limit, self.max_bytes, lambda item: item[1]))
        for _, dropped in self.adds[self._length + 1:]:
            self._bytes -= dropped
        del self.adds[self._length + 1:]

    def page(self) -> Tuple[List[StoredAdd], bool]:
        return [add for add, _ in self.adds[:self._length]], len(self.adds) > self._length


def _read_session(conn: sqlite3.Connection, key: int, session_id: str, numbering: Tuple[str, int], start: int,
                  found: _Found) -> None:
    """Session `key`'s Adds from position `start` on into `found`, read a message at a time until one
    begins that `found` does not want (every later one is stored later still); `numbering` is the
    session's tag and the last number it gave."""
    tag, given = numbering
    add: Optional[StoredAdd] = None
    with contextlib.closing(conn.execute(
            "SELECT rowid, request_id, role, content, timestamp_ms, metadata, coalesce(number, seq), dated_on_receipt"
            " FROM messages WHERE session_key = ? AND seq >= ? ORDER BY seq", (key, start))) as rows:
        for rowid, request_id, role, content, timestamp_ms, metadata, number, dated in rows:
            if add is not None and add.request_id == request_id:
                add = add._replace(last_rowid=rowid)
            else:
                if add is not None:
                    found.insert(add)
                    add = None
                if not found.wants(rowid):
                    break
                add = StoredAdd(rowid, rowid, session_id, request_id, [])
            add.messages.append((role, content, timestamp_ms, metadata, message_id(tag, number), bool(dated)))
    if add is not None:  # the session's last Add: `number` is its last message's
        if number != given:  # numbers after it were given to messages since deleted
            add = add._replace(numbers_given=given)
        found.insert(add)
