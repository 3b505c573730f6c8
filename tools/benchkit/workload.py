"""The soak's workload: users who talk in sessions of Adds and ask about what they said.

A user's session grows by Adds of ADD_SIZE messages ("Name: text", Unix-ms timestamps) until it
is SESSION_ADDS long, then the next starts days later; a Search is a question made of words that
user said, and MARKER_SHARE of them ask for a word planted in one of the user's acknowledged
Adds, so a lost write shows. check_add and check_search say why an answer breaks the contract
(docs/api.md, The contract). Shared by the soak and the slow-client bench.
"""
from __future__ import annotations

import collections
import math
import random
import re
import threading
from typing import Any, Dict, List, Optional, Tuple

from tools.benchkit.corpus import BASE_TIME_MS, DAY_MS

ADD_SIZE = 20  # messages per Add, as the platform sends them at most

SESSION_ADDS = (1, 6)  # a session is this many Adds long (20-120 messages)



MARKER_SHARE = 0.05  # share of Searches that look for a word planted in an acknowledged Add

TOP_KS = ((100, 0.7), (10, 0.3))  # top_k and how often; 100 is what formal runs send

OPTIONS_SHARE = 0.1  # share of Searches with multiple-choice options

NAMES = """Dana Priya Jon Gina Maria Joanna Nate Evan Audrey Andrew James Deborah Jolene Calvin Omar Lena
Hiro Sofia Marco Aisha Tom Grace Ravi Elena Felix Nora Yusuf Mei Lucas Zara Ben Ines Kofi Hana Leo""".split()

SLOTS = {
    "activity": ["the pottery workshop", "salsa lessons", "rock climbing", "a half marathon", "the book club",
                 "a cooking course", "volunteering at the animal shelter", "guitar practice", "a photography walk",
                 "the chess tournament", "yoga in the park", "a camping trip", "the farmers market",
                 "painting a mural", "my Spanish class", "a charity run", "the jazz festival", "a road trip",
                 "baking sourdough", "board game night", "the science museum", "a birdwatching tour",
                 "kayaking on the river", "the pottery sale", "a wine tasting", "the comedy show"],
    "place": ["Lisbon", "the lake", "Denver", "the old harbor", "Kyoto", "the community center",
              "my grandma's house", "the mountains", "Portland", "the beach house", "the art museum",
              "the new cafe downtown", "Barcelona", "the national park", "my hometown", "Chicago"],
    "person": ["my sister", "my brother", "my boss", "an old friend", "my neighbour", "my cousin", "my mom",
               "my dad", "a coworker", "my roommate", "my partner", "the kids"],
    "thing": ["a blue bowl", "a vintage camera", "a beagle puppy", "a used bike", "a sunrise painting",
              "a new laptop", "a pair of hiking boots", "a cookbook", "a ukulele", "an herb garden",
              "a record player", "a tent", "a sketchbook", "a kayak", "a telescope", "running shoes"],
    "past": ["yesterday", "last week", "last weekend", "two days ago", "this morning", "last month",
             "last Friday", "a few weeks ago", "last year", "three days ago"],
    "future": ["next month", "next week", "tomorrow", "this summer", "in the spring", "next weekend"],
    "feeling": ["so relaxing", "exhausting but fun", "a bit scary", "really inspiring", "harder than I expected",
                "the best part of my week", "surprisingly peaceful", "a total mess, honestly"],
}

STATEMENTS = [
    "I went to {activity} {past} with {person} and it was {feeling}.",
    "I finally bought {thing} {past}. I have wanted one for ages.",
    "{Person} and I are planning to visit {place} {future}.",
    "Do you remember {activity}? I want to try it again {future}.",
    "I have been thinking about {activity} a lot since {past}.",
    "We drove to {place} {past}, so everything feels new.",
    "My favourite thing right now is {thing}; I use it every day.",
    "I signed up for {activity} {future}, wish me luck!",
    "{Person} gave me {thing} for my birthday {past}.",
    "Work has been busy, but {activity} keeps me sane.",
    "I lost {thing} at {place} {past} and I am still upset about it.",
    "We are moving to {place} {future}, I can hardly believe it.",
]

REPLIES = [
    "That sounds {feeling}! What did you like most about it?",
    "Oh nice, how was {place}?",
    "I did {activity} {past} too, with {person}.",
    "Haha, you always loved {thing}.",
    "Tell me more about {activity}, I have never tried it.",
    "I hope {person} enjoyed it as well.",
    "Wow, {activity} {past}? That must have been {feeling}.",
    "I am so happy for you. {Person} would love {place}.",
    "Send me photos of {thing} when you can!",
    "Last time I was in {place} it rained the whole trip.",
]

SYLLABLES = """ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le
li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu
za ze zi zo zu bar ter mon len kin dor fel gar han lim nor pel ran sel tor vin wel""".split()

STOPWORDS = set("""the and with that this have been for but was are you your about what when where who how did
from they them then than just very really some into over after before will would could should there their it's
i'm wish luck ages time every since still feels hardly believe honestly never tried""".split())


def pseudo_word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


class Vocabulary:
    """Rare words, Zipf-like by rank, so each user's index keeps growing new terms."""

    def __init__(self, seed: int, size: int = 20000):
        rng = random.Random("soak-vocabulary-%d" % seed)
        words: List[str] = []
        seen = set()
        while len(words) < size:
            word = pseudo_word(rng)
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        total = 0.0
        self.cum_weights = []
        for rank in range(size):
            total += 1.0 / (rank + 2.7)
            self.cum_weights.append(total)

    def pick(self, rng: random.Random, k: int) -> List[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def fill(template: str, rng: random.Random) -> str:
    def slot(match: "re.Match[str]") -> str:
        name = match.group(1)
        value = rng.choice(SLOTS[name.lower()])
        return value[0].upper() + value[1:] if name[0].isupper() else value

    return re.sub(r"\{(\w+)\}", slot, template)


def marker_word(tag: str, serial: int) -> str:
    """A made-up word unique to one Add (letters only, so every tokenizer keeps it whole)."""
    letters = "bcdfghjklmnprstvz"
    n, out = serial, []
    while True:
        n, r = divmod(n, len(letters))
        out.append(letters[r])
        if not n:
            break
    return "qx" + tag + "".join(out) + "o"


class User:
    """One user's conversation so far; clients take `lock` to write the next Add."""

    def __init__(self, user_id: str, index: int, seed: int):
        self.user_id = user_id
        self.lock = threading.Lock()
        rng = random.Random("soak-user-%d-%s" % (seed, user_id))
        self.speakers = rng.sample(NAMES, 2)
        self.time_ms = BASE_TIME_MS + rng.randrange(365) * DAY_MS + rng.randrange(DAY_MS)
        self.session_index = -1
        self.session_id = ""
        self.session_adds_left = 0
        self.session_position = 0
        self.adds = 0
        self.messages = 0
        self.sessions = 0
        # Recent message texts for questions, and the unique words of acknowledged Adds.
        self.recent: "collections.deque[str]" = collections.deque(maxlen=400)
        self.markers: "collections.deque[str]" = collections.deque(maxlen=50)
        self.view_lock = threading.Lock()  # guards recent/markers, read by searching clients


class Conversations:
    """Every user's next Add and next question, deterministic for a seed (per user)."""

    def __init__(self, n_users: int, seed: int, run_tag: str):
        self.seed = seed
        self.run_tag = run_tag
        self.vocabulary = Vocabulary(seed)
        self.users = [User("soak-%s-u%03d" % (run_tag, i), i, seed) for i in range(n_users)]
        self._serial = 0
        self._serial_lock = threading.Lock()

    def next_serial(self) -> int:
        with self._serial_lock:
            self._serial += 1
            return self._serial

    def next_add(self, user: User, rng: random.Random) -> Tuple[Dict[str, Any], str, List[str]]:
        """The user's next Add body (call with user.lock held), its marker word and its texts."""
        if user.session_adds_left == 0:
            user.session_index += 1
            user.sessions += 1
            user.session_id = "s%04d" % user.session_index
            user.session_adds_left = rng.randint(*SESSION_ADDS)
            user.session_position = 0
            user.time_ms += rng.randint(1, 10) * DAY_MS + rng.randrange(DAY_MS // 4)
        serial = self.next_serial()
        marker = marker_word(self.run_tag[:2], serial)
        marker_at = rng.randrange(ADD_SIZE)
        same_time = rng.random() < 0.3  # some sessions carry one timestamp, as the platform may send
        messages, texts = [], []
        for i in range(ADD_SIZE):
            pos = user.session_position + i
            speaker = user.speakers[pos % 2]
            text = fill(rng.choice(STATEMENTS if pos % 2 == 0 else REPLIES), rng)
            if rng.random() < 0.3:
                text += " It reminded me of %s and %s." % tuple(self.vocabulary.pick(rng, 2))
            if i == marker_at:
                text += " The code word for the locker is %s." % marker
            content = "%s: %s" % (speaker, text)
            texts.append(content)
            messages.append({
                "role": "user" if pos % 2 == 0 else "assistant",
                "content": content,
                "timestamp": user.time_ms + (0 if same_time else pos * 45000),
            })
        body = {
            "request_id": "%s-%s-a%03d-%d" % (user.user_id, user.session_id, user.session_position // ADD_SIZE, serial),
            "user_id": user.user_id,
            "session_id": "%s-%s" % (user.user_id, user.session_id),
            "messages": messages,
        }
        user.session_position += ADD_SIZE
        user.session_adds_left -= 1
        user.adds += 1
        user.messages += ADD_SIZE
        return body, marker, texts

    @staticmethod
    def acknowledged(user: User, marker: str, texts: List[str]) -> None:
        """An Add was answered 200: its words may now be asked about."""
        with user.view_lock:
            user.recent.extend(texts)
            user.markers.append(marker)

    def question(self, user: User, rng: random.Random) -> Tuple[Dict[str, Any], Optional[str]]:
        """A Search body for the user, and the marker word it must find (or None)."""
        with user.view_lock:
            recent = list(user.recent)
            markers = list(user.markers)
        top_k = 100 if rng.random() < TOP_KS[0][1] else TOP_KS[1][0]
        if markers and rng.random() < MARKER_SHARE:
            marker = rng.choice(markers)
            return {"query": "What is the code word %s?" % marker, "user_id": user.user_id, "top_k": top_k}, marker
        if recent:
            speaker, _, text = rng.choice(recent).partition(": ")
            words = [w.strip(".,;:!?'").lower() for w in text.split()]
            words = [w for w in words if len(w) > 3 and w not in STOPWORDS and not w.startswith("qx")] or ["week"]
        else:  # nothing acknowledged yet: an unknown or empty user must give a valid (maybe empty) list
            speaker, words = rng.choice(user.speakers), self.vocabulary.pick(rng, 3)
        about = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))
        form = rng.choice([
            "What did {s} say about {a}?", "When did {s} mention {a}?", "Who talked about {a}?", "{a}",
            "Where did {s} go for {a}?", "How did {s} feel about {a}?", "Did {s} ever talk about {a}?",
        ])
        body: Dict[str, Any] = {"query": form.format(s=speaker, a=about), "user_id": user.user_id, "top_k": top_k}
        if rng.random() < OPTIONS_SHARE:
            options = [about] + [" ".join(self.vocabulary.pick(rng, rng.randint(1, 2))) for _ in range(3)]
            rng.shuffle(options)
            body["options"] = options
        return body, None


def check_add(body: Dict[str, Any], payload: Any) -> Optional[str]:
    """Why a 200 Add answer breaks the contract, or None."""
    if not isinstance(payload, dict):
        return "Add answer is not a JSON object"
    if payload.get("success") is not True:
        return "Add answer has no success: true"
    for key in ("request_id", "user_id", "session_id"):
        if payload.get(key) != body[key]:
            return "Add answer does not echo %s" % key
    return None


def check_search(body: Dict[str, Any], payload: Any) -> Optional[str]:
    """Why a 200 Search answer breaks the contract, or None."""
    if not isinstance(payload, dict):
        return "Search answer is not a JSON object"
    data = payload.get("data")
    if not isinstance(data, list):
        return "Search answer has no data list"
    if len(data) > max(0, body["top_k"]):
        return "Search answer has %d items, more than top_k %d" % (len(data), body["top_k"])
    ids = set()
    previous = None
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            return "data[%d] is not an object" % i
        if not isinstance(item.get("id"), str) or not item["id"]:
            return "data[%d] has no non-empty string id" % i
        if item["id"] in ids:
            return "data[%d] repeats id %s" % (i, item["id"])
        ids.add(item["id"])
        if not isinstance(item.get("content"), str) or not item["content"].strip():
            return "data[%d] has no non-empty string content" % i
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return "data[%d] has no finite numeric score" % i
        if previous is not None and score > previous:
            return "scores increase at data[%d]" % i
        previous = score
        created = item.get("created_at")
        if created is not None and not isinstance(created, str):
            return "data[%d].created_at is not a string" % i
    return None
