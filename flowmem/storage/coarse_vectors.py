"""A user's meaning vectors older than those held whole (vectors.py): their first components, in blocks.

So that every message stays comparable in meaning at a bounded cost, a message that
leaves the window of whole vectors keeps only its first DIMS components (the table's
components are principal ones, most telling first), packed as vectors.py packs them:
per component, one int with a SLOT-bit slot per message. The ints are cut into blocks of
BLOCK messages: multiplying many ints of a few KB each is about twice as fast as one
int of hundreds of KB (docs/meaning.md). Search asks for the `count` nearest by these
components (nearest()) and scores those again from their stored vectors.

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

from ..text.meaning import OFFSET, SLOT, pack, unpack

BIAS = 1 << 31  # as vectors.BIAS: every slot is a dot product plus a constant, within +-2**22 of BIAS
DIMS = 32  # components kept of a vector past the window (docs/meaning.md: what each number kept)
BLOCK = 4096  # messages of one block's ints
STRIDE = 8  # every STRIDE-th score is sampled for the threshold
PASSING = 1.5  # the threshold is set for about PASSING x count scores
THRESHOLD_BIT = 24  # a score less the threshold, plus 2**24, is below 2**25: its bit 24 is set iff it passed
BYTES = 8  # a vector's doc id, beside its slots


class Block(NamedTuple):
    columns: Tuple[int, ...]  # per component kept, that component of each message, packed
    bias: int  # packed, BIAS - OFFSET x the sum of each message's kept components
    size: int  # messages in the block


class OldVectors(NamedTuple):
    dims: int  # components kept
    docs: "array[int]"  # doc ids, ascending: position i is the i-th message of the blocks in turn
    blocks: Tuple[Block, ...]


def empty(dims: int) -> OldVectors:
    return OldVectors(min(DIMS, dims), array("q"), ())


def nbytes(old: OldVectors) -> int:
    """What `old` holds in memory, estimated: its slots and its doc ids."""
    return len(old.docs) * ((old.dims + 1) * SLOT // 8 + BYTES)


def joined(old: OldVectors, docs: "array[int]", columns: Sequence[int]) -> OldVectors:
    """`old` with the vectors of `docs` (newer than those in it), their kept components packed in `columns`."""
    blocks, start = list(old.blocks), 0
    while start < len(docs):
        last = blocks.pop() if blocks and blocks[-1].size < BLOCK else Block((0,) * old.dims, 0, 0)
        take = min(BLOCK - last.size, len(docs) - start)
        mask = (1 << (SLOT * take)) - 1
        piece = [(column >> (SLOT * start)) & mask for column in columns]
        width = SLOT * last.size
        # Each slot of sum(piece) is at most 255 x DIMS: OFFSET times it is below BIAS, so no slot borrows.
        bias = int.from_bytes(BIAS.to_bytes(4, "little") * take, "little") - OFFSET * sum(piece)
        blocks.append(Block(tuple(c | (p << width) for c, p in zip(last.columns, piece)),
                            last.bias | (bias << width), last.size + take))
        start += take
    return OldVectors(old.dims, old.docs + docs, tuple(blocks))


def with_rows(old: OldVectors, rows: Sequence[Tuple[int, int, int, bytes]]) -> OldVectors:
    """`old` with `rows` ((doc_id, session_key, position, stored vector), newer than those in it)."""
    for start in range(0, len(rows), BLOCK):
        chunk = rows[start:start + BLOCK]
        kept = b"".join(row[3][:old.dims] for row in chunk)
        old = joined(old, array("q", [row[0] for row in chunk]), [pack(kept[i::old.dims]) for i in range(old.dims)])
    return old


def _sums(old: OldVectors, query: Sequence[int]) -> List[int]:
    """Per block, its packed scores: each slot the message's dot product with `query` on the kept
    components, plus BIAS + OFFSET x the sum of those of `query`."""
    out = []
    for block in old.blocks:
        total = block.bias
        for weight, column in zip(query, block.columns):
            total += (weight + OFFSET) * column
        out.append(total)
    return out


def nearest(old: OldVectors, query: Sequence[int], count: int, passing: Optional[Set[int]] = None) -> List[int]:
    """The positions (in `old.docs`) of the `count` messages whose kept components are nearest `query`'s
    (largest dot product first, the later of equal ones first), of those whose doc `passing` holds (all if None)."""
    sums = _sums(old, query)
    flat = unpack(0, 0)  # an empty array of the slots' type
    for total, block in zip(sums, old.blocks):
        flat.extend(unpack(total, block.size))
    if passing is None and count * STRIDE * 2 < len(flat):
        found = _passed(sums, old.blocks, flat, count)
        if len(found) >= count:
            return heapq.nlargest(count, found, key=lambda i: (flat[i], i))
    latest_first = range(len(flat) - 1, -1, -1)
    docs = old.docs
    return heapq.nlargest(count, latest_first if passing is None else (i for i in latest_first if docs[i] in passing),
                          key=flat.__getitem__)


def _passed(sums: Sequence[int], blocks: Sequence[Block], flat: "array[int]", count: int) -> List[int]:
    """The positions whose score is at least a threshold that a sample of the scores sets for about
    PASSING x `count` of them (the module's docstring)."""
    sample = flat[::STRIDE]
    threshold = heapq.nlargest(max(1, int(PASSING * count / STRIDE)), sample)[-1]
    found: List[int] = []
    start = 0
    for total, block in zip(sums, blocks):
        below = (threshold - (1 << THRESHOLD_BIT)).to_bytes(4, "little") * block.size
        bit = (1 << THRESHOLD_BIT).to_bytes(4, "little") * block.size
        marks = ((total - int.from_bytes(below, "little")) & int.from_bytes(bit, "little"))
        tops = marks.to_bytes(4 * block.size, "little")[THRESHOLD_BIT // 8::4]
        at = tops.find(1)
        while at >= 0:
            found.append(start + at)
            at = tops.find(1, at + 1)
        start += block.size
    return found
