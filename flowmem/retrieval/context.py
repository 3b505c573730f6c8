"""The windows and segments around a search's best messages, and their BM25 scores.

A message rarely says everything: the windows (runs of consecutive messages) and
segments (stretches of a conversation) holding it are scored too, and a message is
ranked by the best of them as well as by itself (signals.py). Only the views around
the best `context_pool` messages of the pool are scored (best(), around()), from the
session cache's views_at (session_cache.py): no SQL.

A window's or segment's term counts are the sums of its messages' (its indexed text is
theirs), so its BM25 needs no postings of its own (scores()): just its length and the
kind's document frequencies, which the index keeps per user and kind. Under a search
filter (filters.py) the views holding a message outside it are left out.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set

from ..storage.reader import Reader
from ..storage.rows import ViewRow
from ..storage.views import SEGMENT, WINDOW

# BM25 of terms over the docs of a {term: {doc: count}} within a view kind, given the docs'
# lengths and the related words' shares: candidates.py's scorer, over the user's statistics.
Score = Callable[[Sequence[str], str, Mapping[str, Mapping[int, int]], Mapping[int, int], Mapping[str, float]],
                 Dict[int, float]]


def best(found: Mapping[int, ViewRow], scores: Mapping[int, float], size: int) -> List[int]:
    """The best `size` messages of `found` (by `scores`, then doc id): those whose context is read."""
    return sorted(found, key=lambda d: (-scores.get(d, 0.0), d))[:size]


def around(reader: Reader, found: Mapping[int, ViewRow], best: Sequence[int],
           keep: Optional[Callable[[ViewRow], bool]] = None) -> Dict[int, ViewRow]:
    """The windows and segments around the messages `best` of `found` (best()).

    keep: a search's filter (filters.py): a window or segment it refuses, one holding a
    message outside the filter, is not used, though its message in `found` passes.
    """
    context: Dict[int, ViewRow] = {}
    for d in best:
        v = found[d]
        for view in reader.session(v).views_at.get(v.first, ()):
            if keep is None or keep(view):
                context[view.doc_id] = view
    return context


# The best messages whose turns, and the turns after them, join the pool (turns_around()): on the chat-style
# evaluations 3, 10, 20, 50 and every context message (150) gave the same rankings; with none, the synthetic
# chat set's Recall@100 fell 0.961 -> 0.933 (docs/typed_chat.md).
TURNS_AROUND = 10


def turns_around(reader: Reader, found: Mapping[int, ViewRow], best: Sequence[int],
                 keep: Optional[Callable[[ViewRow], bool]] = None) -> Dict[int, Set[int]]:
    """{session key: positions} of the turns of the messages `best` of `found` (best()) and of the turns
    after them (where a reply is: signals.reply()), for those where a turn is more than one message: the
    windows around a message miss most of a burst. (Where every turn is one message, as in written
    conversations, nothing: the windows hold them.)

    keep: a search's filter (filters.py), as for around(): only the messages it passes are taken.
    """
    out: Dict[int, Set[int]] = {}
    for d in best:
        v = found[d]
        turns = reader.session(v).turns
        if not turns:
            continue  # every turn of the session is one message
        first, last = turns.get(v.first, (v.first, v.first))
        after = turns.get(last + 1, (last + 1, min(last + 1, v.session_messages)))
        if first == last and after[0] >= after[1]:
            continue
        positions = [p for span in ((first, last), after) for p in range(span[0], span[1] + 1)]
        if keep is not None:
            positions = [p for p in positions if keep(v._replace(first=p, last=p))]
        out.setdefault(v.session_key, set()).update(positions)
    return out


def scores(reader: Reader, score: Score, terms: Sequence[str], tf: Mapping[str, Mapping[int, int]],
           found: Mapping[int, ViewRow], context: Mapping[int, ViewRow]) -> Dict[int, float]:
    """BM25 of windows and segments, their term counts summed from their messages' (held: from views_at,
    session_cache.py, for the messages holding a term in the sessions the context comes from)."""
    kinds = (WINDOW, SEGMENT)
    sessions = {v.session_key for v in context.values()}
    held: Dict[int, List[ViewRow]] = {}  # doc -> the context views holding its message
    kind_tf: Dict[str, Dict[str, Dict[int, int]]] = {kind: {} for kind in kinds}
    for t in terms:
        per_view: Dict[str, Dict[int, int]] = {kind: {} for kind in kinds}
        for doc, count in tf.get(t, {}).items():
            views = held.get(doc)
            if views is None:
                v = found[doc]
                within = reader.session(v).views_at.get(v.first, ()) if v.session_key in sessions else ()
                views = held[doc] = [view for view in within if view.doc_id in context]
            for view in views:
                counts = per_view[view.kind]
                counts[view.doc_id] = counts.get(view.doc_id, 0) + count
        for kind in kinds:
            if per_view[kind]:
                kind_tf[kind][t] = per_view[kind]
    out: Dict[int, float] = {}
    for kind in kinds:
        lengths = {d: v.length for d, v in context.items() if v.kind == kind}
        out.update(score(terms, kind, kind_tf[kind], lengths, {}))
    return out
