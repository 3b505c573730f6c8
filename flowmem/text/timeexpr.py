"""Dates in text: relative expressions resolved against a message's own date, and absolute dates read.

`resolve(text, anchor)` finds expressions such as "yesterday", "last week", "two weekends
ago", "last Friday", "3 days ago", 昨天, 上周五, 3天前, and absolute dates such as
"8 May 2023", "May 8th", "2023-05-08", "5/18/2023", "in May", "in 2022", 2023年5月8日,
and returns each with the first and last day it denotes. Conventions (UTC dates):

- days: yesterday / last night / 昨天 = anchor - 1; the day before yesterday / 前天 = -2;
  today / tonight / this morning / 今天 = anchor; tomorrow / 明天 = +1; the day after
  tomorrow / 后天 = +2; N days ago / N天前 = -N (a couple of days = 2); in N days /
  N天后 = +N;
- weeks are ISO weeks, Monday to Sunday: last / this / next week (上周, 这周, 下周), N weeks
  ago (N周前); weekends are the Saturday and Sunday of such a week (this weekend,
  last weekend, two weekends ago, 这周末, 上周末); earlier this week = Monday..anchor;
- last / this / next month and year (上个月, 这个月, 下个月, 去年, 今年, 明年, 前年), N months
  or years ago, earlier this month = the 1st..anchor;
- last <weekday> = the latest such day strictly before the anchor; next <weekday> = the
  earliest strictly after; 上周X / 这周X / 下周X = that day of the previous, same or next
  ISO week;
- a bare weekday ("on saturday"), this <weekday>, a day and month without a year ("21 nov",
  "the 3rd of june") and a day of the month ("on the 5th") go by the tense of the clause
  they are said in (tense.py: past, a plan, or unknown; `unstated` where it says none):
  dayforms.py states how, and what it does not read ("the 5th floor", "we march 5 miles");
  these are resolved against the anchor, and shown as such (annotation());
- "M/D/YYYY" is read as month first only when it cannot be read the other way (one of the
  two is over 12, or they are equal); 5月8日 and "in May" take the anchor's year.

Where an expression is ambiguous ("a few days ago", "recently", "on Friday" with no
tense, "5/6/2023"), nothing is resolved: a wrong date is worse than none.
"""
from __future__ import annotations

import calendar
import datetime
import functools
import re
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from . import dayforms, tense
from .dayforms import (  # noqa: F401 (period.py reads these here)
    MONTH_ALTERNATIVES as _MONTH_ALTERNATIVES,
    MONTHS,
    WEEKDAYS,
    month_number as _month_number,
    safe_date as _safe_date,
    single as _single,
    weekday_after as _weekday_after,
    weekday_before as _weekday_before,
)

Date = datetime.date
_DAY = datetime.timedelta(days=1)
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2}
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


class Resolution(NamedTuple):
    expression: str  # as written
    start: Date
    end: Date
    relative: bool  # resolved against the anchor (shown as an annotation), or written out
    position: int  # where it starts in the text


# -- calendar arithmetic -------------------------------------------------------------------

def _week(day: Date, weeks: int = 0) -> Tuple[Date, Date]:
    monday = day - datetime.timedelta(days=day.weekday()) + datetime.timedelta(weeks=weeks)
    return monday, monday + datetime.timedelta(days=6)


def _weekend(day: Date, weeks: int = 0) -> Tuple[Date, Date]:
    monday, sunday = _week(day, weeks)
    return sunday - _DAY, sunday


def _month(day: Date, months: int = 0) -> Tuple[Date, Date]:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return Date(year, month + 1, 1), Date(year, month + 1, calendar.monthrange(year, month + 1)[1])


def _year(day: Date, years: int = 0) -> Tuple[Date, Date]:
    return Date(day.year + years, 1, 1), Date(day.year + years, 12, 31)


def _number(text: str) -> Optional[int]:
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in _NUMBER_WORDS:
        return _NUMBER_WORDS[text]
    return _chinese_number(text)


def _chinese_number(text: str) -> Optional[int]:
    if not text:
        return None
    if all(ch in _CN_DIGITS for ch in text):
        value = 0
        for ch in text:
            value = value * 10 + _CN_DIGITS[ch]
        return value
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _CN_DIGITS.get(tens, None) if tens else 1
        o = _CN_DIGITS.get(ones, None) if ones else 0
        if t is not None and o is not None:
            return t * 10 + o
    return None


# -- patterns ------------------------------------------------------------------------------

AnchorT = TypeVar("AnchorT", Date, Optional[Date])
Span = Tuple[Date, Date]  # the first and last day an expression may mean
Handler = Callable[[re.Match, Date], Optional[Span]]  # resolves a relative expression on the day it was said
_N = r"(\d{1,3}|a couple of|couple of|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_CN_N = r"([0-9]{1,3}|[零一二两三四五六七八九十]{1,3})"


def _ago(unit: str, n: int, anchor: Date) -> Tuple[Date, Date]:
    if unit.startswith("day") or unit == "天":
        return _single(anchor - datetime.timedelta(days=n))
    if unit.startswith("week") or unit in ("周", "个星期", "星期"):
        return _week(anchor, -n)
    if unit.startswith("month") or unit == "个月":
        return _month(anchor, -n)
    return _year(anchor, -n)


def _counted(count: str, resolve_count: Callable[[int], Optional[Span]]) -> Optional[Span]:
    """What `resolve_count` makes of the number `count` spells; None for none or zero."""
    n = _number(count)
    return resolve_count(n) if n else None


RELATIVE: List[Tuple[re.Pattern, Handler]] = [
    (re.compile(r"\bthe day before yesterday\b", re.I), lambda m, a: _single(a - 2 * _DAY)),
    (re.compile(r"\bthe day after tomorrow\b", re.I), lambda m, a: _single(a + 2 * _DAY)),
    (re.compile(r"\b(yesterday|last night)\b", re.I), lambda m, a: _single(a - _DAY)),
    (re.compile(r"\b(today|tonight|this (morning|afternoon|evening))\b", re.I), lambda m, a: _single(a)),
    (re.compile(r"\btomorrow\b", re.I), lambda m, a: _single(a + _DAY)),
    (re.compile(r"\b%s (days?|weeks?|months?|years?) ago\b" % _N, re.I),
     lambda m, a: _counted(m.group(1), lambda n: _ago(m.group(2).lower(), n, a))),
    (re.compile(r"\bin %s days?\b" % _N, re.I),
     lambda m, a: _counted(m.group(1), lambda n: _single(a + datetime.timedelta(days=n)))),
    (re.compile(r"\b(last|this|next) weekend\b", re.I),
     lambda m, a: _weekend(a, {"last": -1, "this": 0, "next": 1}[m.group(1).lower()])),
    (re.compile(r"\b%s weekends? ago\b" % _N, re.I),
     lambda m, a: _counted(m.group(1), lambda n: _weekend(a, -n))),
    (re.compile(r"\bearlier this week\b", re.I), lambda m, a: (_week(a)[0], a)),
    (re.compile(r"\bearlier this month\b", re.I), lambda m, a: (_month(a)[0], a)),
    (re.compile(r"\b(last|this|next) week\b", re.I),
     lambda m, a: _week(a, {"last": -1, "this": 0, "next": 1}[m.group(1).lower()])),
    (re.compile(r"\b(last|this|next) month\b", re.I),
     lambda m, a: _month(a, {"last": -1, "this": 0, "next": 1}[m.group(1).lower()])),
    (re.compile(r"\b(last|this|next) year\b", re.I),
     lambda m, a: _year(a, {"last": -1, "this": 0, "next": 1}[m.group(1).lower()])),
    (re.compile(r"\b(last|next) (%s)\b" % "|".join(WEEKDAYS), re.I),
     lambda m, a: _single((_weekday_before if m.group(1).lower() == "last" else _weekday_after)(
         a, WEEKDAYS.index(m.group(2).lower())))),
    # Chinese
    (re.compile(r"前天"), lambda m, a: _single(a - 2 * _DAY)),
    (re.compile(r"昨天|昨晚|昨日"), lambda m, a: _single(a - _DAY)),
    (re.compile(r"后天"), lambda m, a: _single(a + 2 * _DAY)),
    (re.compile(r"今天|今晚|今日"), lambda m, a: _single(a)),
    (re.compile(r"明天"), lambda m, a: _single(a + _DAY)),
    (re.compile(r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"),
     lambda m, a: _single(_week(a, {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)])[0]
                          + datetime.timedelta(days=_CN_WEEKDAYS[m.group(2)]))),
    (re.compile(r"(上|这|本|下)(?:个)?(?:周末|星期末)"),
     lambda m, a: _weekend(a, {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)])),
    (re.compile(r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)"),
     lambda m, a: _week(a, {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)])),
    (re.compile(r"(上|这|本|下)(?:个)?月"), lambda m, a: _month(a, {"上": -1, "这": 0, "本": 0, "下": 1}[m.group(1)])),
    (re.compile(r"前年"), lambda m, a: _year(a, -2)),
    (re.compile(r"去年"), lambda m, a: _year(a, -1)),
    (re.compile(r"今年"), lambda m, a: _year(a)),
    (re.compile(r"明年"), lambda m, a: _year(a, 1)),
    (re.compile(r"%s(天|周|个星期|个月|年)前" % _CN_N),
     lambda m, a: _counted(m.group(1), lambda n: _ago(m.group(2), n, a))),
    (re.compile(r"%s天后" % _CN_N),
     lambda m, a: _counted(m.group(1), lambda n: _single(a + datetime.timedelta(days=n)))),
]

_MONTH = r"(%s)\.?" % _MONTH_ALTERNATIVES
_ANY_CASE_MONTH = r"(%s)\b\.?" % dayforms.MONTH_ANY_CASE
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"


def _day_month_year(day: str, month: str, year: str) -> Optional[Tuple[Date, Date]]:
    """A written date with its year (one without is dayforms.py's)."""
    d = _safe_date(int(year), _month_number(month), int(day))
    return _single(d) if d else None


def _us_date(m: re.Match, anchor: Optional[Date]) -> Optional[Tuple[Date, Date]]:
    first, second, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if first <= 12 and second <= 12 and first != second:
        return None  # 5/6/2023: May 6th or 5 June? Not guessed.
    month, day = (first, second) if first <= 12 else (second, first)
    d = _safe_date(year, month, day)
    return _single(d) if d else None


_NOT_AFTER, _NOT_BEFORE = r"(?<![0-9A-Za-z/-])", r"(?![0-9A-Za-z/-])"  # a numeric date's edges
ABSOLUTE: List[Tuple[re.Pattern, Callable[[re.Match, Optional[Date]], Optional[Span]]]] = [
    # Bounded by what is not a Latin letter or digit rather than by \b: Chinese writes "我2022-10-04那天"
    # with no space, and to \b a Chinese character is a word character.
    (re.compile(r"%s(\d{4})-(\d{1,2})-(\d{1,2})%s" % (_NOT_AFTER, _NOT_BEFORE)),
     lambda m, a: (lambda d: _single(d) if d else None)(_safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3))))),
    (re.compile(r"%s(\d{1,2})/(\d{1,2})/(\d{4})%s" % (_NOT_AFTER, _NOT_BEFORE)), _us_date),
    (re.compile(r"\b%s(?: of)? %s,? (\d{4})\b" % (_ORD, _ANY_CASE_MONTH)),
     lambda m, a: _day_month_year(m.group(1), m.group(2), m.group(3))),
    (re.compile(r"\b%s %s\b,? (\d{4})\b" % (_ANY_CASE_MONTH, _ORD)),
     lambda m, a: _day_month_year(m.group(2), m.group(1), m.group(3))),
    (re.compile(r"\bin %s,? (\d{4})\b" % _MONTH),
     lambda m, a: _month(Date(int(m.group(2)), _month_number(m.group(1)), 1))),
    (re.compile(r"\bin %s\b(?!\.?\s*\d)" % _MONTH),  # "in May 9th" is the day (dayforms.py)
     lambda m, a: _month(Date(a.year, _month_number(m.group(1)), 1)) if a else None),
    (re.compile(r"\bin ((?:19|20)\d{2})\b"), lambda m, a: _year(Date(int(m.group(1)), 1, 1))),
    (re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]"),
     lambda m, a: (lambda d: _single(d) if d else None)(_safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3))))),
    (re.compile(r"(\d{1,2})月(\d{1,2})[日号]"),
     lambda m, a: (lambda d: _single(d) if d else None)(_safe_date(a.year, int(m.group(1)), int(m.group(2))))
     if a else None),
    (re.compile(r"(\d{4})年(\d{1,2})月"),
     lambda m, a: _month(Date(int(m.group(1)), int(m.group(2)), 1)) if 1 <= int(m.group(2)) <= 12 else None),
    (re.compile(r"(\d{1,2})月份"),
     lambda m, a: _month(Date(a.year, int(m.group(1)), 1)) if a and 1 <= int(m.group(1)) <= 12 else None),
    (re.compile(r"((?:19|20)\d{2})年"), lambda m, a: _year(Date(int(m.group(1)), 1, 1))),
]


# At most this many date expressions are resolved in one text (patterns in the order they
# are tried): a conversation turn names a handful, and a message that repeats "3 days ago"
# 60,000 times once took minutes to add (each match is checked against those taken).
MAX_RESOLUTIONS = 32


def resolve(text: str, anchor: Optional[Date], unstated: str = tense.UNKNOWN) -> List[Resolution]:
    """Date expressions in `text` (at most MAX_RESOLUTIONS), in text order; relative ones only
    when `anchor` is known.

    Patterns are tried most specific first, and a stretch of text belongs to one
    expression at most ("the day before yesterday" is not also "yesterday").
    unstated: the tense taken where a clause states none (tense.py), for what goes by it
    (dayforms.py): UNKNOWN (nothing resolved) for a message, PAST for a question about a memory.
    """
    taken: List[Tuple[int, int]] = []
    found: List[Resolution] = []

    def claim(pattern: re.Pattern, handler: Callable[[re.Match, AnchorT], Optional[Span]], day: AnchorT,
              relative: bool) -> None:
        for m in pattern.finditer(text):
            if len(found) >= MAX_RESOLUTIONS:
                return
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            try:
                span = handler(m, day)
            except (OverflowError, ValueError):
                span = None  # a date past year 9999 or before year 1: nothing to resolve to
            if span is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(Resolution(m.group(0), span[0], span[1], relative, m.start()))

    lowered = text.lower()
    held = [w for w in _TRIGGER_WORDS if w in lowered]  # looked for once, not once per pattern
    if _DIGIT.search(lowered) is not None or any(m in lowered for m in MONTHS):
        held.append(_NUMERIC)
    if not lowered.isascii():
        held.append(_NON_ASCII)
    if not held:
        return found  # every pattern needs one of these (_index()): most messages are done here
    for i in _candidates(_ABSOLUTE_INDEX, held):
        claim(ABSOLUTE[i][0], ABSOLUTE[i][1], anchor, False)
    if anchor is not None:
        for i in _candidates(_RELATIVE_INDEX, held):
            claim(RELATIVE[i][0], RELATIVE[i][1], anchor, True)
        for i in _candidates(_DAYFORMS_INDEX, held):
            claim(dayforms.PATTERNS[i][0], _assuming(dayforms.PATTERNS[i][1], unstated), anchor, True)
    return sorted(found, key=lambda r: r.position)


def _assuming(handler: dayforms.TenseHandler, unstated: str) -> Handler:
    """`handler` as the other patterns' are: taking `unstated` where the clause says no tense."""
    return lambda m, anchor: handler(m, anchor, unstated)


def _triggers(pattern: re.Pattern) -> Tuple[str, ...]:
    """Words one of which any match of `pattern` contains, or () if none is known (_index()).

    Most messages hold no date at all; testing a few substrings first spares running
    every pattern over every message at write time.
    """
    source = pattern.pattern.lower()
    words = [w for w in _TRIGGER_WORDS if w in source]
    if words and not any(ch.isdigit() for ch in "".join(words)):
        return tuple(words)
    return ()


_TRIGGER_WORDS = ("yesterday", "night", "today", "tonight", "morning", "afternoon", "evening", "tomorrow", "ago",
                  "weekend", "week", "month", "year", "day") + tuple(WEEKDAYS)
# What a pattern without a trigger word needs: a digit or a month name (ASCII ones), or non-ASCII text.
_NUMERIC, _NON_ASCII = "<digit or month name>", "<non-ASCII text>"
_DIGIT = re.compile(r"\d")


def _index(patterns: Sequence[Tuple[re.Pattern, object]]) -> Dict[str, Tuple[int, ...]]:
    """`patterns`' positions filed under what a text must hold for each to match: any one of
    its trigger words, or _NUMERIC or _NON_ASCII for one without (_triggers())."""
    index: Dict[str, List[int]] = {}
    for i, (pattern, _) in enumerate(patterns):
        for need in _triggers(pattern) or ((_NUMERIC if pattern.pattern.isascii() else _NON_ASCII),):
            index.setdefault(need, []).append(i)
    return {need: tuple(positions) for need, positions in index.items()}


def _candidates(index: Dict[str, Tuple[int, ...]], held: Sequence[str]) -> List[int]:
    """Positions, in the order tried, of the patterns that may match a text holding `held` (trigger words,
    _NUMERIC, _NON_ASCII): the few worth running, without asking all 42 in turn (which cost more than matching)."""
    return sorted({i for need in held for i in index.get(need, ())})


# Built once: the lists never change.
_ABSOLUTE_INDEX, _RELATIVE_INDEX, _DAYFORMS_INDEX = _index(ABSOLUTE), _index(RELATIVE), _index(dayforms.PATTERNS)


_EPOCH_DAY = Date(1970, 1, 1)
_DAY_MS = 86_400_000


def day_of(timestamp_ms: Optional[int]) -> Optional[Date]:
    """The UTC date of a Unix-ms timestamp, None if unknown or unrepresentable."""
    if timestamp_ms is None:
        return None
    try:  # whole days since the epoch, floored (before 1970 too): the date of the UTC instant, without a datetime
        return _EPOCH_DAY + datetime.timedelta(days=timestamp_ms // _DAY_MS)
    except OverflowError:
        return None


_DATE_TOKEN = re.compile(r"[dmy]\d{4,8}")
# The same, a whole whitespace-separated token; the look-behind follows the letter so that a scan
# skips to a d, m or y instead of trying it at every position (twice as fast).
_DATE_TOKENS = re.compile(r"[dmy](?<!\S[dmy])\d{4,8}(?!\S)")


def is_date_token(token: str) -> bool:
    """Whether `token` has the shape of tokens() output (`d20230508`, `m202305`, `y2023`)."""
    return _DATE_TOKEN.fullmatch(token) is not None


def count_date_tokens(tokens: str) -> int:
    """How many of the whitespace-separated `tokens` are date tokens (is_date_token()): one scan, not one per token."""
    return len(_DATE_TOKENS.findall(tokens))


def tokens(start: Date, end: Date) -> List[str]:
    """Index tokens of a date range: the day (if one), and every month and year it touches.

    `d20230508` for a day, `m202305` for a month, `y2023` for a year: letters and
    digits only, so they pass through tokenize.py and fts.py untouched.
    """
    return list(_tokens(start, end))


@functools.lru_cache(maxsize=4096)  # every message of a session has its day's tokens: made once, not per message
def _tokens(start: Date, end: Date) -> Tuple[str, ...]:
    out = ["d%04d%02d%02d" % (start.year, start.month, start.day)] if start == end else []
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month) and len(out) < 40:
        out.append("m%04d%02d" % (year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    out.extend("y%04d" % y for y in range(start.year, min(end.year, start.year + 20) + 1))
    return tuple(out)


def annotation(resolutions: List[Resolution]) -> str:
    """"(yesterday = 2023-05-07; last week = 2023-05-01..2023-05-07)" for the relative ones, or ""."""
    parts = []
    for r in resolutions:
        if r.relative:
            when = r.start.isoformat() if r.start == r.end else "%s..%s" % (r.start.isoformat(), r.end.isoformat())
            parts.append("%s = %s" % (r.expression, when))
    return "(%s)" % "; ".join(parts) if parts else ""
