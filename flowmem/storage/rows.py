"""The rows storage takes in and hands out: a new message and Add, a view, a stored message.

Also the two reads that the write path and the readers share, written once here:
a user's key (lookup_user_key()) and the SELECT that yields ViewRows (view_rows()).
"""
from __future__ import annotations

import datetime
import json
import sqlite3
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

from ..text import timeexpr
from .ids import view_id


class NewMessage(NamedTuple):
    role: str
    content: str
    timestamp_ms: Optional[int]
    metadata: Optional[str] = None  # canonical JSON object (metadata_index.object_text()), None for none
    dated_on_receipt: bool = False  # the Add gave no timestamp: timestamp_ms is when it arrived


class NewAdd(NamedTuple):
    """One Add as storage takes it (writer.add() says what each field does)."""

    user_id: str
    session_id: str
    request_id: str
    messages: Sequence[NewMessage]
    fingerprint: Optional[str] = None  # the digest of its body (validation.fingerprint())
    anchored: bool = False  # request_id names the body only: anchored where its first message lands
    placement: Optional[Tuple[str, Tuple[int, ...], int]] = None  # an import's (tag, message numbers, given)
    user_key: Optional[int] = None  # an import's user, as its first records found them


class ViewRow(NamedTuple):
    doc_id: int
    session_key: int
    session_id: str
    tag: str
    kind: str
    first: int
    last: int
    length: int
    session_messages: int  # the session's message count when read: its version (session_cache.py)

    @property
    def id(self) -> str:
        return view_id(self.kind, self.tag, self.first, self.last)


class MessageRow(NamedTuple):
    seq: int
    role: str
    content: str
    timestamp_ms: Optional[int]
    times: str  # JSON: the dates the text mentions or implies (features.Derived.times)
    annotation: str = ""  # its relative times resolved, as results show them (timeexpr.annotation()): made once
    number: int = 0  # the position its id names (ids.message_id()): seq, unless messages before it were deleted
    metadata: Optional[str] = None  # its stored metadata (metadata_index.py), None for none


def resolutions(times: str) -> List[timeexpr.Resolution]:
    """A stored message's `times` (JSON) as the resolutions they were written from."""
    return [timeexpr.Resolution(e, datetime.date.fromisoformat(a), datetime.date.fromisoformat(b), r, 0)
            for e, a, b, r in json.loads(times or "[]")]


_VIEW_ROWS_SQL = ("SELECT v.doc_id, v.session_key, s.session_id, s.tag, v.kind, v.first_seq, v.last_seq, v.length,"
                  " s.n_messages FROM views v JOIN sessions s ON s.session_key = v.session_key WHERE ")


def view_rows(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> Iterator[ViewRow]:
    """The views (with their session's id, tag and message count) that satisfy `where` over `v` and `s`."""
    # _make takes the row as it comes (the columns are ViewRow's fields, in order): a search
    # reads hundreds of views, and ViewRow(*row) unpacks each into a call of its own.
    return map(ViewRow._make, conn.execute(_VIEW_ROWS_SQL + where, params))


def lookup_user_key(conn: sqlite3.Connection, user_id: str) -> Optional[int]:
    """The internal key of a user, or None if unknown."""
    row = conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()
    return row[0] if row else None
