"""The learned rerank of the head: which of the best candidates is the evidence, from what each one shows.

Reciprocal rank fusion (fusion.py) weighs each ranking by one constant for every
question, and its head scores are nearly flat, so a neighbour of the best window, a
greeting that names a participant, or a message matching one weak word can stand
above the message holding the fact; and a fixed gate decides for every question
whether the meaning channel may speak. Here each of the first `rerank_depth`
candidates of the fused order, and the nearest in meaning, gets a vector of evidence
(features()): its fused rank, its meaning rank and cosine and how far that stands above
the rest of the user's memory, how much of the question's idf it holds and whether only
weak words or only the participants' names, whether it holds what the question asks
for (an amount, a day, a name, a place), whether it is only there as context. A linear
score over them orders those candidates; the rest of the order stays as fused.

The weights are data (data/rerank.json), learned offline by tools/learn_rerank.py
(coordinate ascent on reciprocal rank, every dataset weighed alike); with
`rerank_depth` 0 the fused order is kept. The meaning channel's places (pipeline.py
place_by_meaning()) still come after it.
"""
from __future__ import annotations

import bisect
import heapq
import json
import math
import pkgutil
import re
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .pool import Key, Pool
from .query import WHEN, Query

FEATURES = (
    "fused",  # 1 / competition rank in the fused order (1 for the first; equal scores share a rank)
    "fused_log",  # 1 / log2(1 + that rank): falls slower than 1 / rank
    "meaning",  # 1 / rank by cosine among the pool's messages (0 without a cosine)
    "meaning_log",  # 1 / log2(1 + rank) by cosine
    "cosine",  # the cosine itself
    "above",  # cosine less the pool's reference cosine (how far it stands above the user's usual)
    "meaning_unmatched",  # "meaning" x (1 - the question's idf share the best message holds)
    "meaning_log_unmatched",  # "meaning_log" x that
    "meaning_sure",  # "meaning_log" x how far the nearest stands above the reference: how sure the channel is
    "above_unmatched",  # "above" x (1 - that share)
    "neighbour_above",  # how far the nearer of its two neighbours stands above the reference cosine (0 if not)
    "idf_share",  # share of the question's idf (its speakers aside) the message holds
    "weak_only",  # it holds question words, but none as rare as the question's rarest held by any candidate
    "names_only",  # every question word it holds is a name the question says (a greeting that names them)
    "wants",  # +1 when it holds what the question asks for (an amount, a day, a name, a place), -1 when not
    "context_only",  # it holds no question word and was not found by meaning: it is there as context
    "short",  # it has at most three words ("nooo", "omg congrats")
)
DATA = "data/rerank.json"  # inside the package, read with pkgutil (a .pyz holds it in its zip)
MODEL_DATA = "data/rerank-model.json"  # the weights when the operator's embedder gives the meaning cosines
_NUMBER_ASKED = re.compile(r"\bhow (much|many|old|long|far|often|big|tall|heavy|fast)\b|\b(price|cost|salary|pay|"
                           r"earn|rent|budget|number|age|score|weigh)\w*\b", re.I)
_NAME_ASKED = re.compile(r"\b(who|whom|whose|what is (his|her|their|the) name|what'?s (his|her|their) name|"
                         r"called)\b", re.I)
_PLACE_ASKED = re.compile(r"\bwhere\b|\b(which|what) (city|town|country|place|school|company|shop|restaurant)\b",
                          re.I)
_DIGIT = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                    r"fifty|hundred|thousand|dozen|half|k)\b", re.I)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
_PLACE = re.compile(r"\b(in|at|to|from|near|moved|move|living|live)\s+(the\s+)?[A-Z][a-z]+")


def weights(data: str = DATA) -> Dict[str, float]:
    """The shipped weights in `data` (DATA, or MODEL_DATA): {feature: weight}, as ranking.py's default."""
    raw = json.loads(pkgutil.get_data(__name__.rsplit(".", 1)[0], data) or b"{}")
    return {name: float(raw["weights"].get(name, 0.0)) for name in FEATURES}


def asked_for(question: str, query: Query) -> str:
    """What the question asks for: "amount", "day", "name", "place", or "" (anything)."""
    if query.intent == WHEN:
        return "day"
    if _NUMBER_ASKED.search(question):
        return "amount"
    if _NAME_ASKED.search(question):
        return "name"
    if _PLACE_ASKED.search(question):
        return "place"
    return ""


def holds_asked(wanted: str, content: str, dated: bool) -> bool:
    """Whether a message's `content` (`dated`: it mentions a date) holds what asked_for() said is wanted."""
    body = content.split(":", 1)[1] if ":" in content[:26] else content
    if wanted == "amount":
        return bool(_DIGIT.search(body))
    if wanted == "day":
        return dated or bool(_DIGIT.search(body))
    if wanted == "name":
        return bool(_CAPITALISED.search(body.strip()))
    return bool(_PLACE.search(body))


def candidates(order: Sequence[Key], pool: Pool, depth: int, nearest: int) -> List[Key]:
    """The first `depth` of the fused order, then the `nearest` nearest in meaning not among them
    (a cosine above 0: a message pointing away from the question is no nearer than any other)."""
    head = list(order[:depth])
    seen = set(head)
    messages = pool.messages
    by_meaning = heapq.nsmallest(nearest, [(-v, messages[k].tag, k[1], k) for k, v in pool.meaning.items()
                                           if v > 0 and k in messages])
    head += [k for _, _, _, k in by_meaning if k not in seen]
    return head


class _MeaningRanks:
    """Ranks by cosine (1 = nearest; equal cosines by session tag and position, never storage order),
    asked only for the candidates: one sort of the pool's cosines, then a bisection each, rather
    than a rank for every pool message."""

    def __init__(self, cosines: Mapping[Key, float], order_key: Callable[[Key], Tuple[str, int]]):
        self.cosines = cosines
        self.order_key = order_key
        self.ascending = sorted(cosines.values())
        self.groups: Optional[Dict[float, List[Key]]] = None  # cosine -> the messages that have it
        self.sorted_groups: Dict[float, List[Tuple[str, int]]] = {}  # cosine -> their order keys, sorted

    def rank(self, key: Key) -> Optional[int]:
        cosine = self.cosines.get(key)
        if cosine is None:
            return None
        above = len(self.ascending) - bisect.bisect_right(self.ascending, cosine)
        equal = bisect.bisect_right(self.ascending, cosine) - bisect.bisect_left(self.ascending, cosine)
        if equal > 1:  # count the equal ones with a smaller key
            above += bisect.bisect_left(self._tied(cosine), self.order_key(key))
        return above + 1

    def _tied(self, cosine: float) -> List[Tuple[str, int]]:
        """The order keys of the messages whose cosine is `cosine`, sorted: the pool grouped by cosine once,
        at the first tie, each group sorted when first asked. A heavy user's pool holds many ties (a message
        said again), and a walk of the pool per tie was the largest cost of its rerank (docs/results.md)."""
        if self.groups is None:
            self.groups = {}
            for k, v in self.cosines.items():
                self.groups.setdefault(v, []).append(k)
        tied = self.sorted_groups.get(cosine)
        if tied is None:
            tied = self.sorted_groups[cosine] = sorted(map(self.order_key, self.groups[cosine]))
        return tied

    def nth(self, n: int) -> float:
        """The n-th largest cosine (the smallest if fewer); 0 without any."""
        return self.ascending[-min(n, len(self.ascending))] if self.ascending else 0.0


def positions(order: Sequence[Key], keys: Sequence[Key]) -> Dict[Key, int]:
    """Each of `keys`' place in `order` (0 first), those not in it left out; the order is walked only
    as far as the candidates go, a deeper key found by list.index (a C loop)."""
    out = {k: i for i, k in enumerate(order[:len(keys)])}
    for key in keys:
        if key not in out:
            try:
                out[key] = order.index(key)
            except ValueError:
                pass
    return out


def competition_places(order: Sequence[Key], scores: Mapping[Key, float], keys: Sequence[Key]) -> Dict[Key, int]:
    """Each of `keys`' competition place in `order` (0 first; messages of equal fused score share the
    first one's place): a tie's evidence must not depend on how its tie was broken."""
    place = positions(order, keys)
    out = {}
    for key, i in place.items():
        value = scores.get(key)
        while i > 0 and scores.get(order[i - 1]) == value:
            i -= 1
        out[key] = i
    return out


def features(query: Query, pool: Pool, order: Sequence[Key], scores: Mapping[Key, float], keys: Sequence[Key],
             asked: Sequence[str]) -> Dict[Key, Tuple[float, ...]]:
    """Each candidate's evidence, in FEATURES order. scores: the fused ones; asked: the question's terms,
    its speakers aside."""
    place = competition_places(order, scores, keys)
    by_cosine = _MeaningRanks(pool.meaning, lambda k: (pool.messages[k].tag, k[1]))  # a cosine is a pool message's
    reference = by_cosine.nth(20)
    sure = by_cosine.nth(1) - reference
    idf = {t: pool.idf.get(t, 0.0) for t in asked}
    total = sum(idf.values()) or 1.0
    held_best = max((idf.get(t, 0.0) for key in keys for t in pool.hits.get(key, ()) if t in idf), default=0.0)
    names = set(query.names)
    unmatched = 1.0 - pool.word_match
    wanted = asked_for(query.text, query)
    out: Dict[Key, Tuple[float, ...]] = {}
    for key in keys:
        message = pool.messages[key]
        hits = pool.hits.get(key, frozenset())
        held = [t for t in hits if t in idf]
        share = sum(idf[t] for t in held) / total
        cosine = pool.meaning.get(key, 0.0)
        mr = by_cosine.rank(key)
        r = place[key] + 1 if key in place else None
        m = 1.0 / mr if mr else 0.0
        m_log = 1.0 / math.log2(1 + mr) if mr else 0.0
        above = cosine - reference if key in pool.meaning else 0.0
        strongest = max((idf[t] for t in held), default=0.0)
        out[key] = (
            1.0 / r if r else 0.0,
            1.0 / math.log2(1 + r) if r else 0.0,
            m,
            m_log,
            cosine,
            above,
            m * unmatched,
            m_log * unmatched,
            m_log * sure,
            above * unmatched,
            max(0.0, max(pool.meaning.get((key[0], key[1] + d), -1.0) for d in (-1, 1)) - reference),
            share,
            1.0 if held and strongest < 0.5 * held_best else 0.0,
            1.0 if hits and all(t in names for t in hits) else 0.0,
            0.0 if not wanted else (1.0 if holds_asked(wanted, message.content, message.dated) else -1.0),
            1.0 if not hits and not (mr and mr <= 20) else 0.0,
            1.0 if len(message.content.split()) <= 4 else 0.0,
        )
    return out


def score(vector: Sequence[float], weights: Sequence[float]) -> float:
    return sum(v * w for v, w in zip(vector, weights))


def reordered(order: Sequence[Key], scores: Mapping[Key, float], keys: Sequence[Key],
              evidence: Mapping[Key, Tuple[float, ...]], weight_vector: Sequence[float],
              tags: Optional[Mapping[Key, str]] = None) -> Tuple[List[Key], Dict[Key, float]]:
    """`order` with `keys` first, by their learned score (ties by fused order), the rest after as fused.

    The fused scores of the places are kept, capped by the one above, so scores never rise
    down the list. Equal scores keep the fused order; keys outside it go by `tags` (key -> session
    tag), then position: never by storage order.
    """
    place = positions(order, keys)
    tag = tags or {}
    best = sorted(keys, key=lambda k: (-score(evidence[k], weight_vector), place.get(k, len(order)),
                                       tag.get(k, ""), k[1]))
    chosen = set(best)
    out = best + [k for k in order if k not in chosen]
    places = [scores[k] for k in order[:len(best)]]
    new_scores = dict(scores)
    ceiling = None
    for i, key in enumerate(out):
        value = places[i] if i < len(places) else scores.get(key, 0.0)
        if i >= len(best) and ceiling is not None and value <= ceiling:
            break  # the rest keep their fused order, whose scores never rise: all are under the ceiling
        ceiling = value if ceiling is None else min(ceiling, value)
        new_scores[key] = ceiling
    return out, new_scores


def vector(weights_by_name: Mapping[str, float]) -> Optional[Tuple[float, ...]]:
    """The weights in FEATURES order; None when they are all 0 (nothing to rerank by)."""
    out = tuple(float(weights_by_name.get(name, 0.0)) for name in FEATURES)
    return out if any(out) else None
