"""What a question asks for, read deterministically from its text (and its options).

`analyze` turns a question into the pieces the rankings use: its content terms, the
names it mentions, adjacent term pairs (for phrase matches), numbers, answer options,
and its intent where the wording makes one plain: asking when, for the first or the
last time, or for a current state.

Every list is bounded (MAX_QUERY_TERMS and the caps beside it): a search reads the
postings of each term, and several rankings compare every candidate message with
every term, name and pair, so a question of 90,000 distinct words once cost seconds
(and overflowed SQLite's limit on bound parameters). The first terms in question
order are kept, so a long question still finds evidence for what it asks first.
The characters a question may have are bounded before it gets here
(validation.MAX_QUERY_CHARS), which bounds tokenizing.
"""
from __future__ import annotations

import re
from itertools import islice
from typing import Iterable, List, NamedTuple, Sequence, Tuple, TypeVar

from ..text import timeexpr
from ..text.stem import stem
from ..text.tokenize import QUESTION_STOPWORDS, query_terms, tokenize, unique, words

WHEN, FIRST, LAST, CURRENT = "when", "first", "last", "current"

# How much of a question the rankings read. Measured with `python tools/bench_query_caps.py`
# (LoCoMo dev split, 2,760 messages; 2 CPUs, Python 3.11, SQLite 3.40; CPU time): the
# typical LoCoMo search costs 9.3 ms; N distinct words of the user's own memory, most
# frequent first, cost 46 ms at 256, 98 ms at 1,024 and 836 ms at 10,000 uncapped, and
# no more than ~52 ms at any N with these caps (5.6x typical); with 16 options of 32
# terms too, 78 ms (8.4x). Real questions stay far below: LoCoMo's longest has 19 terms,
# 6 names, 13 pairs, 3 numbers; Chinese counts every character and bigram, so 256 terms
# keep a question of ~128 Chinese characters whole.
MAX_QUERY_TERMS = 256
MAX_QUERY_NAMES = 32
MAX_QUERY_PAIRS = 256
MAX_QUERY_NUMBERS = 16
MAX_OPTION_TERMS = 32  # per option

_INTENTS = [
    (CURRENT, re.compile(r"\b(now|currently|current|still|these days|at the moment|anymore|latest|most recent(ly)?|"
                         r"today)\b|现在|目前|最新|还在|如今", re.I)),
    (FIRST, re.compile(r"\b(first|earliest|originally|initially|began|begin|start(ed)?)\b|第一次|最早|起初", re.I)),
    (LAST, re.compile(r"\b(last|lately|recently|final(ly)?)\b|最后|上一次|最近", re.I)),
    (WHEN, re.compile(r"\b(when|what (date|day|time|year|month)|how long ago|which (year|month|day))\b"
                      r"|什么时候|哪天|哪一天|哪年|几月|何时", re.I)),
]

# Capitalised words that begin questions or sentences say nothing about names.
_NOT_NAMES = frozenset(w.lower() for w in """
What When Where Who Whom Whose Why How Which Did Does Do Is Are Was Were Has Have Had Can Could Would Should
Will Shall May Might Must In On At For From To Of The A An And Or But If Since During After Before Based
According Please Tell Give Name List Describe Explain Besides Apart Other Also Yes No I
""".split())
_CAPITALISED = re.compile(r"\b([A-Z][\w'\u2019-]*)")
_QUOTED = re.compile(r"[\"\u201c\u201d\u300c\u300e]"  # an opening quote
                     r"([^\"\u201c\u201d\u300c\u300d\u300e\u300f]{2,80})"  # what it quotes
                     r"[\"\u201c\u201d\u300d\u300f]")  # a closing quote
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Questions that ask for several facts: a count ("how many"), a plural thing asked for
# ("what books", "which outdoor activities"; not a verb: "what does", "what is"), or a
# perfect or plural state ("what has she", "where have they", "what are").
_VERB = r"(?:did|does|do|is|was|are|were|has|have|had|can|could|would|will|should)"
_NOT_PLURAL = r"(?:this|is|was|does|has|its|his|hers|yes|us|ones)"
_MANY = re.compile(r"\bhow many\b|多少|几次|哪些"
                   r"|\b(?:what|which) (?:(?!%s\b)[a-z]+ )?(?!%s\b)[a-z]+[^s\W]s\b"
                   r"|\b(?:what|where) (?:are|have|has)\b" % (_VERB, _NOT_PLURAL), re.I)


class Query(NamedTuple):
    text: str
    terms: List[str]  # distinct stemmed content terms, in question order
    names: List[str]  # stemmed terms of capitalised or quoted words: people, places, titles
    pairs: List[Tuple[str, str]]  # adjacent content terms, for phrase matches
    numbers: List[str]
    intent: str  # "", WHEN, FIRST, LAST or CURRENT
    options: List[List[str]]  # each option's content terms
    many: bool = False  # asks for several facts, a list or a count (asks_many())


T = TypeVar("T")


def _first(items: Iterable[T], limit: int) -> List[T]:
    """The first `limit` distinct items, in order."""
    return list(islice(dict.fromkeys(items), limit))


def _names(question: str, stemmed: bool) -> List[str]:
    names: List[str] = []
    for match in _CAPITALISED.finditer(question):
        word = match.group(1)
        if word.lower() in _NOT_NAMES:
            continue
        names.extend(tokenize(word, stemmed))
    for match in _QUOTED.finditer(question):
        names.extend(t for t in tokenize(match.group(1), stemmed) if t not in QUESTION_STOPWORDS)
    return _first(names, MAX_QUERY_NAMES)


def _pairs(question: str, stemmed: bool) -> List[Tuple[str, str]]:
    content = [stem(w) if stemmed else w for w in words(question) if w not in QUESTION_STOPWORDS]
    return _first(zip(content, content[1:]), MAX_QUERY_PAIRS)


def intent(question: str) -> str:
    """The question's temporal intent, or "" when it has none."""
    for name, pattern in _INTENTS:
        if pattern.search(question):
            return name
    return ""


def asks_many(question: str) -> bool:
    """Whether the question asks for several facts: "how many times", "what books", "where has she been"."""
    return _MANY.search(question) is not None


def _options(options: Sequence[str], question_terms: Sequence[str], stemmed: bool) -> List[List[str]]:
    """Each option's content terms, less those the question has (an option all of whose terms it has keeps them).

    A word the question and an option share ("Where did she go: the lake, the beach?")
    marks every message about the question, not the option: in the option's signal it
    lifts the unrelated. (LoCoMo dev as multiple choice: objective 0.7782 with them,
    0.7821 without, at weight_options 0.4; tools in the report.)
    """
    asked = set(question_terms)
    out = []
    for option in options:
        terms = query_terms(option, stemmed)
        distinct = [t for t in terms if t not in asked] or terms
        if distinct:
            out.append(distinct[:MAX_OPTION_TERMS])
    return out


def date_terms(question: str) -> List[str]:
    """Date tokens (timeexpr.tokens) of the dates a question writes out: "in May 2023", "on 8 May 2023"."""
    return unique(t for r in timeexpr.resolve(question, None) for t in timeexpr.tokens(r.start, r.end))


def analyze(question: str, options: Sequence[str] = (), stemmed: bool = True, dates: bool = True) -> Query:
    """Everything the rankings read from a question (`stemmed` and `dates` as the index is)."""
    return Query(
        text=question,
        terms=_first(query_terms(question, stemmed) + (date_terms(question) if dates else []), MAX_QUERY_TERMS),
        names=_names(question, stemmed),
        pairs=_pairs(question, stemmed),
        numbers=_first(_NUMBER.findall(question), MAX_QUERY_NUMBERS),
        intent=intent(question),
        options=_options(options, query_terms(question, stemmed), stemmed),
        many=asks_many(question),
    )
