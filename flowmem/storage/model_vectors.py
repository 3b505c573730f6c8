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


def held(written: int, dims: int, rows: Sequence[Tuple[int, int, int, bytes]]) -> HeldModelVectors:
    """The entry of `rows` ((doc id, session_key, position, stored vector), doc ids ascending); rows of
    another length than `dims` are left out."""
    rows = [row for row in rows if len(row[3]) == dims]
    blocks = []
    width, base = slot_bytes(dims), bias(dims)
    for start in range(0, len(rows), BLOCK):
        part = rows[start:start + BLOCK]
        data = b"".join(row[3] for row in part)
        columns = tuple(_packed(data[i::dims], width) for i in range(dims))
        biases = b"".join((base - OFFSET * sum(row[3])).to_bytes(width, "little") for row in part)
        blocks.append((columns, int.from_bytes(biases, "little"), len(part)))
    keys = [(row[1], row[2]) for row in rows]
    return HeldModelVectors(written, dims, array("q", [row[0] for row in rows]), keys, tuple(blocks),
                            {key: i for i, key in enumerate(keys)})


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


def rows(conn: sqlite3.Connection, user_key: int) -> List[Tuple[int, int, int, bytes]]:
    """(doc id of its message view, session_key, position, stored vector) of each of the user's messages
    that has a vector, doc ids ascending."""
    return conn.execute(
        "SELECT v.doc_id, m.session_key, m.seq, m.embedding FROM sessions s JOIN messages m"
        " ON m.session_key = s.session_key JOIN views v ON v.session_key = m.session_key AND v.first_seq = m.seq"
        " AND v.kind = 'message' WHERE s.user_key = ? AND m.embedding IS NOT NULL ORDER BY v.doc_id",
        (user_key,)).fetchall()


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
