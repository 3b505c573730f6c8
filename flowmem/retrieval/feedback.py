"""Pseudo-relevance feedback: words the question did not say, taken from its best messages.

The distinctive words of the best `feedback_docs` messages of the pool, each weighted by
its frequency there times its idf among the messages of the sessions the search has
read (words()), stand in for what the question did not say. The messages holding the
weightiest `feedback_terms` of them join the pool, while it has room, the best by BM25
without length normalisation first, and each gets a feedback score: the summed weight
of the feedback words it holds (extend()). Their postings are read within the pool's
`postings_budget` (within_budget()). Under a search filter (filters.py) only the messages
that pass join, and only theirs count against the budget.
"""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Sequence, Set

from ..storage.reader import Reader
from ..storage.rows import ViewRow
from . import bm25, bridges
from .filters import DocFilter
from .ranking import Ranking

_BATCH = 8  # feedback words whose postings one query reads


def extend(reader: Reader, user_key: int, found: Dict[int, ViewRow], scores: Mapping[int, float],
           tf: Dict[str, Dict[int, int]], asked: Set[str], ranking: Ranking,
           keep: Optional[DocFilter]) -> Dict[int, float]:
    """The messages holding the feedback words join `found` (their counts join `tf`); returns each
    message's summed weight of the feedback words it holds.

    scores: the pool's BM25 so far (the best are read for words); asked: the question's
    and options' terms, never feedback words; keep: the search's filter, None for none.
    """
    weights = words(reader, found, scores, asked, ranking)
    feedback_docs: Dict[int, float] = {}
    if not weights:
        return feedback_docs
    # The weightiest first, read a few at a time: counting rows as they come spares looking up each
    # word's document frequency in the index, whose cost grows with the index.
    ordered = sorted(weights, key=lambda w: (-weights[w], w))
    extra_tf = within_budget(reader, user_key, ordered, ranking.postings_budget, keep,
                             lambda per_doc: sum(per_doc.values()))  # the rows read
    room = max(0, ranking.candidate_pool - len(found))
    extra = [d for d in bm25.best_docs(extra_tf, weights, ranking.bm25_k1, room + len(found)) if d not in found][:room]
    found.update(reader.message_views(user_key, extra))
    for t, per_doc in extra_tf.items():
        for d in per_doc:
            if d in found:
                feedback_docs[d] = feedback_docs.get(d, 0.0) + weights[t]
    tf.update({t: {d: c for d, c in per_doc.items() if d in found} for t, per_doc in extra_tf.items()
               if t not in tf})
    return feedback_docs


def words(reader: Reader, found: Mapping[int, ViewRow], scores: Mapping[int, float], asked: Set[str],
          ranking: Ranking) -> Dict[str, float]:
    """The `feedback_terms` words that weigh most in the best `feedback_docs` messages.

    A word weighs its frequency in each of those messages times its idf among the
    messages of the sessions the search has read (kept in memory with them), which
    spares a lookup per word in the index.
    """
    if ranking.feedback_docs <= 0 or ranking.feedback_terms <= 0:
        return {}
    best = sorted(scores, key=lambda d: (-scores[d], d))[: ranking.feedback_docs]
    texts = [reader.session(found[d]).messages[found[d].first][2] for d in best]
    sessions = reader.sessions_read()
    n = sum(s.n_messages for s in sessions)
    weight: Dict[str, float] = {}
    for tokens in texts:
        for t in sorted(set(tokens)):
            if t in asked or not bridges.content_word(t):
                continue
            idf = bm25.idf(n, sum(s.doc_freqs.get(t, 0) for s in sessions))
            if idf > 1e-6:  # words in half the messages or more say nothing
                weight[t] = weight.get(t, 0.0) + tokens.count(t) / len(tokens) * idf
    chosen = sorted(weight, key=lambda t: (-weight[t], t))[: ranking.feedback_terms]
    return {t: weight[t] for t in chosen}


def within_budget(reader: Reader, user_key: int, ordered: Sequence[str], budget: int, keep: Optional[DocFilter],
                  cost: Callable[[Mapping[int, int]], int], batch: int = _BATCH) -> Dict[str, Dict[int, int]]:
    """{term: {doc: count}} of the `ordered` terms read in that order, `batch` terms a query, until
    the next term's `cost(its postings)` would take the total past `budget` (the first term is always kept).

    keep: a search's filter; only the postings of the messages it passes are kept and cost. A term
    with none is passed over. Past the budget at most one batch is read for nothing.
    """
    out: Dict[str, Dict[int, int]] = {}
    used = 0
    for start in range(0, len(ordered), batch):
        terms = ordered[start : start + batch]
        tf = reader.term_frequencies(user_key, terms)
        if keep is not None:
            tf = keep.term_frequencies(tf)
        for term in terms:
            per_doc = tf.get(term)
            if not per_doc:
                continue
            spent = cost(per_doc)
            if out and used + spent > budget:
                return out
            out[term] = per_doc
            used += spent
    return out
