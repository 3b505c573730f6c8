"""Search: from a question to ranked, provenance-carrying evidence items.

Search is two functions, so that serving, tuning and the ablation ladder rank with
one code path:

1. prepare(): everything search reads from the database. The question is analyzed
   with the index settings of the snapshot read (query.py): its terms, names,
   phrases, numbers, dates, intent. The candidate pool is built: the user's messages
   holding a question, option or feedback word, with BM25 of each message and of the
   windows and segments around it, over the user's own statistics (candidates.py,
   context.py, bm25.py, fts.py); under a search's filters, of the messages that pass
   them only (filters.py). Every signal's scores over the pool are computed (signals.py).
2. ranked_items(): from a prepared question and a Ranking to the final items, in
   order. The signals are fused by weighted reciprocal rank (fusion.py): the head for
   precision, the tail with its own weights for recall; then the guarded state-update
   rerank (state_update.py); then the views that fill the slots, messages first and
   windows of new evidence after (selection.py); then the items, each with the
   signals that put it there, content the stored messages verbatim with their day and
   resolved times (items.py), identical contents once.

search() is prepare() then ranked_items(). tools/tune.py prepares each question once
and calls ranked_items() with every trial's Ranking, so a tuned figure is a served one
(tests/test_tuning.py); tools/ablation.py measures through search() itself.

Words used here: a signal's *scores* ({message: score}, signals.py); its *ranks*
(the competition ranks of those scores, fusion.py); the *fused scores*; the *order*
(messages best first); the *Ranking* (ranking.py): the settings that weigh and bound
every step, given by the caller.

Every ordering ends in a stable key (session tag, position), never storage order.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence

from ..storage.ids import message_id
from ..storage.reader import Reader
from ..storage.rows import MessageRow
from ..storage.store import Store
from ..text.period import may_name_period
from ..text.timeexpr import is_date_token
from . import current_state, fallback, meaning, model_channel, rerank, signals, state_update, strength
from .bridges import respelt_names
from .candidates import build
from .filters import DocFilter, Filters
from .fusion import competition_ranks, fuse
from .items import Session, result_item
from .model_channel import ModelQuestion
from .pool import Key, Pool
from .query import Query, analyze, scoped
from .ranking import Ranking
from .selection import select_views
from .spread import spread, thin_turns

STATE_UPDATE = "state_update"  # what an item's `signals` report of the state-update rerank (not a signal)
REPLACED_BY = "replaced_by"  # an item's `signals`: the id of the newer statement of what it states (current_state.py)
_AUDITED_NEAREST = 100  # a fallback by meaning with no places reports the meaning ranks of this many
_SPARE_PICKS = 20  # picks beyond top_k: a pick whose content repeats an earlier one's gives its slot up


class Prepared(NamedTuple):
    """A question ready to be ranked: what it asks, its candidate pool and every signal's scores over it.

    `message_row(key)` gives a pool message's stored row. It reads only what prepare()
    brought into memory, so a Prepared outlives its read transaction: tools/tune.py
    ranks each one again with every trial's weights.
    """

    query: Query
    pool: Pool
    signal_scores: Dict[str, Dict[Key, float]]  # signal -> message -> score (signal_scores())
    message_row: Callable[[Key], MessageRow]


class Ordered(NamedTuple):
    """Messages best first, with their scores (never rising down the order) and what the items report."""

    order: List[Key]
    scores: Dict[Key, float]
    audit: Dict[str, Dict[Key, Any]]  # signal -> message -> its rank; STATE_UPDATE -> message -> its role


class Found(NamedTuple):
    """What a search returns: its items, best first, and how strong their evidence is (strength.py)."""

    items: List[Dict[str, Any]]
    evidence: str  # "strong", "weak" or "none"
    model_waiting: int = 0  # the user's messages the embedder has given no vector yet (model_channel.py)


def search(store: Store, user_id: str, question: str, top_k: int, options: Sequence[str],
           ranking: Ranking, filters: Optional[Filters] = None, model: Optional[ModelQuestion] = None) -> Found:
    """The `top_k` best evidence items of `user_id`'s memory for `question`, ranked as `ranking` says,
    and the grade of their evidence.

    options: the question's answer options (each gets a signal of its own); filters: the
    messages the search keeps to (filters.py), None for all. One read snapshot:
    prepare(), then the final order and its items; when nothing matches, the user's latest
    messages (that pass the filters), marked as such (fallback.py): a user with memories never
    gets an empty list, unless no message of theirs passes the filters. The grade is
    strength.grade() of the final order's first messages; "none" for a fallback and for
    items found by meaning alone. model: the question's vector by the operator's embedder
    (model_channel.py), None for none.
    """
    if top_k <= 0:
        return Found([], strength.NONE)
    with store.reading() as reader:
        prepared = prepare(reader, user_id, question, options, ranking, filters, model)
        items: List[Dict[str, Any]] = []
        evidence = strength.NONE
        if prepared is not None:
            ordered = final_order(prepared, ranking)
            items = items_of(prepared, ordered, ranking, top_k)
            if items and not prepared.pool.meaning_only:
                evidence = strength.grade(strength.features(prepared.query, prepared.pool, ordered.order),
                                          ranking.evidence_model)
        if not items:  # nothing matched: a user with memories still gets the latest (fallback.py)
            user_key = reader.user_key(user_id)
            if user_key is not None:
                keep = None if filters is None else DocFilter(reader, user_key, filters)
                items = fallback.latest_items(reader, user_key, top_k, ranking, keep)
        return Found(items, evidence, prepared.pool.model_waiting if prepared is not None else 0)


def prepare(reader: Reader, user_id: str, question: str, options: Sequence[str],
            ranking: Ranking, filters: Optional[Filters] = None,
            model: Optional[ModelQuestion] = None) -> Optional[Prepared]:
    """Everything search reads for `question` in `user_id`'s memory; None when nothing can match.

    reader: the snapshot searched. The question is read with that snapshot's index
    settings, not those `ranking` was made with: another process may have rebuilt the
    index since. ranking: its limits bound the candidate pool. filters: only the messages
    they pass are candidates (filters.py). None when the question has no terms or the
    user is unknown.
    """
    index = reader.settings
    query = analyze(question, options, index.stem, index.resolve_times)
    if not query.terms:
        return None
    user_key = reader.user_key(user_id)
    if user_key is None:
        return None
    if index.resolve_times and may_name_period(question):
        query = scoped(query, reader.memory_days(user_key))
    query = respelt_names(reader, user_key, query)
    keep = None if filters is None else DocFilter(reader, user_key, filters)
    pool = build(reader, user_key, query, ranking, keep, model)  # bounded by the ranking's own settings, by name
    return Prepared(query, pool, signal_scores(query, pool), lambda key: reader.message_row(*key))


def signal_scores(query: Query, pool: Pool) -> Dict[str, Dict[Key, float]]:
    """Every signal's scores over the pool, by signal name (signals.py).

    Adjacency is not among them: it needs a first fused order (fuse_signals()).
    """
    scores = {name: signal(query, pool) for name, signal in signals.SIGNALS.items()}
    scores.update(signals.option_signals(query, pool))
    return scores


def ranked_items(prepared: Prepared, ranking: Ranking, top_k: int) -> List[Dict[str, Any]]:
    """The `top_k` best evidence items for a prepared question, ranked as `ranking` says: what search returns.

    The signals are fused (fuse_signals()), the state-update rerank applied
    (rerank_state_updates()), the views that fill the slots chosen (selection.py) and
    made items (items.py); an item whose content repeats an earlier one's is left out.
    """
    return items_of(prepared, final_order(prepared, ranking), ranking, top_k)


def final_order(prepared: Prepared, ranking: Ranking) -> Ordered:
    """The pool's messages in the order the items follow: fused (fused_order()), the head reranked
    (rerank_head()), state updates (rerank_state_updates()), spread for a question asking for many,
    the turns of typed chat thinned, the nearest in meaning placed (place_by_meaning())."""
    ordered = rerank_state_updates(prepared, rerank_head(prepared, fused_order(prepared, ranking), ranking), ranking)
    ordered = rerank_current_state(prepared, ordered, ranking)
    if prepared.query.many:
        order, scores = spread(ordered.order, ordered.scores, ranking.spread_keep, ranking.spread_slots,
                               ranking.spread_gap)
        ordered = ordered._replace(order=order, scores=scores)
    if prepared.pool.bursts:  # typed chat; in a written conversation nothing would move
        order, scores = thin_turns(ordered.order, ordered.scores, prepared.pool)
        ordered = ordered._replace(order=order, scores=scores)
    ordered = place_by_meaning(prepared, ordered, ranking)
    blend = model_channel.blend(prepared.pool, ordered.order, ranking)  # the embedder's own ranking
    return ordered if blend is None else Ordered(blend[0], blend[1], dict(ordered.audit, **{signals.MODEL: blend[2]}))


def rerank_current_state(prepared: Prepared, ordered: Ordered, ranking: Ranking) -> Ordered:
    """The statements of the asked-about thing in time order in their own places (current_state.py); each
    place keeps its score, and an older statement's item names the newest that replaced it (REPLACED_BY).
    Not when the state-update rerank has moved an update already: a said change is surer than the times."""
    if ordered.audit.get(STATE_UPDATE):
        return ordered
    order, replaced = current_state.rerank(prepared.query, prepared.pool, ordered.order, ranking.current_state_window)
    if order == ordered.order:
        return ordered
    scores = dict(ordered.scores)
    scores.update((key, ordered.scores[was]) for key, was in zip(order, ordered.order) if key != was)
    messages = prepared.pool.messages
    marks = {older: message_id(messages[newer].tag, newer[1]) for older, newer in replaced.items()}
    return Ordered(order, scores, dict(ordered.audit, **{REPLACED_BY: marks}) if marks else ordered.audit)


def items_of(prepared: Prepared, ordered: Ordered, ranking: Ranking, top_k: int) -> List[Dict[str, Any]]:
    """The `top_k` items of the final order: the views that fill the slots (selection.py), each an item
    (items.py) with the signals that put its message there; an item whose content repeats an earlier one's
    is left out."""
    picks = select_views(ordered.order, ordered.scores, prepared.pool, top_k, ranking.view_kind,
                         ranking.message_share, spare=_SPARE_PICKS)
    items: List[Dict[str, Any]] = []
    seen_contents = set()
    audited = [(name, ranks) for name, ranks in sorted(ordered.audit.items()) if ranks]  # once, not per item
    for pick in picks:
        if len(items) == top_k:
            break
        audit: Dict[str, Any] = {name: ranks[pick.anchor] for name, ranks in audited if pick.anchor in ranks}
        if prepared.pool.meaning_only:
            audit[fallback.FALLBACK] = fallback.NEAREST_MEANING  # no word matched: a fallback, by meaning
        rows = [prepared.message_row(key) for key in pick.keys()]
        anchor = prepared.pool.messages[pick.anchor]
        item = result_item(pick, Session(anchor.session_id, anchor.tag), rows, audit, ranking)
        if item["content"] in seen_contents:
            continue  # identical contents appear once
        seen_contents.add(item["content"])
        items.append(item)
    return items


def fused_order(prepared: Prepared, ranking: Ranking) -> Ordered:
    """The pool's messages in fused order (fuse_signals()), the options' and meaning's weights set for this question."""
    option_weight = ranking.weight(signals.OPTIONS) * signals.options_boost(prepared.query, prepared.pool,
                                                                             ranking.options_boost_max)
    gate = 0.0 if _dated(prepared.query) else meaning.gate(prepared.pool.word_match, ranking.meaning_closed_at)
    meaning_weight = ranking.weight(signals.MEANING) * gate
    return fuse_signals(prepared.pool, prepared.signal_scores, ranking, option_weight, meaning_weight)


def rerank_head(prepared: Prepared, ordered: Ordered, ranking: Ranking) -> Ordered:
    """`ordered` with its first `rerank_depth` messages and the `rerank_nearest` nearest in meaning
    reordered by the learned weights over their evidence (rerank.py); as it was with the rerank off or
    for a question naming a day or period (_dated(): as the meaning gate, the word vectors know no dates)."""
    if not reranks(prepared, ranking):
        return ordered
    weights = ranking.rerank_vector(prepared.pool.meaning_by_model) or ()  # not None: reranks() says it is on
    pool = prepared.pool
    keys = rerank.candidates(ordered.order, pool, ranking.rerank_depth, ranking.rerank_nearest)
    evidence = rerank.features(prepared.query, pool, ordered.order, ordered.scores, keys, pool.asked)
    tags = {key: pool.messages[key].tag for key in keys}
    order, scores = rerank.reordered(ordered.order, ordered.scores, keys, evidence, weights, tags)
    return ordered._replace(order=order, scores=scores)


def place_by_meaning(prepared: Prepared, ordered: Ordered, ranking: Ranking) -> Ordered:
    """`ordered` with the nearest in meaning at `meaning_places` (meaning.placed()); their items report
    their meaning rank whether or not the gate left the signal a weight.

    The places in the head count only for questions whose words the memory mostly never
    holds (`meaning_unseen`), and that name no day or period (_dated()). They come after the
    learned rerank (rerank_head()): with both, the synthetic paraphrase group keeps its Hit@10
    and the natural lives gain (docs/results.md, Natural questions).
    """
    pool = prepared.pool
    asks_in_other_words = pool.unseen >= ranking.meaning_unseen and not _dated(prepared.query)
    places = [p for p in ranking.places() if p > ranking.head_size or asks_in_other_words]
    if not pool.meaning or not (places or pool.meaning_only):
        return ordered
    nearest = meaning.nearest_first(pool.meaning, len(places) + max(places, default=_AUDITED_NEAREST))
    order, scores = meaning.placed(ordered.order, ordered.scores, nearest, places)
    ranks = competition_ranks({key: pool.meaning[key] for key in nearest})  # what the items report
    return Ordered(order, scores, dict(ordered.audit, **{signals.MEANING: ranks}))


def reranks(prepared: Prepared, ranking: Ranking) -> bool:
    """Whether rerank_head() reorders this question's head: the rerank on, and no day or period asked."""
    return ranking.rerank_vector() is not None and not _dated(prepared.query)


def _dated(query: Query) -> bool:
    """Whether the question names a day or a period: the meaning channel's gate and head places stay shut,
    a date having no meaning the word vectors know (its date tokens and period.py find it)."""
    return bool(query.periods) or any(is_date_token(t) for t in query.terms)


def fuse_signals(pool: Pool, scores: Mapping[str, Mapping[Key, float]], ranking: Ranking,
                 option_weight: float, meaning_weight: Optional[float] = None) -> Ordered:
    """The pool's messages in fused order, with their fused scores and every weighted signal's ranks.

    scores: signal_scores(); option_weight: each answer option's signal's weight
    (ranked_items(): weight_options, raised for generic questions: signals.options_boost());
    meaning_weight: the meaning signal's weight in the head (ranked_items(): weight_meaning,
    gated by how well the question's words matched: meaning.gate()), None for weight_meaning.
    The first `head_size` places come from the fused signals (with the neighbours of the
    best hits, and the replies to those that ask, fused in: adjacency, reply); the rest
    from the same fusion with the tail's own weights (pseudo-relevance feedback, the
    speaker): the head is for precision, the tail for finding evidence the question's
    words miss.
    """
    weights = dict(ranking.weights())
    for name in scores:
        if signals.is_option_signal(name):
            weights[name] = option_weight
    if meaning_weight is not None:
        weights[signals.MEANING] = meaning_weight
    signal_ranks = {name: competition_ranks(by_message) for name, by_message in sorted(scores.items())}
    fused = fuse(signal_ranks, weights, ranking.rrf_k, own_k=_own_k(ranking))
    fused = _fuse_neighbours(pool, signal_ranks, fused, weights, ranking)
    tail_weights = dict(weights, **dict(ranking.tail_weights()))
    if tail_weights == weights or len(fused) <= ranking.head_size:
        return Ordered(_best_first(fused, pool), fused, _weighted(signal_ranks, weights))
    return _head_and_tail(pool, signal_ranks, fused, weights, tail_weights, ranking)


def _fuse_neighbours(pool: Pool, signal_ranks: Dict[str, Dict[Key, int]], fused: Dict[Key, float],
                     weights: Mapping[str, float], ranking: Ranking) -> Dict[Key, float]:
    """`fused` with the signals read from its own best messages: adjacency and reply (signals.py).

    Both look at the same first order, so neither's picks depend on the other's.
    """
    top = ranking.adjacency_top
    neighbour_signals = ((signals.ADJACENCY, signals.adjacency), (signals.REPLY, signals.reply))
    wanted = [(name, signal) for name, signal in neighbour_signals if weights.get(name, 0.0) > 0]
    if not wanted:
        return fused
    best = _best_first(fused, pool, top)
    for name, signal in wanted:
        signal_ranks[name] = competition_ranks(signal(pool, best, top))
    return fuse({name: signal_ranks[name] for name, _ in wanted}, weights, ranking.rrf_k, base=fused)


def _head_and_tail(pool: Pool, signal_ranks: Dict[str, Dict[Key, int]], fused: Dict[Key, float],
                   weights: Mapping[str, float], tail_weights: Mapping[str, float], ranking: Ranking) -> Ordered:
    """The best `head_size` messages by `fused`, then the others by the tail's fusion."""
    # The tail's fusion is the head's plus the change in weight of the signals the tail reweighs.
    changed = {name: tail_weights[name] - weights.get(name, 0.0) for name in signal_ranks
               if tail_weights.get(name, 0.0) != weights.get(name, 0.0)}
    tail_fused = fuse({name: signal_ranks[name] for name in changed}, changed, ranking.rrf_k, base=fused,
                      own_k=_own_k(ranking))
    head = _best_first(fused, pool, ranking.head_size)
    in_head = set(head)
    tail = [key for key in _best_first(tail_fused, pool) if key not in in_head]
    # Scores must not increase down the list: tail scores are capped at the head's last.
    floor = fused[head[-1]]
    scores = {key: fused[key] for key in head}
    scores.update((key, min(tail_fused[key], floor)) for key in tail)
    either = {name: max(weights.get(name, 0.0), tail_weights.get(name, 0.0)) for name in signal_ranks}
    return Ordered(head + tail, scores, _weighted(signal_ranks, either))


def _own_k(ranking: Ranking) -> Dict[str, float]:
    """The signals fused with a constant of their own: meaning, whose first ranks must stand apart
    when the question's words found little (with rrf_k's 60 its rank 1 and rank 10 differ by a sixth)."""
    return {signals.MEANING: ranking.meaning_rrf_k, signals.MODEL: ranking.model_rrf_k}


def _weighted(signal_ranks: Dict[str, Dict[Key, int]], weights: Mapping[str, float]) -> Dict[str, Dict[Key, int]]:
    """The ranks of the signals that carry weight: what an item's `signals` report."""
    return {name: ranks for name, ranks in signal_ranks.items() if weights.get(name, 0.0) > 0}


def _best_first(fused: Mapping[Key, float], pool: Pool, first: Optional[int] = None) -> List[Key]:
    """Highest fused score first (only the `first` best if given); equal scores by session tag,
    then position: never by storage order."""
    if first is not None and first <= 0:
        return []
    messages = pool.messages
    # Only messages scoring at least the `first`-th best score can be among the `first` best
    # (the head's 10, adjacency's 3): just those get sort keys.
    floor = sorted(fused.values(), reverse=True)[first - 1] if first is not None and first < len(fused) else None
    # Sort keys made in one pass, not by a Python call per comparison's key; the position in
    # `fused` last, as a stable sort on (score, tag, position) would order full ties.
    decorated = [(-score, messages[key].tag, key[1], i) for i, (key, score) in enumerate(fused.items())
                 if floor is None or score >= floor]
    decorated.sort()
    keys = list(fused)
    return [keys[entry[3]] for entry in decorated[:first]]


def rerank_state_updates(prepared: Prepared, ordered: Ordered, ranking: Ranking) -> Ordered:
    """The guarded state-update rerank (state_update.py) of a fused order.

    Scores are then capped by the score above, so they still never rise down the
    list: a message passed by its update takes the update's (lower) score. The items
    of the messages moved report it (STATE_UPDATE: "update" or "updated").
    """
    order, moves = state_update.rerank(prepared.query, prepared.pool, ordered.order,
                                       lambda key: prepared.message_row(key).content, ranking.state_update_window)
    if not moves:
        return ordered._replace(order=order)
    scores = dict(ordered.scores)
    for above, key in zip(order, order[1:]):
        scores[key] = min(scores[key], scores[above])
    roles = dict([(older, "updated") for _, older in moves] + [(newer, "update") for newer, _ in moves])
    return Ordered(order, scores, dict(ordered.audit, **{STATE_UPDATE: roles}))

