"""A user's message postings in memory: what a search reads of the index, without SQL.

Every search reads the postings of its words in the user's message views: which
messages hold them, how often, and how many messages hold each. Read from FTS5
(fts.py), that costs a statement and a Python tuple per occurrence, and at ten thousand
messages it was a fifth of a search. A user's messages only ever grow, so their
postings are kept per user (postings_cache in the Store, bounded_cache.py) and extended
with the messages added since, read from the sessions that grew:

- per token, the ascending doc ids of the message views holding it and the count in
  each, in two arrays (8 bytes a posting, not a dict entry's hundred);
- per session, the messages held: what tells which sessions grew;
- the message count: the version, compared with the user's `user_stats`, so that a
  write by another process is seen as the session cache sees it.

Each extension makes a new HeldPostings and shares the arrays of the tokens it did not
touch: a search still reading an older one is never changed under it. A message view's
indexed document is its message's tokens plus its speaker (writer.py), so the message
tokens are its postings; tests/test_postings.py checks them against FTS5 itself.
"""
from __future__ import annotations

import collections
from array import array
from sys import intern
from typing import Dict, Iterable, List, Mapping, NamedTuple, Sequence, Tuple

Entry = Tuple["array[int]", "array[int]"]  # (ascending doc ids, the token's count in each)


class HeldPostings(NamedTuple):
    """One user's message postings, as of `n_messages` messages (the version)."""

    n_messages: int
    sessions: Mapping[int, int]  # session_key -> messages held
    terms: Mapping[str, Entry]
    words: int  # the user's words (user_stats): what counts against the cache's bound
    last_doc: int  # the highest doc id held

    def doc_freq(self, token: str) -> int:
        """How many of the user's messages hold `token`."""
        entry = self.terms.get(token)
        return len(entry[0]) if entry else 0

    def term_frequencies(self, tokens: Iterable[str]) -> Dict[str, Dict[int, int]]:
        """{token: {doc_id: count}} of the tokens held, tokens sorted and doc ids ascending
        (the order of counting FTS5's rows, count_rows())."""
        out: Dict[str, Dict[int, int]] = {}
        for token in sorted(set(tokens)):
            entry = self.terms.get(token)
            if entry:
                out[token] = dict(zip(*entry))
        return out

    def rows(self, tokens: Iterable[str]) -> List[Tuple[str, int]]:
        """(token, doc_id) once per occurrence, in FTS5's order: what Reader.postings() reads from the index."""
        out: List[Tuple[str, int]] = []
        for token in sorted(set(tokens)):
            entry = self.terms.get(token)
            if entry:
                for doc, count in zip(*entry):
                    out.extend([(token, doc)] * count)
        return out


EMPTY = HeldPostings(0, {}, {}, 0, 0)


def extended(held: HeldPostings, sessions: Mapping[int, int], added: Sequence[Tuple[int, str]],
             words: int) -> HeldPostings:
    """`held` with the message views `added` ((doc_id, tokens separated by spaces), doc ids
    ascending and above every doc id held), now holding `sessions`' messages and `words` words."""
    lists: Dict[str, Tuple[List[int], List[int]]] = {}
    for doc, text in added:
        for token, count in collections.Counter(text.split()).items():
            docs_counts = lists.get(token)
            if docs_counts is None:
                docs_counts = lists[token] = ([], [])
            docs_counts[0].append(doc)
            docs_counts[1].append(count)
    terms = dict(held.terms)
    for token, (docs, counts) in lists.items():
        old = terms.get(token)
        new = (array("q", docs), array("l", counts))
        terms[intern(token)] = new if old is None else (old[0] + new[0], old[1] + new[1])
    last_doc = added[-1][0] if added else held.last_doc
    return HeldPostings(sum(sessions.values()), dict(sessions), terms, words, last_doc)


def count_rows(rows: Iterable[Tuple[str, int]]) -> Dict[str, Dict[int, int]]:
    """Count (token, doc_id) occurrence rows into {token: {doc_id: count}}."""
    tf: Dict[str, Dict[int, int]] = {}
    for token, doc in rows:
        per_doc = tf.setdefault(token, {})
        per_doc[doc] = per_doc.get(doc, 0) + 1
    return tf
