"""Okapi BM25 exactly as SQLite FTS5's bm25() computes it, over one user's statistics.

FTS5's own bm25() takes the document count and average length of the whole table,
so in a shared table one user's data would move another user's scores. Here the
statistics are the user's own; on a table holding a single user the two agree to the
last bits (tests/test_bm25.py checks that against FTS5 itself).

    idf(t)   = ln((N - n_t + 0.5) / (n_t + 0.5)), or 1e-6 where that is not positive
    score(d) = sum over query terms t of idf(t) * tf*(k1+1) / (tf + k1*(1 - b + b*|d|/avgdl))

FTS5 returns the negated sum (smaller is better); this module returns it positive.
k1 and b are always passed in: their defaults are settings (config.py), declared there
once; FTS5's own bm25() uses k1 = 1.2 and b = 0.75.
"""
from __future__ import annotations

import heapq
import math
from typing import Dict, List, Mapping, Sequence


def idf(n_docs: int, doc_freq: int) -> float:
    """Inverse document frequency with FTS5's floor for terms in half the documents or more."""
    value = math.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))
    return value if value > 0.0 else 1e-6


def weighted_scores(
    terms: Sequence[str],
    weights: Mapping[str, float],
    tf: Mapping[str, Mapping[int, int]],
    lengths: Mapping[int, int],
    n_docs: int,
    total_length: int,
    k1: float,
    b: float,
) -> Dict[int, float]:
    """BM25 of every document holding at least one of `terms`, each term's idf given in `weights`.

    The idf comes from the caller because document frequencies come from the index
    (per user and view kind), not from `tf`. `tf` is {term: {doc: count}}; `lengths`
    gives each such document's token count; `n_docs` and `total_length` are the
    collection's document count and token total; `k1` and `b` are BM25's parameters.
    Each document's sum is taken in the order of `terms`, so results are reproducible.
    """
    if n_docs <= 0:
        return {}
    avg_length = total_length / n_docs if total_length else 1.0
    # Operation order mirrors fts5_aux.c so that scores match FTS5's to the bit.
    out: Dict[int, float] = {}
    for t in terms:
        docs = tf.get(t)
        if not docs:
            continue
        weight = weights[t]
        for doc, count in docs.items():
            norm = k1 * (1.0 - b + b * lengths[doc] / avg_length)
            out[doc] = out.get(doc, 0.0) + weight * ((count * (k1 + 1.0)) / (count + norm))
    return out



def best_docs(tf: Mapping[str, Mapping[int, int]], weights: Mapping[str, float], k1: float, size: int) -> List[int]:
    """The `size` best documents of `tf` by BM25 without length normalisation (ties by doc id).

    Each term weighs `weights[term]` (its idf). Without lengths the bound needs no read
    of the documents: the candidate pool keeps these of all that hold a term.
    """
    pre: Dict[int, float] = {}
    for t in sorted(tf):
        weight = weights[t] * (k1 + 1.0)
        once = weight * 1 / (1 + k1)  # most words occur once in a message: the same float, computed once
        for doc, count in tf[t].items():
            pre[doc] = pre.get(doc, 0.0) + (once if count == 1 else weight * count / (count + k1))
    if len(pre) <= size:
        return sorted(pre, key=lambda d: (-pre[d], d))
    return heapq.nsmallest(size, pre, key=lambda d: (-pre[d], d))
