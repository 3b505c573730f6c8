"""A user's own embedder's vectors: stored quantised beside each message, held packed for scoring at once.

When the operator configures an embedder (flowmem/embedding.py), each message gets the
model's vector after its Add commits, in `messages.embedding` (schema migration 7): the
vector made unit length, times SCALE x sqrt(dims) / 4, rounded and clipped to -63..63 (a
component four standard deviations of a random unit vector's reaches 63), stored as
bytes of component + OFFSET. One scale for every vector of a database: their integer dot
products order them as their cosines do, without a division per message.

`embedding_marks` counts, per user, the vectors ever written for them: the version a
held entry is checked against (one key lookup a search). A deletion or a reindex makes the
Store forget the user's entry (held.py), as for the built-in meaning vectors (vectors.py).

Held in memory as packed columns, as vectors.py does for the built-in channel: each slot of a
column holds component + OFFSET (0..126), so a query's sum over the columns is
sum((q + OFFSET) x (v + OFFSET)), at most dims x 126 x 126; `bias` packs, per vector, BIAS -
OFFSET x the sum of its stored components, which takes each slot back to the dot product
plus BIAS + OFFSET x sum(q) (constant()). A slot is 3 bytes up to 528 dimensions (most small
models: the multiplications' cost follows the ints' length, docs/meaning.md), 4 past them,
up to 33,000 (slot_bytes()).
"""
from __future__ import annotations

import math
import sqlite3
import sys
from array import array
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import packed_blocks

SCALE = 63
OFFSET = 63  # stored byte = component + OFFSET, so 0..126
BLOCK = 4096
MAX_TAIL = 8  # blocks not full an extended entry ends with before they are packed again (extended())

Key = Tuple[int, int]  # (session_key, position in session)


def quantised(vector: Sequence[float]) -> Optional[bytes]:
    """The stored bytes of a model's vector: unit length, scaled, int8 + OFFSET; None for one that is
    not a vector (no component, a NaN or an infinity, or all zero)."""
    if not vector:
        return None
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not math.isfinite(norm) or norm == 0.0:
        return None
    scale = SCALE * math.sqrt(len(vector)) / 4 / norm
    return bytes(max(-SCALE, min(SCALE, round(x * scale))) + OFFSET for x in vector)


def components(stored: bytes) -> List[int]:
    """The int8 components of stored bytes."""
    return [b - OFFSET for b in stored]


class HeldModelVectors(NamedTuple):
    """One user's model vectors, as of `written` (their embedding mark): every message that has one."""

    written: int
    dims: int
    docs: "array[int]"  # message views' doc ids, ascending; then, in the same order:
    keys: Sequence[Key]  # their messages,
    blocks: Tuple[Tuple[Tuple[int, ...], int, int], ...]  # (columns, bias, size) per block of BLOCK vectors
    positions: Dict[Key, int]  # where each message is in the order held
    last_rowid: int = 0  # the largest messages.rowid held: what extended() reads past

    def nbytes(self) -> int:
        """What the entry holds, estimated: its slots and a doc id and key a vector."""
        return len(self.docs) * ((self.dims + 1) * slot_bytes(self.dims) + 200)


def slot_bytes(dims: int) -> int:
    """Bytes of a slot for vectors of `dims` components: 3 while every slot stays below 2**24 (bias()), else 4."""
    return 3 if bias(dims) + dims * (2 * OFFSET) ** 2 < 1 << 24 else 4


def bias(dims: int) -> int:
    """BIAS: at least OFFSET x the largest sum of a vector's stored components, so no slot goes below 0."""
    return 1 << (OFFSET * 2 * OFFSET * dims).bit_length()


def _packed(column: bytes, width: int) -> int:
    slots = bytearray(len(column) * width)
    slots[0::width] = column
    return int.from_bytes(slots, "little")


def _unpacked(value: int, count: int, width: int) -> "array[int]":
    if width == 3:
        return packed_blocks.unpack(value, count)
    out = array(packed_blocks.UINT)
    out.frombytes(value.to_bytes(count * 4, "little"))
    if sys.byteorder == "big":  # pragma: no cover
        out.byteswap()
    return out


Row = Tuple[int, int, int, bytes, int]  # (doc id of its message view, session_key, position, stored vector, rowid)


def held(written: int, dims: int, rows: Sequence[Row]) -> HeldModelVectors:
    """The entry of `rows` (doc ids ascending); rows of another length than `dims` are left out."""
    rows = [row for row in rows if len(row[3]) == dims]
    keys = [(row[1], row[2]) for row in rows]
    return HeldModelVectors(written, dims, array("q", [row[0] for row in rows]), keys,
                            _blocks([row[3] for row in rows], dims), {key: i for i, key in enumerate(keys)},
                            max((row[4] for row in rows), default=0))


def extended(entry: HeldModelVectors, written: int, rows: Sequence[Row]) -> HeldModelVectors:
    """`entry` with `rows` after it (their doc ids above those held), as of `written`: packed in blocks of
    their own after those held, until more than MAX_TAIL blocks that are not full end the entry; those
    are then packed again as full ones (a search after each Add packs only what it added)."""
    rows = [row for row in rows if len(row[3]) == entry.dims]
    blocks = entry.blocks + _blocks([row[3] for row in rows], entry.dims)
    first = next((i for i, block in enumerate(blocks) if block[2] < BLOCK), len(blocks))
    if len(blocks) - first > MAX_TAIL:
        blocks = blocks[:first] + _blocks([v for block in blocks[first:] for v in _stored(block, entry.dims)],
                                          entry.dims)
    keys = list(entry.keys) + [(row[1], row[2]) for row in rows]
    positions = dict(entry.positions)
    positions.update((key, i) for i, key in enumerate(keys[len(entry.keys):], len(entry.keys)))
    docs = array("q", entry.docs)
    docs.extend(row[0] for row in rows)
    return HeldModelVectors(written, entry.dims, docs, keys, blocks, positions,
                            max([entry.last_rowid] + [row[4] for row in rows]))


def _blocks(vectors: Sequence[bytes], dims: int) -> Tuple[Tuple[Tuple[int, ...], int, int], ...]:
    """`vectors` (stored bytes) packed in blocks of BLOCK: (columns, bias, size) each."""
    out = []
    width, base = slot_bytes(dims), bias(dims)
    for start in range(0, len(vectors), BLOCK):
        part = vectors[start:start + BLOCK]
        data = b"".join(part)
        columns = tuple(_packed(data[i::dims], width) for i in range(dims))
        biases = b"".join((base - OFFSET * sum(v)).to_bytes(width, "little") for v in part)
        out.append((columns, int.from_bytes(biases, "little"), len(part)))
    return tuple(out)


def _stored(block: Tuple[Tuple[int, ...], int, int], dims: int) -> List[bytes]:
    """The stored bytes of each vector of a packed block, as they were given to _blocks()."""
    columns, _, size = block
    width = slot_bytes(dims)
    data = bytearray(size * dims)
    for i, column in enumerate(columns):
        data[i::dims] = column.to_bytes(size * width, "little")[0::width]
    return [bytes(data[j * dims:(j + 1) * dims]) for j in range(size)]


def scores(entry: HeldModelVectors, query: Sequence[int]) -> List[int]:
    """The integer dot product of `query` (components, as components()) with every vector held, plus
    constant(), in the order held: ordering them orders the cosines (one scale for all)."""
    width = slot_bytes(entry.dims)
    out: List[int] = []
    for columns, packed_bias, size in entry.blocks:
        total = packed_bias
        for weight, column in zip(query, columns):
            total += (weight + OFFSET) * column
        out += _unpacked(total, size, width).tolist()
    return out


def constant(query: Sequence[int]) -> int:
    """What scores() adds to each dot product with `query`."""
    return bias(len(query)) + OFFSET * sum(query)


def cosine_unit(dims: int) -> float:
    """A stored vector's squared length, about: dot product / cosine_unit() is about the cosine."""
    return (SCALE * math.sqrt(dims) / 4) ** 2


# -- SQL ------------------------------------------------------------------------------

def mark(conn: sqlite3.Connection, user_key: int) -> int:
    """The user's embedding mark: how many vectors were ever written for them."""
    row = conn.execute("SELECT written FROM embedding_marks WHERE user_key = ?", (user_key,)).fetchone()
    return row[0] if row else 0


def rows(conn: sqlite3.Connection, user_key: int, after: int = 0) -> List[Row]:
    """Each of the user's messages that has a vector (and a rowid above `after`) as a Row, doc ids ascending.

    Read through the user's own sessions, their messages, then each passing message's view by
    views_by_session (session_key, last_seq): the `+` keeps SQLite from reading every user's newer
    messages by rowid instead, so its cost is the user's whatever the others added, and CROSS JOIN
    keeps the views from being walked for messages the rowid leaves out (an extension after an Add
    of 20 to 10,000 messages: 9-12 ms walking them, 1 ms not; docs/results.md)."""
    return conn.execute(
        "SELECT v.doc_id, m.session_key, m.seq, m.embedding, m.rowid FROM sessions s CROSS JOIN messages m"
        " ON m.session_key = s.session_key CROSS JOIN views v ON v.session_key = m.session_key"
        " AND v.last_seq = m.seq AND v.first_seq = m.seq AND v.kind = 'message'"
        " WHERE s.user_key = ? AND +m.rowid > ? AND m.embedding IS NOT NULL ORDER BY v.doc_id",
        (user_key, after)).fetchall()


def waiting(conn: sqlite3.Connection, user_key: int, limit: int) -> List[Tuple[int, str]]:
    """(rowid, content) of up to `limit` of the user's messages without a vector, oldest first."""
    return conn.execute(
        "SELECT m.rowid, m.content FROM sessions s JOIN messages m ON m.session_key = s.session_key"
        " WHERE s.user_key = ? AND m.embedding IS NULL ORDER BY m.rowid LIMIT ?", (user_key, limit)).fetchall()


def waiting_count(conn: sqlite3.Connection, user_key: Optional[int] = None) -> int:
    """How many messages (of the user, if given) have no vector."""
    if user_key is None:
        return conn.execute("SELECT count(*) FROM messages WHERE embedding IS NULL").fetchone()[0]
    return conn.execute("SELECT count(*) FROM sessions s JOIN messages m ON m.session_key = s.session_key"
                        " WHERE s.user_key = ? AND m.embedding IS NULL", (user_key,)).fetchone()[0]


def users_waiting(conn: sqlite3.Connection) -> List[int]:
    """The keys of the users some of whose messages have no vector, ascending."""
    return [row[0] for row in conn.execute(
        "SELECT DISTINCT s.user_key FROM messages m JOIN sessions s ON s.session_key = m.session_key"
        " WHERE m.embedding IS NULL ORDER BY s.user_key")]


def write(conn: sqlite3.Connection, user_key: int, vectors: Sequence[Tuple[int, str, bytes]]) -> int:
    """Store each (rowid, the content embedded, stored vector) on its message, if that message still
    holds that content and has no vector (a message deleted meanwhile, its rowid given again, is
    left alone); bump the user's mark. How many were written."""
    written = 0
    for rowid, content, stored in vectors:
        written += conn.execute("UPDATE messages SET embedding = ? WHERE rowid = ? AND content = ?"
                                " AND embedding IS NULL", (stored, rowid, content)).rowcount
    if written:
        conn.execute("INSERT INTO embedding_marks (user_key, written) VALUES (?, ?) ON CONFLICT (user_key)"
                     " DO UPDATE SET written = written + excluded.written", (user_key, written))
    return written


def clear(conn: sqlite3.Connection) -> None:
    """Every vector gone (another model's): the messages wait again, every mark bumped."""
    conn.execute("UPDATE embedding_marks SET written = written + 1")
    conn.execute("UPDATE messages SET embedding = NULL WHERE embedding IS NOT NULL")
