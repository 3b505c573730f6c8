"""The names signal (retrieval/signals.py names): the names a question mentions, speakers and dates aside, by rarity."""
import unittest

from flowmem.memory import make_ranking
from flowmem.retrieval import pipeline
from flowmem.retrieval.query import analyze
from tests.helpers import MemoryTestCase, add_body

SESSION = [
    "Melanie: We went to Oslo with the kids, then Bergen.",
    "Caroline: Oslo in winter? Brave. I was in Oslo for work.",
    "Melanie: Oslo was cold, Bergen was rainy.",
    "Caroline: I painted the harbour after I got back from Oslo.",
    "Melanie: I painted too, mostly the kids.",
    "Caroline: Thanks, Mel! I love what you painted.",
]


class QuestionNamesTest(unittest.TestCase):
    def test_month_and_weekday_names_are_dates_not_names(self):
        self.assertEqual(analyze("What did Ana paint in July, on a Monday in Oslo?").names, ["ana", "oslo"])


class NamesSignalTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", SESSION))

    def names_scores(self, question: str) -> dict:
        ranking = make_ranking(self.memory.config)
        with self.memory.store.reading() as reader:
            prepared = pipeline.prepare(reader, "u1", question, [], ranking)
        return prepared.signal_scores["names"]

    def test_a_speaker_or_the_short_form_of_a_speaker_s_name_is_not_a_name_to_look_for(self):
        self.assertEqual(self.names_scores("What did Mel paint?"), {})
        self.assertEqual(self.names_scores("What did Melanie paint?"), {})

    def test_a_rarer_name_weighs_more_than_a_common_one(self):
        # Messages by position from 1: Bergen (said twice) is in 1 and 3, Oslo (said in four messages) in 1 to 4.
        scores = self.names_scores("Did Melanie like Oslo or Bergen?")
        self.assertEqual(scores[(1, 1)], scores[(1, 3)])
        self.assertGreater(scores[(1, 1)], 100 * scores[(1, 2)])
        self.assertNotIn((1, 5), scores)


if __name__ == "__main__":
    unittest.main()
