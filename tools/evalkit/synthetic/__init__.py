"""A deterministic synthetic evaluation suite with planted, labelled evidence.

`generate(seed, size)` returns a `Dataset` (tools/evalkit/dataset.py) of several
users, English (`syn-en-NN`) and Chinese (`syn-zh-NN`). Each user is one conversation
between two named speakers over `SESSIONS_PER_USER` sessions spread over several
weeks of 2023; each session has 8-20 turns that alternate speaker A (role `user`) and
speaker B (role `assistant`), and every turn starts with its speaker label
("Alice: ..." / "李雷：..."). Most turns are templated small talk; among them sit the
planted facts that questions ask about, distractor turns that mention the same
entities without the asked fact, and filler turns with (labelled) time expressions.

Ids: user "syn-en-01", session "syn-en-01/s03", turn "S3:7" (session 3, turn 7, both
1-based), question "syn-en-01/q007". Every turn carries its session's `timestamp_ms`
(Unix ms, UTC).

Question categories (exact strings) and their truth:

- `single-hop`: one turn states the fact; gold = [that turn].
- `paraphrase`: the same fact asked without the evidence's key words;
  labels = {"plain_qid": the single-hop question's qid}.
- `multi-session`: the answer needs two turns from two different sessions (e.g. a trip
  with a friend in one session, the hotel for that trip in a later one); gold = both.
- `knowledge-update`: an old value in an earlier session, an explicit correction in a
  later one ("moved to", "postponed to", "switched", "instead", "changed to"; 搬到,
  推迟到, 改成, 换成, 不再, 其实); the question asks for the current value.
  gold = [new, old]; labels = {"new": [new turn], "old": [old turn]}.
- `temporal-relative`: the turn dates an event with a relative expression; the question
  asks when; answer = the resolved ISO date, or "START/END" (ISO 8601 interval).
- `temporal-absolute`: the turn dates an event absolutely, in varied forms ("on 8 May
  2023", "on May 8th", "on 2023-05-08", "on 5/18/2023" (M/D/YYYY, the day always
  > 12 so it cannot be read as D/M), "in March", "in 2022"; 2023年5月8日, 5月8日那天,
  2023-05-08那天, 3月份, 2022年). A date without a year is in the session's year and
  before the session. The question asks when (answer ISO date or interval) or, for a
  single day, what happened on it (answer the event).
- `multiple-choice`: `options` holds 3-5 strings, exactly one right (at a seeded
  position, `answer` is it); the wrong options are mentioned in non-gold turns.
- `unanswerable`: asks an attribute never stated of an entity that is mentioned;
  gold = every turn that mentions the entity; labels = {"unanswerable": true}.

Harder groups (tools/evalkit/synthetic_hard.py: more `paraphrase` cases, `typo`,
`period`, `update-cue`) live in users of their own, numbered from HARD_FIRST
(`syn-en-51`, `syn-zh-51`) and appended after the users above, whose questions and
figures are therefore unchanged by them. Their sessions spread over several months.

Relative time expressions (`Conversation.relative_times`): every relative expression
in the text, in evidence and in filler, is listed as {"turn_id", "expression" (exactly
as in the text), "start", "end"}, resolved against the turn's session date (UTC):

- yesterday / 昨天 = date - 1; the day before yesterday / 前天 = date - 2;
  N days ago / N天前 = date - N (English N in digits or words: "2 days ago", "three days
  ago"); tomorrow / 明天 = date + 1; the day after tomorrow /
  后天 = date + 2; in N days / N天后 = date + N (single days: start == end).
- Weeks are ISO weeks, Monday..Sunday: last week / 上周 = the previous ISO week;
  N weeks ago = the ISO week N weeks before; next week / 下周 = the following ISO week;
  this weekend / 这周末 = Saturday..Sunday of the session date's ISO week (only used
  when the session falls Monday..Thursday).
- last month / 上个月, next month / 下个月 = first..last day of that calendar month;
  last year / 去年 = Jan 1..Dec 31 of the previous year.
- last <weekday> = the latest such weekday strictly before the session date;
  next <weekday> = the earliest such weekday strictly after it.
  上周X / 下周X = weekday X of the previous / following ISO week (the Chinese words
  name the week, so they follow the week convention, unlike the English ones).
- Vague expressions (recently, the other day, a while ago, not long ago, some time
  ago; 最近, 前几天, 前阵子, 不久前) appear in some filler turns with start = end =
  null: a resolver must leave them unresolved.

Filler text never contains any other time expression, so the list is complete.

Determinism: each user draws from its own `random.Random(seed * 100003 + number)`
(en users numbered 1.., zh users 501..), never the global generator, never a set or
hash(); so the output is byte-identical on every run and every PYTHONHASHSEED, and a
`small` suite's users are the first users of the `medium` one.

A package, split by job: plan.py (sizes and each user's plan), text.py and facts.py (the
words, small talk and planted facts), dates.py (relative and absolute dates), user.py (one
user), plant.py (each category planted), build.py (sessions assembled, the dataset).
"""
from tools.evalkit.synthetic.build import dumps, generate
from tools.evalkit.synthetic.plan import HARD_FIRST, SIZES

__all__ = ["HARD_FIRST", "SIZES", "dumps", "generate"]
