"""A stand-in embedder for tests and benches: a text's words hashed into buckets, standard library only.

Texts sharing words are near and every run gives the same vectors, which is all a test of
the embedder's plumbing (tests/fake_embedder.py) or a bench of its cost
(tools/bench_embedder_refresh.py) needs; it knows no meaning.
"""
from __future__ import annotations

import hashlib
import math
import re
from typing import List


def vector(text: str, dims: int) -> List[float]:
    """A text's vector: its lowercased words hashed into `dims` buckets, unit length (a bucket-1 one for none)."""
    out = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        out[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(x * x for x in out))
    if norm == 0:
        out[1], norm = 1.0, 1.0
    return [x / norm for x in out]
