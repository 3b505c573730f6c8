"""The candidate pool of one search: which messages are considered, with their BM25 scores.

1. The messages holding a question or option term, read from the message postings of
   the asking user only (fts.py). Past `candidate_pool` messages the pool keeps the best
   by BM25 without length normalisation, which needs no further reads. When nothing
   said matches, the latest messages of a speaker the question names stand in.
2. Pseudo-relevance feedback (feedback.py): the distinctive words of the best
   `feedback_docs` messages stand in for what the question did not say; the messages
   holding the best `feedback_terms` of them join the pool and get a feedback score.
3. Windows and segments around the best `context_pool` messages, scored by BM25
   from their messages' term counts (context.py).

Every BM25 uses the user's own statistics and idf per view kind. Under a search's
filter (filters.py) only the messages it passes enter the pool, at each of these
steps and the bridges' and the question period's, before any bound counts them; the
statistics stay the user's all the same (build() says why).
"""
from __future__ import annotations

import heapq
from datetime import date as Date
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..storage import fts
from ..storage.postings import count_rows
from ..storage.reader import Reader
from ..storage.rows import ViewRow
from ..storage.views import KINDS, MESSAGE
from ..text.period import index_tokens
from ..text.stem import stem
from . import bm25, bridges, context, feedback, meaning, model_channel
from .filters import DocFilter
from .model_channel import ModelQuestion
from .pool import Key, Message, Pool
from .query import Query
from .ranking import Ranking


class _Scorer:
    """BM25 against one user's statistics, kind by kind, with document frequencies fetched as needed."""

    def __init__(self, reader: Reader, user_key: int, ranking: Ranking):
        self.reader, self.user_key, self.ranking = reader, user_key, ranking
        self.statistics = reader.bm25_statistics(user_key)
        self.df: Dict[Tuple[str, str], int] = {}

    def need(self, tokens: Sequence[str], kinds: Sequence[str] = KINDS) -> None:
        missing = [t for t in dict.fromkeys(tokens) if (MESSAGE, t) not in self.df]
        if missing:
            found = self.reader.doc_freqs(self.user_key, missing, kinds)
            for kind in kinds:
                for t in missing:
                    self.df[(kind, t)] = found.get((kind, t), 0)

    def idf(self, kind: str, token: str) -> float:
        return bm25.idf(self.statistics.get(kind, (0, 0))[0], self.df[(kind, token)])

    def score(self, terms: Sequence[str], kind: str, tf: Mapping[str, Mapping[int, int]],
              lengths: Mapping[int, int], scale: Mapping[str, float]) -> Dict[int, float]:
        """BM25 of `terms` in the docs of `tf`; a term in `scale` (a related word) counts for that share of its idf."""
        n_docs, total = self.statistics.get(kind, (0, 0))
        present = [t for t in terms if tf.get(t)]
        weights = {t: self.idf(kind, t) * scale.get(t, 1.0) for t in present}
        return bm25.weighted_scores(present, weights, tf, lengths, n_docs, total, self.ranking.bm25_k1,
                                    self.ranking.bm25_b)


def build(reader: Reader, user_key: int, query: Query, ranking: Ranking, keep: Optional[DocFilter] = None,
          model: Optional[ModelQuestion] = None) -> Pool:
    """The pool for `query` in the memory of the user with key `user_key`, bounded as `ranking` says.

    keep: the search's filter (filters.py), None for none: only the messages it passes
    become candidates, and only the windows and segments all of whose messages pass.
    The stages, in this order (each a method of _Gathering): the messages holding the
    question's words, the bridges' (related words, near spellings), their BM25, the
    feedback's, the question period's, the nearest in meaning and by the operator's embedder
    (`model`: the question's vector by it, model_channel.py; None for none); then the windows
    and segments around the best, and the Pool.
    """
    gathering = _Gathering(reader, user_key, query, ranking, keep)
    gathering.add_word_matches()
    gathering.add_bridged()
    gathering.score_messages()
    gathering.add_feedback()
    gathering.add_period()
    if model is not None:
        gathering.score_by_model(model)
    gathering.add_nearest_in_meaning()
    return gathering.pool()


class _Gathering:
    """One pool as build() gathers it: what its stages read with, and what they have found so far.

    found: doc id -> message view of every candidate message; tf: term -> doc -> count of
    the terms read; scores: doc -> BM25 of the question's terms (then of the views too).
    """

    def __init__(self, reader: Reader, user_key: int, query: Query, ranking: Ranking, keep: Optional[DocFilter]):
        # Under a filter, BM25 keeps the user's statistics (idf and average lengths of all their
        # messages), not the passing messages': a message then scores the same with or without a
        # filter, and the filtered statistics would need every posting of every word read again.
        self.reader, self.user_key, self.query, self.ranking, self.keep = reader, user_key, query, ranking, keep
        self.scorer = _Scorer(reader, user_key, ranking)
        self.wanted = list(dict.fromkeys(query.terms + [t for option in query.options for t in option]))
        self.found: Dict[int, ViewRow] = {}
        self.tf: Dict[str, Dict[int, int]] = {}
        self.option_scores: List[Dict[int, float]] = []
        self.related: Dict[int, float] = {}
        self.typo: Dict[int, float] = {}
        self.scale: Dict[str, float] = {}
        self.scores: Dict[int, float] = {}
        self.feedback: Dict[int, float] = {}
        self.asked: List[str] = []
        self.near = meaning.NOTHING
        self.meaning_only = False
        self.model = model_channel.NOTHING
        self.nearest: List[int] = []  # doc ids found by meaning, the word vectors' then the embedder's

    def add_word_matches(self) -> None:
        """The best `candidate_pool` messages holding a question or option word, and the options' BM25;
        when nothing said matches, the latest messages of a speaker the question names."""
        reader, user_key, scorer, ranking, keep = self.reader, self.user_key, self.scorer, self.ranking, self.keep
        scorer.need(self.wanted)
        tf = _question_postings(reader, user_key, self.wanted, scorer, ranking, keep)
        kept = bm25.best_docs(tf, {t: scorer.idf(MESSAGE, t) for t in tf}, ranking.bm25_k1, ranking.candidate_pool)
        if not kept:
            spoken = {doc for _, doc in reader.postings(user_key, fts.SPEAKER, self.query.terms)}
            kept = sorted(spoken if keep is None else keep.passing(spoken), reverse=True)[: ranking.candidate_pool]
        self.found = reader.message_views(user_key, kept)
        self.tf = _restrict(tf, self.found)
        lengths = {d: v.length for d, v in self.found.items()}
        self.option_scores = [scorer.score(option, MESSAGE, self.tf, lengths, {}) for option in self.query.options]

    def add_bridged(self) -> None:
        """The messages holding words related to the question's or near spellings of its unseen ones
        (bridges.py); related words of unseen question words stand in for them (`related_share`)."""
        query, found, keep = self.query, self.found, self.keep
        related_bridge, typo_bridge = _bridges(self.reader, self.user_key, query, self.scorer, self.ranking)
        related, typo = bridges.doc_weights(related_bridge), bridges.doc_weights(typo_bridge)
        if keep is not None:
            related, typo = keep.per_doc(related), keep.per_doc(typo)
        self.related, self.typo = related, typo
        found.update(self.reader.message_views(self.user_key, bridges.bridge_docs([related, typo], found,
                                                                                   bridges.MAX_BRIDGE_DOCS)))
        absent = [t for t in query.terms if not self.scorer.df[(MESSAGE, t)]]
        self.scale = bridges.stand_ins(query, absent, related_bridge, self.ranking.related_share) if absent else {}
        for term, per_doc in sorted(count_rows(p for p in related_bridge.postings if p[0] in self.scale).items()):
            self.tf[term] = {d: c for d, c in per_doc.items() if d in found}

    def score_messages(self) -> None:
        """Every message's BM25 of the question's terms and their stand-ins."""
        terms = list(self.query.terms) + sorted(self.scale)
        lengths = {d: v.length for d, v in self.found.items()}
        self.scores = self.scorer.score(terms, MESSAGE, self.tf, lengths, self.scale)

    def add_feedback(self) -> None:
        """The messages holding the feedback words (feedback.py), each with its feedback score."""
        self.feedback = feedback.extend(self.reader, self.user_key, self.found, self.scores, self.tf,
                                        set(self.wanted), self.ranking, self.keep)

    def add_period(self) -> None:
        """Up to `period_pool` messages said, or naming a day, inside the question's period (_period_docs())."""
        docs = _period_docs(self.reader, self.user_key, self.query, self.scorer, self.ranking, self.found, self.keep)
        self.found.update(self.reader.message_views(self.user_key, docs))

    def add_nearest_in_meaning(self) -> None:
        """The `meaning_pool` messages nearest the question in meaning (meaning.py), its speakers aside, and
        the `model_pool` nearest by the operator's embedder (score_by_model()); with model_meaning, the
        embedder's alone: the word vectors are not read."""
        # Counted, not read: a speaker's name labels half of a heavy user's messages.
        speakers = {t for _, t in self.reader.doc_freqs(self.user_key, self.query.terms, (fts.SPEAKER,))}
        self.asked = [t for t in self.query.terms if t not in speakers]
        if not self._model_as_meaning():
            self.near = _nearness(self.reader, self.user_key, self.asked, self.scorer, self.ranking, self.keep)
        self.nearest = self.near.nearest + [d for d in self.model.nearest if d not in self.near.nearest]
        self.meaning_only = not self.found and bool(self.nearest)
        self.found.update(self.reader.message_views(self.user_key, [d for d in self.nearest if d not in self.found]))

    def score_by_model(self, question: ModelQuestion) -> None:
        """Every message's nearness to the question by the operator's embedder (model_channel.py)."""
        self.model = model_channel.nearness(self.reader, self.user_key, question, self.ranking.model_pool, self.keep)

    def _model_as_meaning(self) -> bool:
        return self.ranking.model_meaning and self.model.held is not None and bool(self.model.held.docs)

    def pool(self) -> Pool:
        """The Pool: the windows and segments around the best `context_pool` messages and those found by
        meaning, scored; every message of the pool's views and of the turns around the best."""
        reader, found, scores, near = self.reader, self.found, self.scores, self.near
        view_keep = None if self.keep is None else self.keep.view_passes
        best = context.best(found, scores, self.ranking.context_pool)
        nearby = context.around(reader, found, best, view_keep)
        # Windows and segments around the messages found by meaning come with them, as with words.
        nearby.update(context.around(reader, found, sorted(self.nearest), view_keep))
        scores.update(context.scores(reader, self.scorer.score, self.query.terms, self.tf, found, nearby))
        pool_views = dict(found)
        pool_views.update(nearby)
        matched = sorted((v.session_key, v.first) for v in found.values())
        turns = context.turns_around(reader, found, best[:context.TURNS_AROUND], view_keep)
        matched_keys = set(matched)
        messages = _messages(reader, pool_views, matched_keys, turns)
        hits = _hits(self.wanted, self.tf, found)
        word_match, unseen = _word_shares(self.asked, self.scorer, hits)
        # Past the whole vectors only the messages the words found get their cosine read: reading the
        # others' too cost a heavy user more than it gave (docs/meaning.md).
        model_cosines = self.model.cosines(messages)
        by_model = self._model_as_meaning()  # the operator's embedder in the meaning channel's place
        cosines = model_cosines if by_model else near.cosines(messages, reader, matched_keys)
        return Pool(messages=messages, views=pool_views, view_bm25=scores, option_view_bm25=self.option_scores,
                    idf={t: self.scorer.idf(MESSAGE, t) for t in self.wanted if self.scorer.df[(MESSAGE, t)]},
                    feedback=_keyed(self.feedback, found), matched=matched, hits=hits,
                    best_bm25=best_per_message(scores, pool_views), related=_keyed(self.related, found),
                    typo=_keyed(self.typo, found), meaning=cosines, word_match=word_match,
                    unseen=unseen, meaning_only=self.meaning_only,
                    bursts=any(m.turn is not None for m in messages.values()), asked=tuple(self.asked),
                    model=model_cosines, model_waiting=self._model_waiting(), meaning_by_model=by_model)

    def _model_waiting(self) -> int:
        """How many of the user's messages have no vector of the embedder yet (0 with none asked)."""
        if self.model.held is None:
            return 0
        return self.model.waiting(self.scorer.statistics.get(MESSAGE, (0, 0))[0])


def _nearness(reader: Reader, user_key: int, asked: Sequence[str], scorer: _Scorer, ranking: Ranking,
              keep: Optional[DocFilter]) -> meaning.Nearness:
    """The meaning channel's scores and nearest messages (meaning.py) for the question's terms `asked`
    (the speakers' names left out: they are said all through a conversation)."""
    if ranking.meaning_pool <= 0 or ranking.meaning_scan <= 0:
        return meaning.NOTHING
    stems = asked if reader.settings.stem else [stem(t) for t in asked]
    idf = {s: scorer.idf(MESSAGE, t) for s, t in zip(stems, asked)}
    return meaning.nearness(reader, user_key, stems, idf, ranking.meaning_pool, ranking.meaning_scan,
                            ranking.meaning_rescore, keep)


def _word_shares(asked: Sequence[str], scorer: _Scorer, hits: Mapping[Key, frozenset]) -> Tuple[float, float]:
    """(word match, unseen) of the question's terms `asked`, idf shares of them: those the message
    holding the most holds (1 when one message holds them all), and those the user's memory never
    holds (a word held nowhere counts with the idf of one held nowhere). Related words (bridges.py)
    do not count as held: measured, closing the gate on them lost most of the channel's paraphrase
    gain (docs/meaning.md)."""
    weights = [scorer.idf(MESSAGE, t) for t in asked]
    total = sum(weights)
    if total <= 0:
        return 0.0, 0.0
    best = max((sum(w for t, w in zip(asked, weights) if t in present) for present in set(hits.values())),
               default=0.0)  # each distinct set of terms once: a pool's messages hold few
    unseen = sum(w for t, w in zip(asked, weights) if not scorer.df[(MESSAGE, t)])
    return best / total, unseen / total


def _hits(wanted: Sequence[str], tf: Mapping[str, Mapping[int, int]],
          found: Mapping[int, ViewRow]) -> Dict[Key, frozenset]:
    """Each pool message's question and option terms."""
    holds: Dict[Key, Set[str]] = {}
    for t in wanted:
        for d in tf.get(t, {}):
            if d in found:
                holds.setdefault((found[d].session_key, found[d].first), set()).add(t)
    return {key: frozenset(terms) for key, terms in holds.items()}


def _keyed(per_doc: Mapping[int, float], found: Mapping[int, ViewRow]) -> Dict[Key, float]:
    """{message key: score} of the message views in `found`."""
    return {(found[d].session_key, found[d].first): s for d, s in per_doc.items() if d in found}


def _bridges(reader: Reader, user_key: int, query: Query, scorer: _Scorer,
             ranking: Ranking) -> Tuple[bridges.Bridge, bridges.Bridge]:
    """The related-term and near-spelling bridges (bridges.py): their terms' weights and postings.

    Only terms the user's messages hold are read, rarest first within `postings_budget` and
    BRIDGE_POSTINGS: a common related word costs many postings and weighs little.
    """
    chinese = bridges.related_chinese(query)
    strengths = bridges.related_terms(query, chinese)
    scorer.need(list(strengths), (MESSAGE,))
    budget = min(ranking.postings_budget, bridges.BRIDGE_POSTINGS)
    present = _affordable([t for t in strengths if scorer.df[(MESSAGE, t)]], scorer, budget)
    related = bridges.Bridge({t: scorer.idf(MESSAGE, t) * strengths[t] for t in present},
                             bridges.whole_words(chinese, reader.postings(user_key, MESSAGE, present)))
    df = {t: scorer.df[(MESSAGE, t)] for t in query.terms}
    near = bridges.near_words(reader, user_key, bridges.misspelt(reader, user_key, query, df))
    for t, (_, n) in near.items():
        scorer.df.setdefault((MESSAGE, t), n)
    spelt = _affordable(sorted(near), scorer, budget)
    typo = bridges.Bridge({t: scorer.idf(MESSAGE, t) * 0.5 ** near[t][0] for t in spelt},
                          reader.postings(user_key, MESSAGE, spelt))
    return related, typo


def best_per_message(scores: Mapping[int, float], views: Mapping[int, ViewRow]) -> Dict[str, Dict[Key, float]]:
    """For each view kind, each message's best score among the scored views of that kind holding it."""
    out: Dict[str, Dict[Key, float]] = {kind: {} for kind in KINDS}
    for doc, score in scores.items():
        view = views[doc]
        best = out[view.kind]
        session_key, first, last = view.session_key, view.first, view.last
        for seq in (first,) if first == last else range(first, last + 1):  # most are message views
            key = (session_key, seq)
            if score > best.get(key, 0.0):
                best[key] = score
    return out


def _affordable(terms: Sequence[str], scorer: _Scorer, budget: int) -> List[str]:
    """The terms whose postings are read: rarest first, while their messages fit `budget` (postings_budget).

    The rarest term is always read. In a large memory a very common word would cost
    tens of thousands of postings and, having a tiny idf, hardly move a score; once
    rarer words have found enough candidates it is left out. A memory of a few
    thousand messages never reaches the budget.
    """
    chosen: Set[str] = set()
    used = 0
    for t in sorted(terms, key=lambda t: (scorer.df[(MESSAGE, t)], t)):
        n = scorer.df[(MESSAGE, t)]
        if chosen and used + n > budget:
            break
        chosen.add(t)
        used += n
    return [t for t in terms if t in chosen]


def _question_postings(reader: Reader, user_key: int, terms: Sequence[str], scorer: _Scorer, ranking: Ranking,
                       keep: Optional[DocFilter]) -> Dict[str, Dict[int, int]]:
    """{term: {doc: count}} of the question's and options' terms read within `postings_budget` (_affordable()).

    Under a filter the budget counts only the messages that pass, each term read to be
    counted, rarest first: a word common in the whole memory but not among the messages
    that pass is read, as it would be in a memory of those messages alone.
    """
    if keep is None:
        return reader.term_frequencies(user_key, _affordable(terms, scorer, ranking.postings_budget))
    ordered = [t for t in sorted(terms, key=lambda t: (scorer.df[(MESSAGE, t)], t)) if scorer.df[(MESSAGE, t)]]
    # Not sorted as reader.term_frequencies() gives them: no reader of tf depends on its order
    # (best_docs() sorts the terms; the scores, context and hits go through the query's terms).
    return feedback.within_budget(reader, user_key, ordered, ranking.postings_budget, keep, len, batch=1)


def _period_docs(reader: Reader, user_key: int, query: Query, scorer: _Scorer, ranking: Ranking,
                 found: Mapping[int, ViewRow], keep: Optional[DocFilter]) -> List[int]:
    """Messages said (or naming a day) inside the question's periods that are not in the pool yet.

    At most `period_pool`, and no more than the pool has room for; the postings read
    are bounded as the question's words' are (_affordable). Those holding the most
    period tokens (said inside and naming a day inside) first, then by doc id.
    """
    room = min(ranking.period_pool, ranking.candidate_pool - len(found))
    if not query.periods or room <= 0:
        return []
    tokens = index_tokens([(Date.fromordinal(a), Date.fromordinal(b)) for a, b in query.periods])
    scorer.need(tokens)
    counts: Dict[int, int] = {}
    for _, doc in reader.postings(user_key, MESSAGE, _affordable(tokens, scorer, ranking.postings_budget)):
        if doc not in found:
            counts[doc] = counts.get(doc, 0) + 1
    if keep is not None:
        counts = keep.per_doc(counts)
    return heapq.nsmallest(room, counts, key=lambda d: (-counts[d], d))


def _restrict(tf: Mapping[str, Mapping[int, int]], found: Mapping[int, ViewRow]) -> Dict[str, Dict[int, int]]:
    return {t: {d: c for d, c in per_doc.items() if d in found} for t, per_doc in tf.items()}


def _messages(reader: Reader, views: Mapping[int, ViewRow], matched: Set[Key],
              turns: Mapping[int, Set[int]]) -> Dict[Key, Message]:
    """Every message of the pool's views and of the `turns` around its best (context.turns_around()),
    with what the rankings read of it.

    Only `matched` messages (holding a question or feedback word) carry their tokens:
    the others have none of the words the token-reading rankings look for.
    """
    positions: Dict[int, Set[int]] = {}
    some_view: Dict[int, ViewRow] = {}  # a view of each session: what the session cache is asked with
    for view in views.values():
        held = positions.get(view.session_key)
        if held is None:
            some_view[view.session_key], held = view, positions.setdefault(view.session_key, set())
        held.update((view.first,) if view.first == view.last else range(view.first, view.last + 1))
    for session_key, more in turns.items():
        positions[session_key].update(more)
    out: Dict[Key, Message] = {}
    new = tuple.__new__
    for session_key in sorted(positions):
        view = some_view[session_key]
        session = reader.session(view)
        features, rows, turn_of = session.messages, session.rows, session.turns
        session_id, tag = view.session_id, view.tag
        for seq in sorted(positions[session_key]):
            key = (session_key, seq)
            speaker, timestamp, tokens, spans = features[seq]
            # tuple.__new__, not Message(): a namedtuple's own __new__ is one more Python call a message
            out[key] = new(Message, (key, session_id, tag, speaker, timestamp, tokens if key in matched else (),
                                     spans, rows[seq].content, turn_of.get(seq)))
    return out
