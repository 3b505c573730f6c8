"""Messages' metadata as stored and as filters find it: one canonical text per object, one term per (key, value).

A message's metadata (the service checks its shape: flowmem/metadata.py) is stored as
one JSON object in `messages.metadata`, keys sorted: what listings, exports and items
show. What filters read is the index (schema 6, storage/schema.py):

- `metadata_terms`: each (key, value) a user's messages hold, once per user, the value as
  canonical JSON text (value_text()), with `messages`, how many of the user's messages hold
  it. Equality of values is equality of those texts, so a number equals itself written as
  1 or 1.0, but never the string "1" or the boolean true.
- `metadata_index`: one row of three integers per (message, key), (session_key, seq, term),
  its primary key: a message's rows lie together, and whether it holds a term is one lookup.
- `metadata_sessions`: (term, session_key, messages), how many of a session's messages hold
  the term: the sessions a filtered listing or fallback need visit (tagged_sessions()).

Interning is the schema's own doing, so every writer writes rows one way: INSERT_SQL
inserts (user_key, key, value, session_key, seq) into the view `metadata_rows`, whose
trigger finds or makes the term and counts the message in; a trigger on deleting an index
row counts it out and deletes a term (or a session's count) with its last message, so no
key or value of a deleted message, session or user stays in the file. Schema 5 kept the key
and value text in every row and again in a by-message index: about three times each message's
metadata on disk. A row is now three small integers (docs/metadata.md has the figures).

Which messages a filter keeps is metadata_filter.py's: first by session, from
`metadata_sessions`, then message by message only where a session's messages differ, and
then by the cheaper of two tests. A term is found through the user's key, so nothing of
another user's is read, and a pair no message holds has no term, so no message passes.
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
    """The rows INSERT_SQL takes for a message at `seq` of `session_key` whose stored metadata is `text`."""
    return [(user_key, key, value_text(value), session_key, seq) for key, value in sorted(loads(text).items())]


# Into the view: its trigger (schema.py, migration 6) interns the (key, value) and writes the index row.
INSERT_SQL = "INSERT INTO metadata_rows (user_key, key, value, session_key, seq) VALUES (?, ?, ?, ?, ?)"


def reindex_session(conn: sqlite3.Connection, user_key: int, session_key: int) -> None:
    """Write a session's index rows again from its messages' stored metadata (after its positions moved)."""
    conn.execute("DELETE FROM metadata_index WHERE session_key = ?", (session_key,))
    rows = conn.execute("SELECT seq, metadata FROM messages WHERE session_key = ? AND metadata IS NOT NULL",
                        (session_key,)).fetchall()
    conn.executemany(INSERT_SQL, [r for seq, text in rows for r in index_rows(user_key, session_key, seq, text)])




def term_sql(user_key: int, pair: Tuple[str, str], columns: str = "term") -> Tuple[str, List[object]]:
    """A query of `columns` of the user's term of `pair` (by the unique (user_key, key, value) index), and
    its parameters (metadata_filter.py finds a filter's terms with it)."""
    return ("SELECT %s FROM metadata_terms WHERE user_key = ? AND key = ? AND value = ?" % columns,
            [user_key, *pair])


def filter_sql(user_key: int, wanted: Pairs, message: str = "m") -> Tuple[str, List[object]]:
    """The SQL test (and its parameters) that a message aliased `message` has every (key, value) of
    `wanted`: one primary-key lookup per pair, in the order given, a message stopping at the first it
    lacks (so fewest holders first is cheapest: metadata_filter.rarest_first()); ("", []) when `wanted`
    is empty. Each term is an uncorrelated subquery, which SQLite runs once per statement."""
    at = "t.session_key = %s.session_key AND t.seq = %s.seq" % (message, message)
    terms = [term_sql(user_key, pair) for pair in wanted]
    return (" AND ".join("EXISTS (SELECT 1 FROM metadata_index t WHERE %s AND t.term = (%s))" % (at, sql)
                         for sql, _ in terms), [value for _, more in terms for value in more])


def tagged_sessions(conn: sqlite3.Connection, user_key: int, wanted: Pairs) -> Sequence[int]:
    """The keys of the user's sessions holding a message with the rarest pair of `wanted` (none if a
    pair is held by no message): the only sessions a filtered listing or fallback need visit."""
    if not wanted:
        raise ValueError("no metadata pairs")
    held = []
    for pair in wanted:
        row = conn.execute(*term_sql(user_key, pair, "messages, term")).fetchone()
        if row is None:
            return []
        held.append(row)
    rarest = min(held)[1]
    return [k for (k,) in conn.execute(
        "SELECT session_key FROM metadata_sessions WHERE term = ? ORDER BY session_key", (rarest,))]
