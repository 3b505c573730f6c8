"""Meaning without a model: word vectors distilled offline, and the vectors of texts made from them.

A question often asks in other words than the memory that answers it ("What pet do I
have?" / "She's a retired racing greyhound"). The word vectors in
data/meaning-en.bin were distilled from a sentence-embedding model at build time
(tools/build_meaning/ says how, and regenerates the file); nothing of the model is
needed here. A text's vector is the mean of its content words' vectors: words near
in meaning give texts near in meaning, the words themselves shared or not.

Vectors are int8, `dims` of them (the principal components, most telling first), all of
one length (the table's `scale` for words, TEXT_SCALE for texts), so two vectors compare
by their integer dot product.
Arithmetic on them is done on *packed* vectors: one Python int holding each component,
offset by 128 to be non-negative, in its own SLOT bits. Adding packed vectors adds every
component at once, in C, with no carry between slots while the sums fit; that is what
makes a text's vector cost microseconds rather than a Python loop per component.

The table is read once per process, on first use (table()), and held as one bytes
object and a dict from word to row: a process that never asks about meaning never
reads it. Words are looked up by their Porter stem (stem.py), the form the index holds,
so "injections" finds "inject"; stopwords and words the table lacks (names, numbers)
carry no meaning here.
"""
from __future__ import annotations

import json
import math
import os
import pkgutil
import sys
import threading
from array import array
from operator import mul
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .stem import stem
from .tokenize import STEMMED_STOPWORDS, unique, words

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "meaning-en.bin")
MAGIC = b"flowmem-meaning\n"
SLOT = 32  # bits a component takes in a packed vector: sums of weight x (component + OFFSET) up to 2**32
OFFSET = 128  # added to each int8 component to store it as a byte, and in packed vectors
# A text's vector is quantised at this length, not the table's: a mean of word vectors leans on
# its largest components far more than one word does (LoCoMo dev messages: the largest component
# of a unit mean is 0.36 to 0.55 for 80% of them, 0.64 at most, while the table's scale clips
# components past 0.41), so a length of 160 clips only past 0.79.
TEXT_SCALE = 160.0
_PACKED_WORDS = 4_000  # words whose packed vectors are kept (about 1.1 KB each at 256 dimensions)


class Table:
    """The word vectors: `dims` int8 components (stored + OFFSET) per word, words by stem, and each
    word's weight in a text's mean (1 to 255: rarely said words weigh most)."""

    def __init__(self, dims: int, scale: float, rows: Dict[str, int], vectors: "Buffer", weights: "Buffer"):
        self.dims, self.scale, self.rows, self.vectors, self.weights = dims, scale, rows, vectors, weights
        self._packed: Dict[str, int] = {}
        self._lock = threading.Lock()

    def packed(self, word: str) -> Optional[int]:
        """The word's vector, packed (see the module's docstring); None if the table lacks it."""
        held = self._packed.get(word)
        if held is not None:
            return held
        row = self.rows.get(word)
        if row is None:
            return None
        value = pack(self.vectors[row * self.dims:(row + 1) * self.dims])
        with self._lock:
            if len(self._packed) >= _PACKED_WORDS:
                self._packed.clear()  # words recur in bursts; a full clear is cheaper than an LRU here
            self._packed[word] = value
        return value


_table: Optional[Table] = None
_load_lock = threading.Lock()


def table() -> Table:
    """The shipped word vectors, read on first use and then held for the process."""
    global _table
    if _table is None:
        with _load_lock:
            if _table is None:
                # pkgutil reads it from a directory or a zip alike (the .pyz: tools/build_pyz.py).
                data = pkgutil.get_data(__name__.rpartition(".")[0], "data/" + os.path.basename(DATA))
                if data is None:  # no loader that reads data: never for a directory or a zip
                    raise FileNotFoundError(DATA)
                _table = parse_table(data, DATA)
    return _table


def read_table(path: str) -> Table:
    """Read a word-vector file written by tools/build_meaning/."""
    with open(path, "rb") as f:
        return parse_table(f.read(), path)


def parse_table(data: bytes, path: str) -> Table:
    """The word vectors of a file's decompressed bytes (`path` names it in errors)."""
    if not data.startswith(MAGIC):
        raise ValueError("%s is not a flowmem word-vector file" % path)
    header_end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):header_end].decode("ascii"))
    start = header_end + 1
    word_end = start + header["word_bytes"]
    stems = data[start:word_end].decode("ascii").split("\n")[:-1]
    dims = header["dims"]
    vector_end = word_end + dims * len(stems)
    view = memoryview(data)  # slices of the one buffer read, not copies of it
    vectors, weights = view[word_end:vector_end], view[vector_end:]
    if len(stems) != header["words"] or len(vectors) != dims * len(stems) or len(weights) != len(stems):
        raise ValueError("%s is truncated or inconsistent: %d words, %d vector bytes, %d weights"
                         % (path, len(stems), len(vectors), len(weights)))
    return Table(dims, float(header["scale"]), dict(zip(stems, range(len(stems)))), vectors, weights)


Buffer = Union[bytes, memoryview]


def pack(components: "Buffer") -> int:
    """The packed vector of `components` (bytes, each an int8 + OFFSET)."""
    slots = bytearray(len(components) * 4)
    slots[0::4] = components
    return int.from_bytes(slots, "little")


def unpack(value: int, dims: int) -> "array[int]":
    """The slots of a packed vector (or of a sum of them) as unsigned ints, most telling component first."""
    slots = array("I" if array("I").itemsize == 4 else "L")
    slots.frombytes(value.to_bytes(dims * 4, "little"))
    if slots.itemsize != 4:  # pragma: no cover - no platform flowmem runs on has no 4-byte array type
        raise RuntimeError("no 4-byte unsigned array type")
    if sys.byteorder == "big":  # pragma: no cover
        slots.byteswap()
    return slots


MAX_WORDS = 4096  # content words of one text that count, the first ones: sums up to 4096 x 255 x 8 x 255 fit a slot


def content_words(stems: Iterable[str]) -> List[str]:
    """The distinct stems of a text that can carry meaning (not stopwords), the first MAX_WORDS of them."""
    return [t for t in unique(stems) if t not in STEMMED_STOPWORDS and t.isalpha()][:MAX_WORDS]


def text_stems(text: str) -> List[str]:
    """The content words of `text` as the table keys them (content_words() of its stemmed words)."""
    return content_words(map(stem, words(text)))


def mean_vector(stems: Sequence[str], weights: Optional[Sequence[int]] = None) -> Optional[List[int]]:
    """The int8 vector of the weighted mean of the words' vectors, at the table's length; None if no word is known.

    Each word weighs its table weight, times its entry in `weights` (a positive int per
    word) if given.
    """
    stored = stored_mean(stems, weights)
    return None if stored is None else [b - OFFSET for b in stored]


def stored_mean(stems: Sequence[str], weights: Optional[Sequence[int]] = None) -> Optional[bytes]:
    """mean_vector() as stored (each component + OFFSET, a byte each); None if no word is known.

    Integer arithmetic up to the scaling, and that in one IEEE multiplication and
    rounding per component: the same bytes on every platform and run. Each step is a
    C loop over the components (map()), not a Python one: this runs for every message stored.
    """
    tab = table()
    rows = tab.rows
    total, weight = 0, 0
    for i, word in enumerate(stems):
        packed = tab.packed(word)
        if packed is not None:
            w = tab.weights[rows[word]] * (1 if weights is None else weights[i])
            total += w * packed
            weight += w
    if not weight:
        return None
    shift = OFFSET * weight  # each slot holds the weighted sum of (component + OFFSET)
    slots = unpack(total, tab.dims).tolist()
    # The squared length of the sums less `shift`, exactly, from the slots' sum and sum of squares.
    square = sum(map(mul, slots, slots)) - 2 * shift * sum(slots) + tab.dims * shift * shift
    if square <= 0:
        return None
    factor = TEXT_SCALE / math.sqrt(square)
    low, high = min(slots), max(slots)
    if round(factor * (low - shift)) < -127 or round(factor * (high - shift)) > 127:
        # Rare (TEXT_SCALE): clamp them one by one.
        return bytes(max(1, min(255, round(factor * (s - shift)) + OFFSET)) for s in slots)
    return _scaled(total, tab.dims, factor, shift, high)


def _scaled(total: int, dims: int, factor: float, shift: int, high: int) -> bytes:
    """round(factor * (s - shift)) + OFFSET of each slot s of `total` (all of them 1 to 255), as bytes.

    In the packed int itself, no loop over the components: every slot is multiplied by
    K = factor * 2**R (an integer), offset, cut below bit R and shifted down by R; R is as
    large as the largest slot (`high`) lets each product stay within its SLOT bits.
    """
    bits = min(24, SLOT - 1 - int(factor * high + 1).bit_length())
    k = round(factor * (1 << bits))
    offset = (OFFSET << bits) + (1 << (bits - 1)) - k * shift
    ones, keep = _masks(dims, bits)
    value = ((k * total + offset * ones) & keep) >> bits
    return value.to_bytes(dims * 4, "little")[0::4]


_MASKS: Dict[Tuple[int, int], Tuple[int, int]] = {}


def _masks(dims: int, bits: int) -> Tuple[int, int]:
    """(1 in every slot, every slot's bits from `bits` up) as packed ints of `dims` slots."""
    masks = _MASKS.get((dims, bits))
    if masks is None:
        ones = int.from_bytes(b"\x01\x00\x00\x00" * dims, "little")
        masks = _MASKS[(dims, bits)] = (ones, ones * ((1 << SLOT) - (1 << bits)))
    return masks


def message_vector(stems: Iterable[str]) -> Optional[bytes]:
    """What is stored of a message's meaning: its content words' mean vector (stored_mean()); None without one."""
    return stored_mean(content_words(stems))
