"""The typed-chat set's words: speakers, the pools planted facts draw on, typos, emoji.

And the relative expressions it labels, with how each resolves.
"""
from __future__ import annotations

import datetime
import re
from typing import Any, Dict, List, Tuple

from tools.evalkit.synthetic_chat.plan import DAY, WEEKDAYS

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
