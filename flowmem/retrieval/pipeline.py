"""Search: from a question to ranked, provenance-carrying evidence items.

1. analyze the question: terms, names, phrases, numbers, dates, intent (query.py);
2. candidates: the user's messages holding a question, option or feedback word, with
   BM25 of each message and of the windows and segments around it, over the user's
   own statistics (candidates.py, bm25.py, fts.py);
3. rankings over those messages (signals.py), fused by weighted reciprocal rank
   (fusion.py): the head for precision, the tail with its own weights for recall;
4. the guarded state-update rerank (state_update.py);
5. items: messages first, then windows of new evidence (selection.py), each with the
   signals that put it there; content is the stored messages verbatim, with their
   day and resolved times (items.py).

How it weighs and bounds each step is one Ranking (ranking.py), given by the caller.

Every ordering ends in a stable key (session tag, position), never storage order.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..storage.reader import Reader
from ..storage.store import Store
from . import signals, state_update
from .candidates import Key, Limits, Pool, build
from .fusion import fuse, ranks
from .items import item
from .query import Query, analyze
from .ranking import Ranking
from .selection import Pick, select

SIGNALS = ("bm25", "window", "segment", "coverage", "phrase", "names", "speaker", "numbers", "dated")


def candidates(reader: Reader, user_key: int, query: Query, ranking: Ranking) -> Pool:
    """The candidate pool (candidates.py) under this ranking's limits."""
    return build(reader, user_key, query, Limits(ranking.k1, ranking.b, ranking.pool_size, ranking.context_size,
                                                 ranking.feedback_docs, ranking.feedback_terms,
                                                 ranking.postings_budget))


def rankings(query: Query, pool: Pool) -> Dict[str, Dict[Key, float]]:
    """Every signal's scores over the pool (adjacency comes later: it needs a first order)."""
    out: Dict[str, Dict[Key, float]] = {name: getattr(signals, name)(query, pool) for name in SIGNALS}
    out.update(signals.options(query, pool))
    out["time"] = signals.time_order(query, pool, out["bm25"] or out["window"])
    out["feedback"] = signals.feedback(query, pool)
    return out


def rank(pool: Pool, scored: Dict[str, Dict[Key, float]],
         ranking: Ranking) -> Tuple[List[Key], Dict[Key, float], Dict[str, Dict[Key, int]]]:
    """Messages in fused order, their fused scores, and every ranking's ranks (for audit).

    The first `head_size` places come from the fused rankings (with the neighbours
    of the best hits fused in); the rest from the same fusion with the tail's own
    weights (pseudo-relevance feedback, the speaker): the head is for precision, the
    tail for finding evidence the question's words miss.
    """
    weights = dict(ranking.weights)
    for name in scored:
        if name.startswith("option"):
            weights[name] = ranking.weight("options")
    ranked = {name: ranks(scores) for name, scores in sorted(scored.items())}
    fused = fuse(ranked, weights, ranking.rrf_k)
    if ranking.weight("adjacency") > 0:
        best = _ordered(fused, pool, ranking.adjacency_top)
        ranked["adjacency"] = ranks(signals.adjacency(pool, best, ranking.adjacency_top))
        fused = fuse({"adjacency": ranked["adjacency"]}, weights, ranking.rrf_k, base=fused)
    tail_weights = dict(weights, **dict(ranking.tail_weights))
    if tail_weights == weights or len(fused) <= ranking.head_size:
        return _ordered(fused, pool), fused, _used(ranked, weights)
    # The tail's fusion is the head's plus the change in weight of the rankings the tail reweighs.
    changed = {name: tail_weights[name] - weights.get(name, 0.0) for name in ranked
               if tail_weights.get(name, 0.0) != weights.get(name, 0.0)}
    tail_fused = fuse({name: ranked[name] for name in changed}, changed, ranking.rrf_k, base=fused)
    head = _ordered(fused, pool, ranking.head_size)
    in_head = set(head)
    tail = [key for key in _ordered(tail_fused, pool) if key not in in_head]
    # Scores must not increase down the list: tail scores are capped at the head's last.
    floor = fused[head[-1]]
    merged = {key: fused[key] for key in head}
    merged.update((key, min(tail_fused[key], floor)) for key in tail)
    audit = _used(ranked, {name: max(weights.get(name, 0.0), tail_weights.get(name, 0.0)) for name in ranked})
    return head + tail, merged, audit


def _used(ranked: Dict[str, Dict[Key, int]], weights: Mapping[str, float]) -> Dict[str, Dict[Key, int]]:
    """The ranks of the rankings that carry weight: what an item's `signals` report."""
    return {name: r for name, r in ranked.items() if weights.get(name, 0.0) > 0}


def _ordered(fused: Mapping[Key, float], pool: Pool, first: Optional[int] = None) -> List[Key]:
    """Highest fused score first (only the `first` best if given); equal scores by session tag,
    then position: never by storage order."""
    messages = pool.messages

    def order(key: Key) -> Tuple[float, str, int]:
        return -fused[key], messages[key].tag, key[1]

    return sorted(fused, key=order) if first is None else heapq.nsmallest(first, fused, key=order)


def update_states(query: Query, pool: Pool, order: Sequence[Key], scores: Mapping[Key, float],
                  text_of: Callable[[Key], str],
                  ranking: Ranking) -> Tuple[List[Key], Dict[Key, float], List[Tuple[Key, Key]]]:
    """The guarded state-update rerank (state_update.py).

    Scores are then capped by the score above, so they still never rise down the
    list: a message passed by its update takes the update's (lower) score.
    """
    new_order, moves = state_update.rerank(query, pool, order, text_of, ranking.state_update_window)
    if not moves:
        return new_order, dict(scores), moves
    adjusted = dict(scores)
    for above, key in zip(new_order, new_order[1:]):
        adjusted[key] = min(adjusted[key], adjusted[above])
    return new_order, adjusted, moves


def picks(pool: Pool, order: Sequence[Key], scores: Mapping[Key, float], ranking: Ranking, top_k: int) -> List[Pick]:
    """The views that fill the result (selection.py), a few spare for content deduplication."""
    return select(order, scores, pool, top_k, ranking.view_kind, ranking.message_share, spare=20)


def search(store: Store, user_id: str, question: str, top_k: int, options: Sequence[str],
           ranking: Ranking) -> List[Dict[str, Any]]:
    """The `top_k` best evidence items of `user_id`'s memory for `question`, ranked as `ranking` says.

    The question is read with the index settings of the snapshot searched, not those
    the ranking was made with: another process may have rebuilt the index since.
    """
    if top_k <= 0:
        return []
    with store.reading() as reader:
        ranking = ranking._replace(stem=reader.settings.stem, resolve_times=reader.settings.resolve_times)
        query = analyze(question, options, ranking.stem, ranking.resolve_times)
        if not query.terms:
            return []
        user_key = reader.user_key(user_id)
        if user_key is None:
            return []
        pool = candidates(reader, user_key, query, ranking)
        order, fused, ranked = rank(pool, rankings(query, pool), ranking)
        order, fused, moves = update_states(query, pool, order, fused, lambda key: reader.message_row(*key).content,
                                              ranking)
        if moves:
            # audit: which messages the state-update rerank moved, as the update or as what it updates
            ranked = dict(ranked, state_update=dict([(o, "updated") for _, o in moves] + [(n, "update") for n, _ in moves]))
        chosen = picks(pool, order, fused, ranking, top_k)
        out: List[Dict[str, Any]] = []
        seen_contents = set()
        for pick in chosen:
            if len(out) == top_k:
                break
            audit = {name: ranks[pick.anchor] for name, ranks in sorted(ranked.items()) if pick.anchor in ranks}
            result = item(pool, pick, [reader.message_row(*key) for key in pick.keys()], audit, ranking)
            if result["content"] in seen_contents:
                continue  # identical contents appear once
            seen_contents.add(result["content"])
            out.append(result)
        return out
