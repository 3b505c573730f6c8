"""The value types of a search's candidates: Key, Message and Pool, read by every ranking step.

They live here, apart from the algorithm that builds them (candidates.py), so that the
modules that read a pool (signals.py, fusion's callers in pipeline.py, spread.py,
selection.py, state_update.py) and those that help build one (feedback.py) import a
leaf, never each other: no import circle. A Pool is built by keyword
(candidates.build()); its fields say what each holds.
"""
from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..storage.rows import ViewRow
from ..text.tokenize import split_speaker

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
    asked: Tuple[str, ...] = ()  # the question's terms less its speakers' names: what the meaning channel asked
    model: Dict[Key, float] = {}  # message -> cosine of the operator's embedder's vectors (model_channel.py)
    model_waiting: int = 0  # the user's messages with no vector of that embedder yet (when one answered)
    meaning_by_model: bool = False  # `meaning` holds the embedder's cosines (model_meaning), not the word vectors'

    def participants(self, terms: Sequence[str]) -> List[str]:
        """Those of a question's `terms` that are its participants' names: the ones `asked` leaves out."""
        return [t for t in terms if t not in self.asked]




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
