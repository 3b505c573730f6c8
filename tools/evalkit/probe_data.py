"""The meaning probes' data: one user's life in 8 sessions with questions about it, and twelve pairs.

Written for this probe (plain everyday chat, not taken from any benchmark); probes.py runs them
(its docstring says what each group is and what is measured).
"""
from __future__ import annotations

import calendar
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

U, A = "user", "assistant"

Evidence = Tuple[int, int]  # (session index from 0, position from 1)


def _ms(day: str, hour: int, minute: int) -> int:
    """Unix milliseconds of `day` (YYYY-MM-DD) at hour:minute UTC."""
    year, month, date = (int(part) for part in day.split("-"))
    return calendar.timegm((year, month, date, hour, minute, 0, 0, 0, 0)) * 1000


def _session(session_id: str, day: str, hour: int, turns: Sequence[Tuple[str, str]]) -> Dict[str, Any]:
    """A session: its id and messages, a minute apart from `hour` o'clock on `day`."""
    return {"session_id": session_id,
            "messages": [{"role": role, "content": content, "timestamp": _ms(day, hour, minute)}
                         for minute, (role, content) in enumerate(turns)]}

LIFE_USER = "probe-life"

LIFE: List[Dict[str, Any]] = [
    _session("2026-01-11", "2026-01-11", 8, [
        (U, "Morning! It's absolutely freezing out, there's frost on the inside of the kitchen window."),
        (A, "Brr, sounds like a day for staying in. Anything planned?"),
        (U, "Taking Pepper out along the river first, she gets restless if she misses her morning walk."),
        (A, "Wrap up warm, both of you. And after that?"),
        (U, "Then the big food shop, and maybe soup for lunch. Something with lentils and not too much chopping."),
        (A, "A lentil and carrot soup would do it: one pot, twenty minutes, hardly any chopping."),
    ]),
    _session("2026-02-03", "2026-02-03", 18, [
        (U, "Ugh, what a day. It's only Tuesday but it feels like a Monday."),
        (A, "Rough start to the week? What's going on?"),
        (U, "Marcus, my manager, wants the quarterly dashboard finished by Friday and the data is a mess."),
        (A, "That's a tight deadline. Is the mess in the source systems or in the spreadsheets?"),
        (U, "Both. I've been a data analyst at a shipping company for six years and it's never been this bad."),
        (A, "Six years in, you probably know where the problems hide. Shall we break it into pieces?"),
        (U, "Yes please, let's make a plan for the week tomorrow morning."),
    ]),
    _session("2026-03-15", "2026-03-15", 10, [
        (U, "Had a lovely lazy Sunday, Tom made pancakes and we did nothing at all."),
        (A, "That sounds perfect. Did Pepper get any pancake?"),
        (U, "A corner of one. She's a retired racing greyhound, so she spent years on a strict diet and now "
            "she's making up for it."),
        (A, "Ha, she's earned it. How long have you had her?"),
        (U, "Three years in May. Best thing we ever did."),
        (A, "Sounds like she landed in the right home."),
    ]),
    _session("2026-04-22", "2026-04-22", 19, [
        (U, "Guess what, I finally signed up for cello lessons!"),
        (A, "Brilliant! When do they start?"),
        (U, "My first cello lesson is this Thursday at 7, and then every Thursday evening after that."),
        (A, "Every Thursday, noted. Have you found an instrument yet?"),
        (U, "My husband Tom found a secondhand one online, it's his birthday present to me."),
        (A, "What a thoughtful present. Does it need any work?"),
        (U, "Just new strings, the shop is fitting them tomorrow."),
    ]),
    _session("2026-05-30", "2026-05-30", 9, [
        (U, "Pepper has been stiff and slow on her walks lately, especially first thing."),
        (A, "Poor girl. Has the vet had a look?"),
        (U, "Yes, this morning. The vet put her on Librela injections for her joints, one a month."),
        (A, "Hopefully she feels the difference soon. How did she take the jab?"),
        (U, "She didn't even notice, she was too busy sniffing the receptionist's lunch."),
        (A, "Ha. And how are you doing yourself?"),
        (U, "Good! I went bouldering again on Wednesday and finally got up the purple route at the climbing wall."),
    ]),
    _session("2026-06-18", "2026-06-18", 20, [
        (U, "Big news: booked the flights to Japan for October! Kyoto then Tokyo."),
        (A, "Amazing! How long will you be away?"),
        (U, "Two weeks, a week in each city. Tom has wanted to see the temples for ages."),
        (A, "You'll love it. Want me to suggest some restaurants?"),
        (U, "Yes, but one thing to remember: I'm badly allergic to shellfish, so nothing with prawns or crab."),
        (A, "Noted, no shellfish. I'll keep that in mind for every suggestion."),
        (U, "Thanks. Kyoto first, so start there."),
    ]),
    _session("2026-08-02", "2026-08-02", 14, [
        (U, "It's boiling today, 34 degrees, and the air con in the Subaru has given up."),
        (A, "Oh no, in this heat. Is it worth getting it fixed?"),
        (U, "The garage says the Subaru needs a new compressor, and it's nearly twelve years old."),
        (A, "That's a big repair for an older car. Are you tempted to replace it?"),
        (U, "Tempted, but it's paid off. I'll keep the windows down until autumn."),
        (A, "Fair enough. Stay cool!"),
    ]),
    _session("2026-09-09", "2026-09-09", 21, [
        (U, "Only a month until Japan now, I've started making lists."),
        (A, "Exciting! What's on the list?"),
        (U, "Adapters, a rail pass, and finding someone to look after Pepper while we're away."),
        (A, "Any friends who could have her?"),
        (U, "My sister Jess said she'd take her, she has a big garden."),
        (A, "Perfect. Anything else on your mind?"),
        (U, "Just the usual, Marcus keeps adding meetings to my calendar. Bouldering on Friday will help."),
    ]),
]


class Question(NamedTuple):
    question: str
    evidence: Tuple[Evidence, ...]  # (session index from 0, position from 1)
    paraphrased: bool  # no content word (stemmed) shared with any of its evidence

LIFE_QUESTIONS: List[Question] = [
    # In the memory's own words.
    Question("When is my Japan trip?", ((5, 1),), False),
    Question("What did the vet give Pepper for her joints?", ((4, 3),), False),
    Question("Am I allergic to anything?", ((5, 5),), False),
    Question("What's my manager's name?", ((1, 3),), False),
    Question("When is my cello lesson?", ((3, 1), (3, 3)), False),
    Question("What's wrong with the Subaru?", ((6, 1), (6, 3)), False),
    # In other words.
    Question("What animals do I have?", ((0, 3), (2, 3)), True),
    Question("Do I have a dog?", ((0, 3), (2, 3)), True),
    Question("what pet do I have", ((0, 3), (2, 3)), True),
    Question("Is there any food I can't eat?", ((5, 5),), True),
    Question("Where am I going on vacation?", ((5, 1),), True),
    Question("What medicine is my pet on?", ((4, 3),), True),
    Question("Who do I report to at work?", ((1, 3),), True),
    Question("What do I do for a living?", ((1, 5),), True),
    Question("Do I play any music?", ((3, 1), (3, 3)), True),
    Question("Who is my spouse?", ((3, 5),), True),
]


class Pair(NamedTuple):
    question: str
    memory: str

PAIRS: List[Pair] = [
    Pair("What pet do I have?", "I adopted a rescue greyhound in March and she already owns the sofa."),
    Pair("Who is my boss?", "My manager is called Priya and she's honestly the best I've had."),
    Pair("Any food restrictions?", "I'm vegetarian these days, so no burgers for me at the barbecue."),
    Pair("What instrument does she play?", "My daughter practises violin every evening, the neighbours must love us."),
    Pair("What car do I drive?", "Still have my old Honda Civic, it refuses to die."),
    Pair("Where do I work?", "Just finished my third year as a nurse at St Mary's Hospital."),
    Pair("Do I have any siblings?", "My brother Daniel is flying in from Toronto next week."),
    Pair("What do I do for exercise?", "I swim forty lengths at the leisure centre before breakfast."),
    Pair("Where was I born?", "I grew up in a little fishing town on the Cornish coast."),
    Pair("Am I married?", "My wife Elena and I just celebrated our fifth anniversary."),
    Pair("What language am I learning?", "Doing twenty minutes of Spanish on Duolingo every morning."),
    Pair("How do I get to the office?", "I cycle in every day, about twenty minutes along the canal."),
]


# Everyday messages of the same user that answer none of the PAIRS questions (some share a word with one).
FILLER: List[str] = [
    "It's been raining all morning, the garden is basically a pond now.",
    "Can you remind me to pay the electricity bill on Friday?",
    "I finally finished that mystery novel, the ending was a total letdown.",
    "What's a good gift for a friend who is turning forty?",
    "The washing machine is making a horrible grinding noise again.",
    "Work was busy today, back to back calls until six.",
    "I need to book a dentist appointment before the end of the month.",
    "We're having friends over on Saturday, any ideas for an easy dessert?",
    "The new series everyone's talking about is really slow, I gave up after two episodes.",
    "My phone screen cracked when I dropped it in the car park.",
    "Is it normal for basil to wilt this fast on a windowsill?",
    "I've been sleeping badly, maybe too much coffee in the afternoon.",
    "Can you help me write a polite message to the landlord about the boiler?",
    "The food at my cousin's wedding was incredible, five courses.",
    "I want to repaint the hallway, something warmer than this grey.",
    "How long should I boil an egg if I want the yolk runny?",
    "There's a farmers market in town on Sunday, I might go.",
    "The cinema was packed tonight, I ended up in the front row with a sore neck.",
    "Remind me what date the clocks go forward this year?",
    "I think I'm coming down with a cold, my throat is scratchy.",
    "Can you suggest a podcast for a long afternoon of ironing?",
    "The library fined me for a book I swear I returned.",
    "I ordered a lamp online and it arrived in three pieces.",
    "My friend Chloe is moving to Edinburgh next month, I'll miss her.",
    "What's the best way to get red wine out of a carpet?",
    "I tried making sourdough and it came out like a brick.",
    "Our street is having a party for the summer solstice.",
    "Is it worth getting travel insurance for a weekend away?",
    "I keep forgetting to water the tomatoes on the balcony.",
    "The heating bill this winter was shocking.",
    "I've started a jigsaw puzzle with two thousand pieces, what was I thinking.",
    "A bird has built a nest right above the front door.",
    "Can you recommend a board game for six people?",
    "I need new glasses, everything at a distance is blurry.",
    "The office printer jammed three times before lunch.",
    "I'm thinking of hosting a quiz night for the neighbours.",
    "What should I pack for a wet weekend in the Lake District?",
    "I got a parking ticket outside the pharmacy, only five minutes over.",
    "The leaves are turning already, autumn came early this year.",
    "I booked a haircut for Thursday, time for something shorter.",
]

PAIR_DAYS = ("2026-01-05", "2026-02-09", "2026-03-16", "2026-04-20")  # one session each, 10 filler messages


def pair_probe(index: int) -> Tuple[List[Dict[str, Any]], Evidence]:
    """The sessions of PAIRS[index]'s user and where its memory lies: FILLER in four sessions of ten,
    the memory put into session index % 3 at a position that moves with the index. Never into the
    last session: the fallback (the latest messages, when nothing matches) must not find it by luck."""
    per = len(FILLER) // len(PAIR_DAYS)
    where = index % (len(PAIR_DAYS) - 1)
    at = (index * 3) % (per + 1)  # messages before it in its session
    sessions = []
    for s, day in enumerate(PAIR_DAYS):
        texts = FILLER[s * per:(s + 1) * per]
        if s == where:
            texts = texts[:at] + [PAIRS[index].memory] + texts[at:]
        sessions.append(_session(day, day, 19, [(U, text) for text in texts]))
    return sessions, (where, at + 1)
