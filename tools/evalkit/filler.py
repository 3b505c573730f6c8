"""Everyday filler chat: a seeded haystack of ordinary messages to hide a life's evidence among.

A real agent's memory holds thousands of messages about nothing in particular: the
weather, dinner, a film, the neighbour's hens, a colleague's cold, a parcel that never
came. `sessions()` makes that much of it, deterministically from a seed, over some forty
topics, each turn filled from word lists, so that the words and meanings a question
reaches for (pets, jobs, partners, doctors, money, dates) also occur where they answer
nothing. tools/evalkit/natural.py interleaves it in time with a life's own sessions,
under the life's own speaker labels, until the user holds 10,000 messages.

Nothing here is taken from any dataset: the templates and lists are written for it.
"""
from __future__ import annotations

import random
from typing import Dict, List, Sequence, Tuple

NAMES = ["Alex", "Ben", "Cara", "Dev", "Ellie", "Finn", "Gita", "Hana", "Ivan", "Jess", "Kofi", "Lena", "Marco",
         "Nina", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Yara", "Zoe"]
SLOTS: Dict[str, List[str]] = {
    "name": NAMES,
    "animal": ["hens", "dog", "cat", "rabbit", "parrot", "goldfish", "tortoise", "hamster", "ferret", "puppy",
               "kitten", "horse", "goat", "gecko", "budgie"],
    "job": ["colleague", "optician", "plumber", "landlord", "dentist", "barista", "manager", "tutor", "nurse",
            "electrician", "accountant", "teacher", "driver", "receptionist", "chef"],
    "relation": ["cousin", "neighbour", "aunt", "uncle", "flatmate", "brother-in-law", "godmother", "partner",
                 "niece", "old classmate", "coworker", "gran"],
    "food": ["lasagne", "curry", "tacos", "ramen", "a roast", "stir fry", "pancakes", "soup", "pizza", "risotto",
             "falafel", "dumplings", "chili", "a salad", "fish pie", "noodles"],
    "drink": ["coffee", "tea", "a smoothie", "hot chocolate", "lemonade", "a flat white", "iced tea", "cider"],
    "place": ["the park", "town", "the market", "the library", "the gym", "the beach", "the high street",
              "the garden centre", "the station", "the mall", "the pub", "the lake", "the museum"],
    "show": ["that detective series", "the baking show", "a documentary about whales", "the new sci-fi film",
             "an old sitcom", "the quiz show", "a cooking competition", "the football highlights",
             "a true crime podcast", "the nature programme"],
    "weather": ["pouring", "freezing", "boiling", "so windy", "grey all day", "weirdly warm", "foggy", "drizzly"],
    "thing": ["parcel", "laptop charger", "umbrella", "library book", "blender", "phone case", "headphones",
              "lamp", "bike pump", "jacket", "kettle", "router", "printer", "backpack"],
    "day": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "the weekend"],
    "chore": ["the laundry", "the dishes", "hoovering", "the bins", "the ironing", "clearing the gutters",
              "defrosting the freezer", "sorting the recycling", "mowing the lawn"],
    "feeling": ["tired", "knackered", "fine", "a bit meh", "pretty good", "stressed", "sleepy", "cheerful"],
    "game": ["chess", "a board game", "that puzzle app", "cards", "the crossword", "a video game", "darts"],
    "sport": ["the match", "the tennis", "the cycling", "the rugby", "the marathon on tv", "the cricket"],
    "ailment": ["a cold", "a headache", "hay fever", "a sore throat", "a stiff neck", "a bad back", "a cough"],
    "number": ["2", "3", "4", "5", "6", "8", "10", "12", "15", "20", "25", "40"],
    "price": ["£4", "£7.50", "£12", "£18", "£25", "£30", "$9", "$15", "$40", "€6", "€22"],
    "app": ["the banking app", "my email", "the weather app", "the bus app", "the group chat", "my calendar"],
    "react": ["haha", "lol", "omg", "ugh", "nice", "oh no", "ha", "wow", "yikes", "fair enough", "same", "true"],
}
TOPICS: Dict[str, List[str]] = {
    "weather": ["it's {weather} out again", "did you see the forecast for {day}? {weather}",
                "{weather} here, staying in",
                "got soaked walking to {place}", "finally some sun, sat outside with {drink}"],
    "food": ["making {food} tonight", "we had {food} for dinner, not bad", "anyone know a good recipe for {food}?",
             "ordered {food} again, no regrets", "the {food} place near {place} shut down",
             "too full of {food} to move"],
    "tv": ["watching {show}", "have you seen {show}? so good", "fell asleep during {show} again",
           "{show} was a bit slow tbh", "binged three episodes of {show}"],
    "chores": ["spent the morning on {chore}", "{chore} done, finally", "I really should do {chore}",
               "who is on {chore} this week?", "ugh {chore} again"],
    "others_pets": ["my {relation}'s {animal} got out again", "the neighbours got {animal}",
                    "saw a {animal} at {place}",
                    "my {relation} is thinking of getting a {animal}", "{name}'s {animal} is so funny"],
    "others_jobs": ["my {relation} is training to be a {job}", "{name} says the new {job} is nice",
                    "had to call the {job} about it", "the {job} was late again", "{name} quit being a {job}"],
    "errands": ["my {thing} broke", "still waiting on that {thing}", "left my {thing} at {place}",
                "need to return the {thing}", "found my {thing} under the sofa", "the {thing} cost {price}, a rip off"],
    "health_small": ["I think I'm getting {ailment}", "{name} has {ailment} poor thing", "feeling {feeling} today",
                     "slept badly, feeling {feeling}", "{ailment} again, it's going round"],
    "plans": ["what are you up to on {day}?", "might go to {place} on {day}", "nothing planned for {day}",
              "shall we meet at {place} around {number}?", "{name} wants to do something on {day}"],
    "games": ["played {game} with {name}", "I'm rubbish at {game}", "lost at {game} again",
              "anyone up for {game} later?", "{name} beat me at {game} {number} times"],
    "sports": ["did you watch {sport}?", "{sport} was brilliant", "can't believe how {sport} ended",
               "missed {sport}, what happened?"],
    "money": ["paid {price} for {drink}, madness", "splitting the bill, it's {price} each", "got {price} back",
              "everything costs {price} now", "saving up a bit this month"],
    "tech": ["{app} isn't working", "my phone died at {place}", "updated {app} and now it's worse",
             "the wifi keeps dropping", "can you send it again? {app} ate it"],
    "commute": ["bus was {number} minutes late", "train cancelled again", "traffic was awful near {place}",
                "walked to {place} instead", "the station was packed"],
    "social": ["saw {name} at {place}", "{name} says hi", "bumped into my {relation} at {place}",
               "{name} and {name} are coming round later", "haven't heard from {name} in ages"],
    "shopping": ["picked up {food} stuff at {place}", "the queue at {place} was huge", "bought a new {thing}",
                 "{place} had a sale on, got {number} things", "forgot the milk again"],
    "chat": ["{react}", "{react} {react}", "ok", "sounds good", "see you then", "no worries", "thanks!", "night!",
             "morning", "how's it going?", "not much, you?", "same as usual", "brb", "back", "ha yes", "maybe later",
             "good shout", "I'll let you know", "got it", "fair", "sure", "hmm", "ok cool", "yep", "nah"],
    "music": ["listening to some old albums", "that song is stuck in my head", "{name} is learning the ukulele",
              "went to a gig at {place}", "the radio played the same song {number} times"],
    "reading": ["started a new book", "the library book is overdue", "reading before bed helps",
                "{name} lent me a novel", "halfway through a thriller"],
    "garden": ["the tomatoes are coming up", "something ate the lettuce", "planted some bulbs",
               "the grass needs cutting", "{name} gave me cuttings"],
    "news": ["did you see the news?", "the roadworks on the high street are back",
             "they're building flats near {place}",
             "power cut on our street last night", "the council fixed the potholes, finally"],
}
_TOPIC_NAMES = sorted(TOPICS)


def _fill(template: str, rng: random.Random) -> str:
    out = template
    while "{" in out:
        start = out.index("{")
        end = out.index("}", start)
        out = out[:start] + rng.choice(SLOTS[out[start + 1:end]]) + out[end + 1:]
    return out


def session_texts(rng: random.Random, length: int) -> List[str]:
    """One filler session of `length` turns: one or two topics, chat between them."""
    topics = [rng.choice(_TOPIC_NAMES) for _ in range(1 + rng.randrange(2))]
    texts = []
    for i in range(length):
        topic = "chat" if i and rng.random() < 0.35 else topics[i * len(topics) // length]
        texts.append(_fill(rng.choice(TOPICS[topic]), rng))
    return texts


def sessions(count_messages: int, start_ms: int, end_ms: int, labels: Sequence[Tuple[str, str]],
             seed: int = 32) -> List[Tuple[int, List[Tuple[str, str, int]]]]:
    """`count_messages` filler messages as sessions, spread evenly at random over [start_ms, end_ms].

    labels: (role, speaker label or "") pairs the turns take in turn, as the life's own
    conversations do. Each session: (its index, [(role, content, timestamp_ms)]).
    """
    rng = random.Random(seed)
    out: List[Tuple[int, List[Tuple[str, str, int]]]] = []
    made = 0
    span = max(1, end_ms - start_ms)
    while made < count_messages:
        length = min(count_messages - made, 2 + rng.randrange(11))
        at = start_ms + rng.randrange(span)
        turns = []
        first = rng.randrange(len(labels))
        for i, text in enumerate(session_texts(rng, length)):
            role, label = labels[(first + i) % len(labels)]
            turns.append((role, ("%s: %s" % (label, text)) if label else text, at + i * 45_000))
        out.append((len(out), turns))
        made += length
    return out
