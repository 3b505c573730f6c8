"""The period a question is scoped to: "in the spring of 2022", "early March", "last summer", 去年夏天.

`periods(question, memory)` returns the date spans (first day, last day) a question names, in English
and Chinese, so that search can treat a period as a range rather than as words to match. `memory` is the
first and last day of the asking user's memory; its last day is the anchor of relative forms ("last
month", 上个月): a question is asked about a memory, and the memory's latest day is the best cheap
stand-in for "now" that the data itself gives (a replayed conversation's questions are asked at its end,
not on the server's clock).

Conventions:

- seasons are the northern hemisphere's meteorological ones: spring March-May, summer
  June-August, autumn (fall) September-November, winter December-February, "winter
  2022" starting in December 2022. English and Chinese speakers live overwhelmingly
  north of the equator, and whole months keep a season a union of month tokens;
- a month or season without a year means that month or season in every year of the
  user's memory (the latest MAX_YEARS): the user's memory decides which ones have
  messages, and picking one year would be a guess (LoCoMo dev gives no case where
  the two differ);
- early / mid / late <month> = days 1-10 / 11-20 / 21-end; the beginning / end of a
  month = days 1-10 / 21-end; the first / second / third / fourth / last week of a
  month = days 1-7 / 8-14 / 15-21 / 22-28 / the last seven; the first / last weekend
  = the first / last Saturday in the month and the Sunday after; early / mid / late
  <year> = January-April / May-August / September-December; the first / second half
  of a month or year splits it at the 15th or in June;
- "this / last / next summer": the anchor's year's, the latest one ended before the
  anchor, the next one after it;
- "between X and Y", "from X to Y", 从X到Y: X's first day to Y's last;
  "N days / weeks / months before X", "the week before X": counted back from X;
  "before X" / "after X": from the memory's first day to the day before X, or from
  the day after X to the memory's last;
- everything timeexpr.resolve() reads in a question (absolute dates; relative ones against the anchor)
  is a period too, a day the narrowest; what goes by tense (a bare weekday, a day and month without a
  year, "the 5th": dayforms.py) is read in the past where the question states none, as a question asks
  about what the memory holds: "on 3 June?" is the latest 3 June on or before the anchor.

At most MAX_PERIODS spans come back; the text read is bounded by the caller.
"""
from __future__ import annotations

import calendar
import datetime
import re
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from . import tense, timeexpr

Date = datetime.date
Span = Tuple[Date, Date]
_DAY = datetime.timedelta(days=1)

MAX_PERIODS = 16  # spans one question yields, at most: a year-less season in each year of a memory
MAX_YEARS = 10  # a month or season without a year: the latest this many years of the memory


class Memory(NamedTuple):
    """The first and last day of a user's memory (the last is the anchor of relative forms)."""

    first: Date
    last: Date


_SEASON_MONTHS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
                  "春": 3, "夏": 6, "秋": 9, "冬": 12}
_CN_MONTHS = "|".join(sorted(("一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"),
                             key=lambda w: -len(w)))
_MONTH = r"(?P<month>%s)\.?" % timeexpr._MONTH_ALTERNATIVES  # capitalised, as written in questions
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_OF_YEAR = r"(?:,?\s+(?:of\s+)?%s)?" % _YEAR


def _month_span(year: int, month: int) -> Span:
    return Date(year, month, 1), Date(year, month, calendar.monthrange(year, month)[1])


def _season_span(year: int, first_month: int) -> Span:
    start = Date(year, first_month, 1)
    last_year, last_month = divmod(year * 12 + first_month - 1 + 2, 12)
    return start, _month_span(last_year, last_month + 1)[1]


def _memory_years(memory: Optional[Memory]) -> List[int]:
    if memory is None:
        return []
    return list(range(max(memory.first.year, memory.last.year - MAX_YEARS + 1), memory.last.year + 1))


def _years(year: Optional[str], memory: Optional[Memory]) -> List[int]:
    """The year written, or every year of the memory when none is."""
    return [int(year)] if year else _memory_years(memory)


# -- parts of a month or year --------------------------------------------------------------

def _part_of_month(span: Span, part: str) -> Span:
    start, end = span
    if part in ("early", "beginning", "start", "初", "上旬", "first half"):
        return start, start.replace(day=15 if part == "first half" else 10)
    if part in ("mid", "middle", "中", "中旬"):
        return start.replace(day=11), start.replace(day=20)
    if part == "second half":
        return start.replace(day=16), end
    return start.replace(day=21), end  # late, end, 底, 末, 下旬


def _part_of_year(year: int, part: str) -> Span:
    if part in ("early", "beginning", "start", "初"):
        return Date(year, 1, 1), Date(year, 4, 30)
    if part in ("mid", "middle", "中"):
        return Date(year, 5, 1), Date(year, 8, 31)
    if part == "first half":
        return Date(year, 1, 1), Date(year, 6, 30)
    if part == "second half":
        return Date(year, 7, 1), Date(year, 12, 31)
    return Date(year, 9, 1), Date(year, 12, 31)  # late, end, 底, 末


_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "1st": 0, "2nd": 1, "3rd": 2, "4th": 3,
             "第一": 0, "第二": 1, "第三": 2, "第四": 3}


def _week_of_month(span: Span, which: str, weekend: bool) -> Span:
    start, end = span
    if weekend:
        saturdays = [d for d in (start + i * _DAY for i in range((end - start).days + 1)) if d.weekday() == 5]
        saturday = saturdays[-1] if which in ("last", "最后") else saturdays[_ORDINALS[which]]
        return saturday, saturday + _DAY
    if which in ("last", "最后"):
        return end - 6 * _DAY, end
    first = start + 7 * _ORDINALS[which] * _DAY
    return first, first + 6 * _DAY


# -- relative seasons ----------------------------------------------------------------------

def _relative_season(which: str, first_month: int, anchor: Date) -> Span:
    """This / last / next <season> said on `anchor`."""
    this = _season_span(anchor.year - (1 if first_month == 12 and anchor.month < 3 else 0), first_month)
    if which in ("this", "今年"):
        return this
    if which in ("last", "去年"):
        if which == "去年":
            return _season_span(this[0].year - 1, first_month)
        return this if this[1] < anchor else _season_span(this[0].year - 1, first_month)
    return this if this[0] > anchor else _season_span(this[0].year + 1, first_month)


def _counted_back(count: int, unit: str, day: Date) -> Span:
    """`count` days / weeks / months before `day`."""
    if unit.startswith("day"):
        return day - count * _DAY, day - count * _DAY
    if unit.startswith("week"):
        return timeexpr._week(day, -count)
    if unit.startswith("weekend"):
        return timeexpr._weekend(day, -count)
    return timeexpr._month(day, -count)


# -- patterns: each yields the spans of one expression ----------------------------------------

Handler = Callable[[re.Match, Optional[Memory]], List[Span]]
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
# A month or season without a year scopes a question only after a word that makes it a time:
# "in June", "during the summer"; not "plans for the summer", "May I".
_SCOPE = r"(?P<scope>\b(?i:in|during|over|through|throughout|since|until|from|between|and|to|of)\s+(?i:the\s+)?)"
_PART = (r"(?i:(?P<part>early|mid|middle|late|the beginning of|the start of|the end of"
         r"|the first half of|the second half of))")
_WHICH = r"(?P<which>first|second|third|fourth|last|1st|2nd|3rd|4th)"
_CN_YEAR = r"(?:(?P<year>(?:19|20)\d{2})年|(?P<rel>去年|今年|前年|明年))?"
_CN_MONTH = r"(?P<month>1[0-2]|0?[1-9]|%s)月份?" % _CN_MONTHS
_CN_PART = r"(?P<part>初|上旬|中旬|下旬|底|末|中)"
_CN_RELATIVE_YEARS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}


def _part(m: re.Match) -> str:
    words = m.group("part").lower().split()
    return " ".join(words[1:3]) if words[0] == "the" and len(words) > 3 else words[-2 if len(words) > 2 else -1]


def _english_months(m: re.Match, memory: Optional[Memory]) -> List[Span]:
    month = timeexpr._month_number(m.group("month"))
    return [_month_span(y, month) for y in _years(m.groupdict().get("year"), memory)]


def _chinese_months(m: re.Match, memory: Optional[Memory]) -> List[Span]:
    text = m.group("month")
    month = int(text) if text.isdigit() else (timeexpr._chinese_number(text) or 0)
    if not 1 <= month <= 12:
        return []
    rel = m.group("rel")
    if rel:
        years = [memory.last.year + _CN_RELATIVE_YEARS[rel]] if memory else []
    else:
        years = _years(m.groupdict().get("year"), memory)
    return [_month_span(y, month) for y in years]


def _seasons(m: re.Match, memory: Optional[Memory]) -> List[Span]:
    first_month = _SEASON_MONTHS[m.group("season").lower()]
    return [_season_span(y, first_month) for y in _years(m.groupdict().get("year"), memory)]


def _chinese_year_part(m: re.Match, memory: Optional[Memory]) -> List[Span]:
    rel = m.group("rel")
    if rel:
        years = [memory.last.year + _CN_RELATIVE_YEARS[rel]] if memory else []
    else:
        years = [int(m.group("year"))]
    return [_part_of_year(y, m.group("part")) for y in years]


def _cn_season(m: re.Match, memory: Optional[Memory]) -> List[Span]:
    first_month = _SEASON_MONTHS[m.group("season")]
    rel = m.group("rel")
    if rel:
        return [_relative_season(rel, first_month, memory.last)] if memory and rel != "前年" and rel != "明年" else []
    return [_season_span(y, first_month) for y in _years(m.groupdict().get("year"), memory)]


PATTERNS: List[Tuple[re.Pattern, Handler]] = [
    (re.compile(r"\bthe %s (?P<unit>week|weekend) of %s%s" % (_WHICH, _MONTH, _OF_YEAR), re.I),
     lambda m, mem: [_week_of_month(s, m.group("which").lower(), m.group("unit").lower() == "weekend")
                     for s in _english_months(m, mem)]),
    (re.compile(r"\b%s %s%s" % (_PART, _MONTH, _OF_YEAR)),
     lambda m, mem: [_part_of_month(s, _part(m)) for s in _english_months(m, mem)]),
    (re.compile(r"\b%s %s\b" % (_PART, _YEAR)), lambda m, mem: [_part_of_year(int(m.group("year")), _part(m))]),
    (re.compile(r"\b(?P<which>this|last|next|this past) %s\b" % _SEASON, re.I),
     lambda m, mem: [_relative_season(m.group("which").split()[-1].lower(), _SEASON_MONTHS[m.group("season").lower()],
                                      mem.last)] if mem else []),
    (re.compile(r"\b%s,?\s+(?:of\s+)?%s\b" % (_SEASON, _YEAR), re.I), _seasons),
    (re.compile(r"%s%s\b" % (_SCOPE, _SEASON), re.I), _seasons),
    # Chinese
    (re.compile(r"%s%s的?(?P<which>第一|第二|第三|第四|最后)一?个?(?P<unit>周末|周|星期|礼拜)" % (_CN_YEAR, _CN_MONTH)),
     lambda m, mem: [_week_of_month(s, m.group("which"), m.group("unit") == "周末") for s in _chinese_months(m, mem)]),
    (re.compile(r"%s%s%s" % (_CN_YEAR, _CN_MONTH, _CN_PART)),
     lambda m, mem: [_part_of_month(s, m.group("part")) for s in _chinese_months(m, mem)]),
    (re.compile(r"%s%s" % (_CN_YEAR, _CN_MONTH)), _chinese_months),
    (re.compile(r"%s(?P<season>[春夏秋冬])(?:天|季)" % _CN_YEAR), _cn_season),
    (re.compile(r"(?:(?P<year>(?:19|20)\d{2})年|(?P<rel>去年|今年|前年|明年))(?:的)?年?(?P<part>初|中|底|末)"),
     _chinese_year_part),
    (re.compile(r"(?<![\w.])%s,?\s+(?:of\s+)?%s\b" % (_MONTH, _YEAR)), _english_months),
    (re.compile(r"%s%s\b" % (_SCOPE, _MONTH)), _english_months),
    (re.compile(r"(?<![\d.,/-])%s(?![\d.,/-]?\d)" % _YEAR),
     lambda m, mem: [timeexpr._year(Date(int(m.group("year")), 1, 1))]),
]


T = TypeVar("T")


def _safely(compute: Callable[..., T], *args: Any) -> Optional[T]:
    """What `compute(*args)` returns, or None where it would step past year 9999 or before year 1."""
    try:
        return compute(*args)
    except (OverflowError, ValueError):
        return None


class _Atom(NamedTuple):
    start: int  # where the expression starts and ends in the question
    end: int
    spans: List[Span]
    relative: Optional[timeexpr.Resolution]  # a relative expression timeexpr read, to resolve again from a date


def _atoms(question: str, memory: Optional[Memory]) -> List[_Atom]:
    """Every period expression of the question, in text order; a stretch of text belongs to one at most."""
    found: List[_Atom] = []

    def free(start: int, end: int) -> bool:
        return not any(start < a.end and a.start < end for a in found)

    def take(resolutions: Sequence[timeexpr.Resolution]) -> None:
        for r in resolutions:
            end = r.position + len(r.expression)
            if free(r.position, end):
                found.append(_Atom(r.position, end, [(r.start, r.end)], r if r.relative else None))

    resolved = timeexpr.resolve(question, memory.last if memory else None, tense.PAST)
    take([r for r in resolved if r.start == r.end])  # a day is what the question means most precisely
    for pattern, handler in PATTERNS:
        for m in pattern.finditer(question):
            if free(m.start(), m.end()):
                spans = _safely(handler, m, memory) or []
                if spans:  # the word that scopes it ("in", "between") is not part of it
                    start = m.end("scope") if "scope" in m.groupdict() else m.start()
                    found.append(_Atom(start, m.end(), spans, None))
    take(resolved)
    return sorted(found, key=lambda a: a.start)


_RANGE_FROM = re.compile(r"(?:\bbetween|\bfrom|从)\s*$", re.I)
_RANGE_TO = re.compile(r"^\s*(?:and|to|until|till|through|-|–|到|至)\s*$", re.I)
_COUNT_BEFORE = re.compile(r"\b%s (day|week|weekend|month)s? before\s*$" % timeexpr._N, re.I)
_UNIT_BEFORE = re.compile(r"\bthe (day|week|weekend|month) before\s*$", re.I)
_WEEKDAY_BEFORE = re.compile(r"\bthe (%s) before\s*$" % "|".join(timeexpr.WEEKDAYS), re.I)
_BEFORE = re.compile(r"(?:\bbefore|\bprior to|\buntil)\s*$", re.I)
_AFTER = re.compile(r"(?:\bafter|\bsince)\s*$", re.I)
_RELATIVE_BEFORE = re.compile(r"^\s*,?\s*(?:before|on)\s+$", re.I)  # "last Friday on 23 January"


def _before(prefix: str, day: Date, memory: Optional[Memory]) -> Optional[Span]:
    """The span that `prefix` (the text before a date) counts back from `day`, if it does."""
    m = _COUNT_BEFORE.search(prefix)
    if m:
        n = timeexpr._number(m.group(1))
        return _counted_back(n, m.group(2).lower(), day) if n else None
    m = _UNIT_BEFORE.search(prefix)
    if m:
        return _counted_back(1, m.group(1).lower(), day)
    m = _WEEKDAY_BEFORE.search(prefix)
    if m:
        return timeexpr._single(timeexpr._weekday_before(day, timeexpr.WEEKDAYS.index(m.group(1).lower())))
    if _BEFORE.search(prefix) and memory and memory.first < day:
        return memory.first, day - _DAY
    return None


def _combined(question: str, atoms: Sequence[_Atom], memory: Optional[Memory]) -> List[Span]:
    """The atoms' spans, with ranges and counts from a date read as one period each."""
    out: List[Span] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        nxt = atoms[i + 1] if i + 1 < len(atoms) else None
        between = question[atom.end: nxt.start] if nxt else ""
        if nxt and _RANGE_TO.match(between) and _RANGE_FROM.search(question[: atom.start]):
            last = max(s[1] for s in nxt.spans)  # "between May and July 2022": the May before it
            out.append((max([s[0] for s in atom.spans if s[0] <= last] or [last]), last))
            i += 2
            continue
        if nxt and atom.relative and _RELATIVE_BEFORE.match(between):
            again = timeexpr.resolve(atom.relative.expression, nxt.spans[0][0], tense.PAST)
            out.extend((r.start, r.end) for r in again)
            i += 2
            continue
        prefix = question[max(0, atom.start - 40): atom.start]
        counted = _safely(_before, prefix, atom.spans[0][0], memory)
        if counted:
            out.append(counted)
        elif _AFTER.search(prefix) and memory and atom.spans[-1][1] < memory.last:
            out.append((atom.spans[-1][1] + _DAY, memory.last))
        else:
            out.extend(atom.spans)
        i += 1
    return out


def periods(question: str, memory: Optional[Memory]) -> List[Span]:
    """The periods `question` is scoped to (at most MAX_PERIODS, distinct, earliest first).

    memory: the first and last day of the asking user's memory; without it, relative
    forms and months or seasons without a year name nothing.
    """
    # A period at the ends of the calendar (year 1, year 9999) may step past them: then none is read.
    spans = _safely(lambda: _combined(question, _atoms(question, memory), memory)) or []
    return sorted(set(s for s in spans if s[0] <= s[1]))[-MAX_PERIODS:]


# Whatever a period expression holds, one of these is in it: a digit, a month or season
# name, a relative word, a Chinese date character. A question with none needs no memory read.
_MAY_NAME = re.compile(r"\d|%s|spring|summer|autumn|fall|winter|week|month|year|yesterday|today|ago|last|this|"
                       r"[年月周天春夏秋冬]" % "|".join(timeexpr.MONTHS + timeexpr.WEEKDAYS), re.I)


def may_name_period(question: str) -> bool:
    """Whether `question` may name a period: a cheap test before reading the memory's first and last day."""
    return _MAY_NAME.search(question) is not None


MAX_PERIOD_TOKENS = 64  # index tokens one question's periods are looked up by, at most


def index_tokens(spans: Sequence[Span]) -> List[str]:
    """The date tokens (timeexpr.tokens()) of the days of `spans`: a whole year as its year token,
    a whole month as its month token, other days one by one; at most MAX_PERIOD_TOKENS.

    Every message's own day is indexed as these tokens (features.derive()), so their
    postings are the messages said (or naming a day) inside the periods.
    """
    out: List[str] = []
    for start, end in spans:
        day: Optional[Date] = start
        while day is not None and day <= end and len(out) < MAX_PERIOD_TOKENS:
            year_end, month_end = Date(day.year, 12, 31), _month_span(day.year, day.month)[1]
            if day == Date(day.year, 1, 1) and year_end <= end:
                out.append("y%04d" % day.year)
                day = _day_after(year_end)
            elif day.day == 1 and month_end <= end:
                out.append("m%04d%02d" % (day.year, day.month))
                day = _day_after(month_end)
            else:
                out.append("d%04d%02d%02d" % (day.year, day.month, day.day))
                day = _day_after(day)
    return list(dict.fromkeys(out))[:MAX_PERIOD_TOKENS]


def _day_after(day: Date) -> Optional[Date]:
    """The next day, or None after the last day a date can hold (9999-12-31: a question may name it)."""
    return None if day == Date.max else day + _DAY
