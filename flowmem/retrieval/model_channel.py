"""The operator's own embedder as a ranking: the user's messages nearest the question by that model.

When an embedder is configured (flowmem/embedding.py), the service fetches the question's
vector before the search's read snapshot opens and hands it here quantised as the
messages' are (storage/model_vectors.py). Every message of the user that has a vector is
scored at once (packed integer dot products, no Python loop over them); the `model_pool`
nearest join the candidate pool, and each pool message's cosine is the `model` signal,
fused with the others by its weight (weight_model, tail_weight_model, model_rrf_k).

The question is embedded without the words that name the user's speakers (without_speakers()),
as the meaning channel leaves them out: a name is in half a conversation's messages and says
nothing of what is asked.

Without an embedder, or when the question's vector did not come, the pool has no model
scores and the fusion is the one without it, byte for byte.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..storage import fts, model_vectors
from ..storage.model_vectors import HeldModelVectors
from ..storage.reader import Reader
from ..text.tokenize import tokenize
from .filters import DocFilter
from .fusion import competition_ranks
from .meaning import gate, passing_best
from .pool import Pool
from .ranking import Ranking

Key = Tuple[int, int]  # (session_key, position in session)


class ModelQuestion(NamedTuple):
    """The question's vector by the operator's embedder, quantised as the messages' are (model_vectors.components())."""

    components: Tuple[int, ...]


class ModelNearness(NamedTuple):
    """What the embedder's vectors found for one question."""

    held: Optional[HeldModelVectors]
    slots: Sequence[int]  # per message held, its dot product with the question + `constant`
    constant: int
    nearest: List[int]  # doc ids of the `model_pool` nearest, nearest first

    def cosines(self, keys: Iterable[Key]) -> Dict[Key, float]:
        """The cosine (about: one scale for every vector) with the question of each of `keys` held."""
        if self.held is None:
            return {}
        unit = model_vectors.cosine_unit(self.held.dims)
        out = {}
        for key in keys:
            i = self.held.positions.get(key)
            if i is not None:
                out[key] = (self.slots[i] - self.constant) / unit
        return out

    def waiting(self, n_messages: int) -> int:
        """How many of the user's `n_messages` messages have no vector yet."""
        return max(0, n_messages - (len(self.held.docs) if self.held is not None else 0))


NOTHING = ModelNearness(None, (), 0, [])
_WORD = re.compile(r"\w+")


def without_speakers(reader: Reader, user_id: str, question: str) -> str:
    """`question` without its words that are only the names of `user_id`'s speakers (all of it if that is all)."""
    user_key = reader.user_key(user_id)
    if user_key is None:
        return question
    words = {w: tokenize(w, reader.settings.stem) for w in set(_WORD.findall(question))}
    speakers = {t for _, t in reader.doc_freqs(user_key, sorted({t for ts in words.values() for t in ts}),
                                               (fts.SPEAKER,))}
    if not speakers:
        return question
    kept = _WORD.sub(lambda m: "" if words[m.group(0)] and set(words[m.group(0)]) <= speakers else m.group(0),
                     question)
    return " ".join(kept.split()) or question


def nearness(reader: Reader, user_key: int, question: ModelQuestion, size: int,
             keep: Optional[DocFilter] = None) -> ModelNearness:
    """Every vector of the user's scored against `question`, and the `size` nearest that `keep` passes."""
    held = reader.held_model_vectors(user_key, len(question.components))
    if not held.docs:
        return ModelNearness(held, (), 0, [])
    slots = model_vectors.scores(held, question.components)
    docs = held.docs
    best = passing_best(slots, docs, size, keep) if size > 0 else []  # the later (newer) of equal ones first
    return ModelNearness(held, slots, model_vectors.constant(question.components), [docs[i] for i in best])


def blended(order: Sequence[Key], cosines: Dict[Key, float], weight: float,
            k: float) -> Tuple[List[Key], Dict[Key, float], Dict[Key, int]]:
    """(`order` fused with the embedder's ranking of `cosines`: 1 / (k + place) + weight / (k + model rank);
    the new scores; the model ranks). A message the model ranks and the order lacks comes in; equal scores
    keep the earlier place in `order`, then the model's rank, then the key."""
    ranks = competition_ranks(cosines)
    place = {key: i for i, key in enumerate(order, 1)}
    keys = list(order) + sorted((key for key in ranks if key not in place), key=lambda key: (ranks[key], key))
    scores = {key: (1.0 / (k + place[key]) if key in place else 0.0)
              + (weight / (k + ranks[key]) if key in ranks else 0.0) for key in keys}
    out = sorted(keys, key=lambda key: (-scores[key], place.get(key, len(keys) + 1), ranks.get(key, 0), key))
    return out, scores, ranks


Blended = Tuple[List[Key], Dict[Key, float], Dict[Key, int]]  # (order, scores, the model's ranks)


def blend(pool: Pool, order: Sequence[Key], ranking: Ranking) -> Optional[Blended]:
    """blended() of the final `order` with the embedder's ranking at model_blend, gated by how well the question's
    words matched (meaning.gate(), model_closed_at); None when it would change nothing."""
    weight = ranking.model_blend * gate(pool.word_match, ranking.model_closed_at) if pool.model else 0.0
    return blended(order, pool.model, weight, ranking.model_rrf_k) if weight > 0 else None
