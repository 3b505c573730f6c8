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
- metadata: (key, value) pairs the message's stored metadata must all hold, values compared
  as canonical JSON (storage/metadata_index.py: 1 equals 1.0, never "1" or true), found
  through the metadata index from the user's key.

What a filter does not change is how a message is scored: BM25 keeps the user's own
statistics (candidates.py says why), so a message that passes keeps the BM25 scores it
has without the filter. What it does change is what the postings budget counts: the
messages that pass (candidates.py, feedback.py).

Which messages of a session pass is found once per search (DocFilter): the session from
the view, or from the held postings' arrays without a ViewRow per doc (postings.py);
time and role by SQL, for all the sessions new to a batch of docs at once
(Reader.passing_positions()): no session is read whole for it, so none enters the
session cache (session_cache.py) or counts among the sessions the search read. Metadata
is first tested per session, from how many of its messages hold each pair
(storage/metadata_filter.py): a session where every message holds them all passes whole
and one where a pair is held by none passes nothing, without a test per message; only the
others test their messages, for the pairs that differ among them, so a filter's cost does
not grow with its number of pairs. The
fallback's latest messages are filtered in the SQL that reads them
(Reader.latest_message_views()). A search without filters never builds a DocFilter.
"""
from __future__ import annotations

from typing import Container, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Set, Tuple, TypeVar

from ..storage import metadata_filter
from ..storage.metadata_index import Pairs
from ..storage.reader import Reader
from ..storage.rows import ViewRow

V = TypeVar("V")

EMPTY: FrozenSet[int] = frozenset()
EVERY_POSITION = range(1, 2 ** 62)  # the positions of a session a filter by session id alone passes: all


class Filters(NamedTuple):
    """What a Search keeps to; None: no bound of that kind."""

    session_id: Optional[str] = None
    since_ms: Optional[int] = None  # inclusive
    until_ms: Optional[int] = None  # exclusive
    role: Optional[str] = None
    metadata: Pairs = ()  # (key, canonical JSON value) pairs, sorted (metadata_index.pairs())


class DocFilter:
    """A search's Filters over one user's views, each message view's verdict kept for the search."""

    def __init__(self, reader: Reader, user_key: int, filters: Filters):
        self.reader, self.user_key, self.filters = reader, user_key, filters
        self._by_row = (filters.since_ms is not None or filters.until_ms is not None or filters.role is not None
                        or bool(filters.metadata))
        self._verdicts: Dict[int, bool] = {}  # message view doc id -> whether it passes
        self._positions: Dict[int, Container[int]] = {}  # session key -> the positions of the messages that pass
        self._terms: Optional[Dict[Tuple[str, str], int]] = None  # the metadata pairs' terms, once found

    def view_passes(self, view: ViewRow) -> bool:
        """Whether every message of `view` (a message, window or segment) passes."""
        if view.session_key not in self._positions:
            self._find({view.session_key: (view.session_id, view.session_messages)})
        positions = self._positions[view.session_key]
        return all(seq in positions for seq in range(view.first, view.last + 1))

    def _find(self, sessions: Mapping[int, Tuple[str, int]]) -> None:
        """The positions of the messages that pass in each of `sessions` ({session key: (session id,
        message count)}) not found yet, kept for the search: by one SQL query for them all where
        time or role is filtered (Reader.passing_positions()), and for metadata as
        metadata_filter.passing() finds them, the two intersected where both are given."""
        f = self.filters
        by_row = []
        for key, (session_id, _) in sessions.items():
            if key in self._positions:
                continue
            if f.session_id is not None and session_id != f.session_id:
                self._positions[key] = ()
            elif not self._by_row:
                # Every position, not 1..n_messages: a held window's count may be older than the
                # snapshot's (storage/session_load.py), and every position a view names is the session's.
                self._positions[key] = EVERY_POSITION
            else:
                by_row.append(key)
        if not by_row:
            return
        timed = f.since_ms is not None or f.until_ms is not None or f.role is not None
        held = self._holding(by_row) if f.metadata else dict.fromkeys(by_row)  # None: every position
        found = self.reader.passing_positions([k for k in by_row if held[k] != EMPTY], f.since_ms, f.until_ms,
                                              f.role, self.user_key) if timed else {}
        for key in by_row:
            kept = held[key]
            if timed:
                at = found.get(key, EMPTY)
                kept = at if kept is None else at & kept
            self._positions[key] = EVERY_POSITION if kept is None else kept

    def _holding(self, keys: List[int]) -> Mapping[int, Optional[FrozenSet[int]]]:
        """{session key: the positions of its messages holding the metadata filter's pairs, None for all}
        of `keys` (metadata_filter.passing()); a pair no message of the user's holds passes nothing."""
        if self._terms is None:
            self._terms = metadata_filter.terms(self.reader.conn, self.user_key, self.filters.metadata) or {}
        if not self._terms:
            return dict.fromkeys(keys, EMPTY)
        return metadata_filter.passing(self.reader.conn, self._terms, keys)

    def passing(self, docs: Iterable[int]) -> Set[int]:
        """The message views among `docs` (doc ids of the user's message views) that pass."""
        docs = list(docs)
        verdicts = self._verdicts
        unknown = [d for d in docs if d not in verdicts]
        held = self.reader.held_postings(self.user_key) if unknown else None
        if held is None:
            views = self.reader.message_views(self.user_key, unknown)
            self._find({v.session_key: (v.session_id, v.session_messages) for v in views.values()})
            for d in unknown:
                view = views.get(d)
                verdicts[d] = view is not None and self.view_passes(view)
        else:
            # The held arrays answer a doc's session and position without a ViewRow per doc (postings.py).
            located = {d: held.locate(d) for d in unknown}
            keys = {at[0] for at in located.values() if at is not None} - self._positions.keys()
            self._find({key: (held.sessions[key][1], held.sessions[key][0]) for key in keys})
            for d, at in located.items():
                verdicts[d] = at is not None and at[1] in self._positions[at[0]]
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
        reads that session alone; metadata pairs are tested fewest holders first.
        """
        f = self.filters
        pairs = metadata_filter.rarest_first(self.reader.conn, self.user_key, f.metadata) if f.metadata else ()
        return self.reader.latest_message_views(self.user_key, limit, f.session_id, f.since_ms, f.until_ms, f.role,
                                                pairs)
