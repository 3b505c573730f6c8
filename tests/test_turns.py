"""Conversations as people type them: turns (runs of one speaker's messages), replies and neighbours by turn.

A burst of short messages from one speaker is one turn (storage/views.py turn_spans()): the
reply to a question is the other speaker's next turn however many messages either spans,
and a question typed without its question mark still asks (retrieval/signals.py).
"""
import unittest

from flowmem.retrieval import signals
from flowmem.retrieval.pool import Message, Pool, _asks
from flowmem.retrieval.spread import TURN_SLOTS, thin_turns
from flowmem.storage.views import turn_spans
from tests.helpers import T0, MemoryTestCase

MINUTE_MS = 60_000


def chat_body(user, session, lines, start=T0, gap_ms=20_000, request_id=None):
    """An Add of "Name: text" lines, each with its own time `gap_ms` after the last, role by speaker."""
    names = []
    messages = []
    for i, line in enumerate(lines):
        name = line.split(":", 1)[0]
        if name not in names:
            names.append(name)
        messages.append({"role": "user" if names.index(name) == 0 else "assistant", "content": line,
                         "timestamp": start + i * gap_ms})
    return {"request_id": request_id or "%s/%s" % (user, session), "user_id": user, "session_id": session,
            "messages": messages}


# Ines asks in the middle of a burst and goes on; Maya answers over three messages, the place in the second.
BURST = [
    "Maya: hiii",
    "Maya: finally finished that report",
    "Ines: omg hi",
    "Ines: quick q",
    "Ines: which neighbourhood is the new flat in",
    "Ines: sorry i've been so bad at replying",
    "Ines: tell me everything",
    "Maya: hold on",
    "Maya: it's in riverside",
    "Maya: ten minutes from work",
    "Ines: so jealous",
]
OTHER = [
    "Maya: the flat viewing went badly",
    "Ines: which flat was that?",
    "Maya: the one near the station, the new one on the corner",
    "Ines: shame",
]
QUESTION = "Which neighbourhood is Maya's new flat in?"


class TurnSpansTest(unittest.TestCase):
    def test_a_run_of_one_speakers_messages_is_one_turn(self):
        self.assertEqual(turn_spans(["a", "a", "b", "b", "b", "a"], [None] * 6, 600_000, 8),
                         [(1, 2), (3, 5), (6, 6)])

    def test_alternating_speakers_make_a_turn_of_every_message(self):
        self.assertEqual(turn_spans(["a", "b", "a", "b"], [T0] * 4, 600_000, 8), [(1, 1), (2, 2), (3, 3), (4, 4)])

    def test_a_long_pause_starts_a_new_turn_of_the_same_speaker(self):
        times = [T0, T0 + MINUTE_MS, T0 + 30 * MINUTE_MS]
        self.assertEqual(turn_spans(["a", "a", "a"], times, 600_000, 8), [(1, 2), (3, 3)])

    def test_a_pause_is_only_measured_between_two_known_times(self):
        self.assertEqual(turn_spans(["a", "a", "a"], [T0, None, T0 + 60 * MINUTE_MS], 600_000, 8), [(1, 3)])

    def test_one_speakers_notes_are_cut_into_turns_of_at_most_the_bound(self):
        self.assertEqual(turn_spans(["a"] * 7, [None] * 7, 600_000, 3), [(1, 3), (4, 6), (7, 7)])


class AsksTest(unittest.TestCase):
    def test_a_question_typed_without_its_mark_asks(self):
        self.assertTrue(_asks("Ines: which neighbourhood is the new flat in"))
        self.assertTrue(_asks("Ines: did u book it"))

    def test_an_exclamation_or_a_statement_does_not_ask(self):
        self.assertFalse(_asks("Ines: what a day"))
        self.assertFalse(_asks("Ines: how nice"))
        self.assertFalse(_asks("Ines: i do love it"))


class ReplyByTurnTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(chat_body("u1", "burst", BURST))
        self.memory.add(chat_body("u1", "other", OTHER, start=T0 + 3 * 86_400_000))

    def item(self, content, **settings):
        memory = self.open_memory(**settings) if settings else self.memory
        if settings:
            memory.add(chat_body("u1", "burst", BURST))
            memory.add(chat_body("u1", "other", OTHER, start=T0 + 3 * 86_400_000))
        items = self.search(QUESTION, top_k=20, memory=memory)
        return next(i for i in items if i["content"] == content), [i["content"] for i in items]

    def test_the_answer_after_the_askers_own_follow_ups_is_a_reply(self):
        item, _ = self.item("Maya: it's in riverside")
        self.assertIn(signals.REPLY, item["signals"])

    def test_every_message_of_the_answer_turn_is_a_reply(self):
        for content in ("Maya: hold on", "Maya: ten minutes from work"):
            self.assertIn(signals.REPLY, self.item(content)[0]["signals"])

    def test_the_answer_turn_comes_first_and_the_answer_within_the_first_ten(self):
        _, contents = self.item("Maya: it's in riverside")
        self.assertEqual(contents[0], "Maya: hold on")
        # The asker's follow-ups match nothing of the question and wait (spread.thin_turns()).
        self.assertIn("Maya: it's in riverside", contents[:10])
        self.assertNotIn("Ines: tell me everything", contents[:10])

    def test_without_the_reply_signal_the_question_itself_comes_first(self):
        _, contents = self.item("Maya: it's in riverside", weight_reply=0.0)
        self.assertEqual(contents[0], "Ines: which neighbourhood is the new flat in")

    def test_a_reply_outside_its_questions_windows_is_scored_in_their_context(self):
        item, _ = self.item("Maya: it's in riverside")
        self.assertIn("window", item["signals"])  # its own windows hold none of the question's words

    def test_the_askers_own_follow_up_is_no_reply(self):
        item, _ = self.item("Ines: tell me everything")
        self.assertNotIn(signals.REPLY, item["signals"])

    def test_the_first_message_after_the_askers_burst_is_a_neighbour(self):
        item, _ = self.item("Maya: hold on")
        self.assertIn(signals.ADJACENCY, item["signals"])


if __name__ == "__main__":
    unittest.main()


def message(key, turn):
    return Message(key, "s", "t", ("ines",), None, (), (), "Ines: x", turn)


def pool_of(turns, hits):
    """A pool of the messages of `turns` ((first, last) in session 1), `hits` those matching a question word."""
    messages = {(1, p): message((1, p), turn) for turn in turns for p in range(turn[0], turn[1] + 1)}
    bursts = any(last > first for first, last in turns)
    return Pool(messages, {}, {}, [], {}, {}, [], {k: frozenset(["teal"]) for k in hits}, {}, {}, {}, bursts=bursts)


class ThinTurnsTest(unittest.TestCase):
    def test_a_placed_turns_messages_that_match_nothing_wait_past_the_first_places(self):
        turns = [(1, 4)] + [(p, p) for p in range(5, 20)]
        pool = pool_of(turns, [(1, 1)] + [(1, p) for p in range(5, 20)])
        order = [(1, 1), (1, 2), (1, 3), (1, 5), (1, 4)] + [(1, p) for p in range(6, 20)]
        new, scores = thin_turns(order, {k: 100.0 - i for i, k in enumerate(order)}, pool)
        self.assertEqual(new[:TURN_SLOTS], [(1, 1), (1, 5)] + [(1, p) for p in range(6, 14)])
        self.assertEqual(new[TURN_SLOTS:TURN_SLOTS + 3], [(1, 2), (1, 3), (1, 4)])
        self.assertEqual(sorted(new), sorted(order))
        self.assertTrue(all(scores[a] >= scores[b] for a, b in zip(new, new[1:])))

    def test_a_turn_placed_by_a_message_that_matches_nothing_keeps_its_others(self):
        # The reply to a question (a turn lifted by the reply signal) matches nothing of the question's words.
        pool = pool_of([(1, 3), (4, 4)], [(1, 4)])
        order = [(1, 4), (1, 1), (1, 2), (1, 3)]
        self.assertEqual(thin_turns(order, {k: 1.0 for k in order}, pool)[0], order)

    def test_where_every_turn_is_one_message_nothing_moves(self):
        pool = pool_of([(p, p) for p in range(1, 6)], [(1, 1)])
        order = [(1, p) for p in range(1, 6)]
        self.assertEqual(thin_turns(order, {k: 1.0 for k in order}, pool)[0], order)


class TurnsUnderAFilterTest(MemoryTestCase):
    def test_a_turn_brought_into_the_pool_keeps_to_the_search_filter(self):
        # Maya speaks first (role user), Ines second (assistant): a role filter keeps Ines's messages only,
        # however much of Maya's answer turn the reply would bring.
        self.memory.add(chat_body("u1", "burst", BURST))
        items = self.memory.search({"query": QUESTION, "user_id": "u1", "top_k": 20,
                                    "filters": {"role": "assistant"}})["data"]
        self.assertTrue(items)
        self.assertTrue(all(line.startswith("Ines: ") for i in items for line in i["content"].split("\n")),
                        [i["content"] for i in items])
