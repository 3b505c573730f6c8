"""Search: from a question to ranked, provenance-carrying evidence items.

The pipeline has three stages, each its own function so later rankings can slot in:

1. candidates: the user's views that contain a query term, with their BM25 score
   over the user's own statistics (bm25.py, fts.py);
2. order: score, then the view's id, so every tie ends the same way on every run;
3. items: the top views turned into contract items, content read verbatim from the
   stored messages.
"""
from __future__ import annotations

import datetime
from typing import Dict, List, NamedTuple, Optional, Sequence

from . import bm25, fts
from .store import Reader, Store, ViewRow, message_id
from .tokenize import query_terms

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Scoring(NamedTuple):
    k1: float = bm25.K1
    b: float = bm25.B


class Hit(NamedTuple):
    view: ViewRow
    score: float


def iso_time(timestamp_ms: Optional[int]) -> Optional[str]:
    """Unix milliseconds as ISO-8601 UTC (`2023-05-08T13:56:00.000+00:00`), None if unknown."""
    if timestamp_ms is None:
        return None
    return (_EPOCH + datetime.timedelta(milliseconds=timestamp_ms)).isoformat(timespec="milliseconds")


def candidates(reader: Reader, user_key: int, n_docs: int, total_length: int, terms: Sequence[str],
               scoring: Scoring) -> List[Hit]:
    """Every view of the user holding a query term, scored by BM25, unordered."""
    postings = reader.postings(user_key, terms)
    if not postings:
        return []
    tf = bm25.term_frequencies(postings)
    found = reader.views([doc for per_doc in tf.values() for doc in per_doc])
    lengths = {doc: row.length for doc, row in found.items()}
    index_terms = [fts.term(user_key, t) for t in terms]
    scores = bm25.scores(index_terms, tf, lengths, n_docs, total_length, scoring.k1, scoring.b)
    return [Hit(found[doc], score) for doc, score in scores.items()]


def order(hits: Sequence[Hit]) -> List[Hit]:
    """Highest score first; equal scores by view id, so the order never depends on storage."""
    return sorted(hits, key=lambda h: (-h.score, h.view.id))


def item(reader: Reader, hit: Hit) -> Dict[str, object]:
    """One contract item with provenance; content is the view's messages, verbatim, one per line."""
    view = hit.view
    messages = reader.messages(view.session_key, view.first, view.last)
    known = [m.timestamp_ms for m in messages if m.timestamp_ms is not None]
    return {
        "id": view.id,
        "content": "\n".join(m.content for m in messages),
        "score": hit.score,
        "created_at": iso_time(known[0] if known else None),
        "view": view.kind,
        "source_message_ids": [message_id(view.tag, m.seq) for m in messages],
        "session_id": view.session_id,
    }


def search(store: Store, user_id: str, query: str, top_k: int, scoring: Scoring = Scoring()) -> List[Dict[str, object]]:
    """The `top_k` best evidence items of `user_id`'s memory for `query`."""
    if top_k <= 0:
        return []
    terms = query_terms(query)
    if not terms:
        return []
    with store.reading() as reader:
        user = reader.user(user_id)
        if user is None:
            return []
        user_key, n_docs, total_length = user
        ranked = order(candidates(reader, user_key, n_docs, total_length, terms, scoring))
        return [item(reader, hit) for hit in ranked[:top_k]]
