"""A deterministic synthetic *typed chat* evaluation set, written from scratch.

LoCoMo's conversations are written: one long message per turn, speakers alternating,
one timestamp per session. Typed chats look different, and `generate(seed)` returns a
`Dataset` (tools/evalkit/dataset.py) of such chats:

- Each user (`chat-en-1` .. `chat-en-5`) is one conversation between two friends over
  6-10 sessions of 40-120 messages. Speaker A has role `user`, speaker B `assistant`;
  every message is "Name: text".
- A speaker sends bursts of short messages; the other one answers several messages
  later, after the sender's own follow-ups or a short reaction ("lol", "wait what").
- Every message has its own `timestamp_ms` (Unix ms, local times written as UTC): seconds
  apart within a burst, up to minutes between speakers, now and then a pause of hours.
  Sessions start at plausible times in 2024; some start late in the evening and run
  past midnight, and one per user breaks off and resumes a day or two later.
- Background small talk (greetings, reactions, weather, food, work, plans) comes from
  varied templates, so most messages hold no planted fact; some of it names the topics
  of planted facts without the fact (a marathon, a trip, a new phone).
- Noise, per message and deterministic: ~50% lower-cased, ~60% final punctuation
  dropped, ~15% a common typo from a fixed table ("definately", "tmrw", "u", "ur", "bc",
  "tho", "gonna"), ~10% an emoji appended; ~20% of bursts of 3+ messages are interrupted
  by a one-word reaction of the other speaker. In a planted fact the key word (the one
  the question shares, marked `*word*` in the templates) is kept out of the noise in
  ~70% of cases; in the other ~30% it may be misspelt too.

Ids: user "chat-en-1", session "chat-en-1/s03", turn "S3:17" (session 3, message 17, both
1-based), question "chat-en-1/q007".

Question groups (exact category strings) and their truth:

- `burst-reply`: A asks in a burst ("hey" / "quick question" / "where are u guys going
  for the trip?"), adds 1-3 more messages, B may react, then B answers over 1-3
  messages. Gold = B's message(s) holding the fact. The question uses the words of the
  asking message ("Where is Sam going for the trip?"), so the reply shares few words
  with it: the evidence is the other speaker's next turn, several messages on.
- `burst-fact`: one speaker states a fact split across consecutive short messages
  ("so i finally did it" / "signed up for the marathon" / "the lisbon one"); gold = the
  1-2 messages of the burst that carry it.
- `own-time`: a message said late at night (from 22:00) or after midnight, in a session
  that runs past midnight or over several days, dates an event relatively ("yesterday",
  "last night", "tonight", "tomorrow", "the day after tomorrow", "on saturday"); the
  question asks when; answer = the ISO date resolved against the message's OWN day
  (UTC); gold = that message.
- `single`: one message states a plain fact in chat style; gold = that message.
- `update`: a fact in an earlier session, changed in a session at least two later;
  gold = [new, old]; labels = {"new": [id], "old": [id]}; the question asks for now.
- `unanswerable`: asks an attribute never stated of an entity that is named (a person,
  a pet, a restaurant, a company). As in tools/evalkit/synthetic/: gold = every message
  that names the entity; labels = {"unanswerable": true}; answer "Not mentioned in the
  conversation.".

Relative time expressions (`Conversation.relative_times`): every expression of the
list below, wherever it is (evidence, small talk), is labelled {"turn_id", "expression"
(as in the text, after noise), "start", "end"}, resolved against the message's own UTC
day D: yesterday / yday / last night = D-1; the day before yesterday = D-2; today /
tonight / tonite / this morning|afternoon|evening = D; tomorrow / tmrw = D+1; the day
after tomorrow = D+2; on <weekday> (only said of plans) and next <weekday> = the
earliest such weekday after D; this weekend = Saturday..Sunday of D's ISO week.
No other expression naming a day, week, month or year relative to the message is
written (vague words such as "later" or "earlier" aside, which name none).

Determinism: each user draws from its own `random.Random(seed * 100003 + number)`,
never the global generator, a set's order or hash(); the output is byte-identical on
every run and every PYTHONHASHSEED. `dumps` is tools/evalkit/synthetic/'s.

A package, split by job: plan.py (sizes, plan, noise rates), words.py, facts.py and talk.py
(the tables), user.py (one user's messages and blocks), plant.py (each category planted),
build.py (sessions assembled, the noise, the dataset).
"""
from tools.evalkit.synthetic import dumps
from tools.evalkit.synthetic_chat.build import generate
from tools.evalkit.synthetic_chat.plan import CATEGORIES, WEEKDAYS
from tools.evalkit.synthetic_chat.words import RELATIVE, resolve_expression

__all__ = ["CATEGORIES", "RELATIVE", "WEEKDAYS", "dumps", "generate", "resolve_expression"]
