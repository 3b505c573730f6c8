"""Search filters: which of a user's messages a search may consider.

A Search may keep to one session, a time range (since inclusive, until exclusive, in
Unix ms) and one role, in any combination. The filter applies before ranking, wherever
a message can enter the candidate pool: the question's postings before the pool's BM25
bound, the speaker's stand-ins, the bridges' messages, the feedback words' messages and
the period's messages (candidates.py), the windows and segments around the best
(context.py) and the latest messages of the fallback (fallback.py). A message that
fails is never a candidate, and a window or segment holding one (reaching outside the
session's messages that pass) is not used: an item never holds a message that fails.
So a filter that no message passes gives an empty list, fallback included.

- session_id: the session's id exactly as the Adds sent it.
- since, until: the message's own timestamp; a message without one is inside no range,
  so a filter with either bound leaves it out.
- role: the message's role exactly as stored (case and spaces count).

What a filter does not change is how a message is scored: BM25 keeps the user's own
statistics (candidates.py says why), so a message that passes keeps the BM25 scores it
has without the filter. What it does change is what the postings budget counts: the
messages that pass (candidates.py, feedback.py).

Which messages of a session pass is found once per search (DocFilter): the session from
the view, or from the held postings' arrays without a ViewRow per doc (postings.py);
time and role from the session cache's rows (session_cache.py), read without counting
among the sessions the search read. The fallback's latest messages are filtered in the
SQL that reads them (Reader.latest_message_views()). A search without filters never
builds a DocFilter.
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Container, Dict, Iterable, List, Mapping, NamedTuple, Optional, Set, TypeVar

from ..storage.reader import Reader
from ..storage.rows import MessageRow, ViewRow

V = TypeVar("V")


class Filters(NamedTuple):
    """What a Search keeps to; None: no bound of that kind."""

    session_id: Optional[str] = None
    since_ms: Optional[int] = None  # inclusive
    until_ms: Optional[int] = None  # exclusive
    role: Optional[str] = None


class DocFilter:
    """A search's Filters over one user's views, each message view's verdict kept for the search."""

    def __init__(self, reader: Reader, user_key: int, filters: Filters):
        self.reader, self.user_key, self.filters = reader, user_key, filters
        self._by_row = filters.since_ms is not None or filters.until_ms is not None or filters.role is not None
        self._verdicts: Dict[int, bool] = {}  # message view doc id -> whether it passes
        self._positions: Dict[int, Container[int]] = {}  # session key -> the positions of the messages that pass

    def view_passes(self, view: ViewRow) -> bool:
        """Whether every message of `view` (a message, window or segment) passes."""
        positions = self._passing_in(view)
        return all(seq in positions for seq in range(view.first, view.last + 1))

    def _passing_in(self, view: ViewRow) -> Container[int]:
        """The positions of the messages that pass in the session of `view`, found once per search."""
        positions = self._positions.get(view.session_key)
        if positions is None:
            if self.filters.session_id is not None and view.session_id != self.filters.session_id:
                positions = ()
            elif not self._by_row:
                positions = range(1, view.session_messages + 1)
            else:
                # Not counted among the sessions the search read: pseudo-relevance feedback weighs
                # words by their idf among those (candidates.py), and the filter reads more.
                rows = self.reader.session(view, counted=False).rows
                positions = frozenset(seq for seq, row in rows.items() if self._row_passes(row))
            self._positions[view.session_key] = positions
        return positions

    def _row_passes(self, row: MessageRow) -> bool:
        since, until, role = self.filters.since_ms, self.filters.until_ms, self.filters.role
        if role is not None and row.role != role:
            return False
        ts = row.timestamp_ms
        if since is not None and (ts is None or ts < since):
            return False
        return until is None or (ts is not None and ts < until)

    def passing(self, docs: Iterable[int]) -> Set[int]:
        """The message views among `docs` (doc ids of the user's message views) that pass."""
        docs = list(docs)
        verdicts = self._verdicts
        unknown = [d for d in docs if d not in verdicts]
        held = self.reader.held_postings(self.user_key) if unknown else None
        if held is None:
            views = self.reader.message_views(self.user_key, unknown)
            for d in unknown:
                view = views.get(d)
                verdicts[d] = view is not None and self.view_passes(view)
        else:
            # The held arrays answer a doc's session and position without a ViewRow per doc (postings.py).
            held_docs, sessions, positions, n = held.docs, held.doc_sessions, held.positions, len(held.docs)
            for d in unknown:
                i = bisect_left(held_docs, d)
                if i == n or held_docs[i] != d:
                    verdicts[d] = False
                    continue
                passing = self._positions.get(sessions[i])
                if passing is None:
                    view = held.view(d)
                    passing = () if view is None else self._passing_in(view)
                verdicts[d] = positions[i] in passing
        return {d for d in docs if verdicts[d]}

    def per_doc(self, values: Mapping[int, V]) -> Dict[int, V]:
        """`values` ({doc id: value}) of the message views that pass, in their order."""
        kept = self.passing(values)
        return {d: v for d, v in values.items() if d in kept}

    def term_frequencies(self, tf: Mapping[str, Mapping[int, int]]) -> Dict[str, Dict[int, int]]:
        """{term: {doc id: count}} of the message views that pass; a term none of whose views pass is left out."""
        kept = self.passing({d for per_doc in tf.values() for d in per_doc})
        out = {t: {d: c for d, c in per_doc.items() if d in kept} for t, per_doc in tf.items()}
        return {t: per_doc for t, per_doc in out.items() if per_doc}

    def latest_message_views(self, limit: int) -> List[ViewRow]:
        """The user's last `limit` messages that pass, newest first, as Reader.latest_message_views() orders them.

        The filter is the SQL's: only the messages that pass are read, and a session filter
        reads that session alone.
        """
        f = self.filters
        return self.reader.latest_message_views(self.user_key, limit, f.session_id, f.since_ms, f.until_ms, f.role)
