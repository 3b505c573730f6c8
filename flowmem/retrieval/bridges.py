"""Vocabulary bridges: candidates a question's own words miss, found through words near them.

Two bridges, each a signal of its own (signals.py):

- related: the question's content terms (not names, numbers or dates) are looked up
  in the lexicon (text/lexicon.py: WordNet's synonyms, derivations, pertainyms and
  similar adjectives, definition words), "wedding" reaching "married". A message scores
  the idf times strength of the related terms it holds. The related words of a question
  word the user's memory never holds also count in the message's BM25 (candidates.py,
  related_share): "physician" finds "my doctor" as "doctor" would, a little weaker.
  A Chinese question has no words as terms, only characters and bigrams, so its
  words are the lexicon's Chinese words found in its text (2-4 characters, longest
  first); a related Chinese word is the bigrams a message must all hold (whole_words):
  "上司" reaches "老板", one bigram; "小朋友" reaches "孩子", and "孩子" the bigrams of "小朋友".
- typo: a question word the user's memory never holds (and no speaker is called),
  at least TYPO_MIN_CHARS long, is matched against the user's own message vocabulary
  that starts with the same letter, at edit distance 1 (2 from TYPO_TWO_EDITS_CHARS
  characters; a swap of neighbours counts as one edit): "bicylce" finds "bicycle".
  A message scores the idf of the near words it holds, halved per edit.

Every step is bounded: related terms per question term and in all, vocabulary rows
read per letter, near words per word, postings read (the pool's postings_budget) and
messages added (MAX_BRIDGE_DOCS). Only the asking user's index terms are read.
"""
from __future__ import annotations

import heapq
import re
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ..storage import fts
from ..storage.reader import Reader
from ..storage.views import MESSAGE
from ..text import lexicon, timeexpr
from ..text.tokenize import STEMMED_STOPWORDS, normalize, tokenize
from .query import Query

RELATED_PER_TERM = 8  # lexicon entries read per question term, strongest first
MAX_RELATED_TERMS = 48  # related terms looked up per question
BRIDGE_POSTINGS = 1000  # postings each bridge reads, at most (the rarest terms first)
MAX_BRIDGE_DOCS = 50  # messages the bridges add to the pool, at most (LoCoMo dev: 50, 100, 200 score the same)
TYPO_MIN_CHARS = 5  # shorter words have too many neighbours one edit away
TYPO_TWO_EDITS_CHARS = 8
TYPO_MATCHES = 3  # near words kept per misspelt word
MAX_TYPO_WORDS = 8  # misspelt words looked for per question
VOCABULARY_ROWS = 20000  # vocabulary rows read per starting letter
# A bound, not a tuned value: the synthetic suite's 119 Chinese questions hold 2.0 dictionary
# words on average, at most 5. Each reads RELATED_PER_TERM related words: 4 instead of 8 drops
# a Chinese paraphrase question's evidence from 1st to 14th, 16 changes nothing (`python
# tools/eval.py synthetic --set weight_related=0.5`, Chinese paraphrase Hit@10 0.438 / 0.500 / 0.500).
MAX_CHINESE_WORDS = 12  # Chinese words of a question looked up, longest first
CHINESE_WORD_CHARS = (4, 3, 2)  # the lengths of the lexicon's Chinese words, longest first
_CHINESE_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")

DocFreq = Callable[[Sequence[str]], Mapping[str, int]]  # terms -> their message document frequency


class Bridge(NamedTuple):
    """Terms a bridge found in the user's memory, each with its weight (idf x strength), and their postings."""

    weights: Dict[str, float]
    postings: List[Tuple[str, int]]  # (term, doc_id)


def related_terms(query: Query, chinese: Optional[Mapping[Tuple[str, ...], float]] = None) -> Dict[str, float]:
    """The lexicon's terms related to the question's content terms, with their strongest strength.

    chinese: related_chinese(query), when the caller has it already.
    """
    own = set(query.terms)
    names = set(query.names)
    out: Dict[str, float] = {}
    for term in query.terms:
        if term in names or not content_word(term):
            continue
        for other, strength in lexicon.related(term)[:RELATED_PER_TERM]:
            if other not in own and strength > out.get(other, 0.0):
                out[other] = strength
    chosen = sorted(out, key=lambda t: (-out[t], t))[:MAX_RELATED_TERMS]
    found = {t: out[t] for t in chosen}
    for parts, strength in (related_chinese(query) if chinese is None else chinese).items():
        for part in parts:  # a word of n bigrams weighs its bigrams' mean idf times its strength
            found[part] = max(found.get(part, 0.0), strength / len(parts))
    return {t: found[t] for t in sorted(found)}


def bigrams(word: str) -> Tuple[str, ...]:
    """The index terms a message holding the Chinese `word` holds: its overlapping bigrams (tokenize.py)."""
    return tuple(dict.fromkeys(word[i:i + 2] for i in range(len(word) - 1)))


def chinese_words(query: Query) -> List[str]:
    """The lexicon's Chinese words in the question whose bigrams are among its terms: longest first,
    then in question order, none inside one kept already, at most MAX_CHINESE_WORDS."""
    if query.text.isascii():  # the common case, English: no Chinese to look for
        return []
    terms = set(query.terms)
    text = normalize(query.text)
    found = []
    for run in _CHINESE_RUN.finditer(text):
        for start in range(run.start(), run.end() - 1):
            for size in CHINESE_WORD_CHARS:
                word = text[start:start + size]
                if start + size <= run.end() and lexicon.is_chinese_word(word) \
                        and any(b in terms for b in bigrams(word)):
                    found.append((-size, start))
    kept: List[Tuple[int, int]] = []
    for negative_size, start in sorted(found):
        end = start - negative_size
        if not any(a <= start and end <= b for a, b in kept):
            kept.append((start, end))
            if len(kept) == MAX_CHINESE_WORDS:
                break
    return [text[a:b] for a, b in kept]


def related_chinese(query: Query) -> Dict[Tuple[str, ...], float]:
    """{bigrams of a related Chinese word: its strongest strength} for the question's Chinese words.

    Names and words the question holds already are left out; at most MAX_RELATED_TERMS words, strongest first.
    """
    own = set(query.terms)
    names = set(query.names)
    out: Dict[Tuple[str, ...], float] = {}
    for word in chinese_words(query):
        if all(b in names for b in bigrams(word)):
            continue
        for other, strength in lexicon.related_chinese(word)[:RELATED_PER_TERM]:
            parts = bigrams(other)
            if not all(p in own for p in parts) and strength > out.get(parts, 0.0):
                out[parts] = strength
    chosen = sorted(out, key=lambda p: (-out[p], p))[:MAX_RELATED_TERMS]
    return {p: out[p] for p in sorted(chosen)}


def whole_words(chinese: Iterable[Tuple[str, ...]], postings: Iterable[Tuple[str, int]]) -> List[Tuple[str, int]]:
    """The related-term postings, less a bigram of a longer Chinese word in a message not holding all its bigrams.

    chinese: the related Chinese words as their bigrams (related_chinese()). "朋友" alone is
    no "小朋友"; a message holding "小朋" and "朋友" is (near enough: not checked adjacent).
    """
    postings = list(postings)
    words = list(chinese)
    longer = [parts for parts in words if len(parts) > 1]
    if not longer:
        return postings
    alone = {parts[0] for parts in words if len(parts) == 1}
    held: Dict[int, Set[str]] = {}
    for term, doc in postings:
        held.setdefault(doc, set()).add(term)
    within: Dict[str, List[Tuple[str, ...]]] = {}
    for parts in longer:
        for part in parts:
            within.setdefault(part, []).append(parts)
    return [(term, doc) for term, doc in postings if term not in within or term in alone
            or any(all(p in held[doc] for p in parts) for parts in within[term])]


def stand_ins(query: Query, absent: Sequence[str], related: Bridge, share: float) -> Dict[str, float]:
    """{related word: share of its idf it counts for in a message's BM25} for the question words `absent`.

    A word the user never said cannot match, so its related words found in the memory
    stand in for it, at `share` times their strength: "physician" finds "my doctor".
    Words the memory holds lend nothing: on LoCoMo dev that only added noise.
    """
    if share <= 0:
        return {}
    strengths = related_terms(query._replace(terms=list(absent)))
    own = set(query.terms) | set(t for option in query.options for t in option)
    return {t: share * strengths[t] for t in sorted(related.weights) if t in strengths and t not in own}


def content_word(term: str) -> bool:
    """Whether a term says something of its own: not a stopword, a number, a date token or under 3 characters."""
    return len(term) >= 3 and term not in STEMMED_STOPWORDS and not term.isdigit() and not timeexpr.is_date_token(term)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Edits (insert, delete, replace, swap of neighbours) from `a` to `b`; limit + 1 once past `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    # An edit changes the set of letters by two at most (a replacement): a cheap bound that
    # spares the table for most of a vocabulary's words, which share little but a first letter.
    if len(set(a).symmetric_difference(b)) > 2 * limit:
        return limit + 1
    before: List[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


def misspelt(reader: Reader, user_key: int, query: Query, df: Mapping[str, int]) -> List[str]:
    """The question's words that may be misspelt: long enough, and neither said nor a speaker in this memory."""
    unseen = [t for t in query.terms if not df.get(t) and len(t) >= TYPO_MIN_CHARS and t.isalpha()
              and t not in STEMMED_STOPWORDS][:MAX_TYPO_WORDS]
    if not unseen:
        return []
    speakers = {t for t, _ in reader.postings(user_key, fts.SPEAKER, unseen)}
    return [t for t in unseen if t not in speakers]


def near_words(reader: Reader, user_key: int, words: Sequence[str]) -> Dict[str, Tuple[int, int]]:
    """{near word: (edits, document frequency)} of the user's message words near each of `words`."""
    vocabulary: Dict[str, List[Tuple[str, int]]] = {}
    out: Dict[str, Tuple[int, int]] = {}
    for word in words:
        start = word[0]
        if start not in vocabulary:
            vocabulary[start] = reader.vocabulary(user_key, MESSAGE, start, VOCABULARY_ROWS)
        limit = 2 if len(word) >= TYPO_TWO_EDITS_CHARS else 1
        found = [(edit_distance(word, token, limit), -n, token, n) for token, n in vocabulary[start]
                 if token != word and abs(len(token) - len(word)) <= limit]
        for edits, _, token, n in heapq.nsmallest(TYPO_MATCHES, [f for f in found if f[0] <= limit]):
            if token not in out or edits < out[token][0]:
                out[token] = (edits, n)
    return out


def bridge_docs(per_doc: Sequence[Mapping[int, float]], exclude: Mapping[int, object], room: int) -> List[int]:
    """The `room` messages (doc ids), not in `exclude`, that hold the most weight of the bridges' terms.

    per_doc: each bridge's doc_weights().
    """
    score: Dict[int, float] = {}
    for weights in per_doc:
        for doc, weight in weights.items():
            if doc not in exclude:
                score[doc] = score.get(doc, 0.0) + weight
    return heapq.nsmallest(room, score, key=lambda d: (-score[d], d))


def doc_weights(bridge: Bridge) -> Dict[int, float]:
    """Each doc's summed weight of the distinct bridge terms it holds, summed in term order."""
    held: Dict[int, List[str]] = {}
    for term, doc in bridge.postings:
        terms = held.setdefault(doc, [])
        if term not in terms:
            terms.append(term)
    return {doc: sum(bridge.weights[t] for t in sorted(terms)) for doc, terms in held.items()}


# -- names spelt another way --------------------------------------------------------------

_RAW_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_SOUNDS_ALIKE = str.maketrans({"k": "c", "q": "c", "z": "s", "y": "a", "e": "a", "i": "a", "o": "a", "u": "a"})
SPEAKER_ROWS = 2000  # speaker names read per question that names someone the memory never holds


def name_key(word: str) -> str:
    """A name's spelling-blind key: its first letter, then its consonants but h, repeats once, k as c,
    vowels (and y) dropped: "Mohammed" and "Muhamad" are both "md", "Katherine" and "Kathryn" "ctrn"."""
    w = word.lower().replace("ph", "f").translate(_SOUNDS_ALIKE)
    first, rest = w[:1], [c for c in w[1:] if c not in "ah"]
    out = first
    for c in rest:
        if c != out[-1]:
            out += c
    return out


def respelt_names(reader: Reader, user_key: int, query: Query) -> Query:
    """`query` with each name it says that this memory never holds (no message word, no speaker) replaced
    by the user's one speaker whose name has the same name_key(): "Mohammed" asked, "Muhamad" the label."""
    names = [n for n in query.names if len(n) >= 3]
    if not names:
        return query
    held = reader.doc_freqs(user_key, names, (MESSAGE, fts.SPEAKER))
    unseen = [n for n in names if not held.get((MESSAGE, n)) and not held.get((fts.SPEAKER, n))]
    if not unseen:
        return query
    speakers = [t for t, _ in reader.vocabulary(user_key, fts.SPEAKER, "", SPEAKER_ROWS)]
    swap: Dict[str, str] = {}
    for name in unseen:
        # The word as asked keys better than its stem ("Mohammed", not "moham").
        keys = {name_key(name)} | {name_key(w) for w in _RAW_NAME.findall(query.text) if tokenize(w)[:1] == [name]}
        alike = [s for s in speakers if name_key(s) in keys and len(name_key(s)) >= 2]
        if len(alike) == 1:
            swap[name] = alike[0]
    if not swap:
        return query
    return query._replace(terms=[swap.get(t, t) for t in query.terms], names=[swap.get(n, n) for n in query.names])
