"""How strong a search's evidence is: "strong", "weak" or "none", beside the items it returns.

A search always returns items (the contract's consumers read them), and the fused scores
say only how each item ranks against the others, not whether any of them answers: a
question whose answer is not in the memory gets ten items scored like real hits. So
each search also grades what its best messages show (features()):

- how much of the question's idf the best message holds (the pool's `word_match`), how
  much no message of the user holds at all (`unseen`), and how much the first and the
  best of the first three of the final order hold;
- how far the meaning channel's nearest stands above the user's usual (its 20th nearest),
  and that cosine itself;
- whether the question names a participant whom none of the first three messages is
  said by or names, and how much more of its idf the best message holds than the best said
  by them (asked of the wrong person, as LoCoMo's adversarial questions are);
- whether the first message holds what the question asks for (an amount, a day, a name,
  a place: rerank.asked_for()).

A logistic score over them (weights learned, with two thresholds, by
tools/calibrate_evidence.py on the tuning half of the unanswerable and answerable sets,
and shipped in data/evidence.json with the figures of both halves) gives the grade: below
`none_below` "none", below `weak_below` "weak", else "strong". A search that matched
nothing in words (the latest messages, or the nearest by meaning alone: fallback.py) is
"none" whatever its score.
"""
from __future__ import annotations

import heapq
import json
import math
import pkgutil
from typing import Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

from .pool import Key, Pool
from .query import Query
from .rerank import asked_for, holds_asked

STRONG, WEAK, NONE = "strong", "weak", "none"
GRADES = (STRONG, WEAK, NONE)
FEATURES = (
    "word_match",  # idf share of the question's words (its speakers aside) the best message holds
    "unseen",  # idf share of them no message of the user holds
    "first_share",  # idf share the first message of the final order holds
    "best3_share",  # the largest share among the first three
    "sure",  # the nearest cosine less the 20th nearest (0 without meaning)
    "nearest",  # the nearest cosine (0 without meaning)
    "other_person",  # the question names a participant whom none of the first three is said by or names
    "named_gap",  # the best share held less the best held by a message said by a participant the question names
    "wants",  # +1 the first message holds what is asked for (amount, day, name, place), -1 not, 0 nothing asked
)
DATA = "data/evidence.json"  # inside the package, read with pkgutil (a .pyz holds it in its zip)
_FIRST = 3  # the messages whose shares and speakers are read


class Model(NamedTuple):
    """A logistic score over FEATURES and the two thresholds on it."""

    weights: Tuple[float, ...]
    bias: float
    none_below: float
    weak_below: float


def shipped() -> Model:
    """The model in data/evidence.json, read once, as ranking.py's default."""
    raw = json.loads(pkgutil.get_data(__name__.rsplit(".", 1)[0], DATA) or b"{}")
    return model_of(raw)


def model_of(raw: Mapping[str, object]) -> Model:
    """A Model from its JSON form: {"weights": {feature: w}, "bias", "none_below", "weak_below"}."""
    weights = raw.get("weights") or {}
    assert isinstance(weights, dict)
    return Model(tuple(float(weights.get(name, 0.0)) for name in FEATURES), float(raw.get("bias", 0.0)),  # type: ignore
                 float(raw.get("none_below", 0.0)), float(raw.get("weak_below", 0.0)))  # type: ignore


def features(query: Query, pool: Pool, order: Sequence[Key]) -> Tuple[float, ...]:
    """What the first messages of the final `order` show, in FEATURES order."""
    asked = pool.asked
    idf = {t: pool.idf.get(t, 0.0) for t in asked}
    total = sum(idf.values()) or 1.0
    first = list(order[:_FIRST])
    # math.fsum: a frozenset's order follows PYTHONHASHSEED, and a float sum its order; fsum's does not.
    shares = [math.fsum(idf[t] for t in pool.hits.get(k, ()) if t in idf) / total for k in first]
    cosines = heapq.nlargest(20, pool.meaning.values())  # the nearest and the 20th: not a sort of them all
    nearest = cosines[0] if cosines else 0.0
    usual = cosines[min(19, len(cosines) - 1)] if cosines else 0.0
    wanted = asked_for(query.text, query)
    top = pool.messages.get(first[0]) if first else None
    named = pool.participants(query.terms)
    wants = 0.0 if not wanted or top is None else (1.0 if holds_asked(wanted, top.content, top.dated) else -1.0)
    return (pool.word_match, pool.unseen, shares[0] if shares else 0.0, max(shares, default=0.0),
            nearest - usual, nearest, _other_person(named, pool, first), _named_gap(named, pool, idf, total), wants)


def _named_gap(named: Sequence[str], pool: Pool, idf: Mapping[str, float], total: float) -> float:
    """How much more of the question's idf the best message holds than the best said by a participant
    the question names (`named`; 0 when it names none): a question asked of the wrong person."""
    if not named:
        return 0.0
    best = by_named = 0.0
    shares: Dict[frozenset, float] = {}  # summed once per distinct set of terms
    for key, hits in pool.hits.items():
        share = shares.get(hits)
        if share is None:
            share = shares[hits] = math.fsum(idf[t] for t in hits if t in idf) / total
        best = max(best, share)
        message = pool.messages.get(key)
        if message is not None and any(t in message.speaker for t in named):
            by_named = max(by_named, share)
    return best - by_named


def _other_person(named: Sequence[str], pool: Pool, first: Sequence[Key]) -> float:
    """1.0 when the question names a participant (`named`: its terms said as speakers' names) and none
    of `first` is said by them or holds their name; else 0.0."""
    if not named or not first:
        return 0.0
    for key in first:
        message = pool.messages.get(key)
        if message is None:
            continue
        if any(t in message.speaker for t in named) or any(t in pool.hits.get(key, ()) for t in named):
            return 0.0
    return 1.0


def score(vector: Sequence[float], model: Model) -> float:
    """The logistic score of `vector`: the probability the model gives that the evidence answers."""
    z = model.bias + sum(v * w for v, w in zip(vector, model.weights))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def grade(vector: Optional[Sequence[float]], model: Model) -> str:
    """"strong", "weak" or "none" for a search's features; None (nothing matched in words) is "none"."""
    if vector is None:
        return NONE
    s = score(vector, model)
    return NONE if s < model.none_below else WEAK if s < model.weak_below else STRONG


def by_name(vector: Sequence[float]) -> Dict[str, float]:
    """The features named, for the calibration's report."""
    return dict(zip(FEATURES, vector))
