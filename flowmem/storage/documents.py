"""A view's indexed document and its length, made from its messages' stored tokens.

Every write of a view (writer.py: an Add's, a rebuild's, a deletion's) unindexes or indexes
it with the document made here, so that FTS5, whose index keeps no copy of a document
(fts.py: content=''), is handed the exact terms it was given when a view goes.
"""
from __future__ import annotations

from typing import Dict, Mapping, Tuple

from ..text import timeexpr
from . import fts, views

Text = Tuple[str, str, int]  # a message's tokens and its speaker's, space-separated, and its words (message_text())


def message_text(tokens: str, speaker: str) -> Text:
    """A stored message's tokens and speaker tokens, one space apart, and how many of its tokens
    are words, not date tokens: counted once per message, not once per view holding it."""
    split = tokens.split()
    return " ".join(split), " ".join(speaker.split()), len(split) - timeexpr.count_date_tokens(tokens)


class Documents:
    """Views' indexed documents and their lengths for BM25, made from their messages' texts.

    The length counts the words of the text only: a message's speaker and its date
    tokens are indexed but not counted, so that a dated message does not look
    longer, and so less relevant per word, than an undated one. (Counting the date
    tokens cost LoCoMo multi-hop questions 0.022 Hit@10; docs/results.md, Time-aware memory.)

    A document is the text fts.document() makes of the view's tokens: each token's index
    term (its kind's prefix, then the token), one space apart. Here it is made from each
    message's stored tokens, already one space apart, by one str.replace that puts the
    prefix after every space, once per message and kind (a window's or segment's is its
    messages' joined): a message sits in a message view, window_size windows and a
    segment or two, and prefixing its every token in Python anew for each view took
    about a tenth of an Add's time.
    """

    def __init__(self, user_key: int, texts: Mapping[int, Text]) -> None:
        self._texts = texts
        self._prefixes = {kind: fts.kind_prefix(user_key, kind) for kind in (*views.KINDS, fts.SPEAKER)}
        self._terms: Dict[Tuple[str, int], str] = {}

    def __call__(self, span: views.Span) -> Tuple[str, int]:
        """The document of the view `span` and its length."""
        if span.kind == views.MESSAGE:  # its speaker is indexed with it, as terms of their own kind
            tokens, speaker, words = self._texts[span.first]
            parts = [_terms(self._prefixes[views.MESSAGE], tokens), _terms(self._prefixes[fts.SPEAKER], speaker)]
            return " ".join(filter(None, parts)), words
        seqs = range(span.first, span.last + 1)
        parts = [self._message(span.kind, seq) for seq in seqs]
        return " ".join(filter(None, parts)), sum(self._texts[seq][2] for seq in seqs)

    def _message(self, kind: str, seq: int) -> str:
        """Message `seq`'s part of a window's or segment's document ("" for a message without tokens)."""
        terms = self._terms.get((kind, seq))
        if terms is None:
            terms = self._terms[kind, seq] = _terms(self._prefixes[kind], self._texts[seq][0])
        return terms


def _terms(prefix: str, tokens: str) -> str:
    """The index terms of `tokens` (one space apart) with `prefix`, one space apart: fts.document()'s text."""
    return prefix + tokens.replace(" ", " " + prefix) if tokens else ""
