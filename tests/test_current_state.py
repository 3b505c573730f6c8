"""Current-state ranking without cue words (retrieval/current_state.py).

A fact is said, then months later its new value is said in everyday words that announce
no change. A question about the present gets the newest statement first with the older in
sight and marked as replaced; a question about the past gets the older first; a question
about a past event, a list question, or values that coexist move nothing.
"""
import unittest
from typing import Dict, List

from flowmem.retrieval.current_state import PAST, PRESENT, tense
from flowmem.retrieval.query import analyze
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body

MONTH_MS = 30 * DAY_MS


class TenseTest(unittest.TestCase):
    def test_questions_about_the_present_are_present_without_a_word_of_time(self):
        for question in ("Where does Jo live?", "is she still vegan?", "Sam's rent?", "who does jas work for",
                         "is Jo still at the bakery?", "what car has he got these days"):
            with self.subTest(question=question):
                self.assertEqual(tense(analyze(question)), PRESENT)

    def test_questions_about_an_earlier_state_are_past(self):
        for question in ("Where did Jo live before?", "what car did he have originally", "what was the old quiz venue",
                         "who was Jo seeing before Priya", "where did she use to work"):
            with self.subTest(question=question):
                self.assertEqual(tense(analyze(question)), PAST)

    def test_past_events_lists_static_facts_and_dated_questions_are_neither(self):
        for question in ("When did they adopt the cat?", "did she pass her driving test?",
                         "What does her necklace mean?", "What activity did she use to do with her dad?",
                         "What was her favourite book?",
                         "What pets does Jo have?", "How many times did she move?"):
            with self.subTest(question=question):
                self.assertEqual(tense(analyze(question)), "")


class CurrentStateSearchTest(MemoryTestCase):
    def say(self, user: str, sessions: List[List[str]]) -> None:
        """Each list of contents a session of `user`, a month after the one before."""
        for i, contents in enumerate(sessions):
            self.memory.add(add_body(user, "s%d" % i, contents, timestamp=T0 + i * MONTH_MS))

    def items(self, user: str, question: str) -> Dict[str, Dict]:
        return {item["content"]: dict(item, rank=i + 1) for i, item in enumerate(self.search(question, user=user))}

    def test_a_move_said_in_passing_ranks_first_for_where_she_lives_and_last_for_where_she_lived(self):
        old, new = "Ana: My flat in Leeds is tiny but cheap.", "Ana: Loving my flat in York, the walls are so thick."
        self.say("u", [[old, "Ben: ha, sounds cosy"], ["Ben: how was the weekend?", "Ana: lazy, mostly tv"],
                       [new, "Ben: nice!"]])
        present = self.items("u", "Where is Ana's flat?")
        self.assertLess(present[new]["rank"], present[old]["rank"])
        self.assertLessEqual(present[old]["rank"], 20)
        self.assertEqual(present[old]["signals"].get("replaced_by"), present[new]["id"])
        self.assertNotIn("replaced_by", present[new]["signals"])
        past = self.items("u", "Where was Ana's flat before?")
        self.assertLess(past[old]["rank"], past[new]["rank"])
        self.assertNotIn("replaced_by", past[old]["signals"])

    def test_a_raise_said_without_a_cue_puts_the_new_amount_first(self):
        old, new = "Ana: the job pays 31k which is fine", "Ana: so the job pays 36k from march, not bad at all"
        self.say("p", [[old, "Ben: not bad"], [new, "Ben: get in"]])
        present = self.items("p", "how much does Ana's job pay?")
        self.assertLess(present[new]["rank"], present[old]["rank"])

    def test_a_question_about_a_past_event_and_a_list_question_move_nothing(self):
        first, second = "Ana: we adopted a cat called Miso", "Ana: and we adopted a cat called Pip, Miso loves him"
        self.say("e", [[first, "Ben: cute"], [second, "Ben: two cats!"]])
        for question in ("When did Ana adopt a cat?", "What cats has Ana adopted?"):
            with self.subTest(question=question):
                with_it = [i["content"] for i in self.search(question, user="e")]
                self.assertFalse(any("replaced_by" in i["signals"] for i in self.search(question, user="e")))
                self.memory.close()
                self.memory = self.open_memory(current_state_window=0)
                without = [i["content"] for i in self.search(question, user="e")]
                self.assertEqual(with_it, without)
                self.memory.close()
                self.memory = self.open_memory()
