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
"""
from __future__ import annotations

import datetime
import random
import re
from typing import Any, Dict, List, Optional, Tuple

from tools.evalkit.dataset import Conversation, Dataset, Question, Session, Turn
from tools.evalkit.synthetic import dumps

__all__ = ["generate", "dumps", "CATEGORIES", "resolve_expression", "RELATIVE"]

USERS = 5
SESSIONS = (6, 10)
MESSAGES = (40, 120)
FIRST_DAY = datetime.date(2024, 1, 8)
START_SPREAD_DAYS = 60
GAP_DAYS = (2, 9)
PLAN = {"burst-reply": 7, "burst-fact": 7, "own-time": 6, "single": 7, "update": 6, "unanswerable": 3}
CATEGORIES = list(PLAN)
NIGHT_SESSIONS, MULTI_DAY_SESSIONS = 2, 1
UNANSWERABLE_ANSWER = "Not mentioned in the conversation."

# Noise rates (per message unless said otherwise).
LOWER, DROP_PUNCT, TYPO, EMOJI, INTERRUPT, KEY_EXPOSED = 0.5, 0.6, 0.15, 0.1, 0.2, 0.3

DAY = datetime.timedelta(days=1)
UTC = datetime.timezone.utc
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

# -- words ------------------------------------------------------------------------------

SPEAKERS = [("Maya", "her"), ("Sam", "his"), ("Jonah", "his"), ("Leila", "her"), ("Theo", "his"), ("Ines", "her"),
            ("Ravi", "his"), ("Chloe", "her"), ("Marco", "his"), ("Aisha", "her"), ("Ben", "his"), ("Nora", "her")]
POOLS: Dict[str, List[Any]] = {
    "person": ["Priya", "Marcus", "Nina", "Oscar", "Rachel", "Tom", "Victor", "Wendy", "Felix", "Greta", "Hannah",
               "Ivan", "Julia", "Kevin", "Laura", "Nadia", "Owen", "Yusuf", "Zara", "Dev"],
    "city": ["Lisbon", "Porto", "Kyoto", "Dublin", "Prague", "Vienna", "Bologna", "Valencia", "Glasgow", "Seville",
             "Krakow", "Copenhagen", "Athens", "Marseille", "Ljubljana", "Tallinn", "Bruges", "Naples"],
    "pet": ["Biscuit", "Pepper", "Mochi", "Noodle", "Waffles", "Clover", "Pickles", "Ziggy", "Juniper", "Bean",
            "Tofu", "Pumpkin"],
    "job": ["UX writer", "paramedic", "florist", "data analyst", "primary school teacher", "sound engineer",
            "physio", "project manager", "pastry chef", "translator"],
    "dish": ["lasagne", "mushroom risotto", "chicken curry", "pad thai", "ramen", "paella", "shakshuka",
             "fish tacos", "dumplings", "beef stew"],
    "movie": ["The Last Lighthouse", "Paper Moons", "Night Train to Oslo", "Small Hours", "The Orchard Thief",
              "Second Summer", "Cold Harbour", "Static"],
    "gift": ["silk scarf", "pottery class voucher", "photo book", "cashmere jumper", "bread maker",
             "pair of earrings", "spa day"],
    "area": ["Millbrook", "Eastgate", "Harrow Hill", "Riverside", "Old Town", "Kingsmead", "Northcote", "Belmont"],
    "band": ["The Velvet Foxes", "Neon Harbour", "Lumen", "Paper Tigers", "The Cold Suns", "Marigold",
             "Static Bloom", "Wild Orchard"],
    "car": ["Honda Jazz", "Skoda Octavia", "Toyota Corolla", "Kia Niro", "VW Polo", "Mazda 3", "Ford Fiesta",
            "Renault Clio"],
    "course": ["pottery", "salsa", "life drawing", "aqua aerobics", "kickboxing", "woodwork", "pilates", "improv"],
    "restaurant": ["Casa Lupe", "The Copper Pot", "Little Saigon", "Trattoria Nonna", "Smoke and Oak",
                   "Golden Lotus", "Bar Mirador", "The Fig Tree"],
    "color": ["sage green", "terracotta", "navy blue", "mustard yellow", "lilac", "charcoal grey", "dusty pink",
              "teal"],
    "book": ["The Salt Road", "Winter Orchard", "Paper Lanterns", "The Quiet Engine", "North of the River",
             "Copper Sky", "The Glass Harbour"],
    "vet": ["sprained paw", "ear infection", "tummy bug", "torn claw", "bit of arthritis"],
    "airline": ["SkyLark", "Northjet", "Bluewing", "AeroVista", "Jetstream Air"],
    "time": ["1:52", "2:05", "1:47", "2:11", "1:58", "2:19"],
    "costume": ["pirate", "astronaut", "traffic cone", "vampire", "giant banana", "scarecrow", "mermaid"],
    "tattoo": ["fox", "whale", "lemon", "crescent moon", "cactus", "paper plane", "bee"],
    "company": ["Brightwave", "Kestrel Labs", "Pinecone Media", "Harbor Health", "Northfield Logistics",
                "Maple and Co", "Oakline"],
    "language": ["Portuguese", "Japanese", "German", "Italian", "Korean", "Dutch", "Greek", "Turkish"],
    "band_name": ["Soft Reboot", "Loose Threads", "Half Moon Radio", "The Borrowed Keys", "Velvet Static",
                  "Quiet Neighbours"],
    "bone": ["wrist", "little toe", "collarbone", "ankle", "thumb"],
    "prize": ["air fryer", "spa voucher", "coffee machine", "electric scooter", "tablet"],
    "plant": ["fiddle leaf fig", "snake plant", "pothos", "peace lily", "bonsai tree"],
    "volunteer": ["animal shelter", "food bank", "community garden", "children's library", "soup kitchen"],
    "allergen": ["peanuts", "shellfish", "sesame", "kiwi", "strawberries", "almonds"],
    "instrument": ["cello", "trumpet", "clarinet", "viola", "oboe", "trombone", "flute"],
    "team": ["Bramley Rovers", "Castleford Athletic", "Port Elm United", "Ashby Town", "Kingsbridge City"],
    "subject": ["chemistry", "history", "graphic design", "nursing", "economics", "linguistics", "architecture"],
    "fear": ["spiders", "heights", "deep water", "pigeons", "clowns", "moths"],
    "song": ["Golden Hour Highway", "Paper Heart", "Midnight Bus", "Sugar and Rain", "Count the Stars"],
    "shift": ["day", "night", "early", "late", "weekend"],
    "gym": ["IronWorks", "FitHub", "Pulse", "Peak Fitness", "The Yard", "Movewell"],
    "diet": ["keto", "vegan", "mediterranean", "low carb", "paleo"],
    "drink": ["flat white", "oat latte", "black americano", "iced mocha", "cortado", "chai latte"],
    "commute": ["bike", "drive", "walk", "get the bus", "get the train"],
    "phone": ["Pixel 7", "iPhone 13", "Galaxy S22", "Fairphone 5", "Moto G"],
    "show": ["Harbour Lights", "The Night Desk", "Saltwater", "Kingdom of Crumbs", "Lowland", "The Bakehouse"],
    "clinic": [("receptionist", "practice manager"), ("junior nurse", "senior nurse"), ("lab tech", "lab manager"),
               ("assistant", "team lead")],
}

# -- planted facts ----------------------------------------------------------------------
# Templates: "{x}" is the answer, "*word*" the key word the question shares (kept from the
# noise in ~70% of cases), a leading "+" marks a gold message. {their} is the speaker's
# possessive, {partner} the speaker's partner, {you} the other speaker. `group` keeps
# two facts that could contradict each other apart (one per user).

BURST_REPLY: List[Dict[str, Any]] = [
    {"key": "trip", "pool": "city", "ask": "Where are you guys going for the *trip*?",
     "q": "Where is {name} going for the trip?", "fu": ["Somewhere warm I hope"],
     "reply": [["+{x}!!", "5 days in a tiny flat by the water"], ["Ok so we finally decided", "+{x}",
               "Flights were weirdly cheap"], ["+{x} 🙌"]]},
    {"key": "new_job", "pool": "job", "group": "job", "ask": "So what's the *new job*? You never said",
     "q": "What is {name}'s new job?", "fu": ["Is it the one you interviewed for?"],
     "reply": [["Ok so", "+I'm gonna be a {x}", "At a small firm downtown"], ["+{x}!", "Start date tbd"]]},
    {"key": "friday_dinner", "pool": "dish", "ask": "What are you *making* for friday *dinner*?",
     "q": "What is {name} making for Friday dinner?", "fu": ["I'll bring wine obviously"],
     "reply": [["+Thinking {x}", "If I can find everything"], ["+{x}", "The one from that video"]]},
    {"key": "puppy", "pool": "pet", "entity": "pet", "ask": "Did you *name* the *puppy* yet??",
     "q": "What did {name} name the puppy?", "fu": ["I need to know what to call him"],
     "reply": [["Yesss", "+{x}", "He already answers to it lol"], ["+We went with {x}", "After a week of arguing"]]},
    {"key": "movie", "pool": "movie", "ask": "What *movie* did you end up *seeing*?",
     "q": "Which movie did {name} end up seeing?", "fu": ["Was it the scary one"],
     "reply": [["+{x}", "It was sooo long"], ["+We saw {x}", "Cried twice"]]},
    {"key": "mom_birthday", "pool": "gift", "ask": "What did you *get* your *mom* for her *birthday*?",
     "q": "What did {name} get {their} mom for her birthday?", "fu": ["I still have no idea for mine"],
     "reply": [["+A {x}", "She loved it"], ["Honestly", "+Ended up with a {x}", "Last minute as always"]]},
    {"key": "new_flat", "pool": "area", "ask": "Which *neighbourhood* is the *new flat* in?",
     "q": "Which neighbourhood is {name}'s new flat in?", "fu": ["Is it close to the old one?"],
     "reply": [["+{x}", "Near the big park"], ["+It's in {x}", "10 min from work"]]},
    {"key": "festival", "pool": "band", "ask": "Who are you *seeing* at the *festival*?",
     "q": "Who is {name} seeing at the festival?", "fu": ["I'm so jealous"],
     "reply": [["+{x}!!!", "Front row if I survive"], ["+Mostly {x}", "The rest idc"]]},
    {"key": "car_choice", "pool": "car", "group": "car", "ask": "What *car* did you guys *go with* in the end?",
     "q": "What car did {name} go with in the end?", "fu": ["The red one or the grey one"],
     "reply": [["+The {x}", "Used but low miles"], ["+We got a {x}", "It's grey, very boring"]]},
    {"key": "rec_class", "pool": "course", "ask": "What *class* did you *sign up* for at the *rec centre*?",
     "q": "What class did {name} sign up for at the rec centre?", "fu": ["I want to join something too"],
     "reply": [["+{x}", "Don't laugh"], ["+I did {x} lol", "First one is soon"]]},
    {"key": "anniversary", "pool": "restaurant", "entity": "restaurant", "partner": True,
     "ask": "Where are you *taking* {partner} for your *anniversary*?",
     "q": "Where is {name} taking {partner} for their anniversary?", "fu": ["Somewhere fancy?"],
     "reply": [["+{x}", "Got a table at 8"], ["+Thinking {x}", "If they have space"]]},
    {"key": "bedroom", "pool": "color", "ask": "What *colour* are you *painting* the *bedroom*?",
     "q": "What colour is {name} painting the bedroom?", "fu": ["Please not white again"],
     "reply": [["+{x}", "Brave I know"], ["+We picked {x}", "After like 30 samples"]]},
    {"key": "book_club", "pool": "book", "ask": "What's the *book club* *reading* next?",
     "q": "What is {name}'s book club reading next?", "fu": ["I might join again"],
     "reply": [["+{x}", "It's huge though"], ["+{x}", "Have you read it?"]]},
    {"key": "vet", "pool": "vet", "ask": "What did the *vet* say about the *dog*?",
     "q": "What did the vet say about {name}'s dog?", "fu": ["Is she ok??"],
     "reply": [["She's fine!!", "+Just a {x}", "No more stairs for a bit"], ["+A {x}", "She's milking it"]]},
    {"key": "airline", "pool": "airline", "ask": "Which *airline* are you *flying* with?",
     "q": "Which airline is {name} flying with?", "fu": ["Pls not the one that lost your bag"],
     "reply": [["+{x}", "Cheapest one obviously"], ["Ugh", "+{x}", "Pray for me"]]},
    {"key": "half", "pool": "time", "ask": "How long did the *half marathon* *take* you?",
     "q": "How long did the half marathon take {name}?", "fu": ["Be honest"],
     "reply": [["+{x}", "My legs are gone"], ["+{x}!!", "A personal best"]]},
    {"key": "costume", "pool": "costume", "ask": "What are you *dressing up* as for the *party*?",
     "q": "What is {name} dressing up as for the party?", "fu": ["I have nothing"],
     "reply": [["+A {x}", "Costume is half done"], ["+{x} lol", "Don't judge"]]},
]

BURST_FACT: List[Dict[str, Any]] = [
    {"key": "marathon", "pool": "city", "mood": "good", "q": "Which marathon did {name} sign up for?",
     "say": ["So I finally did it", "+Signed up for the *marathon*", "+The {x} one, in the autumn"]},
    {"key": "cat", "pool": "pet", "entity": "pet", "mood": "good", "q": "What is the name of the cat {name} adopted?",
     "say": ["Guess whatttt", "+We *adopted* a *cat*", "+Her name is {x}"]},
    {"key": "tattoo", "pool": "tattoo", "mood": "good", "q": "What tattoo did {name} get?",
     "say": ["Ok don't laugh", "+I got a *tattoo*", "+A tiny {x} on my ankle"]},
    {"key": "job_offer", "pool": "company", "group": "job", "entity": "company", "mood": "good",
     "q": "Where did {name} get the job?", "say": ["NEWS", "+I got the *job*!!", "+At {x}", "Still can't believe it"]},
    {"key": "car_buy", "pool": "car", "group": "car", "mood": "good", "q": "What car did {name} buy?",
     "say": ["So I caved", "+*Bought* a {x}", "Used but it's in great shape"]},
    {"key": "language", "pool": "language", "mood": "good", "q": "What language is {name} learning?",
     "say": ["New hobby unlocked", "+I'm *learning* {x}", "My app streak is 12 days"]},
    {"key": "hair", "pool": "color", "mood": "good", "q": "What colour did {name} dye {their} hair?",
     "say": ["I did something drastic", "+*Dyed* my hair", "+{x}"]},
    {"key": "proposal", "pool": "city", "partner": True, "mood": "good", "q": "Where did {partner} propose to {name}?",
     "say": ["So.", "+{partner} *proposed*", "+On the beach in {x}"]},
    {"key": "band", "pool": "band_name", "mood": "good", "q": "What is the name of the band {name} joined?",
     "say": ["I joined a *band* lol", "+We're called {x}", "First gig is at a pub"]},
    {"key": "sister_move", "pool": "city", "mood": "neutral", "q": "Where is {name}'s sister moving?",
     "say": ["+My *sister's* *moving*", "+To {x}", "For grad school"]},
    {"key": "broke", "pool": "bone", "mood": "bad", "q": "What did {name} break?",
     "say": ["Worst week", "+*Broke* my {x}", "Slipped on the stairs at work"]},
    {"key": "raffle", "pool": "prize", "mood": "good", "q": "What did {name} win in the raffle at work?",
     "say": ["+I won the *raffle* at work", "+A {x}", "Still in shock"]},
    {"key": "plant", "pool": "plant", "mood": "neutral", "q": "What plant did {name} buy after the monstera died?",
     "say": ["My *monstera* died", "+So I *bought* a {x}", "Pray for it"]},
    {"key": "volunteer", "pool": "volunteer", "mood": "good", "q": "Where has {name} started volunteering?",
     "say": ["+Started *volunteering*", "+At the {x}", "Every saturday morning"]},
]

SINGLE = [
    {"key": "brother", "pool": "city", "say": "My *brother* lives in {x} now",
     "q": "Where does {name}'s brother live?"},
    {"key": "allergy", "pool": "allergen", "say": "I'm *allergic* to {x} btw", "q": "What is {name} allergic to?"},
    {"key": "manager", "pool": "person", "entity": "person", "say": "My *manager* is called {x}, actually nice",
     "q": "What is the name of {name}'s manager?"},
    {"key": "orchestra", "pool": "instrument", "say": "I play the {x} in a community *orchestra*",
     "q": "What instrument does {name} play in the community orchestra?"},
    {"key": "food", "pool": "dish", "say": "My *favourite* food is {x}, honestly",
     "q": "What is {name}'s favourite food?"},
    {"key": "grew_up", "pool": "city", "say": "I *grew up* in {x}, it's so different now",
     "q": "Where did {name} grow up?"},
    {"key": "nephew", "pool": "person", "entity": "person", "say": "My sister's *kid* is called {x}, total menace",
     "q": "What is the name of {name}'s sister's kid?"},
    {"key": "team", "pool": "team", "say": "Been a {x} *fan* forever, football is my whole personality",
     "q": "Which football team is {name} a fan of?"},
    {"key": "studied", "pool": "subject", "say": "I *studied* {x} at uni, feels like a lifetime ago",
     "q": "What did {name} study at uni?"},
    {"key": "flatmate", "pool": "person", "entity": "person", "say": "My *flatmate's* name is {x}, you'd get on",
     "q": "What is {name}'s flatmate called?"},
    {"key": "fear", "pool": "fear", "say": "I'm *scared* of {x}, like properly", "q": "What is {name} scared of?"},
    {"key": "karaoke", "pool": "song", "say": "My go-to *karaoke* song is {x}",
     "q": "What is {name}'s go-to karaoke song?"},
]

UPDATE = [
    {"key": "shift", "pool": "shift", "q": "Which shift is {name} working now?",
     "old": ["+Work's fine, still on the {a} *shift*", "It's ok honestly"],
     "new": ["Update", "+They moved me to the {b} *shift*", "My sleep is ruined"]},
    {"key": "city", "pool": "city", "q": "Which city does {name} live in now?",
     "old": ["+Still getting used to *living* in {a}", "The flat is tiny though"],
     "new": ["+Officially *living* in {b} now!!", "Finally unpacked"]},
    {"key": "gym", "pool": "gym", "q": "Which gym does {name} go to now?",
     "old": ["+I go to the {a} *gym* after work most days"],
     "new": ["+Switched *gyms*, {b} now", "Way cheaper"]},
    {"key": "diet", "pool": "diet", "q": "Which diet is {name} on now?",
     "old": ["+Started a {a} *diet*", "Day 3 and I'm already cranky"],
     "new": ["+Gave up on {a}, I'm doing {b} now, much easier *diet*"]},
    {"key": "coffee", "pool": "drink", "q": "What is {name}'s usual coffee order now?",
     "old": ["+My usual *coffee* is a {a}"], "new": ["+Changed my usual *coffee* order to a {b}", "I'm a new person"]},
    {"key": "commute", "pool": "commute", "q": "How does {name} get to work now?",
     "old": ["+I {a} to *work*, takes forever"], "new": ["+I {b} to *work* now", "So much better"]},
    {"key": "phone", "pool": "phone", "q": "What phone does {name} have now?",
     "old": ["+My {a} *phone* is dying", "Battery lasts like 2 hours"], "new": ["+Got a new *phone*, a {b}"]},
    {"key": "show", "pool": "show", "q": "Which show is {name} obsessed with now?",
     "old": ["+*Obsessed* with {a} right now", "Like three episodes a night"],
     "new": ["+Dropped {a}, I'm *obsessed* with {b} now"]},
    {"key": "clinic", "pool": "clinic", "group": "job", "q": "What is {name}'s job at the clinic now?",
     "old": ["+Still a {a} at the *clinic*, same old"], "new": ["+Got promoted at the *clinic*!! {b} now"]},
]

# Own-time events: (message with {when}, question, the relative forms that fit the event).
OWN_PAST = [
    ("Went to the *climbing gym* {when}, my arms are dead", "When did {name} go to the climbing gym?",
     ["yesterday", "last night"]),
    ("I finally cleaned out the *garage* {when}", "When did {name} clean out the garage?",
     ["yesterday", "the day before yesterday"]),
    ("We had the *farewell dinner* for my boss {when}", "When was the farewell dinner for {name}'s boss?",
     ["yesterday", "last night"]),
    ("My car got *towed* {when}", "When did {name}'s car get towed?", ["yesterday", "the day before yesterday"]),
    ("Saw the *fireworks* by the river {when}", "When did {name} see the fireworks by the river?",
     ["last night", "yesterday"]),
    ("Got my *flu jab* {when}, arm is so sore", "When did {name} get the flu jab?",
     ["yesterday", "the day before yesterday"]),
    ("There was a *power cut* on our street {when}", "When was the power cut on {name}'s street?",
     ["last night", "yesterday"]),
    ("I *locked myself out* {when} lol, had to call my landlord", "When did {name} get locked out?",
     ["last night", "yesterday"]),
    ("We went *bowling* {when} and I lost so badly", "When did {name} go bowling?",
     ["last night", "the day before yesterday"]),
]
OWN_FUTURE = [
    ("I have the *dentist* {when}, dreading it", "When is {name}'s dentist appointment?",
     ["tomorrow", "on {wd}", "the day after tomorrow"]),
    ("The *job interview* is {when}, I'm so nervous", "When is {name}'s job interview?",
     ["tomorrow", "on {wd}", "the day after tomorrow"]),
    ("{partner} and I are seeing the *musical* {when}", "When is {name} seeing the musical?",
     ["tonight", "tomorrow", "on {wd}"]),
    ("*Moving day* is {when}, nothing is packed", "When is {name}'s moving day?", ["tomorrow", "on {wd}"]),
    ("My *driving test* is {when}, pray for me", "When is {name}'s driving test?",
     ["tomorrow", "on {wd}", "the day after tomorrow"]),
    ("We're picking up the new *sofa* {when}", "When is {name} picking up the new sofa?", ["tomorrow", "on {wd}"]),
    ("I'm flying to see my *grandma* {when}", "When is {name} flying to see {their} grandma?",
     ["tomorrow", "tonight", "on {wd}"]),
    ("The *plumber* is coming {when}, finally", "When is the plumber coming to {name}'s place?",
     ["tomorrow", "on {wd}", "the day after tomorrow"]),
    ("My *haircut* is {when}, it's been months", "When is {name}'s haircut?", ["tomorrow", "on {wd}"]),
]

UNANSWERABLE = {
    "person": ["Where did {x} go to university?", "How old is {x}?", "What is {x}'s favourite film?",
               "When is {x}'s birthday?"],
    "pet": ["How old is {x}?", "What does {x} like to eat?"],
    "restaurant": ["Which street is {x} on?", "How much did dinner at {x} cost?"],
    "company": ["How many people work at {x}?", "Where is {x}'s head office?"],
}
MENTIONS = {
    "person": ["{x} says hi btw", "Bumped into {x} at the shops", "I still owe {x} a call",
               "{x} sent me the funniest video"],
    "pet": ["{x} is asleep on my feet", "{x} stole a sock again", "Give {x} a cuddle from me"],
    "restaurant": ["Walked past {x}, the queue was insane", "Someone at work won't stop talking about {x}"],
    "company": ["Saw an ad for {x} on the bus", "My cousin interviewed at {x} once"],
}

# -- small talk -------------------------------------------------------------------------

GREETINGS = ["Hey!", "Heyyy", "Hiii", "Hello hello", "Yo", "Hey you", "Hey {you}!", "{you}!!", "Omg hi",
             "Helloooo", "Hey, you around?"]
FAREWELLS = ["Ok I'm off, talk later!", "Gotta go, speak soon", "Ttyl", "Ok I need to sleep lol", "Speak soon x",
             "Bye!!", "Ok back to work, ugh", "Laters", "Ok battery dying, bye", "Love you, bye", "Later!"]
REACTIONS = ["lol", "haha", "hahaha", "lmao", "omg", "wait what", "no way", "same", "true", "fair", "ikr", "ugh",
             "oof", "yikes", "nice", "love that", "haha yes", "right??", "😂", "😭", "ok", "yesss", "noooo", "damn",
             "aww", "wow", "mood", "hmm", "yep", "nah", "stop", "lol same", "👀", "ha"]
OPENERS = ["Hey", "Heyyy", "Quick question", "Ok random question", "Wait", "Ok so", "{you}!!", "Omg hi", "Hiii"]
FOLLOWUPS = ["No pressure lol", "I need ideas", "Asking because I'm nosy", "You never told me",
             "I keep forgetting to ask", "Also hi", "Sorry, I've been so bad at replying", "Tell me everything",
             "Ok that's all", "I'm so curious", "Wait I think you said but I forgot", "Hello??"]
PRE_REPLY = ["Haha", "Lol ok", "Omg hi", "Ok ok", "Hiii", "Sorry, was driving", "One sec", "Hahaha", "Ahh yes",
             "Hold on", "Lol"]
FACT_REACTIONS = {"good": ["Omg!!", "Wait what", "No way!!", "Congrats!!", "Love that", "Yesss", "Tell me more"],
                  "bad": ["Noooo", "Oh no", "Are you ok??", "Ugh I'm sorry", "Oof"],
                  "neutral": ["Oh nice", "Wait really", "Huh", "Ooh", "Omg"]}
SINGLE_REACTIONS = ["Oh nice", "Ha I didn't know that", "Really?", "Makes sense", "Huh", "Noted", "Ooh",
                    "That explains a lot lol", "Cute"]
OWN_OPENERS = ["Still up?", "Can't sleep", "Ugh", "Random but", "Ok so", "Are you awake", "Sorry it's late"]
OWN_CLOSERS = ["Anyway", "I should sleep lol", "Why am I still awake", "Ok bed", "Send help"]
OWN_REACTIONS = {"past": ["Noooo", "Omg", "Haha classic", "How was it?", "Lol of course", "Wait really"],
                 "future": ["Good luck!!", "Omg", "Go to sleep then!!", "You'll be fine", "Exciting!", "Ooh"]}
SMALL_QUESTIONS = ["How's your week going?", "How are you?", "What are you up to?", "How was work?",
                   "Did you sleep ok?", "How's your mum doing?", "Did you eat yet?",
                   "Are you still coming to the thing?", "What's the plan for the weekend?", "Any news?", "You alive?",
                   "Did you see my message earlier?", "Are you busy?", "How did the meeting go?",
                   "Do you want to call later?"]
SMALL_ANSWERS = ["Not bad, just tired", "Busy but fine", "Honestly pretty good!", "Meh", "Surviving", "Just got home",
                 "Lying on the sofa doing nothing", "Still at work, ugh", "About to make dinner", "Yes finally!",
                 "Not yet lol", "Can't complain", "It's been a long one", "Good! You?", "Eh, could be worse",
                 "Definitely, I'll text you", "Probably, depends on work", "No idea honestly"]
SMALL_TALK = [
    "Work is so busy right now", "Meetings all day, send help", "My laptop died in the middle of a call",
    "The printer at work is possessed", "Finally finished that report", "Someone microwaved fish in the office again",
    "I have so many emails it's not even funny", "My team lunch got cancelled", "It's pouring here",
    "It's so cold I can't feel my hands", "The sun is finally out!", "It's so windy, my umbrella gave up",
    "Snow!! Actual snow", "It's weirdly warm for this time of year", "I just ate an entire bag of crisps",
    "Pizza for dinner again, no regrets", "I made soup and it's actually good", "I'm starving",
    "Why is coffee so expensive now", "I burned the toast. Again", "Ordered takeaway, couldn't be bothered to cook",
    "I need to go grocery shopping so bad", "My neighbours are drilling again",
    "The washing machine is making a weird noise", "I finally cleaned my room",
    "There's a spider in the bathroom and it lives here now", "I've got so much laundry", "The wifi keeps dropping",
    "I'm rewatching the same show for the fifth time", "That new baking show is so good",
    "I fell asleep during the film lol", "This song has been stuck in my head all day", "We should hang out soon",
    "I need a holiday", "Let's do drinks soon", "I might go for a run later", "I'm gonna have a quiet one tonight",
    "I slept like 4 hours", "My back hurts from the new chair", "I think I'm getting a cold",
    "I've had three coffees and it's not working", "My mum keeps sending me recipes",
    "The family group chat is chaos", "My cousin just had a baby!", "Everyone's getting engaged, what is happening",
    "I got lost on the way to the shops lol", "The bus was 20 minutes late", "Traffic was awful",
    "I bought a plant. It's already dying", "I'm trying to read more but my phone wins every time",
    "Someone left a note on my car, turned out to be a flyer", "We should plan a trip somewhere",
    "My cousin ran a marathon and won't stop talking about it", "I need a new job honestly",
    "The vet bills for my parents' dog are insane", "I want to dye my hair but I'm scared",
    "I keep saying I'll learn a language", "Half my office is on some diet", "The gym was packed so I left",
    "My phone battery is a joke", "Are you free this weekend?", "I'm so tired today", "I can't be bothered to cook",
    "There's a new cafe on my street, the cakes are huge", "My landlord still hasn't fixed the heating",
    "I definitely need an early night", "I'm trying to drink more water", "Honestly I need a nap",
    "I'm going to be late as usual", "Because of course the train is cancelled", "It's raining though, so no",
    "Thanks for sending that", "I don't know what to have for dinner", "I really need to call my grandma",
    "Something smells amazing in my building", "Everyone at work is off sick", "My plants are thriving though",
    "I just walked 15k steps, I'm dead", "Your voice notes are the best", "I want to get a dog so bad",
    "I got a parking ticket, great", "I'm watching the match, it's tense", "Payday can't come soon enough",
]
# Small talk with slots, for variety: filled from SLOT_WORDS at each use.
SMALL_TALK_SLOTS = [
    "{food} for dinner again", "I'm craving {food} so bad", "Made {food}, it came out {result}",
    "It's so {weather} here", "Ugh it's {weather} again", "My {object} broke, of course",
    "Can I borrow your {object} at some point?", "Watching a {genre} thing, it's {result}",
    "Just got back from {errand}", "I have to go to {errand}, send help", "Did {activity} for like 20 minutes lol",
    "Trying to get back into {activity}", "Listening to a podcast about {topic}",
    "Fell down a rabbit hole about {topic}",
    "My {relative} called for an hour", "My {relative} says hi",
]
SLOT_WORDS = {
    "food": ["pasta", "toast", "noodles", "soup", "tacos", "leftovers", "cereal", "curry", "pancakes", "a salad"],
    "result": ["great", "a bit dry", "surprisingly good", "too salty", "perfect", "edible at best", "weird"],
    "weather": ["grey", "rainy", "windy", "humid", "cold", "gloomy", "foggy", "sunny"],
    "object": ["umbrella", "hoover", "bike pump", "drill", "hair dryer", "kettle", "ladder", "suitcase"],
    "genre": ["crime", "cooking", "sci-fi", "true crime", "comedy", "nature"],
    "errand": ["the post office", "the supermarket", "the pharmacy", "the bank", "ikea", "the tip"],
    "activity": ["running", "drawing", "yoga", "journaling", "swimming", "stretching"],
    "topic": ["octopuses", "old shipwrecks", "sleep", "bees", "volcanoes", "medieval food"],
    "relative": ["mum", "dad", "aunt", "grandad", "cousin", "brother"],
}
EMOJIS = ["😂", "😅", "🙃", "❤️", "👀", "😭", "🎉", "🙌", "😬", "🤞", "👍", "🥲", "😴", "💀"]

# (pattern, replacement): common chat spellings and misspellings, applied to one word.
TYPOS: List[Tuple[str, str]] = [
    ("definitely", "definately"), ("tomorrow", "tmrw"), ("tonight", "tonite"), ("yesterday", "yday"),
    ("you're", "ur"), ("your", "ur"), ("you", "u"), ("because", "bc"), ("though", "tho"), ("going to", "gonna"),
    ("want to", "wanna"), ("probably", "prob"), ("really", "rly"), ("okay", "ok"), ("people", "ppl"),
    ("please", "pls"), ("thanks", "thx"), ("weird", "wierd"), ("with", "w"), ("something", "smth"),
    ("i don't know", "idk"), ("right now", "rn"), ("honestly", "honeslty"), ("i'm", "im"),
    ("don't", "dont"), ("can't", "cant"), ("that's", "thats"), ("it's", "its"), ("restaurant", "restaraunt"),
    ("believe", "beleive"), ("finally", "finaly"), ("tired", "tierd"), ("weekend", "wkend"), ("birthday", "bday"),
    ("minutes", "mins"), ("seriously", "srsly"), ("about", "abt"),
]
TYPO_PATTERNS = [(re.compile(r"(?<![\w'])%s(?![\w'])" % re.escape(a), re.I), b) for a, b in TYPOS if a != b]

# Relative expressions as written (after noise), longest first; see the module docstring.
RELATIVE = re.compile(
    r"\b(the day before yesterday|the day after tomorrow|yesterday|yday|last night|today|tonight|tonite|"
    r"this (?:morning|afternoon|evening|weekend)|tomorrow|tmrw|(?:on|next) (?:%s))\b" % "|".join(WEEKDAYS), re.I)


def resolve_expression(expression: str, day: datetime.date) -> Tuple[datetime.date, datetime.date]:
    """The first and last day an expression of RELATIVE said on `day` denotes."""
    e = expression.lower()
    offsets = {"the day before yesterday": -2, "yesterday": -1, "yday": -1, "last night": -1, "today": 0,
               "tonight": 0, "tonite": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
               "tomorrow": 1, "tmrw": 1, "the day after tomorrow": 2}
    if e in offsets:
        return day + offsets[e] * DAY, day + offsets[e] * DAY
    if e == "this weekend":
        saturday = day + (5 - day.weekday()) * DAY
        return saturday, saturday + DAY
    weekday = WEEKDAYS.index(e.split()[1])
    ahead = (weekday - day.weekday()) % 7 or 7
    return day + ahead * DAY, day + ahead * DAY


# -- messages and blocks ---------------------------------------------------------------

class _Msg:
    """One message under construction: its text keeps `*key*` marks and `{when}` until rendered."""

    def __init__(self, speaker: int, text: str, exposed: bool = False, when: Optional[str] = None):
        self.speaker = speaker
        self.raw = text
        self.exposed = exposed  # a planted fact whose key word the noise may touch
        self.when = when  # own-time: the relative form, chosen against the message's day
        self.text = ""
        self.expression: Optional[str] = None
        self.stamp = 0  # Unix seconds
        self.turn_id = ""


class _Block:
    def __init__(self, msgs: List[_Msg], at: Optional[int] = None, interruptible: bool = True):
        self.msgs = msgs
        self.at = at  # Unix seconds the block does not start before (a late-night message, a resumed session)
        self.interruptible = interruptible


class _User:
    def __init__(self, number: int, seed: int):
        self.rng = random.Random(seed * 100003 + number)
        self.user_id = "chat-en-%d" % number
        pair = self.rng.sample(SPEAKERS, 2)
        self.names = [pair[0][0], pair[1][0]]
        self.their = [pair[0][1], pair[1][1]]
        self.pools: Dict[str, List[Any]] = {}
        self.partners = [self.draw("person"), self.draw("person")]
        self.groups: List[str] = []
        self.entities: List[Tuple[str, str]] = []
        self.questions: List[Dict[str, Any]] = []
        self.deck: List[str] = []
        n = self.rng.randint(*SESSIONS)
        self.kinds = ["day"] * n
        timed = self.rng.sample(range(1, n), NIGHT_SESSIONS + MULTI_DAY_SESSIONS)
        for i, s in enumerate(timed):
            self.kinds[s] = "night" if i < NIGHT_SESSIONS else "days"
        self.resume: Dict[int, int] = {}  # multi-day session -> when it resumes
        self.starts = self._starts()
        self.blocks: List[List[_Block]] = [[] for _ in range(n)]
        self.timed: List[List[_Block]] = [[] for _ in range(n)]  # own-time blocks, in time order

    def _starts(self) -> List[int]:
        """Session starts; a multi-day session's resumption (self.resume) ends before the next one starts."""
        day = FIRST_DAY + self.rng.randint(0, START_SPREAD_DAYS) * DAY
        starts = []
        for s, kind in enumerate(self.kinds):
            if s:
                day += (self.rng.randint(*GAP_DAYS) + (3 if self.kinds[s - 1] == "days" else 0)) * DAY
            minute = self.rng.randint(21 * 60, 22 * 60 + 50) if kind == "night" else \
                self.rng.randint(19 * 60, 21 * 60) if kind == "days" else self.rng.randint(8 * 60, 19 * 60 + 30)
            moment = datetime.datetime(day.year, day.month, day.day, tzinfo=UTC) + datetime.timedelta(minutes=minute)
            starts.append(int(moment.timestamp()) + self.rng.randint(0, 59))
            if kind == "days":
                self.resume[s] = starts[-1] + self.rng.randint(1, 2) * 86400 + self.rng.randint(-3600, 3600)
        return starts

    def draw(self, pool: str) -> Any:
        """A value from a pool, never the same one twice for this user."""
        if pool not in self.pools:
            values = list(POOLS[pool])
            self.rng.shuffle(values)
            self.pools[pool] = values
        return self.pools[pool].pop()

    def pick(self, kinds: List[Dict[str, Any]], count: int) -> List[Dict[str, Any]]:
        """`count` fact kinds at random, at most one per contradiction group for this user."""
        out = []
        for kind in self.rng.sample(kinds, len(kinds)):
            group = kind.get("group")
            if group and group in self.groups:
                continue
            if group:
                self.groups.append(group)
            out.append(kind)
            if len(out) == count:
                break
        return out

    def session(self, lo: int = 0, hi: Optional[int] = None) -> int:
        """A session in [lo, hi], the less loaded of two drawn at random."""
        hi = len(self.kinds) - 1 if hi is None else hi
        a, b = self.rng.randint(lo, hi), self.rng.randint(lo, hi)
        return a if len(self.blocks[a]) <= len(self.blocks[b]) else b

    def words(self, speaker: int, **extra: Any) -> Dict[str, Any]:
        return dict(name=self.names[speaker], you=self.names[1 - speaker], their=self.their[speaker],
                    partner=self.partners[speaker], **extra)

    def msg(self, speaker: int, template: str, words: Dict[str, Any], planted: bool = False) -> _Msg:
        exposed = planted and self.rng.random() < KEY_EXPOSED
        text = template.format(**words) if "{" in template else template
        if "a {" in template:
            text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)  # "an oat latte"
        return _Msg(speaker, text, exposed)

    def ask(self, category: str, question: str, gold: List[_Msg], answer: str, labels: Any = None) -> None:
        self.questions.append({"qid": "%s/q%03d" % (self.user_id, len(self.questions) + 1), "category": category,
                               "question": question, "gold": gold, "answer": answer, "labels": labels})

    def register(self, kind: str, name: str) -> None:
        if (kind, name) not in self.entities:
            self.entities.append((kind, name))

    def reaction(self, speaker: int) -> _Msg:
        return _Msg(speaker, self.rng.choice(REACTIONS))

    def chat(self, speaker: int) -> _Msg:
        """Small talk: every line once before any repeats, some of them with slots filled."""
        if not self.deck:
            self.deck = self.rng.sample(SMALL_TALK + SMALL_TALK_SLOTS * 2, len(SMALL_TALK) + 2 * len(SMALL_TALK_SLOTS))
        template = self.deck.pop()
        words = {k: self.rng.choice(v) for k, v in SLOT_WORDS.items()}
        text = template.format(**words) if "{" in template else template
        return _Msg(speaker, text[0].upper() + text[1:])


def _lines(u: _User, speaker: int, templates: List[str], words: Dict[str, Any]) -> Tuple[List[_Msg], List[_Msg]]:
    """Messages from templates; the second list holds the gold ones ("+" marked)."""
    msgs, gold = [], []
    for template in templates:
        m = u.msg(speaker, template.lstrip("+"), words, planted=template.startswith("+"))
        msgs.append(m)
        if template.startswith("+"):
            gold.append(m)
    return msgs, gold


def _plain(template: str) -> str:
    return template.replace("*", "")


# -- planting ------------------------------------------------------------------------------

def _plant_burst_reply(u: _User, kind: Dict[str, Any]) -> None:
    asker = u.rng.randrange(2)
    answerer = 1 - asker
    x = u.draw(kind["pool"])
    words = u.words(answerer, x=x)
    ask_words = u.words(asker)
    ask_words["partner"] = u.partners[answerer]
    msgs = [u.msg(asker, t, ask_words) for t in u.rng.sample(OPENERS, u.rng.randint(0, 2))]
    msgs.append(u.msg(asker, kind["ask"], ask_words, planted=True))
    followups = u.rng.sample(FOLLOWUPS + kind["fu"] * 2, u.rng.randint(1, 3))
    msgs += [u.msg(asker, t, ask_words) for t in dict.fromkeys(followups)]
    if u.rng.random() < 0.6:
        msgs.append(u.msg(answerer, u.rng.choice(PRE_REPLY), words))
    reply, gold = _lines(u, answerer, u.rng.choice(kind["reply"]), words)
    u.blocks[u.session()].append(_Block(msgs + reply))
    u.ask("burst-reply", _plain(kind["q"]).format(**words), gold, x)
    if "entity" in kind:
        u.register(kind["entity"], x)
    if kind.get("partner"):
        u.register("person", u.partners[answerer])


def _plant_burst_fact(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    x = u.draw(kind["pool"])
    words = u.words(speaker, x=x)
    msgs, gold = _lines(u, speaker, kind["say"], words)
    msgs.append(u.msg(1 - speaker, u.rng.choice(FACT_REACTIONS[kind["mood"]]), words))
    u.blocks[u.session()].append(_Block(msgs))
    u.ask("burst-fact", kind["q"].format(**words), gold, x)
    if "entity" in kind:
        u.register(kind["entity"], x)
    if kind.get("partner"):
        u.register("person", u.partners[speaker])


def _plant_single(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    x = u.draw(kind["pool"])
    words = u.words(speaker, x=x)
    msgs = [u.chat(speaker)] if u.rng.random() < 0.4 else []
    fact = u.msg(speaker, kind["say"], words, planted=True)
    msgs += [fact, u.msg(1 - speaker, u.rng.choice(SINGLE_REACTIONS), words)]
    u.blocks[u.session()].append(_Block(msgs))
    u.ask("single", kind["q"].format(**words), [fact], x)
    if "entity" in kind:
        u.register(kind["entity"], x)


def _plant_update(u: _User, kind: Dict[str, Any]) -> None:
    speaker = u.rng.randrange(2)
    if kind["pool"] == "clinic":
        a, b = u.draw("clinic")
    else:
        a, b = u.draw(kind["pool"]), u.draw(kind["pool"])
    words = u.words(speaker, a=a, b=b)
    n = len(u.kinds)
    old_s = u.session(0, max(0, n // 2 - 1))
    new_s = u.session(min(n - 1, old_s + 2))
    old_msgs, old = _lines(u, speaker, kind["old"], words)
    new_msgs, new = _lines(u, speaker, kind["new"], words)
    for s, msgs in ((old_s, old_msgs), (new_s, new_msgs)):
        msgs.append(u.msg(1 - speaker, u.rng.choice(SINGLE_REACTIONS + REACTIONS), words))
        u.blocks[s].append(_Block(msgs))
    u.ask("update", kind["q"].format(**words), [new[0], old[0]], b, labels={"new": [new[0]], "old": [old[0]]})


def _at(u: _User, s: int, after_midnight: bool) -> int:
    """A late-night moment of session s: 23:05-23:55 of its (resumed) day, or 00:05-01:40 the day after."""
    base = u.resume.get(s, u.starts[s])
    day = datetime.datetime.fromtimestamp(base, UTC).date()
    midnight = int(datetime.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
    minute = u.rng.randint(24 * 60 + 5, 25 * 60 + 40) if after_midnight else u.rng.randint(23 * 60 + 5, 23 * 60 + 55)
    return midnight + minute * 60 + u.rng.randint(0, 59)


def _plant_own_time(u: _User, events: Dict[str, List[Tuple[str, str, List[str]]]]) -> None:
    timed = [s for s, kind in enumerate(u.kinds) if kind != "day"]
    s = min(timed, key=lambda t: (len(u.timed[t]), u.rng.random()))
    tense = "past" if u.rng.random() < 0.5 else "future"
    template, question, forms = events[tense].pop()
    speaker = u.rng.randrange(2)
    words = u.words(speaker)
    msgs = [u.msg(speaker, t, words) for t in u.rng.sample(OWN_OPENERS, u.rng.randint(0, 2))]
    evidence = _Msg(speaker, template.replace("{when}", "\0").format(**words).replace("\0", "{when}"),
                    exposed=u.rng.random() < KEY_EXPOSED, when=u.rng.choice(forms))
    msgs.append(evidence)
    if u.rng.random() < 0.5:
        msgs.append(u.msg(speaker, u.rng.choice(OWN_CLOSERS), words))
    msgs.append(u.msg(1 - speaker, u.rng.choice(OWN_REACTIONS[tense]), words))
    after_midnight = len(u.timed[s]) > 0 or u.rng.random() < 0.6
    block = _Block(msgs, at=_at(u, s, after_midnight))
    u.timed[s].append(block)
    u.ask("own-time", question.format(**words), [evidence], "")  # the answer needs the message's day


def _plant_mentions(u: _User) -> None:
    for kind, name in u.entities:
        speaker = u.rng.randrange(2)
        msgs = [u.msg(speaker, u.rng.choice(MENTIONS[kind]), {"x": name}), u.reaction(1 - speaker)]
        u.blocks[u.session()].append(_Block(msgs))


def _plant_unanswerable(u: _User, count: int) -> List[str]:
    names = []
    for kind, name in u.rng.sample(u.entities, min(count, len(u.entities))):
        question = u.rng.choice(UNANSWERABLE[kind]).format(x=name)
        u.ask("unanswerable", question, [], UNANSWERABLE_ANSWER, labels={"unanswerable": True})
        names.append(name)
    return names


# -- small talk ---------------------------------------------------------------------------

def _background(u: _User) -> _Block:
    a = u.rng.randrange(2)
    b = 1 - a
    words = u.words(a)
    other = u.words(b)
    shape = u.rng.random()
    msgs: List[_Msg] = []
    if shape < 0.3:  # a question, answered
        if u.rng.random() < 0.3:
            msgs.append(u.msg(a, u.rng.choice(REACTIONS), words))
        msgs.append(u.msg(a, u.rng.choice(SMALL_QUESTIONS), words))
        if u.rng.random() < 0.3:
            msgs.append(u.chat(a))
        msgs.append(u.msg(b, u.rng.choice(SMALL_ANSWERS), other))
        if u.rng.random() < 0.5:
            msgs.append(u.chat(b))
        if u.rng.random() < 0.6:
            msgs.append(u.reaction(a))
    elif shape < 0.75:  # a burst of news, a reaction and maybe news back
        msgs += [u.chat(a) for _ in range(u.rng.randint(1, 4))]
        msgs.append(u.reaction(b))
        if u.rng.random() < 0.5:
            msgs += [u.chat(b) for _ in range(u.rng.randint(1, 2))]
            if u.rng.random() < 0.5:
                msgs.append(u.reaction(a))
    else:  # reactions back and forth
        msgs.append(u.chat(a))
        for i in range(u.rng.randint(1, 3)):
            msgs.append(u.reaction(b if i % 2 == 0 else a))
    return _Block(msgs)


def _interrupt(u: _User, block: _Block) -> None:
    """~20% of bursts of 3+ messages get a one-word reaction of the other speaker inside."""
    if not block.interruptible:
        return
    i = 0
    out: List[_Msg] = []
    msgs = block.msgs
    while i < len(msgs):
        j = i
        while j < len(msgs) and msgs[j].speaker == msgs[i].speaker:
            j += 1
        run = msgs[i:j]
        if len(run) >= 3 and u.rng.random() < INTERRUPT:
            cut = u.rng.randint(1, len(run) - 1)
            run = run[:cut] + [u.reaction(1 - run[0].speaker)] + run[cut:]
        out += run
        i = j
    block.msgs = out


def _assemble(u: _User, s: int) -> List[_Msg]:
    """The session's blocks in order, filled with small talk up to its drawn length."""
    speaker = u.rng.randrange(2)
    greeting = _Block([u.msg(speaker, u.rng.choice(GREETINGS), u.words(speaker))])
    if u.rng.random() < 0.7:
        greeting.msgs.append(u.msg(1 - speaker, u.rng.choice(GREETINGS + REACTIONS), u.words(1 - speaker)))
    planted = list(u.blocks[s])
    target = u.rng.randint(*MESSAGES)
    held = len(greeting.msgs) + 2 + sum(len(b.msgs) for b in planted + u.timed[s])
    while held < target:
        block = _background(u)
        if held + len(block.msgs) > MESSAGES[1] - 6:
            break
        planted.append(block)
        held += len(block.msgs)
    u.rng.shuffle(planted)
    order = [greeting] + planted
    if u.kinds[s] == "days":  # breaks off and resumes a day or two later, in the evening
        cut = u.rng.randint(len(order) // 3, max(len(order) // 3, len(order) // 2))
        order[cut].at = u.resume[s]
    timed = sorted(u.timed[s], key=lambda b: b.at or 0)
    if timed:  # the late-night blocks go in the last part, in their time order
        lo = len(order) // 2 + 1
        spots = sorted(u.rng.sample(range(lo, len(order) + 1), len(timed)), reverse=True)
        for spot, block in zip(spots, reversed(timed)):
            order.insert(spot, block)
    speaker = u.rng.randrange(2)
    order.append(_Block([u.msg(speaker, u.rng.choice(FAREWELLS), u.words(speaker))]))
    msgs: List[_Msg] = []
    for block in order:
        _interrupt(u, block)
        _clock(u, s, block, msgs)
        msgs += block.msgs
    return msgs


def _clock(u: _User, s: int, block: _Block, before: List[_Msg]) -> None:
    """Timestamps: seconds within a burst, up to minutes between speakers, a pause now and then."""
    if not before:
        clock = u.starts[s]
    else:
        clock = before[-1].stamp + u.rng.randint(15, 240)
        if u.kinds[s] == "day" and u.rng.random() < 0.06:
            clock += u.rng.randint(3600, 4 * 3600)
    if block.at is not None:
        clock = max(clock, block.at)
    last = before[-1] if before else None
    for i, m in enumerate(block.msgs):
        if i:
            assert last is not None  # the block's previous message
            if m.speaker == last.speaker:
                clock += u.rng.randint(2, 10) + len(m.raw) // 4
            else:
                clock += u.rng.randint(8, 150)
        m.stamp = clock
        last = m


# -- noise ---------------------------------------------------------------------------------

def _misspell(u: _User, word: str) -> str:
    for pattern, replacement in TYPO_PATTERNS:
        if pattern.fullmatch(word):
            return replacement
    letters = [i for i in range(1, len(word) - 2) if word[i].isalpha() and word[i + 1].isalpha()]
    if len(word) < 5 or not letters:
        return word
    i = u.rng.choice(letters)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _render(u: _User, m: _Msg) -> None:
    raw = m.raw
    day = datetime.datetime.fromtimestamp(m.stamp, UTC).date()
    if m.when is not None:
        form = m.when
        if "{wd}" in form:
            wd = u.rng.choice([w for i, w in enumerate(WEEKDAYS) if i != day.weekday()])
            form = form.replace("{wd}", wd.capitalize())
        m.expression = form
        raw = raw.replace("{when}", "*%s*" % form)
    parts = raw.split("*")  # odd parts are key words
    if m.exposed and len(parts) > 1 and u.rng.random() < 0.5:
        k = u.rng.randrange(1, len(parts), 2)
        if m.when is not None:  # a time expression is only ever written the chat way ("tmrw"), still readable
            parts[k] = _misspell(u, parts[k]) if any(p.fullmatch(parts[k]) for p, _ in TYPO_PATTERNS[:4]) \
                else parts[k]
        else:
            parts[k] = " ".join(_misspell(u, w) for w in parts[k].split(" "))
    if u.rng.random() < TYPO:  # a time expression as a whole only (above): "the day after tmrw" would misread
        keys = [i for i in range(1, len(parts), 2)] if m.exposed and m.when is None else []
        free = [i for i in range(0, len(parts), 2)] + keys
        options = [(i, p, r) for i in free for p, r in TYPO_PATTERNS if p.search(parts[i])]
        if options:
            i, p, r = u.rng.choice(options)
            parts[i] = p.sub(r, parts[i], count=1)
    text = "".join(parts)
    if u.rng.random() < LOWER:
        text = text.lower()
    if u.rng.random() < DROP_PUNCT:
        text = re.sub(r"(?<=\w)[.!?]+$", "", text)
    if u.rng.random() < EMOJI:
        text += (" " if u.rng.random() < 0.7 else "") + u.rng.choice(EMOJIS)
    m.text = text


# -- a user, the dataset -------------------------------------------------------------------

def _user(number: int, seed: int) -> Conversation:
    u = _User(number, seed)
    for kind in u.pick(BURST_REPLY, PLAN["burst-reply"]):
        _plant_burst_reply(u, kind)
    for kind in u.pick(BURST_FACT, PLAN["burst-fact"]):
        _plant_burst_fact(u, kind)
    for kind in u.pick(SINGLE, PLAN["single"]):
        _plant_single(u, kind)
    for kind in u.pick(UPDATE, PLAN["update"]):
        _plant_update(u, kind)
    events = {"past": u.rng.sample(OWN_PAST, len(OWN_PAST)), "future": u.rng.sample(OWN_FUTURE, len(OWN_FUTURE))}
    for _ in range(PLAN["own-time"]):
        _plant_own_time(u, events)
    _plant_mentions(u)
    unanswerable = iter(_plant_unanswerable(u, PLAN["unanswerable"]))

    sessions = []
    everything: List[_Msg] = []
    for s in range(len(u.kinds)):
        msgs = _assemble(u, s)
        turns = []
        for i, m in enumerate(msgs, 1):
            _render(u, m)
            m.turn_id = "S%d:%d" % (s + 1, i)
            turns.append(Turn(m.turn_id, "user" if m.speaker == 0 else "assistant",
                              "%s: %s" % (u.names[m.speaker], m.text), m.stamp * 1000))
        everything += msgs
        sessions.append(Session("%s/s%02d" % (u.user_id, s + 1), turns))

    questions = []
    for q in u.questions:
        gold = [m.turn_id for m in q["gold"]]
        answer, labels = q["answer"], q["labels"]
        if q["category"] == "unanswerable":
            name = next(unanswerable)
            pattern = re.compile(r"(?<!\w)%s(?!\w)" % re.escape(name), re.I)
            gold = [m.turn_id for m in everything if pattern.search(m.text)]
        elif q["category"] == "own-time":
            m = q["gold"][0]
            start, _ = resolve_expression(m.expression or "", _day(m))
            answer = start.isoformat()
        elif labels:
            labels = {"new": [labels["new"][0].turn_id], "old": [labels["old"][0].turn_id]}
        questions.append(Question(q["qid"], q["question"], q["category"], gold, answer, None, labels))

    relative = []
    for m in everything:
        for found in RELATIVE.finditer(m.text):
            start, end = resolve_expression(found.group(1), _day(m))
            relative.append({"turn_id": m.turn_id, "expression": found.group(1), "start": start.isoformat(),
                             "end": end.isoformat()})
    return Conversation(u.user_id, sessions, questions, "en", relative)


def _day(m: _Msg) -> datetime.date:
    return datetime.datetime.fromtimestamp(m.stamp, UTC).date()


def generate(seed: int = 1) -> Dataset:
    """The synthetic chat set for `seed`; the same every time."""
    return Dataset("synthetic-chat-seed%d" % seed, [_user(n, seed) for n in range(1, USERS + 1)], [])

