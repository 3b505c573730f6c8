"""Answer options: a message naming one of them outranks messages that share only the question's generic words."""
import unittest

from flowmem.memory import make_ranking
from flowmem.retrieval import pipeline, signals
from flowmem.retrieval.query import analyze
from tests.helpers import MemoryTestCase, add_body

GENERIC = [
    ["Dana: I like my weekends slow.", "Priya: Weekends are for doing things you like.",
     "Dana: I like doing nothing much on weekends."],
    ["Priya: What do you like to do when it rains?", "Dana: I like to read, mostly.",
     "Priya: I like that too."],
    ["Dana: My sister likes weekends away.", "Priya: Do you like going with her?",
     "Dana: Sometimes I do, it depends on the weekend."],
]
NAMED = ["Dana: Saturday again at the pottery wheel, my hands are full of clay.",
         "Priya: Send me a photo of the bowl!"]
QUESTION = "What does Dana like to do on weekends?"
OPTIONS = ["surfing", "pottery", "chess"]


class OptionsTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        for i, session in enumerate(GENERIC):
            self.memory.add(add_body("u1", "generic%d" % i, session))
        self.memory.add(add_body("u1", "named", NAMED))

    def first(self, options, memory=None):
        body = {"query": QUESTION, "user_id": "u1", "top_k": 10, "options": options}
        return (memory or self.memory).search(body)["data"][0]["content"]

    def test_an_option_naming_message_beats_messages_sharing_only_generic_question_words(self):
        self.assertEqual(self.first(OPTIONS), NAMED[0])

    def test_without_options_the_generic_messages_come_first(self):
        self.assertNotEqual(self.first([]), NAMED[0])

    def test_without_the_boost_for_generic_questions_the_option_naming_message_is_not_first(self):
        self.assertNotEqual(self.first(OPTIONS, self.open_memory(options_boost_max=1.0)), NAMED[0])

    def test_a_question_as_specific_as_its_options_gets_no_boost(self):
        ranking = make_ranking(self.memory.config)
        with self.memory.store.reading() as reader:
            generic = pipeline.prepare(reader, "u1", QUESTION, OPTIONS, ranking)
            specific = pipeline.prepare(reader, "u1", "Was the clay bowl finished?", OPTIONS, ranking)
        self.assertEqual(signals.options_boost(generic.query, generic.pool, 10.0), 10.0)
        self.assertEqual(signals.options_boost(specific.query, specific.pool, 10.0), 1.0)

    def test_a_word_an_option_shares_with_the_question_does_not_count_for_the_option(self):
        self.assertEqual(analyze(QUESTION, ["weekend pottery", "weekend chess"]).options, [["potteri"], ["chess"]])

    def test_an_option_made_only_of_question_words_keeps_them(self):
        self.assertEqual(analyze(QUESTION, ["weekends"]).options, [["weekend"]])


if __name__ == "__main__":
    unittest.main()
