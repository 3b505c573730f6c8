"""Days said without a year or a week, resolved by their tense: weekdays, a day and month, a day of the month.

timeexpr.resolve() runs PATTERNS after its own; each handler gets the match, the anchor (the
day the text was said) and the tense to assume where the clause states none (`unstated`:
UNKNOWN for a message, PAST for a question about a memory). The tense is tense.tense() of the
clause around the expression. Conventions:

- a bare weekday ("on saturday", "Friday"): in the past tense the latest such day strictly
  before the anchor, in the future the earliest strictly after; with no tense, nothing. The
  anchor's own day is "today", so "we went on saturday" said on a Saturday is the Saturday
  before, as "last saturday" is. Not read: plurals ("on saturdays"), a weekday after a / an /
  the / that / every / each / one / some / any / most / last / next / past / coming /
  following / previous / same, a named day (Good Friday, Black Friday, Easter Sunday ...), a
  weekday with a date or a week beside it ("Saturday 25 October", "tuesday the 5th",
  "saturday next week": the date or the week says which);
- this <weekday>: that day of the anchor's ISO week when it is the anchor or later, whatever
  the tense; when it is already past, that day in the past tense and nothing otherwise; this
  past <weekday> = the latest strictly before, this coming <weekday> = the earliest strictly after;
- a day and month without a year, in any case ("21 nov", "march 9th", "on 2 feb", "the 3rd of
  june", "June 3", "3 June", "Sept 14th"): in the past tense the latest such date on or before
  the anchor, in the future the earliest on or after, with no tense the nearest either way (a
  tie, half a year each way, goes to the past: a memory recounts more than it plans that far
  ahead). Lowercase "may", "march" and "mar" are verbs as often as months: read as months only
  with an ordinal suffix ("may 9th", "5th march") or after on / by / until / till / since /
  from / before / after ("on march 5"), so "we march 5 miles" and "I may 2" are no dates;
- a day of the month ("vet on the 5th", "the 21st."): read only after "the", and only when the
  end of the text, a punctuation mark or one of at / and / or / but / so / then / when / if /
  because / morning / afternoon / evening / night / "in the morning" (...) follows, or "for"
  after on / by / until ("on the 5th for a checkup"); not after in / came / finished / placed /
  ranked / won / got / be ("came in the 2nd"). So "the 5th time", "the 5th floor", "the 3rd
  one", "his 40th birthday", "came 2nd" are no dates. In the past tense the latest such day on
  or before the anchor, otherwise (future, or no tense) the earliest on or after; a month
  without that day (the 31st in April) is passed over.
"""
from __future__ import annotations

import datetime
import re
from typing import Callable, List, Optional, Tuple

from . import tense as tenses

Date = datetime.date
Span = Tuple[Date, Date]
TenseHandler = Callable[[re.Match, Date, str], Optional[Span]]  # the match, the anchor, the unstated tense

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
MONTH_ALTERNATIVES = "|".join(m.capitalize() for m in MONTHS) + "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


# -- calendar arithmetic (timeexpr.py uses these too) --------------------------------------

def single(day: Date) -> Span:
    return day, day


def safe_date(year: int, month: int, day: int) -> Optional[Date]:
    try:
        return Date(year, month, day)
    except ValueError:
        return None


def month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name[:3]))


def weekday_before(anchor: Date, weekday: int) -> Date:
    back = (anchor.weekday() - weekday) % 7 or 7
    return anchor - datetime.timedelta(days=back)


def weekday_after(anchor: Date, weekday: int) -> Date:
    ahead = (weekday - anchor.weekday()) % 7 or 7
    return anchor + datetime.timedelta(days=ahead)


def _nearest_date(month: int, day: int, anchor: Date, tense: str) -> Optional[Date]:
    """The date `day` `month` nearest `anchor` in the direction `tense` says (module docstring)."""
    dates = [d for d in (safe_date(y, month, day) for y in range(anchor.year - 4, anchor.year + 5)) if d]
    before = max((d for d in dates if d <= anchor), default=None)
    after = min((d for d in dates if d >= anchor), default=None)
    if tense == tenses.PAST or after is None:
        return before if tense != tenses.FUTURE else None
    if tense == tenses.FUTURE or before is None:
        return after
    return min((before, after), key=lambda d: (abs((d - anchor).days), d))


def _day_of_month(day: int, anchor: Date, tense: str) -> Optional[Date]:
    """The latest day `day` of a month on or before `anchor` (PAST), else the earliest on or after."""
    step = -1 if tense == tenses.PAST else 1
    index = anchor.year * 12 + anchor.month - 1
    for k in range(13):
        year, month = divmod(index + step * k, 12)
        d = safe_date(year, month + 1, day)
        if d is not None and (d <= anchor if step < 0 else d >= anchor):
            return d
    return None


# -- what is around an expression ----------------------------------------------------------

_LAST_WORD = re.compile(r"([a-z']+)[\s,]*$")
_WORDS = re.compile(r"[a-z]+")


def _word_before(text: str, start: int) -> str:
    m = _LAST_WORD.search(text[max(0, start - 24): start].lower().replace("\u2019", "'"))
    return m.group(1) if m else ""


def _tense(m: re.Match, unstated: str) -> str:
    return tenses.tense(m.string, m.start(), m.end()) or unstated


_NOT_A_WEEKDAY_AFTER = frozenset((
    "a", "an", "the", "that", "every", "each", "one", "some", "any", "most", "last", "next", "this", "past", "coming",
    "following", "previous", "same", "another", "good", "black", "cyber", "easter", "palm", "ash", "holy", "fat",
    "super", "manic", "casual", "throwback", "taco", "giving", "maundy", "shrove", "freaky"))
_WEEK_WORDS = frozenset(("week", "weeks", "weekend", "weekends", "fortnight"))
# A month's name or abbreviation in any case; the look-ahead at its first letter makes a search
# skip most positions at once (two and a half times as fast as the alternatives alone).
MONTH_ANY_CASE = r"(?=[JjFfMmAaSsOoNnDd])(?i:%s)" % "|".join(MONTHS + ["jan", "feb", "mar", "apr", "jun", "jul", "aug",
                                                                        "sept", "sep", "oct", "nov", "dec"])
_DATE_AFTER = re.compile(r",?\s*(?:the\s+)?(?:\d|%s\b)" % MONTH_ANY_CASE)


def _bare_weekday(m: re.Match, anchor: Date, unstated: str) -> Optional[Span]:
    text = m.string
    if _word_before(text, m.start()) in _NOT_A_WEEKDAY_AFTER or _DATE_AFTER.match(text, m.end()):
        return None
    near = _WORDS.findall(text[max(0, m.start() - 24): m.start()].lower())[-3:]
    near += _WORDS.findall(text[m.end(): m.end() + 24].lower())[:3]
    if _WEEK_WORDS.intersection(near):
        return None
    weekday, tense = WEEKDAYS.index(m.group(1).lower()), _tense(m, unstated)
    if tense == tenses.PAST:
        return single(weekday_before(anchor, weekday))
    return single(weekday_after(anchor, weekday)) if tense == tenses.FUTURE else None


def _this_weekday(m: re.Match, anchor: Date, unstated: str) -> Optional[Span]:
    weekday, which = WEEKDAYS.index(m.group(2).lower()), (m.group(1) or "").strip().lower()
    if which == "past":
        return single(weekday_before(anchor, weekday))
    if which == "coming":
        return single(weekday_after(anchor, weekday))
    day = anchor + datetime.timedelta(days=weekday - anchor.weekday())
    return single(day) if day >= anchor or _tense(m, unstated) == tenses.PAST else None


_MAY_BE_A_VERB = frozenset(("may", "march", "mar"))
_DATE_PREPOSITIONS = frozenset(("on", "by", "until", "till", "since", "from", "before", "after"))


def _day_month(m: re.Match, anchor: Date, unstated: str) -> Optional[Span]:
    written = m.group("mo")
    if (written.islower() and written in _MAY_BE_A_VERB and not m.group("suffix")
            and _word_before(m.string, m.start()) not in _DATE_PREPOSITIONS):
        return None
    d = _nearest_date(month_number(written), int(m.group("dd")), anchor, _tense(m, unstated))
    return single(d) if d else None


_NO_ORDINAL_DATE_AFTER = frozenset(("in", "came", "finished", "placed", "ranked", "won", "got", "be", "being",
                                    "became"))
_ORDINAL_FOLLOW = re.compile(r"\s*(?:$|[.,!?;:)]|(?i:at|and|or|but|so|then|when|if|because|morning|afternoon|evening"
                             r"|night|in the (?:morning|afternoon|evening))\b)")
_FOR = re.compile(r"\s+(?i:for)\b")


def _ordinal(m: re.Match, anchor: Date, unstated: str) -> Optional[Span]:
    text, before = m.string, _word_before(m.string, m.start())
    if before in _NO_ORDINAL_DATE_AFTER:
        return None
    if not _ORDINAL_FOLLOW.match(text, m.end()) and not (before in ("on", "by", "until") and _FOR.match(text, m.end())):
        return None
    day = int(m.group(1))
    d = _day_of_month(day, anchor, _tense(m, unstated)) if 1 <= day <= 31 else None
    return single(d) if d else None


# Group names are no trigger words of timeexpr._index() ("day", "month"): a pattern holding one
# would run only on texts holding it.
_MONTH = r"(?P<mo>%s)\b" % MONTH_ANY_CASE
_DD = r"(?<![\w$\u00a3\u20ac./:-])(?P<dd>[0-3]?\d)(?P<suffix>st|nd|rd|th)?"
_NO_YEAR = r"(?!,?\s*\d{4}\b)(?![:./-]\d)"
_WEEKDAY = r"(%s)" % "|".join(WEEKDAYS)
PATTERNS: List[Tuple[re.Pattern, TenseHandler]] = [
    (re.compile(r"\bthis (past |coming )?%s\b" % _WEEKDAY, re.I), _this_weekday),
    (re.compile(r"%s(?: of)? %s%s" % (_DD, _MONTH, _NO_YEAR)), _day_month),
    (re.compile(r"\b%s\.? %s\b%s" % (_MONTH, _DD, _NO_YEAR)), _day_month),
    (re.compile(r"\b(?i:the) ([0-3]?\d)(?:st|nd|rd|th)\b"), _ordinal),
    (re.compile(r"\b%s\b" % _WEEKDAY, re.I), _bare_weekday),
]
