"""Pages of the listing calls: their opaque cursors, and the JSON shapes of what they list.

A cursor is the position of a page's last row (storage/listing.py says what positions
are), with the kind of listing it came from, as urlsafe base64 of a JSON array:
`["m", 12, 40]` is after message 40 of session key 12. Clients pass it back as it came;
one that does not decode to a position of this kind is 422 naming `cursor`. A page
holds at most `limit` rows and, past its first row, at most `page_max_bytes` of text
(storage/listing.py take()): it may end early, so that a short page says nothing; only a
next_cursor of None ends a listing. When a row is left past the page there is a next page,
and its cursor is the position of the page's last row, so the next page continues right
after it even if rows were added meanwhile (positions only grow). walk() follows the pages
of any listing to its end, for Memory and Client alike.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, TypeVar

from .errors import InvalidField
from .retrieval.items import iso_time
from .storage import metadata_index
from .storage.ids import message_id
from .storage.listing import ListedMessage

T = TypeVar("T")
MAX_CURSOR_CHARS = 100  # the longest cursor position() decodes (see there)


def cursor(kind: str, position: Sequence[int]) -> str:
    """The cursor of `position` in listings of `kind`."""
    return base64.urlsafe_b64encode(json.dumps([kind, *position]).encode("ascii")).decode("ascii").rstrip("=")


def position(value: Any, kind: str, size: int) -> Optional[Tuple[int, ...]]:
    """The position (`size` integers) a cursor of `kind` holds; None for no cursor; InvalidField otherwise."""
    if value is None:
        return None
    try:
        # Length first: a cursor() of two 19-digit integers is 63 characters, and what is longer cannot
        # be one; so nothing nested deep or holding thousands of digits is ever decoded.
        if not isinstance(value, str) or len(value) > MAX_CURSOR_CHARS:
            raise ValueError("not a cursor's string")
        decoded = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
        # Positions are SQLite integers (rowids, positions): from 0 to 2^63 - 1.
        if (not isinstance(decoded, list) or len(decoded) != size + 1 or decoded[0] != kind
                or not all(type(n) is int and 0 <= n < 2 ** 63 for n in decoded[1:])):
            raise ValueError("not a position")
    except (ValueError, binascii.Error, UnicodeDecodeError) as e:
        raise InvalidField("cursor", "is not a cursor of this listing: pass a next_cursor as it was returned") from e
    return tuple(decoded[1:])


def page(rows: Sequence[T], more: bool, kind: str, place: Callable[[T], Sequence[int]],
         shape: Callable[[T], Dict[str, Any]]) -> Dict[str, Any]:
    """`{"data", "next_cursor"}` of a page's rows, each shaped, and the cursor after the last of them if
    `more` rows follow (a page with more after it is never empty: storage.listing.take())."""
    return {"data": [shape(row) for row in rows], "next_cursor": cursor(kind, place(rows[-1])) if more else None}


def walk(fetch: Callable[[Optional[str]], Dict[str, Any]]) -> Iterator[Any]:
    """Every item of a listing: the "data" of each page `fetch(cursor)` returns, from the first page
    (cursor None) on, each next page asked for with the last one's next_cursor until that is None."""
    cursor: Optional[str] = None
    while True:
        listed = fetch(cursor)
        yield from listed["data"]
        cursor = listed["next_cursor"]
        if cursor is None:
            return


def message(user_id: str, row: ListedMessage) -> Dict[str, Any]:
    """A stored message as the listing calls show it: verbatim, with its public id and times."""
    shown = {
        "id": message_id(row.tag, row.number),
        "user_id": user_id,
        "session_id": row.session_id,
        "position": row.seq,
        "role": row.role,
        "content": row.content,
        "timestamp": row.timestamp_ms,
        "created_at": iso_time(row.timestamp_ms),
        "dated_on_receipt": bool(row.dated_on_receipt),
        "request_id": row.request_id,
    }
    if row.metadata is not None:
        shown["metadata"] = metadata_index.loads(row.metadata)
    return shown


def session(row: Tuple[int, str, int, Optional[int], Optional[int]]) -> Dict[str, Any]:
    """A session as list_sessions shows it (storage.listing.sessions()'s row)."""
    _, session_id, n, first, last = row
    return {"session_id": session_id, "messages": n, "first_at": iso_time(first), "last_at": iso_time(last)}


def user(row: Tuple[int, str, int, int]) -> Dict[str, Any]:
    """A user as list_users shows them (storage.listing.users()'s row)."""
    return {"user_id": row[1], "sessions": row[2], "messages": row[3]}

