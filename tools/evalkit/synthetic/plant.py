"""Planting each category's facts in a user's sessions, with the questions they answer."""
from __future__ import annotations

import datetime
from typing import Any, Dict, List, Tuple

from tools.evalkit.synthetic.dates import DAY, _month_span, _span_answer, relative_text, resolve_relative
from tools.evalkit.synthetic.facts import (
    ABSOLUTE_COMMENTS,
    ABSOLUTE_SAY,
    ABSOLUTE_WHAT,
    EN_MONTHS,
    RELATIVE_FILLER,
    RELATIVE_FORMS,
    UNANSWERABLE,
    UNANSWERABLE_ANSWER,
    VAGUE_EXPRESSIONS,
)
from tools.evalkit.synthetic.plan import PAST_SHARE
from tools.evalkit.synthetic.text import ENTITY_MENTIONS
from tools.evalkit.synthetic.user import _User


def _plant_single_hop(u: _User, kind: Dict[str, Any], paraphrase: bool) -> None:
    me, you = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    s = u.session()
    evidence = u.line(me, t["say"], v)
    u.place(s, [evidence])
    answer = str(v[kind["answer"]])
    qid = u.ask("single-hop", t["ask"].format(**v), [evidence], answer)
    if paraphrase:
        u.ask("paraphrase", t["para"].format(**v), [evidence], answer, labels={"plain_qid": qid})
    u.place_near(t.get("near", []), you, v, avoid=[s])
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _plant_multi_session(u: _User, kind: Dict[str, Any]) -> None:
    me, you = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    first_s = u.session(0, len(u.days) - 3)
    second_s = u.session(first_s + 1)
    first, second = u.line(me, t["first"], v), u.line(me, t["second"], v)
    u.place(first_s, [first])
    u.place(second_s, [second])
    u.ask("multi-session", t["ask"].format(**v), [first, second], str(v[kind["answer"]]))
    u.place_near(t.get("near", []), you, v, avoid=[first_s, second_s], lo=first_s + 1)
    for key in ("entity", "entity2"):
        if key in kind:
            u.register(kind[key][0], v[kind[key][1]])


def _wedding_dates(u: _User, new_s: int) -> Tuple[datetime.date, datetime.date]:
    """Dates after the session that postpones them; the new one after every session."""
    old = u.days[new_s] + u.rng.randint(3, 30) * DAY
    new = max(old, u.days[-1]) + u.rng.randint(7, 40) * DAY
    return old, new


def _date_words(lang: str, day: datetime.date) -> str:
    if lang == "zh":
        return "%d月%d日" % (day.month, day.day)
    return "%d %s" % (day.day, EN_MONTHS[day.month - 1])


def _plant_knowledge_update(u: _User, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    half = len(u.days) // 2
    old_s = u.session(0, half - 1)
    new_s = u.session(old_s + 2)
    if kind["pool"] == "date":
        old_day, new_day = _wedding_dates(u, new_s)
        v["old"], v["new"] = _date_words(u.lang, old_day), _date_words(u.lang, new_day)
        answer = new_day.isoformat()
    else:
        v["old"], v["new"] = u.draw(kind["pool"]), u.draw(kind["pool"])
        answer = v["new"]
    old, new = u.line(me, t["old"], v), u.line(me, t["new"], v)
    u.place(old_s, [old])
    u.place(new_s, [new])
    u.ask("knowledge-update", t["ask"].format(**v), [new, old], answer,
          labels={"new": [new], "old": [old]})
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _pick_relative(u: _User, tense: str, day: datetime.date) -> Tuple[str, datetime.date, datetime.date]:
    """A relative expression for an event in the past or future of `day`, and its dates."""
    forms = [f for f in RELATIVE_FORMS[u.lang][tense] if f != "this weekend" or day.weekday() < 4]
    form = u.rng.choice(forms)
    n = 0
    if form in ("days_ago", "in_days"):
        n = u.rng.randint(2, 6)
    elif form == "weeks_ago":
        n = u.rng.randint(2, 3)
    elif form.endswith("weekday"):
        n = u.rng.randrange(7)
    start, end = resolve_relative(form, day, n)
    return relative_text(u.lang, form, n), start, end


def _plant_temporal_relative(u: _User, events: Dict[str, List[Tuple[str, str, str]]]) -> None:
    tense = "past" if u.rng.random() < PAST_SHARE else "future"
    say, question, reaction = events[tense].pop()
    me, _ = u.speakers()
    s = u.session()
    expr, start, end = _pick_relative(u, tense, u.days[s])
    v = dict(u.values(me, {}), expr=expr)
    evidence = u.line(me, say, v)
    u.place_with_reaction(s, evidence, reaction, v)
    u.relative.append((evidence, expr, start, end))
    if start == end:
        u.dated.append(start)
    u.ask("temporal-relative", question.format(**v), [evidence], _span_answer(start, end))


def _plant_relative_filler(u: _User, tense: str) -> None:
    me, _ = u.speakers()
    s = u.session()
    template = u.rng.choice(RELATIVE_FILLER[u.lang][tense])
    if tense == "vague":
        expr, start, end = u.rng.choice(VAGUE_EXPRESSIONS[u.lang]), None, None
    else:
        expr, start, end = _pick_relative(u, tense, u.days[s])
        if start == end:
            u.dated.append(start)
    line = u.line(me, template, dict(u.values(me, {}), expr=expr))
    u.place(s, [line])
    u.relative.append((line, expr, start, end))


def _absolute_date(u: _User, form: str, session_day: datetime.date) -> Tuple[str, str, str, bool]:
    """(as written in the evidence, as written in a question, answer, single day?) for a past date."""
    lang = u.lang
    if form == "month" and session_day.month == 1:
        form = "year"
    if form == "year":
        year = session_day.year - 1
        text = "%d年" % year if lang == "zh" else "in %d" % year
        return text, text, _span_answer(datetime.date(year, 1, 1), datetime.date(year, 12, 31)), False
    if form == "month":
        month = u.rng.randint(1, session_day.month - 1)
        start, end = _month_span(session_day.year, month)
        if lang == "zh":
            return "%d月份" % month, "%d年%d月" % (session_day.year, month), _span_answer(start, end), False
        return "in %s" % EN_MONTHS[month - 1], "in %s %d" % (EN_MONTHS[month - 1], session_day.year), \
            _span_answer(start, end), False
    day = _past_day(u, form, session_day)
    long_en = "%d %s %d" % (day.day, EN_MONTHS[day.month - 1], day.year)
    long_zh = "%d年%d月%d日" % (day.year, day.month, day.day)
    if lang == "zh":
        text = {"dmy": "在" + long_zh, "md": "%d月%d日那天" % (day.month, day.day),
                "iso": "%s那天" % day.isoformat()}[form]
        return text, long_zh, day.isoformat(), True
    text = {"dmy": "on " + long_en, "md": "on %s %s" % (EN_MONTHS[day.month - 1], _ordinal(day.day)),
            "iso": "on " + day.isoformat(), "us": "on %d/%d/%d" % (day.month, day.day, day.year)}[form]
    return text, "on " + long_en, day.isoformat(), True


def _past_day(u: _User, form: str, session_day: datetime.date) -> datetime.date:
    """A day 5..150 days before the session: same year for forms without a year, day > 12
    for M/D/YYYY, and never a day another planted event already has."""
    earliest = datetime.date(session_day.year, 1, 1) if form == "md" else session_day - 150 * DAY
    latest = session_day - 5 * DAY
    if latest < earliest:
        earliest = latest - 20 * DAY  # an early-January session: let the date fall in the previous year
    span = (latest - earliest).days
    offset = u.rng.randint(0, span)
    for step in range(span + 1):
        day = earliest + ((offset + step) % (span + 1)) * DAY
        if day not in u.dated and (form != "us" or day.day > 12) and (form != "md" or day.year == session_day.year):
            u.dated.append(day)
            return day
    raise ValueError("no free day before %s" % session_day)


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suffix)


def _plant_temporal_absolute(u: _User, events: List[Tuple[str, str, str]], form: str) -> None:
    verb, when_q, event = events.pop()
    me, _ = u.speakers()
    s = u.session()
    form_used = form if not (form == "md" and u.days[s] < datetime.date(u.days[s].year, 1, 10)) else "dmy"
    text, asked, answer, single_day = _absolute_date(u, form_used, u.days[s])
    v = dict(u.values(me, {}), verb=verb, date=text, comment=u.rng.choice(ABSOLUTE_COMMENTS[u.lang]))
    evidence = u.line(me, ABSOLUTE_SAY[u.lang], v)
    u.place(s, [evidence])
    if single_day and u.rng.random() < 0.5:
        u.ask("temporal-absolute", ABSOLUTE_WHAT[u.lang].format(me=v["me"], date=asked), [evidence], event)
    else:
        u.ask("temporal-absolute", when_q.format(**v), [evidence], answer)


def _plant_multiple_choice(u: _User, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    v["x"] = u.draw(kind["pool"])
    wrong = [u.draw(kind["pool"]) for _ in range(u.rng.randint(2, 4))]
    s = u.session()
    evidence = u.line(me, t["say"], v)
    u.place(s, [evidence])
    mentions = u.rng.sample(t["mention"], len(t["mention"]))
    for i, x in enumerate(wrong):
        mention = mentions[i % len(mentions)]
        u.place(u.session(avoid=[s]), [u.line(me if mention.startswith("{me}") else 1 - me, mention, dict(v, x=x))])
    options = list(wrong)
    options.insert(u.rng.randint(0, len(wrong)), v["x"])
    u.ask("multiple-choice", t["ask"].format(**v), [evidence], v["x"], options=options)
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _plant_entity_mentions(u: _User) -> None:
    """One distractor per registered entity: it names the entity and states nothing about it."""
    for kind, name in u.entities:
        me, _ = u.speakers()
        template = u.rng.choice(ENTITY_MENTIONS[u.lang][kind])
        u.place(u.session(), [u.line(me, template, dict(u.values(me, {}), x=name))])


def _plant_unanswerable(u: _User, count: int) -> List[Tuple[str, str]]:
    """Unanswerable questions on registered entities; gold is filled in once turns have ids."""
    picks = u.rng.sample(u.entities, min(count, len(u.entities)))
    asked = []
    for kind, name in picks:
        question = u.rng.choice(UNANSWERABLE[u.lang][kind]).format(x=name)
        u.ask("unanswerable", question, [], UNANSWERABLE_ANSWER[u.lang], labels={"unanswerable": True})
        asked.append((kind, name))
    return asked
