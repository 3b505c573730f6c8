"""A user's message postings in memory: what a search reads of the index, without SQL.

Every search reads the postings of its words in the user's message views: which
messages hold them, how often, and how many messages hold each. Read from FTS5
(fts.py), that costs a statement and a Python tuple per occurrence, and at ten thousand
messages it was a fifth of a search. A user's messages only ever grow, so their
postings are kept per user (postings_cache in the Store, bounded_cache.py) and extended
with the messages added since, read from the sessions that grew:

- per token, the doc ids of the message views holding it, ascending, a doc id once per
  occurrence as FTS5 gives them, in an array (4 bytes an occurrence while doc ids fit
  32 bits, 8 past that; a list of ints took 36 and a dict entry a hundred), and how
  many messages hold it;
- per session, the messages held: what tells which sessions grew, and its id and tag;
- per message view, ascending: doc id, session, position and length, so that the
  candidates' views need no SQL either;
- the message count: the version, compared with the user's `user_stats`, so that a
  write by another process is seen as the session cache sees it.

Each extension makes a new HeldPostings and shares the arrays of the tokens it did not
touch: a search still reading an older one is never changed under it. What an entry
costs in memory (`nbytes`, what counts against the cache's bound) is counted as it is
extended: 4 bytes an occurrence, 20 a message, and TERM_BYTES plus its length a token
(its dict slot, tuple, array and interned string), so a user of few words per token costs
more per word than one of many (tests/test_cache_bytes.py checks both against tracemalloc). A message view's
indexed document is its message's tokens plus its speaker (writer.py), so the message
tokens are its postings; tests/test_postings.py checks them against FTS5 itself.
"""
from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from sys import intern
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .rows import ViewRow
from .views import MESSAGE

Entry = Tuple["array[int]", int]  # (doc ids, once per occurrence, ascending; how many docs hold the token)


class HeldPostings(NamedTuple):
    """One user's message postings, as of `n_messages` messages (the version)."""

    n_messages: int
    sessions: Mapping[int, Tuple[int, str, str]]  # session_key -> (messages held, session id, tag)
    terms: Mapping[str, Entry]
    words: int  # the user's words (user_stats): what counts against the cache's bound
    docs: "array[int]"  # the message views' doc ids, ascending; then, in the same order:
    doc_sessions: "array[int]"  # their session keys,
    positions: "array[int]"  # their positions in the session
    lengths: "array[int]"  # and their BM25 lengths
    # (kind, token) -> windows or segments holding it, as read from the index: a memo, filled by
    # Reader.doc_freqs(), valid while this version is (they change only as messages arrive)
    context_doc_freqs: Dict[Tuple[str, str], int]
    nbytes: int = 0  # what it holds in memory, estimated (the module's docstring)

    def locate(self, doc: int) -> Optional[Tuple[int, int]]:
        """(session key, position) of the message view `doc`; None if not held."""
        i = self._index(doc)
        return None if i is None else (self.doc_sessions[i], self.positions[i])

    def view(self, doc: int) -> Optional[ViewRow]:
        """The message view `doc`, as Reader.views() reads it; None if not held."""
        i = self._index(doc)
        if i is None:
            return None
        session_key, position = self.doc_sessions[i], self.positions[i]
        n_messages, session_id, tag = self.sessions[session_key]
        return ViewRow(doc, session_key, session_id, tag, MESSAGE, position, position, self.lengths[i], n_messages)

    def _index(self, doc: int) -> Optional[int]:
        """Where `doc` is in the per-view arrays; None if not held."""
        i = bisect_left(self.docs, doc)
        return i if i < len(self.docs) and self.docs[i] == doc else None

    def doc_freq(self, token: str) -> int:
        """How many of the user's messages hold `token`."""
        entry = self.terms.get(token)
        return entry[1] if entry else 0

    def term_frequencies(self, tokens: Iterable[str]) -> Dict[str, Dict[int, int]]:
        """{token: {doc_id: count}} of the tokens held, tokens sorted and doc ids ascending
        (the order of counting FTS5's rows, count_rows())."""
        out: Dict[str, Dict[int, int]] = {}
        for token in sorted(set(tokens)):
            entry = self.terms.get(token)
            if entry:
                out[token] = dict(Counter(entry[0]))  # Counter's loop is C's: ascending docs stay so
        return out

    def rows(self, tokens: Iterable[str]) -> List[Tuple[str, int]]:
        """(token, doc_id) once per occurrence, in FTS5's order: what Reader.postings() reads from the index."""
        out: List[Tuple[str, int]] = []
        for token in sorted(set(tokens)):
            entry = self.terms.get(token)
            if entry:
                out.extend([(token, doc) for doc in entry[0]])
        return out


EMPTY = HeldPostings(0, {}, {}, 0, array("I"), array("q"), array("I"), array("I"), {})
_WIDE = 2 ** 32  # doc ids from here on are held in 8 bytes, not 4
# Bytes besides its occurrences: a token's (its dict slot, (array, count) tuple, array object and
# interned string, less its characters), a message view's (its doc id's 4 or 8 bytes besides: its
# session, position and length) and a session's (its dict slot, tuple, id and tag). Checked against
# tracemalloc: tests/test_cache_bytes.py.
TERM_BYTES = 250
VIEW_BYTES = 16
SESSION_BYTES = 250


def _joined(old: "array[int]", new: "array[int]") -> "array[int]":
    """`old` then `new`, in the wider of their two types."""
    if old.typecode != new.typecode:
        old, new = array("q", old), array("q", new)
    return old + new


def extended(held: HeldPostings, sessions: Mapping[int, Tuple[int, str, str]],
             added: Sequence[Tuple[int, int, int, int, str]], words: int) -> HeldPostings:
    """`held` with the message views `added` ((doc_id, session_key, position, length, tokens
    separated by spaces), doc ids ascending and above every doc id held), now holding
    `sessions`' messages and `words` words."""
    grown: Dict[str, List] = {}  # token -> [new occurrences' doc ids, docs newly holding it]
    code = "q" if added and added[-1][0] >= _WIDE else "I"
    size = array(code).itemsize
    for doc, _, _, _, text in added:
        for token in text.split():
            entry = grown.get(token)
            if entry is None:
                entry = grown[token] = [array(code), 0]
            docs = entry[0]
            if not docs or docs[-1] != doc:
                entry[1] += 1
            docs.append(doc)
    terms = dict(held.terms)
    nbytes = held.nbytes + len(added) * (size + VIEW_BYTES) + (len(sessions) - len(held.sessions)) * SESSION_BYTES
    for token, (docs, n_docs) in grown.items():
        old = terms.get(token)
        terms[intern(token)] = (docs, n_docs) if old is None else (_joined(old[0], docs), old[1] + n_docs)
        nbytes += len(docs) * size + (TERM_BYTES + len(token) if old is None else 0)
    columns = list(zip(*added)) or [(), (), (), ()]
    return HeldPostings(sum(n for n, _, _ in sessions.values()), dict(sessions), terms, words,
                        _joined(held.docs, array(code, columns[0])), held.doc_sessions + array("q", columns[1]),
                        held.positions + array("I", columns[2]), held.lengths + array("I", columns[3]), {}, nbytes)


def least_bytes(words: int, n_messages: int) -> int:
    """The fewest bytes a user's postings of `words` words in `n_messages` messages hold: what the
    cache is asked to make room for before they are read (Reader.held_postings())."""
    return words * array("I").itemsize + n_messages * (array("I").itemsize + VIEW_BYTES)


def count_rows(rows: Iterable[Tuple[str, int]]) -> Dict[str, Dict[int, int]]:
    """Count (token, doc_id) occurrence rows into {token: {doc_id: count}}."""
    tf: Dict[str, Dict[int, int]] = {}
    for token, doc in rows:
        per_doc = tf.setdefault(token, {})
        per_doc[doc] = per_doc.get(doc, 0) + 1
    return tf
