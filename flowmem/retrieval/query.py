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
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from ..text import period, timeexpr
from ..text.numbers import number_values
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

# CURRENT needs a word of time: a present-tense question about an attribute without one
# ("What is Ana's phone number?") is not CURRENT. Measured (`python tools/tune.py --show`,
# LoCoMo dev, with the state-update rerank applied to them): "What/Who/Where is|are X's ..."
# questions (47) 0.7049 -> 0.7044, 15 questions' evidence ranked lower and 4 higher
# (tools/eval.py locomo --out, paired); every present-tense wh-question (250) -> 0.6950.
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
_MONTH_WORDS = frozenset(timeexpr.MONTHS + [m[:3] for m in timeexpr.MONTHS] + ["sept"])
_DATE_WORDS = _MONTH_WORDS | frozenset(timeexpr.WEEKDAYS)  # capitalised, but dates: the date tokens match them
_YEAR = re.compile(r"(19|20)\d\d")
# Questions that ask for several facts: a count ("how many"), a plural thing asked for
# ("what books", "which outdoor activities"; not a verb: "what does", "what is"), or a
# perfect or plural state ("what has she", "where have they", "what are"), people asked for
# in the plural ("who are", "who's in"), a choice among several ("which of"), or a span
# of time the facts are gathered over ("so far", "over time", "over the past year").
_VERB = r"(?:did|does|do|is|was|are|were|has|have|had|can|could|would|will|should)"
_NOT_PLURAL = r"(?:this|is|was|does|has|its|his|hers|yes|us|ones)"
_MANY = re.compile(r"\bhow many\b|多少|几次|哪些"
                   r"|\b(?:what|which) (?:(?!%s\b)[a-z]+ )?(?!%s\b)[a-z]+[^s\W]s\b"
                   r"|\b(?:what|where) (?:are|have|has)\b"
                   r"|\bwho(?:'re| are| were| have|'s in| is in)\b|\bwhich of\b|\bwhat (?:kinds?|sorts?|types?) of\b"
                   r"|\b(?:so far|over time|over the (?:years|past \w+))\b" % (_VERB, _NOT_PLURAL), re.I)


class Query(NamedTuple):
    text: str
    terms: List[str]  # distinct stemmed content terms, in question order
    names: List[str]  # stemmed terms of capitalised or quoted words: people, places, titles
    pairs: List[Tuple[str, str]]  # adjacent content terms, for phrase matches
    numbers: List[str]  # canonical values of the numbers it states, dates aside (text/numbers.py)
    intent: str  # "", WHEN, FIRST, LAST or CURRENT
    options: List[List[str]]  # each option's content terms
    periods: Tuple[Tuple[int, int], ...] = ()  # the periods it is scoped to: (first, last) day ordinals (scoped())
    many: bool = False  # asks for several facts, a list or a count (asks_many())


T = TypeVar("T")


def _first(items: Iterable[T], limit: int) -> List[T]:
    """The first `limit` distinct items, in order."""
    return list(islice(dict.fromkeys(items), limit))


def _names(question: str, stemmed: bool) -> List[str]:
    names: List[str] = []
    for match in _CAPITALISED.finditer(question):
        word = match.group(1)
        if word.lower() in _NOT_NAMES or word.lower() in _DATE_WORDS:
            continue
        names.extend(tokenize(word, stemmed))
    for match in _QUOTED.finditer(question):
        names.extend(t for t in tokenize(match.group(1), stemmed) if t not in QUESTION_STOPWORDS)
    return _first(names, MAX_QUERY_NAMES)


def _pairs(question: str, stemmed: bool) -> List[Tuple[str, str]]:
    content = [stem(w) if stemmed else w for w in words(question) if w not in QUESTION_STOPWORDS]
    return _first(zip(content, content[1:]), MAX_QUERY_PAIRS)


def _numbers(question: str, resolved: Sequence[timeexpr.Resolution]) -> List[str]:
    """The numbers the question states, as canonical values (numbers.py), other than those of its dates.

    "on 7 July, 2023" is a date, which the date tokens match; its 7 and 2023 as numbers
    would favour every message that says a 7.
    """
    for r in resolved:
        question = question.replace(r.expression, " ")
    tokens = tokenize(question, False)
    # What the resolver leaves without a day to anchor it ("in November 2022", "on Aug 15th") is a date too.
    months = [i for i, t in enumerate(tokens) if t in _MONTH_WORDS]
    dates = {j for i in months for j in (i - 1, i + 1, i + 2)}
    # "Which two novels ...?" counts the answers asked for; the evidence names them, not their number.
    counts = {i + 1 for i, t in enumerate(tokens) if t in ("which", "what")}
    kept = ["" if i in dates or i in counts or _YEAR.fullmatch(t) else t for i, t in enumerate(tokens)]
    return _first(number_values(kept), MAX_QUERY_NUMBERS)


def intent(question: str, resolved: Optional[Sequence[timeexpr.Resolution]] = None) -> str:
    """The question's temporal intent, or "" when it has none.

    A question that names a date asks about that time, not the present ("What was she
    currently reading in May 2023?"): it is never CURRENT. resolved: timeexpr.resolve(question,
    None) when the caller has it already.
    """
    for name, pattern in _INTENTS:
        if pattern.search(question) and not (
                name == CURRENT and (timeexpr.resolve(question, None) if resolved is None else resolved)):
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


def date_terms(resolved: Sequence[timeexpr.Resolution]) -> List[str]:
    """Date tokens (timeexpr.tokens) of the dates a question writes out ("in May 2023", "on 8 May 2023"),
    from timeexpr.resolve(question, None)."""
    return unique(t for r in resolved for t in timeexpr.tokens(r.start, r.end))


def analyze(question: str, options: Sequence[str] = (), stemmed: bool = True, dates: bool = True) -> Query:
    """Everything the rankings read from a question (`stemmed` and `dates` as the index is).

    The question's words and dates are read once (query_terms(), timeexpr.resolve()) for every part that needs them.
    """
    asked = query_terms(question, stemmed)
    resolved = timeexpr.resolve(question, None)
    return Query(
        text=question,
        terms=_first(asked + (date_terms(resolved) if dates else []), MAX_QUERY_TERMS),
        names=_names(question, stemmed),
        pairs=_pairs(question, stemmed),
        numbers=_numbers(question, resolved),
        intent=intent(question, resolved),
        options=_options(options, asked, stemmed),
        many=asks_many(question),
    )


def scoped(query: Query, memory_ms: Optional[Tuple[int, int]]) -> Query:
    """`query` with the periods its question names (text/period.py), read against the user's memory.

    memory_ms: the earliest and latest timestamp of the user's messages (Unix ms), or
    None; the latest day is the anchor of relative forms ("last summer").
    """
    first, last = (timeexpr.day_of(memory_ms[0]), timeexpr.day_of(memory_ms[1])) if memory_ms else (None, None)
    memory = period.Memory(first, last) if first and last else None
    spans = period.periods(query.text, memory)
    return query._replace(periods=tuple((a.toordinal(), b.toordinal()) for a, b in spans))
