"""Vectors packed to be scored all at once against one query: per component, an int of a slot per vector.

Each component of every vector sits in its own SLOT-bit slot of that component's int
(text/meaning.py: stored as component + OFFSET, so non-negative), and `bias` packs, per
vector, BIAS - OFFSET x the sum of its stored components. A query's scores are then one
multiplication of each component's int by a small int, summed onto `bias` (sums()): C
loops over the vectors, not Python ones, and every slot ends as the vector's dot product
with the query plus one constant, BIAS + OFFSET x the sum of the query's components.

The ints are cut into blocks of at most BLOCK vectors: multiplying many ints of a few KB
each is about twice as fast as one int of hundreds of KB, whose digits no longer stay in
the processor's cache (docs/meaning.md). New vectors join the last block until it is full;
the oldest leave from the first (without_oldest()).
"""
from __future__ import annotations

from array import array
from typing import List, NamedTuple, Sequence, Tuple

from ..text.meaning import OFFSET, SLOT, unpack

BIAS = 1 << 31  # added to every slot of sums(): dot products are within +-2**31 less OFFSET x 2**16 x dims
BLOCK = 4096  # vectors of one block's ints


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
        # Each slot of sum(piece) is at most 255 x dims: OFFSET times it is below BIAS, so no slot borrows.
        bias = int.from_bytes(BIAS.to_bytes(4, "little") * take, "little") - OFFSET * sum(piece)
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
