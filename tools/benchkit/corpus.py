"""The seeded synthetic users of the isolation and speed benches: text, Add bodies, questions.

Every user's text is drawn from one Zipf-like vocabulary (common English words first, then
pseudo-words), so a measured user's words are also everyone else's words: the hard case for
isolation. Everything is a function of the seed; GENERATOR_VERSION names the recipe, so a
database cached from an older recipe is rebuilt (stores.build_params).
"""
from __future__ import annotations

import random
from typing import Any, Dict, Iterator, List, Sequence, Tuple

# Bump when the generated data changes, so cached databases are rebuilt.
GENERATOR_VERSION = 1
TARGET_USER = "target-user"
PLATFORM_MAX_ADD = 20  # the challenge platform sends at most 20 messages per Add
BASE_TIME_MS = 1672531200000  # 2023-01-01T00:00:00Z
DAY_MS = 24 * 3600 * 1000


# Frequent English words first, so that with Zipf weights by rank they dominate
# term frequencies the way function words do in real chat.
COMMON_WORDS = """
the be to of and a in that have i it for not on with he as you do at this but his by
from they we say her she or an will my one all would there their what so up out if
about who get which go me when make can like time no just him know take people into
year your good some could them see other than then now look only come its over think
also back after use two how our work first well way even new want because any these
give day most us is was are been has had did said went got made really very much
today yesterday tomorrow week weekend friend family home house dog cat car book music
movie game trip city school job project plan idea dinner lunch coffee park beach
garden kitchen party birthday holiday morning evening night love happy great sure
maybe thanks always never often sometimes again still yes yeah okay
""".split()
NAMES = """
Dana Priya Jon Gina John Maria Joanna Nate Tim Evan Sam Audrey Andrew James
Deborah Jolene Calvin Dave Priya Omar Lena Hiro Sofia Marco Aisha Tom Grace Ravi
Elena Felix Nora Yusuf Mei Lucas Zara Ben Ines Kofi Hana Leo
""".split()
SYLLABLES = """
ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ha he hi
ho hu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra
re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu bar ter mon
len kin dor fel gar han lim nor pel ran sel tor vin wel
""".split()


class TextGen:
    """Deterministic English-like text: common words plus pseudo-words, Zipf by rank."""

    def __init__(self, seed: int, n_pseudo_words: int):
        rng = random.Random("vocabulary-%d" % seed)
        words = list(dict.fromkeys(COMMON_WORDS))
        seen = set(words)
        while len(words) < len(COMMON_WORDS) + n_pseudo_words:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        # Zipf-Mandelbrot weights 1/(rank + 2.7): a few words are very frequent,
        # most are rare, so posting lists range from huge to tiny.
        total = 0.0
        self.cum_weights: List[float] = []
        for rank in range(len(words)):
            total += 1.0 / (rank + 2.7)
            self.cum_weights.append(total)

    def sentence(self, rng: random.Random, n_words: int) -> str:
        words = rng.choices(self.words, cum_weights=self.cum_weights, k=n_words)
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))


def session_messages(
    gen: TextGen, rng: random.Random, speakers: Sequence[str], n: int, timestamp_ms: int
) -> List[Dict[str, Any]]:
    """`n` alternating messages of two speakers, "Name: text", all with one timestamp."""
    out = []
    for i in range(n):
        speaker = speakers[i % 2]
        out.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": "%s: %s" % (speaker, gen.sentence(rng, rng.randint(10, 30))),
                "timestamp": timestamp_ms,
            }
        )
    return out


def user_sessions(
    gen: TextGen, seed: int, user_id: str, n_messages: int, session_len: Tuple[int, int]
) -> Iterator[Tuple[str, List[Dict[str, Any]]]]:
    """A user's conversation, lazily, as (session_id, messages) with `n_messages` in all.

    Each user has its own Random seeded from (seed, user_id), so a user's text does
    not depend on which other users exist or in which order they are generated.
    """
    rng = random.Random("%d-%s" % (seed, user_id))
    speakers = rng.sample(NAMES, 2)
    timestamp = BASE_TIME_MS + rng.randrange(365) * DAY_MS
    done = 0
    index = 0
    while done < n_messages:
        n = min(rng.randint(*session_len), n_messages - done)
        timestamp += rng.randint(1, 14) * DAY_MS + rng.randrange(DAY_MS)
        yield "%s-s%04d" % (user_id, index), session_messages(gen, rng, speakers, n, timestamp)
        done += n
        index += 1


def add_bodies(user_id: str, sessions, max_per_add: int) -> Iterator[Dict[str, Any]]:
    """Add bodies for a user's sessions, each session cut into Adds of at most `max_per_add`."""
    for session_id, messages in sessions:
        for part, start in enumerate(range(0, len(messages), max_per_add)):
            yield {
                "request_id": "%s-r%d" % (session_id, part),
                "user_id": user_id,
                "session_id": session_id,
                "messages": messages[start : start + max_per_add],
            }


def target_adds(gen: TextGen, args) -> List[Dict[str, Any]]:
    """The target user's Adds: sessions of 15-25 messages, sent 20 at a time like the platform."""
    sessions = user_sessions(gen, args.seed, TARGET_USER, args.target_messages, (15, 25))
    return list(add_bodies(TARGET_USER, sessions, PLATFORM_MAX_ADD))


def other_user_id(i: int) -> str:
    return "other-%05d" % i


def other_adds_round_robin(gen: TextGen, args) -> Iterator[Dict[str, Any]]:
    """Other users' Adds, one session per user in turn, so every user's data is scattered.

    Their sessions are `--bulk-add-messages` long and sent whole (one Add each): larger
    Adds build faster, and the views a message gets do not depend on session length
    once it exceeds a segment.
    """
    n = args.bulk_add_messages
    streams = [
        add_bodies(other_user_id(i), user_sessions(gen, args.seed, other_user_id(i), args.messages_per_user, (n, n)), n)
        for i in range(args.other_users)
    ]
    while streams:
        alive = []
        for stream in streams:
            body = next(stream, None)
            if body is not None:
                alive.append(stream)
                yield body
        streams = alive


def interleave(others: Iterator[Dict[str, Any]], n_others: int, targets: List[Dict[str, Any]]):
    """All of `others`, with `targets` (in their order) spread evenly among them."""
    step = n_others / (len(targets) + 1) if targets else 0
    next_target = 0
    for i, body in enumerate(others):
        while next_target < len(targets) and i >= int(step * (next_target + 1)):
            yield targets[next_target]
            next_target += 1
        yield body
    for body in targets[next_target:]:
        yield body


def make_queries(gen: TextGen, adds: List[Dict[str, Any]], seed: int, count: int) -> List[str]:
    """`count` fixed queries from words of the target's messages: 2-6 words, some questions."""
    rng = random.Random("queries-%d" % seed)
    messages = [m["content"] for body in adds for m in body["messages"]]
    queries = []
    for _ in range(count):
        speaker, _, text = rng.choice(messages).partition(": ")
        words = [w.strip(".?!").lower() for w in text.split()]
        if rng.random() < 0.3:
            about = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))
            queries.append("What did %s say about %s?" % (speaker, about))
        else:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 6)))))
    return queries


def extra_adds(gen: TextGen, seed: int, user_id: str, prefix: str, count: int) -> List[Dict[str, Any]]:
    """`count` new 20-message Adds for `user_id`, each opening a new session."""
    sessions = user_sessions(gen, seed, prefix, count * PLATFORM_MAX_ADD, (PLATFORM_MAX_ADD, PLATFORM_MAX_ADD))
    bodies = list(add_bodies(user_id, sessions, PLATFORM_MAX_ADD))
    for body in bodies:
        body["request_id"] = "%s-%s" % (prefix, body["request_id"])
    return bodies
