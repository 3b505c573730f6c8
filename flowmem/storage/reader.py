"""Reads of one snapshot: what search asks of the database, and the counts stats show.

A Reader is handed out by Store.reading() inside one read transaction, so every
query it answers sees the same consistent snapshot. It reads a session whole the
first time search needs it, through the Store's SessionCache (session_cache.py), and then
only what was appended to it (session_load.py).
"""
from __future__ import annotations

import sqlite3
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from . import fts, metadata_index, model_vectors, session_load
from .bounded_cache import BoundedCache
from .metadata_index import Pairs
from .model_vectors import HeldModelVectors
from .postings import EMPTY, HeldPostings, count_rows, extended, least_bytes
from .rows import MessageRow, ViewRow, lookup_user_key, view_rows
from .session_cache import SessionCache, SessionData
from .settings import IndexState
from .vectors import HeldVectors, empty as no_vectors, extended as with_vectors
from .views import KINDS, MESSAGE


class Reader:
    """Queries of one read transaction; obtained from Store.reading().

    `settings` are the index settings of this transaction's snapshot: a question must
    be analysed with them (retrieval/pipeline.py), whatever the Store's were when it started.
    """

    def __init__(self, conn: sqlite3.Connection, cache: SessionCache, index: IndexState,
                 postings_cache: "Optional[BoundedCache[HeldPostings]]" = None,
                 vectors_cache: "Optional[BoundedCache[HeldVectors]]" = None,
                 model_cache: "Optional[BoundedCache[HeldModelVectors]]" = None):
        self.conn = conn
        self.model_cache = model_cache
        self.cache = cache
        self.postings_cache = postings_cache
        self.vectors_cache = vectors_cache
        self.settings = index.settings
        self._generation = index.generation
        self._deletions = index.deletions
        self._sessions: Dict[int, SessionData] = {}
        self._held: Dict[int, Optional[HeldPostings]] = {}
        self._statistics: Dict[int, Dict[str, Tuple[int, int]]] = {}

    def session(self, view: "ViewRow") -> SessionData:
        """Every message's features and every window and segment of the session `view` belongs to."""
        data = self._sessions.get(view.session_key)
        if data is None:
            data = self._sessions[view.session_key] = self.cache.get_session(
                view.session_key, view.session_messages,
                lambda held: session_load.load(self.conn, view.session_key, view.session_messages, held),
                self._generation, self._deletions)
        return data

    def sessions_read(self) -> List[SessionData]:
        """The sessions this reader has read so far, in the order first read."""
        return list(self._sessions.values())

    def user_key(self, user_id: str) -> Optional[int]:
        """The internal key of a user, or None if unknown."""
        return lookup_user_key(self.conn, user_id)

    def memory_days(self, user_key: int) -> Optional[Tuple[int, int]]:
        """The earliest and latest timestamp (Unix ms) of the user's messages, None if none has one.

        Reads the first and last message of each of the user's sessions (primary key
        lookups): messages of a session come in time order, so its ends are its extremes.
        """
        row = self.conn.execute(
            "SELECT min(m.timestamp_ms), max(m.timestamp_ms) FROM sessions s JOIN messages m"
            " ON m.session_key = s.session_key AND m.seq IN (1, s.n_messages) WHERE s.user_key = ?",
            (user_key,)).fetchone()
        return None if row is None or row[0] is None else (row[0], row[1])

    def bm25_statistics(self, user_key: int) -> Dict[str, Tuple[int, int]]:
        """The user's BM25 statistics: (document count, total tokens) per view kind."""
        statistics = self._statistics.get(user_key)
        if statistics is None:  # read once per snapshot: the pool and the held postings both ask
            statistics = self._statistics[user_key] = {kind: (n, total) for kind, n, total in self.conn.execute(
                "SELECT kind, n_docs, total_length FROM user_stats WHERE user_key = ?", (user_key,))}
        return statistics

    def held_postings(self, user_key: int) -> Optional[HeldPostings]:
        """The user's message postings in memory (postings.py), extended to this snapshot; None when the
        cache would not keep them (more than it holds, or a user searched no sooner than those it holds:
        admission.py), their postings then read from the index."""
        if user_key in self._held:
            return self._held[user_key]
        n_messages, words = self.bm25_statistics(user_key).get(MESSAGE, (0, 0))
        held = None
        cache = self.postings_cache
        if cache is not None:  # none when they cannot be kept: heavier than the bound, or not admitted
            held = cache.get_kept(user_key, n_messages, lambda old: self._extend(user_key, old or EMPTY, words),
                                  least_bytes(words, n_messages), self._generation, self._deletions)
        self._held[user_key] = held
        return held

    def _extend(self, user_key: int, held: HeldPostings, words: int) -> HeldPostings:
        """`held` extended with the user's messages this snapshot has and it has not."""
        sessions = {key: (n, session_id, tag) for key, n, session_id, tag in self.conn.execute(
            "SELECT session_key, n_messages, session_id, tag FROM sessions WHERE user_key = ?", (user_key,))}
        if any(sessions.get(key, (0,))[0] < n for key, (n, _, _) in held.sessions.items()):
            held = EMPTY  # held was read from a newer snapshot than this one: start again
        added = self._grown(((key, n, held.sessions[key][0] if key in held.sessions else 0)
                             for key, (n, _, _) in sessions.items()), "v.length, m.tokens")
        if added and held.docs and added[0][0] <= held.docs[-1]:
            return self._extend(user_key, EMPTY, words)  # ids not above those held: never seen, but exact either way
        return extended(held, sessions, added, words)

    def _grown(self, sessions: Iterable[Tuple[int, int, int]], columns: str) -> List[Tuple[Any, ...]]:
        """(doc_id, session_key, position, *columns) of the message views that sessions
        ((session_key, messages now, messages held)) gained, doc ids ascending. `columns`: of the
        view `v` and its message `m`, a constant of the caller's, never client text."""
        added: List[Tuple[Any, ...]] = []
        for key, n, seen in sorted(sessions):
            if n > seen:
                added += self.conn.execute(
                    "SELECT v.doc_id, v.session_key, v.first_seq, %s FROM views v JOIN messages m"
                    " ON m.session_key = v.session_key AND m.seq = v.first_seq"
                    " WHERE v.session_key = ? AND v.last_seq > ? AND v.kind = ?" % columns,
                    (key, seen, MESSAGE)).fetchall()
        added.sort()
        return added

    def held_vectors(self, user_key: int, dims: int, limit: int) -> HeldVectors:
        """The user's meaning vectors, the latest `limit` whole (vectors.py), extended to this snapshot."""
        n_messages = self.bm25_statistics(user_key).get(MESSAGE, (0, 0))[0]
        load = lambda old: self._extend_vectors(user_key, old, dims, limit)  # noqa: E731
        if self.vectors_cache is None:
            return load(None)
        return self.vectors_cache.get(user_key, n_messages, load, self._generation, self._deletions)

    def _extend_vectors(self, user_key: int, held: Optional[HeldVectors], dims: int, limit: int) -> HeldVectors:
        """`held` (or nothing) extended with the user's messages this snapshot has and it has not."""
        sessions = dict(self.conn.execute("SELECT session_key, n_messages FROM sessions WHERE user_key = ?",
                                          (user_key,)).fetchall())
        if held is None or held.dims != dims or len(held.docs) > limit or (held.old.docs and len(held.docs) < limit) \
                or any(sessions.get(key, 0) < n for key, n in held.sessions.items()):
            held = no_vectors(dims)  # none yet, another shape, or read from a newer snapshot: start again
        added = self._grown(((key, n, held.sessions.get(key, 0)) for key, n in sessions.items()), "m.meaning")
        if added and held.docs and added[0][0] <= held.docs[-1]:
            return self._extend_vectors(user_key, None, dims, limit)  # ids not above those held: read all again
        return with_vectors(held, sessions, added if limit > 0 else [], limit)

    def held_model_vectors(self, user_key: int, dims: int) -> HeldModelVectors:
        """The user's own embedder's vectors of `dims` components, as this snapshot has them (model_vectors.py)."""
        written = model_vectors.mark(self.conn, user_key)

        def load(old: Optional[HeldModelVectors]) -> HeldModelVectors:
            if old is not None and old.dims == dims and old.docs and old.written < written:
                # Extended by what came since, when every vector written since is past those held.
                new = model_vectors.rows(self.conn, user_key, old.last_rowid)
                if old.written + len(new) == written and new[0][0] > old.docs[-1]:
                    return model_vectors.extended(old, written, new)
            return model_vectors.held(written, dims, model_vectors.rows(self.conn, user_key))
        if self.model_cache is None:
            return load(None)
        entry = self.model_cache.get(user_key, written, load, self._generation, self._deletions)
        return entry if entry.dims == dims else load(None)

    def message_vectors_at(self, keys: Sequence[Tuple[int, int]]) -> List[Tuple[int, int, Optional[bytes]]]:
        """(session_key, position, stored meaning vector) of the messages at these keys, keys ascending."""
        out: List[Tuple[int, int, Optional[bytes]]] = []
        for chunk in fts.chunks(sorted(set(keys)), fts.MAX_VARIABLES // 2):
            out += self.conn.execute(
                "WITH k(s, q) AS (VALUES %s) SELECT m.session_key, m.seq, m.meaning FROM k JOIN messages m"
                " ON m.session_key = k.s AND m.seq = k.q" % ",".join(["(?, ?)"] * len(chunk)),
                [v for key in chunk for v in key]).fetchall()
        return sorted(out)

    def message_vectors(self, doc_ids: Sequence[int]) -> List[Tuple[int, int, int, Optional[bytes]]]:
        """(doc_id, session_key, position, stored meaning vector) of these message views, doc ids ascending."""
        out: List[Tuple[int, int, int, Optional[bytes]]] = []
        for chunk in fts.chunks(sorted(set(doc_ids))):
            out += self.conn.execute(
                "SELECT v.doc_id, v.session_key, v.first_seq, m.meaning FROM views v JOIN messages m"
                " ON m.session_key = v.session_key AND m.seq = v.first_seq WHERE v.doc_id IN (%s)"
                % ",".join("?" * len(chunk)), chunk).fetchall()
        return sorted(out)

    def message_views(self, user_key: int, doc_ids: Sequence[int]) -> Dict[int, ViewRow]:
        """The user's message views with these doc_ids, by doc_id: views() from memory where held (postings.py)."""
        held = self.held_postings(user_key)
        if held is None:
            return self.views(doc_ids)
        out = {}
        for doc in sorted(set(doc_ids)):
            view = held.view(doc)
            if view is None:
                return self.views(doc_ids)  # not a message view of this user's: never asked, but answered
            out[doc] = view
        return out

    def term_frequencies(self, user_key: int, tokens: Sequence[str]) -> Dict[str, Dict[int, int]]:
        """{token: {doc_id: count}} of `tokens` in the user's message views, tokens sorted, doc ids ascending."""
        held = self.held_postings(user_key)
        return held.term_frequencies(tokens) if held else count_rows(self.postings(user_key, MESSAGE, tokens))

    def postings(self, user_key: int, kind: str, tokens: Sequence[str]) -> List[Tuple[str, int]]:
        """(token, doc_id) for every occurrence of `tokens` in the user's views of `kind`."""
        held = self.held_postings(user_key) if kind == MESSAGE else None
        if held is not None:
            return held.rows(tokens)
        out: List[Tuple[str, int]] = []
        for sql, params in fts.postings_sql(user_key, kind, tokens):
            out.extend(self.conn.execute(sql, params).fetchall())
        return out

    def doc_freqs(self, user_key: int, tokens: Sequence[str],
                  kinds: Sequence[str] = KINDS) -> Dict[Tuple[str, str], int]:
        """{(kind, token): number of the user's views of that kind holding the token}."""
        held = self.held_postings(user_key)
        if held is None:
            return self._indexed_doc_freqs(user_key, tokens, kinds)
        out = {}
        missing = []
        for kind in kinds:
            for t in tokens:
                n = held.doc_freq(t) if kind == MESSAGE else held.context_doc_freqs.get((kind, t))
                if n is None:
                    missing.append((kind, t))
                elif n:
                    out[(kind, t)] = n
        if missing:
            # Windows and segments change only as messages arrive, so their counts hold as long as
            # the held postings do: each is read from the index once per version (postings.py).
            found = self._indexed_doc_freqs(user_key, sorted({t for _, t in missing}),
                                            sorted({kind for kind, _ in missing}))
            for key in missing:
                held.context_doc_freqs[key] = found.get(key, 0)
                if found.get(key):
                    out[key] = found[key]
        return out

    def _indexed_doc_freqs(self, user_key: int, tokens: Sequence[str],
                           kinds: Sequence[str]) -> Dict[Tuple[str, str], int]:
        """doc_freqs() read from the FTS5 index."""
        prefixes = {fts.kind_prefix(user_key, kind): kind for kind in tuple(KINDS) + tuple(kinds)}
        out = {}
        for sql, params in fts.doc_freq_sql(user_key, tokens, kinds):
            for term, n in self.conn.execute(sql, params):
                prefix = term[: term.index("_", term.index("_") + 1) + 1]
                out[(prefixes[prefix], term[len(prefix):])] = n
        return out

    def vocabulary(self, user_key: int, kind: str, start: str, limit: int) -> List[Tuple[str, int]]:
        """(token, number of the user's views of `kind` holding it) of tokens starting with `start`; `limit` at most."""
        sql, params = fts.vocabulary_sql(user_key, kind, start, limit)
        return [(token, n) for token, n in self.conn.execute(sql, params)]

    def views(self, doc_ids: Sequence[int]) -> Dict[int, ViewRow]:
        """The views with these doc_ids, by doc_id."""
        out: Dict[int, ViewRow] = {}
        for chunk in fts.chunks(sorted(set(doc_ids))):
            for view in view_rows(self.conn, "v.doc_id IN (%s)" % ",".join("?" * len(chunk)), chunk):
                out[view.doc_id] = view
        return out

    def latest_message_views(self, user_key: int, limit: int, session_id: Optional[str] = None,
                             since_ms: Optional[int] = None, until_ms: Optional[int] = None,
                             role: Optional[str] = None, metadata: Pairs = ()) -> List[ViewRow]:
        """The user's last `limit` messages (as message views), newest first: the latest session's
        from its end, then the session before it, and so on.

        A session's time is its last message's timestamp (sessions without one come after
        those with one, newest added first). Reads only this user's sessions. Only the
        messages of session `session_id`, timestamped from `since_ms` on and before
        `until_ms` and of `role`, and with `metadata`, for those given (a search's filters:
        retrieval/filters.py); with `metadata`, only the sessions the metadata index names are read.
        """
        sessions = self.conn.execute(
            "SELECT s.session_key FROM sessions s JOIN messages m ON m.session_key = s.session_key"
            " AND m.seq = s.n_messages WHERE s.user_key = ?" + ("" if session_id is None else " AND s.session_id = ?") +
            " ORDER BY m.timestamp_ms IS NULL, m.timestamp_ms DESC, s.session_key DESC",
            (user_key,) if session_id is None else (user_key, session_id)).fetchall()
        if metadata:
            tagged = set(metadata_index.tagged_sessions(self.conn, user_key, metadata))
            sessions = [row for row in sessions if row[0] in tagged]
        tests, params = message_conditions(since_ms, until_ms, role, user_key, metadata)
        kept = "" if not tests else (" AND EXISTS (SELECT 1 FROM messages m WHERE m.session_key = v.session_key"
                                     " AND m.seq = v.first_seq AND %s)" % tests)
        where = "v.session_key = ? AND v.kind = ?%s ORDER BY v.last_seq DESC LIMIT ?" % kept
        out: List[ViewRow] = []
        for (session_key,) in sessions:
            if len(out) >= limit:
                break
            out.extend(view_rows(self.conn, where, (session_key, MESSAGE, *params, limit - len(out))))
        return out

    def passing_positions(self, session_keys: Sequence[int], since_ms: Optional[int], until_ms: Optional[int],
                          role: Optional[str], user_key: int = 0, metadata: Pairs = ()) -> Dict[int, FrozenSet[int]]:
        """{session key: the positions of its messages timestamped from `since_ms` on and before
        `until_ms` and of `role` (those not None), with the user's `metadata` pairs} of `session_keys`, a
        session none of whose messages pass left out: a search filter's (retrieval/filters.py). Read by
        SQL through the messages' primary key, not through the session cache: no session is read whole
        for it."""
        tests, params = message_conditions(since_ms, until_ms, role, user_key, metadata)
        found: Dict[int, List[int]] = {}
        for chunk in fts.chunks(sorted(set(session_keys)), fts.MAX_VARIABLES - len(params)):
            for key, seq in self.conn.execute(
                    "SELECT m.session_key, m.seq FROM messages m WHERE m.session_key IN (%s)%s"
                    % (",".join("?" * len(chunk)), " AND " + tests if tests else ""), (*chunk, *params)):
                found.setdefault(key, []).append(seq)
        return {key: frozenset(seqs) for key, seqs in found.items()}

    def message_row(self, session_key: int, seq: int) -> MessageRow:
        """The stored message at position `seq` of a session this reader has read (session()).

        It reads memory only, so it answers for those sessions after the transaction too.
        """
        return self._sessions[session_key].rows[seq]

    # -- inspection: the counts `stats` shows -----------------------------------------

    def database_counts(self) -> Dict[str, object]:
        """Counts for the whole database, and the index settings of this snapshot."""
        c = self.conn
        return {
            "users": c.execute("SELECT count(*) FROM users").fetchone()[0],
            "sessions": c.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "messages": c.execute("SELECT count(*) FROM messages").fetchone()[0],
            "views": c.execute("SELECT count(*) FROM views").fetchone()[0],
            "schema_version": c.execute("PRAGMA user_version").fetchone()[0],
            "index": dict(self.settings._asdict()),
        }

    def user_counts(self, user_id: str) -> Dict[str, object]:
        """Counts for one user (`exists` False if unknown)."""
        c = self.conn
        user_key = self.user_key(user_id)
        if user_key is None:
            return {"user_id": user_id, "exists": False}
        per_kind = self.bm25_statistics(user_key)
        sessions, messages = c.execute(
            "SELECT count(*), coalesce(sum(n_messages), 0) FROM sessions WHERE user_key = ?", (user_key,)
        ).fetchone()
        return {
            "user_id": user_id,
            "exists": True,
            "sessions": sessions,
            "messages": messages,
            "views": {kind: n for kind, (n, _) in sorted(per_kind.items())},
            "indexed_tokens": sum(total for _, total in per_kind.values()),
            "requests": c.execute("SELECT count(*) FROM requests WHERE user_key = ?", (user_key,)).fetchone()[0],
        }


def message_conditions(since_ms: Optional[int], until_ms: Optional[int], role: Optional[str],
                       user_key: int = 0, metadata: Pairs = ()) -> Tuple[str, List[object]]:
    """The SQL tests of a message `m` (joined by AND; "" for none) and their parameters that keep
    those timestamped from `since_ms` on and before `until_ms`, of `role` (those not None) and with
    every (key, value) of `metadata` (user `user_key`'s index rows: metadata_index.filter_sql()).
    An untimed message fails either bound (NULL compares as false); roles compare exactly."""
    tests: List[str] = []
    params: List[object] = []
    for test, value in (("m.timestamp_ms >= ?", since_ms), ("m.timestamp_ms < ?", until_ms), ("m.role = ?", role)):
        if value is not None:
            tests.append(test)
            params.append(value)
    if metadata:
        test, more = metadata_index.filter_sql(user_key, metadata)
        tests.append(test)
        params.extend(more)
    return " AND ".join(tests), params
