"""The operator's own embedder as a ranking: the user's messages nearest the question by that model.

When an embedder is configured (flowmem/embedding.py), the service fetches the question's
vector before the search's read snapshot opens and hands it here quantised as the
messages' are (storage/model_vectors.py). Every message of the user that has a vector is
scored at once (packed integer dot products, no Python loop over them); the `model_pool`
nearest join the candidate pool, and each pool message's cosine is the `model` signal,
fused with the others by its weight (weight_model, tail_weight_model, model_rrf_k).

Without an embedder, or when the question's vector did not come, the pool has no model
scores and the fusion is the one without it, byte for byte.
"""
from __future__ import annotations

import heapq
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..storage import model_vectors
from ..storage.model_vectors import HeldModelVectors
from ..storage.reader import Reader
from .filters import DocFilter

Key = Tuple[int, int]  # (session_key, position in session)


class ModelQuestion(NamedTuple):
    """The question's vector by the operator's embedder: int8 components (model_vectors.components())."""

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


def nearness(reader: Reader, user_key: int, question: ModelQuestion, size: int,
             keep: Optional[DocFilter] = None) -> ModelNearness:
    """Every vector of the user's scored against `question`, and the `size` nearest that `keep` passes."""
    held = reader.held_model_vectors(user_key, len(question.components))
    if not held.docs:
        return ModelNearness(held, (), 0, [])
    slots = model_vectors.scores(held, question.components)
    docs = held.docs
    passing = None if keep is None else keep.passing(docs)
    # Nearest first, the later (newer) of equal ones first: a stable key, never storage order.
    best = heapq.nlargest(size, (i for i in range(len(slots) - 1, -1, -1) if passing is None or docs[i] in passing),
                          key=slots.__getitem__) if size > 0 else []
    return ModelNearness(held, slots, model_vectors.constant(question.components), [docs[i] for i in best])
