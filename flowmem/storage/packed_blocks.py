"""Vectors packed to be scored all at once against one query: per component, an int of a slot per vector.

Each component of every vector sits in its own SLOT-bit slot of that component's int
(stored as component + OFFSET, text/meaning.py, so non-negative), and `bias` packs, per
vector, BIAS - OFFSET x the sum of its stored components. A query's scores are then one
multiplication of each component's int by a small int, summed onto `bias` (sums()): C
loops over the vectors, not Python ones, and every slot ends as the vector's dot product
with the query plus one constant, BIAS + OFFSET x the sum of the query's components.

The ints are cut into blocks of at most BLOCK vectors: multiplying many ints of a few KB
each is about twice as fast as one int of hundreds of KB, whose digits no longer stay in
the processor's cache (docs/meaning.md). New vectors join the last block until it is full;
the oldest leave from the first (without_oldest()).

A slot is 24 bits, not the 32 of text/meaning.py's sums of word vectors: a dot product of
two int8 vectors of 256 components, plus the constant, stays within 2**24 (BIAS), and the
multiplications' cost follows the ints' length (a quarter less time and memory than 32).
"""
from __future__ import annotations

import heapq
import sys
from array import array
from typing import Container, List, NamedTuple, Optional, Sequence, Tuple

from ..text.meaning import OFFSET

SLOT = 24  # bits of a slot
# Added to every slot of sums(): with 256 int8 components |q.v| < 2**22 and |OFFSET x sum(q)| < 2**22, so
# every slot stays within 0 and 2**24; and BIAS - OFFSET x sum(v + OFFSET) >= 2**23 - 128 x 255 x 256 > 0.
BIAS = 1 << 23
BLOCK = 4096  # vectors of one block's ints
UINT = "I" if array("I").itemsize == 4 else "L"  # a 4-byte unsigned array (model_vectors.py too)


def pack(components: bytes) -> int:
    """The packed int of `components` (bytes, each an int8 + OFFSET), one a slot, first lowest."""
    slots = bytearray(len(components) * 3)
    slots[0::3] = components
    return int.from_bytes(slots, "little")


def unpack(value: int, count: int) -> "array[int]":
    """The `count` slots of a packed int (or of a sum of them) as unsigned ints, first lowest."""
    narrow = value.to_bytes(count * 3, "little")
    wide = bytearray(count * 4)
    wide[0::4], wide[1::4], wide[2::4] = narrow[0::3], narrow[1::3], narrow[2::3]
    out = array(UINT)
    out.frombytes(wide)
    if out.itemsize != 4:  # pragma: no cover - no platform flowmem runs on has no 4-byte array type
        raise RuntimeError("no 4-byte unsigned array type")
    if sys.byteorder == "big":  # pragma: no cover
        out.byteswap()
    return out


class Block(NamedTuple):
    columns: Tuple[int, ...]  # per component, that component of each vector, packed (first vector lowest)
    bias: int  # packed, BIAS - OFFSET x the sum of each vector's stored components
    size: int  # vectors in the block


Blocks = Tuple[Block, ...]


def appended(blocks: Blocks, dims: int, columns: Sequence[int], size: int) -> Blocks:
    """`blocks` with `size` more vectors, newer than those in them, their `dims` components packed in `columns`."""
    out, start = list(blocks), 0
    while start < size:
        last = out.pop() if out and out[-1].size < BLOCK else Block((0,) * dims, 0, 0)
        take = min(BLOCK - last.size, size - start)
        mask = (1 << (SLOT * take)) - 1
        piece = [(column >> (SLOT * start)) & mask for column in columns] if size > take else list(columns)
        width = SLOT * last.size
        # Each slot of sum(piece) is at most 255 x dims: OFFSET times it is below BIAS (above), so no slot borrows.
        bias = int.from_bytes(BIAS.to_bytes(3, "little") * take, "little") - OFFSET * sum(piece)
        joined = tuple(c | (p << width) for c, p in zip(last.columns, piece)) if width else tuple(piece)
        out.append(Block(joined, last.bias | (bias << width), last.size + take))
        start += take
    return tuple(out)


def without_oldest(blocks: Blocks, drop: int, kept: int) -> Tuple[Blocks, List[Tuple[int, List[int]]]]:
    """(`blocks` without their oldest `drop` vectors; those, as (count, their first `kept` components'
    packed ints) per piece, oldest first)."""
    out, gone = list(blocks), []
    while drop > 0 and out:
        first = out.pop(0)
        if first.size <= drop:
            gone.append((first.size, list(first.columns[:kept])))
            drop -= first.size
            continue
        bits = SLOT * drop
        mask = (1 << bits) - 1
        gone.append((drop, [column & mask for column in first.columns[:kept]]))
        out.insert(0, Block(tuple(column >> bits for column in first.columns), first.bias >> bits,
                            first.size - drop))
        drop = 0
    return tuple(out), gone


def sums(blocks: Blocks, query: Sequence[int]) -> List[int]:
    """Per block, its packed scores (each slot a vector's dot product with `query` plus the constant)."""
    out = []
    for block in blocks:
        total = block.bias
        for weight, column in zip(query, block.columns):
            total += (weight + OFFSET) * column
        # Each slot: sum((q + OFFSET) * (v + OFFSET)) + BIAS - OFFSET * sum(v + OFFSET) = q.v + OFFSET * sum(q) + BIAS
        out.append(total)
    return out


def scores(blocks: Blocks, packed: Sequence[int]) -> "array[int]":
    """The slots of sums()' `packed` scores, every vector's in turn, as unsigned ints."""
    out = unpack(0, 0)
    for total, block in zip(packed, blocks):
        out.extend(unpack(total, block.size))
    return out


def constant(query: Sequence[int], dims: int) -> int:
    """What sums() adds to each dot product with `query`'s first `dims` components."""
    return BIAS + OFFSET * sum(query[:dims])


def largest(scores: Sequence[int], count: int, docs: Sequence[int], passing: Optional[Container[int]]) -> List[int]:
    """The positions of the `count` largest of `scores` whose doc (`docs`, in the same order) `passing`
    holds (all if None), largest first, the later of equal ones first: a key per position."""
    latest_first = range(len(scores) - 1, -1, -1)
    return heapq.nlargest(count, latest_first if passing is None else (i for i in latest_first if docs[i] in passing),
                          key=scores.__getitem__)
