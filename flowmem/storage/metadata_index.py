"""Messages' metadata as stored and as filters find it: one canonical text per object and per value.

A message's metadata (the service checks its shape: flowmem/metadata.py) is stored as
one JSON object in `messages.metadata`, keys sorted, and each of its keys as a row of
`metadata_index` (user_key, key, value, session_key, seq), the value as canonical JSON
text (value_text()). Equality of values is equality of those texts, so a number equals
itself written as 1 or 1.0, but never the string "1" or the boolean true.

A filter `{"topic": "pets"}` is then a lookup through the index's primary key from the
user's key: what it reads is that user's rows of that key and value, nothing of other
users' and nothing of the user's other messages (filter_sql()).
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

Pairs = Tuple[Tuple[str, str], ...]  # (key, value_text()) pairs, sorted: a filter's equalities


def value_text(value: Any) -> str:
    """A metadata value (a string, a finite number or a boolean) as the index compares it: canonical JSON,
    an integral float as its integer (1.0 is 1)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False)


def object_text(metadata: Mapping[str, Any]) -> Optional[str]:
    """A metadata object as `messages.metadata` stores it (keys sorted, compact); None for an empty one."""
    if not metadata:
        return None
    return json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def loads(text: Optional[str]) -> Dict[str, Any]:
    """A stored `messages.metadata` as a dict ({} for none)."""
    return json.loads(text) if text else {}


def pairs(filters: Mapping[str, Any]) -> Pairs:
    """A `filters.metadata` object ({key: value}) as the sorted (key, value_text()) pairs filter_sql() takes."""
    return tuple(sorted((key, value_text(value)) for key, value in filters.items()))


def index_rows(user_key: int, session_key: int, seq: int, text: Optional[str]) -> List[Tuple[Any, ...]]:
    """The `metadata_index` rows of a message at `seq` of `session_key` whose stored metadata is `text`."""
    return [(user_key, key, value_text(value), session_key, seq) for key, value in sorted(loads(text).items())]


INSERT_SQL = "INSERT INTO metadata_index (user_key, key, value, session_key, seq) VALUES (?, ?, ?, ?, ?)"


def reindex_session(conn: sqlite3.Connection, user_key: int, session_key: int) -> None:
    """Write a session's index rows again from its messages' stored metadata (after its positions moved)."""
    conn.execute("DELETE FROM metadata_index WHERE session_key = ?", (session_key,))
    rows = conn.execute("SELECT seq, metadata FROM messages WHERE session_key = ? AND metadata IS NOT NULL",
                        (session_key,)).fetchall()
    conn.executemany(INSERT_SQL, [r for seq, text in rows for r in index_rows(user_key, session_key, seq, text)])


def filter_sql(user_key: int, wanted: Pairs, message: str = "m") -> Tuple[str, List[object]]:
    """The SQL test (and its parameters) that a message aliased `message` has every (key, value) of
    `wanted`: one primary-key lookup of the index per pair; ("", []) when `wanted` is empty."""
    tests: List[str] = []
    params: List[object] = []
    for key, value in wanted:
        tests.append("EXISTS (SELECT 1 FROM metadata_index t WHERE t.user_key = ? AND t.key = ? AND t.value = ?"
                     " AND t.session_key = %s.session_key AND t.seq = %s.seq)" % (message, message))
        params.extend((user_key, key, value))
    return " AND ".join(tests), params


def tagged_sessions(conn: sqlite3.Connection, user_key: int, wanted: Pairs) -> Sequence[int]:
    """The keys of the user's sessions holding a message with the first pair of `wanted` (through the
    index from the user's key): the only sessions a filtered listing or fallback need visit."""
    if not wanted:
        raise ValueError("no metadata pairs")
    key, value = wanted[0]
    return [k for (k,) in conn.execute(
        "SELECT DISTINCT session_key FROM metadata_index WHERE user_key = ? AND key = ? AND value = ?"
        " ORDER BY session_key", (user_key, key, value))]
