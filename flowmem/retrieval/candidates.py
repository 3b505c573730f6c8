"""The candidate pool of one search: which messages are considered, with their BM25 scores.

1. The messages holding a question or option term, read from the message postings of
   the asking user only (fts.py). Past `pool_size` messages the pool keeps the best
   by BM25 without length normalisation, which needs no further reads. When nothing
   said matches, the latest messages of a speaker the question names stand in.
2. Pseudo-relevance feedback (feedback.py): the distinctive words of the best
   `feedback_docs` messages stand in for what the question did not say; the messages
   holding the best `feedback_terms` of them join the pool and get a feedback score.
3. Windows and segments around the best `context_size` messages, scored by BM25
   from their messages' term counts (context.py).

Every BM25 uses the user's own statistics and idf per view kind. Under a search's
filter (filters.py) only the messages it passes enter the pool, at each of these
steps and the bridges' and the question period's, before any bound counts them; the
statistics stay the user's all the same (build() says why).
"""
from __future__ import annotations

import heapq
import re
from datetime import date as Date
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ..storage import fts
from ..storage.postings import count_rows
from ..storage.reader import Reader
from ..storage.rows import ViewRow
from ..storage.views import KINDS, MESSAGE
from ..text.period import index_tokens
from ..text.stem import stem
from ..text.tokenize import split_speaker
from . import bm25, bridges, context, feedback, meaning
from .filters import DocFilter
from .query import Query

Key = Tuple[int, int]  # (session_key, position in session)


class Message(NamedTuple):
    key: Key
    session_id: str
    tag: str
    speaker: Tuple[str, ...]
    timestamp_ms: Optional[int]
    tokens: Tuple[str, ...]
    spans: Tuple[Tuple[int, int], ...]  # the dates the text mentions or implies: (first, last) day ordinals
    content: str  # the stored text: read for asks only, by the few messages the reply signal looks at
    turn: Optional[Tuple[int, int]] = None  # (first, last) of its turn (views.turn_spans()) if of 2+ messages

    def turn_span(self) -> Tuple[int, int]:
        """(first, last) position of its turn; the message alone where the turn is not known."""
        return self.turn or (self.key[1], self.key[1])

    @property
    def asks(self) -> bool:
        """Whether the text asks something (_asks()): the next message, by someone else, is likely its answer."""
        return _asks(self.content)

    @property
    def dated(self) -> bool:
        """Whether the text mentions or implies a date."""
        return bool(self.spans)


class Pool(NamedTuple):
    """Candidates of one search: views holding a question term, their messages, and scores."""

    messages: Dict[Key, Message]
    views: Dict[int, ViewRow]  # doc_id -> view
    view_bm25: Dict[int, float]  # doc_id -> BM25 of the question's terms, within the view's kind
    option_view_bm25: List[Dict[int, float]]  # per option: doc_id -> BM25 of the option's terms
    idf: Dict[str, float]  # question or option term -> idf among message views
    feedback: Dict[Key, float]  # message -> summed weight of the feedback words it holds
    matched: List[Key]  # messages holding a question or feedback word: the only ones with tokens
    hits: Dict[Key, frozenset]  # message -> the question and option terms it holds
    best_bm25: Dict[str, Dict[Key, float]]  # kind -> message -> best BM25 of the pool's views of that kind holding it
    related: Dict[Key, float]  # message -> summed idf x strength of the related terms it holds (bridges.py)
    typo: Dict[Key, float]  # message -> summed weight of the near spellings of unseen question words it holds
    meaning: Dict[Key, float] = {}  # message -> cosine of its meaning vector with the question's (meaning.py)
    word_match: float = 1.0  # idf share of the question's words the best message holds (unseen words count too)
    unseen: float = 0.0  # idf share of the question's words (speakers aside) that no message of the user holds
    meaning_only: bool = False  # no message matched in words: every candidate came by meaning (a fallback)
    bursts: bool = False  # some message's turn is more than one message (typed chat; never in a written one)


class Limits(NamedTuple):
    """BM25 parameters and the pool's bounds (from the Config, through the Ranking: ranking.py)."""

    k1: float
    b: float
    pool_size: int
    context_size: int
    feedback_docs: int
    feedback_terms: int
    postings_budget: int
    period_size: int
    related_share: float  # share of a related word's idf x strength counted in the BM25 scores
    meaning_pool: int  # messages nearest the question in meaning that join the pool (meaning.py)
    meaning_scan: int  # the user's latest messages the meaning channel scores


class _Scorer:
    """BM25 against one user's statistics, kind by kind, with document frequencies fetched as needed."""

    def __init__(self, reader: Reader, user_key: int, limits: Limits):
        self.reader, self.user_key, self.limits = reader, user_key, limits
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
        return bm25.weighted_scores(present, weights, tf, lengths, n_docs, total, self.limits.k1, self.limits.b)


def build(reader: Reader, user_key: int, query: Query, limits: Limits, keep: Optional[DocFilter] = None) -> Pool:
    """The pool for `query` in the memory of the user with key `user_key`.

    keep: the search's filter (filters.py), None for none: only the messages it passes
    become candidates, and only the windows and segments all of whose messages pass.
    """
    # Under a filter, BM25 keeps the user's statistics (idf and average lengths of all their
    # messages), not the passing messages': a message then scores the same with or without a
    # filter, and the filtered statistics would need every posting of every word read again.
    scorer = _Scorer(reader, user_key, limits)
    wanted = list(dict.fromkeys(query.terms + [t for option in query.options for t in option]))
    scorer.need(wanted)
    tf = _question_postings(reader, user_key, wanted, scorer, limits, keep)
    kept = bm25.best_docs(tf, {t: scorer.idf(MESSAGE, t) for t in tf}, limits.k1, limits.pool_size)
    if not kept:
        # Nothing said matches; a question that names a speaker still gets their latest messages.
        spoken = {doc for _, doc in reader.postings(user_key, fts.SPEAKER, query.terms)}
        kept = sorted(spoken if keep is None else keep.passing(spoken), reverse=True)[: limits.pool_size]
    found = reader.message_views(user_key, kept)
    tf = _restrict(tf, found)
    lengths = {d: v.length for d, v in found.items()}
    option_scores = [scorer.score(option, MESSAGE, tf, lengths, {}) for option in query.options]
    related_bridge, typo_bridge = _bridges(reader, user_key, query, scorer, limits)
    related, typo = bridges.doc_weights(related_bridge), bridges.doc_weights(typo_bridge)
    if keep is not None:
        related, typo = keep.per_doc(related), keep.per_doc(typo)
    found.update(reader.message_views(user_key, bridges.bridge_docs([related, typo], found, bridges.MAX_BRIDGE_DOCS)))
    absent = [t for t in query.terms if not scorer.df[(MESSAGE, t)]]
    scale = bridges.stand_ins(query, absent, related_bridge, limits.related_share) if absent else {}
    for term, per_doc in sorted(count_rows(p for p in related_bridge.postings if p[0] in scale).items()):
        tf[term] = {d: c for d, c in per_doc.items() if d in found}
    terms = list(query.terms) + sorted(scale)
    scores = scorer.score(terms, MESSAGE, tf, {d: v.length for d, v in found.items()}, scale)
    feedback_docs = feedback.extend(reader, user_key, found, scores, tf, set(wanted), limits, keep)
    found.update(reader.message_views(user_key, _period_docs(reader, user_key, query, scorer, limits, found, keep)))
    # Counted, not read: a speaker's name labels half of a heavy user's messages.
    speakers = {t for _, t in reader.doc_freqs(user_key, query.terms, (fts.SPEAKER,))}
    asked = [t for t in query.terms if t not in speakers]  # what the question asks about, its speakers aside
    near = _nearness(reader, user_key, asked, scorer, limits, keep)
    meaning_only = not found and bool(near.nearest)
    found.update(reader.message_views(user_key, [d for d in near.nearest if d not in found]))
    view_keep = None if keep is None else keep.view_passes
    best = context.best(found, scores, limits.context_size)
    nearby = context.around(reader, found, best, view_keep)
    # Windows and segments around the messages found by meaning come with them, as with words.
    nearby.update(context.around(reader, found, sorted(near.nearest), view_keep))
    scores.update(context.scores(reader, scorer.score, query.terms, tf, found, nearby))
    pool_views = dict(found)
    pool_views.update(nearby)
    matched = sorted((v.session_key, v.first) for v in found.values())
    turns = context.turns_around(reader, found, best[:context.TURNS_AROUND], view_keep)
    messages = _messages(reader, pool_views, set(matched), turns)
    idf = {t: scorer.idf(MESSAGE, t) for t in wanted if scorer.df[(MESSAGE, t)]}
    hits = _hits(wanted, tf, found)
    return Pool(messages, pool_views, scores, option_scores, idf, _keyed(feedback_docs, found), matched,
                hits, best_per_message(scores, pool_views), _keyed(related, found),
                _keyed(typo, found), near.cosines(messages),
                *_word_shares(asked, scorer, hits), meaning_only,
                any(m.turn is not None for m in messages.values()))


def _nearness(reader: Reader, user_key: int, asked: Sequence[str], scorer: _Scorer, limits: Limits,
              keep: Optional[DocFilter]) -> meaning.Nearness:
    """The meaning channel's scores and nearest messages (meaning.py) for the question's terms `asked`
    (the speakers' names left out: they are said all through a conversation)."""
    if limits.meaning_pool <= 0 or limits.meaning_scan <= 0:
        return meaning.NOTHING
    stems = asked if reader.settings.stem else [stem(t) for t in asked]
    idf = {s: scorer.idf(MESSAGE, t) for s, t in zip(stems, asked)}
    return meaning.nearness(reader, user_key, stems, idf, limits.meaning_pool, limits.meaning_scan, keep)


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
    best = max((sum(w for t, w in zip(asked, weights) if t in present) for present in hits.values()),
               default=0.0)
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
             limits: Limits) -> Tuple[bridges.Bridge, bridges.Bridge]:
    """The related-term and near-spelling bridges (bridges.py): their terms' weights and postings.

    Only terms the user's messages hold are read, rarest first within `postings_budget` and
    BRIDGE_POSTINGS: a common related word costs many postings and weighs little.
    """
    chinese = bridges.related_chinese(query)
    strengths = bridges.related_terms(query, chinese)
    scorer.need(list(strengths), (MESSAGE,))
    bounded = limits._replace(postings_budget=min(limits.postings_budget, bridges.BRIDGE_POSTINGS))
    present = _affordable([t for t in strengths if scorer.df[(MESSAGE, t)]], scorer, bounded)
    related = bridges.Bridge({t: scorer.idf(MESSAGE, t) * strengths[t] for t in present},
                             bridges.whole_words(chinese, reader.postings(user_key, MESSAGE, present)))
    df = {t: scorer.df[(MESSAGE, t)] for t in query.terms}
    near = bridges.near_words(reader, user_key, bridges.misspelt(reader, user_key, query, df))
    for t, (_, n) in near.items():
        scorer.df.setdefault((MESSAGE, t), n)
    spelt = _affordable(sorted(near), scorer, bounded)
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


def _affordable(terms: Sequence[str], scorer: _Scorer, limits: Limits) -> List[str]:
    """The terms whose postings are read: rarest first, while their messages fit `postings_budget`.

    The rarest term is always read. In a large memory a very common word would cost
    tens of thousands of postings and, having a tiny idf, hardly move a score; once
    rarer words have found enough candidates it is left out. A memory of a few
    thousand messages never reaches the budget.
    """
    chosen: Set[str] = set()
    used = 0
    for t in sorted(terms, key=lambda t: (scorer.df[(MESSAGE, t)], t)):
        n = scorer.df[(MESSAGE, t)]
        if chosen and used + n > limits.postings_budget:
            break
        chosen.add(t)
        used += n
    return [t for t in terms if t in chosen]


def _question_postings(reader: Reader, user_key: int, terms: Sequence[str], scorer: _Scorer, limits: Limits,
                       keep: Optional[DocFilter]) -> Dict[str, Dict[int, int]]:
    """{term: {doc: count}} of the question's and options' terms read within `postings_budget` (_affordable()).

    Under a filter the budget counts only the messages that pass, each term read to be
    counted, rarest first: a word common in the whole memory but not among the messages
    that pass is read, as it would be in a memory of those messages alone.
    """
    if keep is None:
        return reader.term_frequencies(user_key, _affordable(terms, scorer, limits))
    ordered = [t for t in sorted(terms, key=lambda t: (scorer.df[(MESSAGE, t)], t)) if scorer.df[(MESSAGE, t)]]
    # Not sorted as reader.term_frequencies() gives them: no reader of tf depends on its order
    # (best_docs() sorts the terms; the scores, context and hits go through the query's terms).
    return feedback.within_budget(reader, user_key, ordered, limits.postings_budget, keep, len, batch=1)


def _period_docs(reader: Reader, user_key: int, query: Query, scorer: _Scorer, limits: Limits,
                 found: Mapping[int, ViewRow], keep: Optional[DocFilter]) -> List[int]:
    """Messages said (or naming a day) inside the question's periods that are not in the pool yet.

    At most `period_size`, and no more than the pool has room for; the postings read
    are bounded as the question's words' are (_affordable). Those holding the most
    period tokens (said inside and naming a day inside) first, then by doc id.
    """
    room = min(limits.period_size, limits.pool_size - len(found))
    if not query.periods or room <= 0:
        return []
    tokens = index_tokens([(Date.fromordinal(a), Date.fromordinal(b)) for a, b in query.periods])
    scorer.need(tokens)
    counts: Dict[int, int] = {}
    for _, doc in reader.postings(user_key, MESSAGE, _affordable(tokens, scorer, limits)):
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
    for session_key in sorted(positions):
        view = some_view[session_key]
        session = reader.session(view)
        features, rows, turn_of = session.messages, session.rows, session.turns
        session_id, tag = view.session_id, view.tag
        for seq in sorted(positions[session_key]):
            key = (session_key, seq)
            speaker, timestamp, tokens, spans = features[seq]
            out[key] = Message(key, session_id, tag, speaker, timestamp,
                               tokens if key in matched else (), spans, rows[seq].content,
                               turn_of.get(seq))
    return out


def _asks(content: str) -> bool:
    """Whether a message's text asks something: it holds a question mark (ASCII or full-width),
    or, typed without one, it opens as a question does ("where are u guys going", "did you book it").

    Anywhere, not only at its end: "Nice! Where was that? [shares a photo]" asks too
    (on LoCoMo dev, weight_reply's best objective was 0.7215 so, 0.7198 with end-only).
    """
    if "?" in content or "\uff1f" in content:
        return True
    return bool(_OPENING.match(split_speaker(content)[1]))


# A question typed without its mark: a question word that opens no exclamation ("what a day"),
# or a verb asking someone ("did you", "are u", "can we").
_OPENING = re.compile(r"\s*(?:(?:what|where|which|who|whom|whose|when|why|how)\b(?!\s+(?:a|an|nice|cool|fun|great|"
                      r"lovely|sweet|awesome|amazing|funny|sad)\b)|(?:do|does|did|are|is|was|were|have|has|had|can|"
                      r"could|will|would|should|shall)\s+(?:you|u|ya|ye|we|they|he|she|it|i|your|ur)\b)",
                      re.IGNORECASE)
