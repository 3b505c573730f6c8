"""Relative and absolute dates: a relative expression resolved against a session's day, and its words."""
from __future__ import annotations

import datetime
from typing import Tuple

from tools.evalkit.synthetic.facts import EN_NUMBERS, EN_WEEKDAYS, ZH_FIXED, ZH_WEEKDAYS

DAY = datetime.timedelta(days=1)


def _monday(day: datetime.date) -> datetime.date:
    return day - day.weekday() * DAY


def _month_span(year: int, month: int) -> Tuple[datetime.date, datetime.date]:
    first = datetime.date(year, month, 1)
    nxt = datetime.date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - DAY


def resolve_relative(form: str, day: datetime.date, n: int = 0) -> Tuple[datetime.date, datetime.date]:
    """The (start, end) dates of a relative form said on `day` (see the module conventions).

    `n` is the count for days_ago / in_days / weeks_ago and the weekday (0 = Monday) for
    the weekday forms.
    """
    single = {"yesterday": -1, "the day before yesterday": -2, "tomorrow": 1, "the day after tomorrow": 2,
              "days_ago": -n, "in_days": n}
    if form in single:
        d = day + single[form] * DAY
        return d, d
    monday = _monday(day)
    weeks = {"last week": -1, "next week": 1, "weeks_ago": -n}
    if form in weeks:
        start = monday + 7 * weeks[form] * DAY
        return start, start + 6 * DAY
    if form == "this weekend":
        return monday + 5 * DAY, monday + 6 * DAY
    if form == "last month":
        return _month_span(day.year - (day.month == 1), (day.month - 2) % 12 + 1)
    if form == "next month":
        return _month_span(day.year + (day.month == 12), day.month % 12 + 1)
    if form == "last year":
        return datetime.date(day.year - 1, 1, 1), datetime.date(day.year - 1, 12, 31)
    if form == "last_weekday":
        d = day - ((day.weekday() - n) % 7 or 7) * DAY
        return d, d
    if form == "next_weekday":
        d = day + ((n - day.weekday()) % 7 or 7) * DAY
        return d, d
    if form in ("last_week_weekday", "next_week_weekday"):
        d = monday + (7 if form.startswith("next") else -7) * DAY + n * DAY
        return d, d
    raise ValueError("unknown relative form %r" % form)


def relative_text(lang: str, form: str, n: int = 0) -> str:
    """How a relative form is written (the `expression` recorded for it)."""
    if lang == "zh":
        special = {"days_ago": "%d天前" % n, "in_days": "%d天后" % n,
                   "last_week_weekday": "上周" + ZH_WEEKDAYS[n], "next_week_weekday": "下周" + ZH_WEEKDAYS[n]}
        return special.get(form) or ZH_FIXED[form]
    if form == "days_ago":
        return "%s days ago" % (EN_NUMBERS[n] if n % 2 else str(n))
    if form == "in_days":
        return "in %d days" % n
    if form == "weeks_ago":
        return "%s weeks ago" % EN_NUMBERS[n]
    if form in ("last_weekday", "next_weekday"):
        return "%s %s" % (form.split("_")[0], EN_WEEKDAYS[n])
    return form


def _span_answer(start: datetime.date, end: datetime.date) -> str:
    return start.isoformat() if start == end else "%s/%s" % (start.isoformat(), end.isoformat())
