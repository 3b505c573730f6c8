"""A user's meaning vectors older than those held whole (vectors.py): their first components only.

So that every message stays comparable in meaning at a bounded cost, a message that
leaves the window of whole vectors keeps only its first DIMS components (the table's
components are principal ones, most telling first), packed in blocks as the whole ones
are (packed_blocks.py). Search asks for the `count` nearest by these components
(nearest()) and scores those again from their stored vectors (retrieval/meaning.py).

nearest() finds them without a Python step per message: a sample of every STRIDE-th
score gives a threshold that about PASSING x `count` scores pass; which slots pass is read
from the packed sums by one subtraction and a mask (each slot's bit THRESHOLD_BIT says
whether it is at least the threshold), then found in their bytes by bytes.find. Should
fewer than `count` pass, every score is ranked instead; either way the answer is the
same `count` (largest first, the later of equal ones first).
"""
from __future__ import annotations

import heapq
from array import array
from typing import List, NamedTuple, Optional, Sequence, Set, Tuple

from . import packed_blocks
from .packed_blocks import SLOT, Block, Blocks, pack

DIMS = 32  # components kept of a vector past the window (docs/meaning.md: what each number kept)
STRIDE = 8  # every STRIDE-th score is sampled for the threshold
PASSING = 1.5  # the threshold is set for about PASSING x count scores
THRESHOLD_BIT = 22  # a score less the threshold, plus 2**22, is below 2**23: its bit 22 is set iff it passed
BYTES = 8  # a vector's doc id, beside its slots


class OldVectors(NamedTuple):
    dims: int  # components kept
    docs: "array[int]"  # doc ids, ascending: position i is the i-th message of the blocks in turn
    blocks: Blocks


def empty(dims: int) -> OldVectors:
    return OldVectors(min(DIMS, dims), array("q"), ())


def nbytes(old: OldVectors) -> int:
    """What `old` holds in memory, estimated: its slots and its doc ids."""
    return len(old.docs) * ((old.dims + 1) * SLOT // 8 + BYTES)


def joined(old: OldVectors, docs: "array[int]", columns: Sequence[int]) -> OldVectors:
    """`old` with the vectors of `docs` (newer than those in it), their kept components packed in `columns`."""
    return OldVectors(old.dims, old.docs + docs, packed_blocks.appended(old.blocks, old.dims, columns, len(docs)))


def with_rows(old: OldVectors, rows: Sequence[Tuple[int, int, int, bytes]]) -> OldVectors:
    """`old` with `rows` ((doc_id, session_key, position, stored vector), newer than those in it)."""
    for start in range(0, len(rows), packed_blocks.BLOCK):
        chunk = rows[start:start + packed_blocks.BLOCK]
        kept = b"".join(row[3][:old.dims] for row in chunk)
        old = joined(old, array("q", [row[0] for row in chunk]), [pack(kept[i::old.dims]) for i in range(old.dims)])
    return old


def nearest(old: OldVectors, query: Sequence[int], count: int, passing: Optional[Set[int]] = None) -> List[int]:
    """The positions (in `old.docs`) of the `count` messages whose kept components are nearest `query`'s
    (largest dot product first, the later of equal ones first), of those whose doc `passing` holds (all if None)."""
    sums = packed_blocks.sums(old.blocks, query)
    flat = packed_blocks.scores(old.blocks, sums)
    if passing is None and count * STRIDE * 2 < len(flat):
        found = _passed(sums, old.blocks, flat, count)
        if len(found) >= count:
            return heapq.nlargest(count, found, key=lambda i: (flat[i], i))
    return packed_blocks.largest(flat, count, old.docs, passing)


def _passed(sums: Sequence[int], blocks: Sequence[Block], flat: "array[int]", count: int) -> List[int]:
    """The positions whose score is at least a threshold that a sample of the scores sets for about
    PASSING x `count` of them (the module's docstring)."""
    sample = flat[::STRIDE]
    threshold = heapq.nlargest(max(1, int(PASSING * count / STRIDE)), sample)[-1]
    found: List[int] = []
    start = 0
    for total, block in zip(sums, blocks):
        # With DIMS components every slot is within 2**21 of the threshold (packed_blocks.BIAS): less
        # (threshold - 2**22), no slot borrows, and bit 22 is set iff the slot was at least the threshold.
        width = SLOT // 8
        below = (threshold - (1 << THRESHOLD_BIT)).to_bytes(width, "little") * block.size
        bit = (1 << THRESHOLD_BIT).to_bytes(width, "little") * block.size
        marks = (total - int.from_bytes(below, "little")) & int.from_bytes(bit, "little")
        tops = marks.to_bytes(width * block.size, "little")[THRESHOLD_BIT // 8::width]
        mark = 1 << (THRESHOLD_BIT % 8)
        at = tops.find(mark)
        while at >= 0:
            found.append(start + at)
            at = tops.find(mark, at + 1)
        start += block.size
    return found
