"""A user's meaning vectors in memory, laid out for scoring them all against one question at once.

Each message's meaning vector (text/meaning.py) is stored beside its tokens (writer.py).
Search compares the question's vector with every one of the user's messages'
(retrieval/meaning.py). Read from SQLite and compared in a Python loop, that would cost a
row and 256 multiplications per message; instead the vectors are held per user
(vectors_cache in the Store, bounded_cache.py) as *columns* in blocks (packed_blocks.py):
for each component, one Python int packing that component of every message of a block,
each in its own slot. A question's scores are then a multiplication of each column by a
small int, summed: C loops over the messages, not Python ones (shifted_dots()).

The latest `limit` messages of the user (by doc id, Config.meaning_scan) are held whole;
every older one by its first components only (`old`, coarse_vectors.py), so that every
message is comparable at a bounded cost: search ranks the old ones by those components
and rescores the nearest from their stored vectors (retrieval/meaning.py; measured in
docs/meaning.md). A vector leaving the window keeps its slots of the first columns,
moved by masks and shifts, not unpacked. As for postings (postings.py), a
user's messages only grow, so an entry is extended with the messages added since, read
from the sessions that grew; a deletion makes the Store forget the user's entry.
Each extension makes a new HeldVectors: a search reading an older one is never changed
under it. What an entry holds in memory (nbytes(), what counts against the cache's bound):
its components' slots, `dims` x SLOT bits a vector, and VECTOR_BYTES more a vector (its doc
id, its key and its place in the positions memo), measured with tracemalloc
(tests/test_cache_bytes.py, docs/caches.md): about 1.0 KB a vector at 256 dimensions, and
107 bytes one past the window.
"""
from __future__ import annotations

from array import array
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from . import coarse_vectors, packed_blocks
from .coarse_vectors import OldVectors
from .packed_blocks import SLOT, Blocks, pack

Key = Tuple[int, int]  # (session_key, position in session)


class HeldVectors(NamedTuple):
    """One user's latest meaning vectors, as of `n_messages` messages (the version)."""

    n_messages: int
    sessions: Mapping[int, int]  # session_key -> messages held (with or without a vector)
    dims: int
    docs: "array[int]"  # the message views' doc ids, ascending; then, in the same order:
    keys: Sequence[Key]  # their messages,
    blocks: Blocks  # and their vectors, packed (packed_blocks.py)
    positions: Dict[Key, int]  # a memo, filled by position(): where each message is, in the order held
    old: OldVectors  # the messages older than those above, by their first components

    def position(self, key: Key) -> Optional[int]:
        """Where message `key` is in the order held; None if it is not held."""
        if not self.positions and self.keys:
            self.positions.update((k, i) for i, k in enumerate(self.keys))
        return self.positions.get(key)


VECTOR_BYTES = 240  # a vector's doc id, key ((session, position) in a list) and memo entry, beside its slots
SESSION_BYTES = 100  # a session's entry in `sessions`


def nbytes(held: HeldVectors) -> int:
    """What `held` holds in memory, estimated (the module's docstring)."""
    whole = len(held.docs) * ((held.dims + 1) * SLOT // 8 + VECTOR_BYTES)
    return whole + coarse_vectors.nbytes(held.old) + len(held.sessions) * SESSION_BYTES


def empty(dims: int) -> HeldVectors:
    return HeldVectors(0, {}, dims, array("q"), (), (), {}, coarse_vectors.empty(dims))


def extended(held: HeldVectors, sessions: Mapping[int, int], added: Sequence[Tuple[int, int, int, Optional[bytes]]],
             limit: int) -> HeldVectors:
    """`held` with the vectors `added` ((doc_id, session_key, position, stored vector), doc ids ascending and
    above every doc id held), now holding `sessions`' messages; the latest `limit` are held whole, the
    older ones by their first components (the module's docstring)."""
    dims = held.dims
    rows = [(doc, session, position, v) for doc, session, position, v in added if v is not None and len(v) == dims]
    n_messages = sum(sessions.values())
    if not rows:
        return held._replace(n_messages=n_messages, sessions=dict(sessions))
    over = len(rows) - limit
    if over > 0:  # every vector held leaves the window, and the oldest added never enter it
        held = _aged(held, len(held.docs))
        held = held._replace(old=coarse_vectors.with_rows(held.old, rows[:over]))
        rows = rows[over:]
    new = b"".join(row[3] for row in rows)
    blocks = packed_blocks.appended(held.blocks, dims, [pack(new[i::dims]) for i in range(dims)], len(rows))
    docs = held.docs + array("q", [row[0] for row in rows])
    keys = list(held.keys) + [(row[1], row[2]) for row in rows]
    out = held._replace(n_messages=n_messages, sessions=dict(sessions), docs=docs, keys=keys, blocks=blocks,
                        positions={})
    return _aged(out, len(docs) - limit)


def _aged(held: HeldVectors, drop: int) -> HeldVectors:
    """`held` with its oldest `drop` whole vectors moved past the window: their first columns' slots join
    the old ones (coarse_vectors.py), above those there."""
    if drop <= 0:
        return held
    blocks, gone = packed_blocks.without_oldest(held.blocks, drop, held.old.dims)
    old, start = held.old, 0
    for size, columns in gone:
        old = coarse_vectors.joined(old, held.docs[start:start + size], columns)
        start += size
    return held._replace(docs=held.docs[drop:], keys=held.keys[drop:], blocks=blocks, positions={}, old=old)


def shifted_dots(held: HeldVectors, query: Sequence[int]) -> Tuple["array[int]", int]:
    """(the integer dot product of the int8 vector `query` with every vector held, plus a constant, in the
    order held; that constant): ordering the first orders the dot products, with no Python loop over them."""
    sums = packed_blocks.sums(held.blocks, query)
    return packed_blocks.scores(held.blocks, sums), packed_blocks.constant(query, held.dims)


def dot_products(held: HeldVectors, query: Sequence[int]) -> List[int]:
    """The integer dot product of the int8 vector `query` with every vector held, in the order held."""
    slots, constant = shifted_dots(held, query)
    return [s - constant for s in slots]
