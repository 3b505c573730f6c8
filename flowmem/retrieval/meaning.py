"""The meaning channel: the user's messages nearest the question in meaning, words shared or not.

The question's vector is the idf-weighted mean of its content words' vectors
(text/meaning.py), the names of the conversation's speakers left out (they are in half
the messages and say nothing of what is asked); every message's vector was made when it
was stored. The user's latest `scan` messages are scored against it at once
(storage/vectors.py: integer dot products over packed columns); every older message by
its first components (a coarse pass at a bounded cost), the `rescore` nearest of those
scored again from their stored vectors. The `size` nearest of both join the candidate
pool, and every pool message scored exactly gets its cosine as the `meaning` signal
(signals.py).

A question's own words are the better evidence when they find it: a plain fusion of the
two rankings costs precision. So the meaning signal's weight in the head of the ranking
is gated by how well the words matched (gate()): strong when no message holds much of
what the question says (or the memory holds none of its words), quiet when one holds
it all.
"""
from __future__ import annotations

import heapq
import itertools
import math
from typing import Container, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..storage import coarse_vectors, packed_blocks
from ..storage.reader import Reader
from ..storage.vectors import HeldVectors, empty, extended, shifted_dots
from ..text import meaning
from .filters import DocFilter

Key = Tuple[int, int]  # (session_key, position in session)
_MOST_WEIGHT = 8  # a question word's integer weight: its idf over the question's highest, in eighths


class Nearness(NamedTuple):
    """What the channel found for one question: every message scanned, scored, and the nearest."""

    held: Optional[HeldVectors]  # the vectors scanned
    slots: Sequence[int]  # per message held, its dot product with the question's vector + `constant`
    constant: int
    length: float  # the question vector's length x a text vector's: dot product / length = cosine
    nearest: List[int]  # doc ids of the messages nearest the question, nearest first
    rescored: Mapping[Key, int]  # of the messages past the whole vectors, those scored exactly: slot as above
    vector: Sequence[int] = ()  # the question's

    def cosines(self, keys: Iterable[Key], reader: Optional[Reader] = None,
                read: Container[Key] = ()) -> Dict[Key, float]:
        """The cosine with the question of each of `keys` that has a vector: of those past the whole
        vectors and not rescored, only those in `read`, their vectors read from `reader`."""
        out: Dict[Key, float] = {}
        if self.held is None:
            return out
        unscored = []
        for key in keys:
            i = self.held.position(key)
            slot = self.slots[i] if i is not None else self.rescored.get(key)
            if slot is not None:
                out[key] = (slot - self.constant) / self.length
            elif key in read:
                unscored.append(key)
        if unscored and reader is not None and self.vector:
            rows = [(i, *row) for i, row in enumerate(reader.message_vectors_at(unscored))]
            for slot, _, key in _exact_slots(rows, self.vector, self.held.dims):
                out[key] = (slot - self.constant) / self.length
        return out


NOTHING = Nearness(None, (), 0, 1.0, [], {})


def question_vector(stems: Sequence[str], idf: Mapping[str, float]) -> Optional[List[int]]:
    """The question's vector: its content words' vectors weighted by their idf in the user's memory."""
    words = meaning.content_words(stems)
    if not words:
        return None
    most = max(idf.get(w, 0.0) for w in words)
    weights = [max(1, round(_MOST_WEIGHT * idf.get(w, 0.0) / most)) if most > 0 else 1 for w in words]
    return meaning.mean_vector(words, weights)


def nearness(reader: Reader, user_key: int, stems: Sequence[str], idf: Mapping[str, float], size: int,
             scan: int, rescore: int, keep: Optional[DocFilter] = None) -> Nearness:
    """The cosine of the question (its `stems`, weighted by `idf`) with the user's messages: the latest
    `scan` whole, the `rescore` nearest older ones by their first components; and the `size` nearest
    of all that `keep` passes (all if None)."""
    if size <= 0 or scan <= 0:
        return NOTHING
    vector = question_vector(stems, idf)
    if vector is None:
        return NOTHING
    held = reader.held_vectors(user_key, meaning.table().dims, scan)
    if not held.docs:
        return NOTHING
    packed, constant = shifted_dots(held, vector)
    slots = packed.tolist()  # list.index takes a start on Python 3.9, array.index only from 3.10
    length = math.sqrt(sum(c * c for c in vector)) * meaning.TEXT_SCALE
    docs = held.docs
    best = passing_best(slots, docs, size, keep)
    nearest = [docs[i] for i in best]
    if not held.old.docs or rescore <= 0:  # without a vector, cosines() reads none past the window either
        return Nearness(held, slots, constant, length, nearest, {})
    old = _old_nearest(reader, held, vector, rescore, keep)
    merged = heapq.nlargest(size, [(slots[i], docs[i]) for i in best] + [(slot, doc) for slot, doc, _ in old])
    rescored = {key: slot for slot, _, key in old}
    return Nearness(held, slots, constant, length, [doc for _, doc in merged], rescored, vector)


def passing_best(slots: List[int], docs: Sequence[int], size: int, keep: Optional[DocFilter]) -> List[int]:
    """The positions of the `size` largest of `slots` whose doc `keep` passes, largest (then latest) first."""
    return _best(slots, size) if keep is None else packed_blocks.largest(slots, size, docs, keep.passing(docs))


def _old_nearest(reader: Reader, held: HeldVectors, vector: Sequence[int], rescore: int,
                 keep: Optional[DocFilter]) -> List[Tuple[int, int, Key]]:
    """(slot, doc id, key) of the `rescore` messages past the whole vectors nearest the question by their
    first components, scored again exactly from their stored vectors (slots as shifted_dots())."""
    docs = held.old.docs
    passing = None if keep is None else keep.passing(docs)
    best = coarse_vectors.nearest(held.old, vector, rescore, passing)
    return _exact_slots(reader.message_vectors([docs[i] for i in best]), vector, held.dims)


def _exact_slots(rows: Sequence[Tuple[int, int, int, Optional[bytes]]], vector: Sequence[int],
                 dims: int) -> List[Tuple[int, int, Key]]:
    """(slot as shifted_dots() makes it, doc id, key) of each of `rows` ((doc id, session_key, position,
    stored vector), doc ids ascending) that has a vector: packed as the whole ones are, so the same slots."""
    packed = extended(empty(dims), {}, rows, len(rows))  # rows without a vector left out
    return list(zip(shifted_dots(packed, vector)[0], packed.docs, packed.keys))


def _best(slots: List[int], size: int) -> List[int]:
    """The positions of the `size` largest slots, largest first, the later of equal ones first
    (the newer message): the size-th largest found by nlargest, the positions at or above it by C
    loops (compress, map), and only those sorted (a walk per distinct value cost 2-7 ms at 10,000)."""
    if size <= 0 or not slots:
        return []
    floor = heapq.nlargest(size, slots)[-1]
    at = list(itertools.compress(range(len(slots)), map(floor.__le__, slots)))
    at.sort(key=lambda i: (-slots[i], -i))
    return at[:size]


def gate(word_match: float, closed_at: float) -> float:
    """The share of the meaning signal's weight it keeps in the head: 1 when the words matched nothing,
    falling in a line to 0 where the best message holds `closed_at` of them (shut from there).

    word_match: the idf share of the question's words that the best message holds (0 to 1;
    candidates.py), words the memory never holds counted as missing.
    """
    if closed_at <= 0:
        return 0.0
    return max(0.0, 1.0 - word_match / closed_at)


def nearest_first(nearness: Mapping[Key, float], size: int) -> List[Key]:
    """The `size` messages nearest in meaning, nearest first, equal ones by key (tuples compared in C)."""
    return [key for _, key in heapq.nsmallest(size, [(-value, key) for key, value in nearness.items()])]


def placed(order: Sequence[Key], scores: Mapping[Key, float], nearest: Sequence[Key],
           places: Sequence[int]) -> Tuple[List[Key], Dict[Key, float]]:
    """`order` with a message near in meaning at each of `places` (1-based, ascending): the nearest
    (`nearest`, nearest_first(); len(places) + max(places) of them suffice) not yet above that place
    moves up to it, or comes in there if the fusion left it out.

    So the words' order keeps its say everywhere else, and a message found by meaning alone is
    seen at those places even when the gate shut its signal. Scores stay non-increasing: a
    message moved up takes the score of the one it passed.
    """
    out = list(order)
    new_scores = dict(scores)
    used = 0
    for place in places:
        index = place - 1
        if index > len(out):
            break
        above = set(out[:index])
        while used < len(nearest) and nearest[used] in above:
            used += 1
        if used == len(nearest):
            break
        key = nearest[used]
        used += 1
        if key in out:
            out.remove(key)
        passed = out[index] if index < len(out) else None
        out.insert(index, key)
        score = 0.0 if passed is None else new_scores[passed]  # the score of the message it passed
        new_scores[key] = min(score, new_scores[out[index - 1]]) if index else score
    return out, new_scores
