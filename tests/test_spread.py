"""Spread: a list or count question's first places come from several parts of the conversation."""
import unittest

from flowmem.retrieval.query import analyze, asks_many
from flowmem.retrieval.spread import spread
from tests.helpers import MemoryTestCase, add_body

# One session talks about books at length; three others each name one book Dana read.
DENSE = ["Dana: I read so many books this year.", "Priya: Which books did you read?",
         "Dana: Books about the sea, books about cooking, books everywhere.",
         "Priya: You and your books!", "Dana: Books are my weekend.",
         "Priya: I should read more books.", "Dana: I can lend you books.",
         "Priya: Send me your favourite books.", "Dana: Books it is.",
         "Priya: Thanks for the books talk.", "Dana: Any time, books are fun.",
         "Priya: Lend me the books on Friday."]
SINGLES = [["Dana: I finished reading Moby Dick on the train.", "Priya: The whale one!"],
           ["Priya: How was the gardening guide?", "Dana: I read it twice, a lovely book."],
           ["Dana: I read Dune at last.", "Priya: Sand and spice."]]
QUESTION = "What books has Dana read?"


class AsksManyTest(unittest.TestCase):
    def test_list_and_count_questions_ask_for_several_facts(self):
        for question in ("How many times has Dana been to Lisbon?", "What books has Dana read?",
                         "Which cities did they visit?", "What outdoor activities does Dana enjoy?",
                         "Where has Dana camped?", "What are Dana's hobbies?", "Who's in Dana's band?",
                         "Who are her neighbours?", "Which of the flats had a garden?",
                         "What kinds of cheese does he stock?", "What has she fixed so far?",
                         "What went wrong over the past month?"):
            with self.subTest(question=question):
                self.assertTrue(asks_many(question))
                self.assertTrue(analyze(question).many)

    def test_single_fact_questions_do_not(self):
        for question in ("What does Dana like?", "What is her job?", "What did Dana buy?",
                         "Why did she move?", "When did Dana go to Lisbon?", "What was this about?",
                         "Who is her dentist?", "Who's her manager?"):
            with self.subTest(question=question):
                self.assertFalse(asks_many(question))


class SpreadOrderTest(unittest.TestCase):
    ORDER = [(1, 5), (1, 6), (1, 4), (1, 7), (2, 3), (1, 12), (3, 1), (2, 4)]
    SCORES = {key: 10.0 - i for i, key in enumerate(ORDER)}

    def test_past_the_kept_places_a_neighbour_of_a_placed_message_waits(self):
        order, _ = spread(self.ORDER, self.SCORES, keep=1, slots=5, gap=1)
        self.assertEqual(order, [(1, 5), (1, 7), (2, 3), (1, 12), (3, 1), (1, 6), (1, 4), (2, 4)])

    def test_the_kept_places_stay_as_fused(self):
        order, _ = spread(self.ORDER, self.SCORES, keep=3, slots=5, gap=1)
        self.assertEqual(order[:5], [(1, 5), (1, 6), (1, 4), (2, 3), (1, 12)])

    def test_scores_never_rise_down_the_spread_order(self):
        order, scores = spread(self.ORDER, self.SCORES, keep=1, slots=5, gap=1)
        self.assertEqual([scores[k] for k in order], sorted((scores[k] for k in order), reverse=True))
        self.assertEqual(scores[(1, 5)], 10.0)

    def test_gap_zero_leaves_the_order_as_fused(self):
        self.assertEqual(spread(self.ORDER, self.SCORES, keep=1, slots=5, gap=0)[0], self.ORDER)


class SpreadInSearchTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "dense", DENSE))
        for i, session in enumerate(SINGLES):
            self.memory.add(add_body("u1", "single%d" % i, session))

    def first_ten(self, memory=None):
        return [item["content"] for item in self.search(QUESTION, memory=memory)]

    def test_a_list_questions_first_ten_cover_facts_from_several_sessions(self):
        # Each single session names one book read, in its question or its answer ("How was the
        # gardening guide?" / "I read it twice"): either message shows the session's fact.
        shown = "\n".join(self.first_ten())
        missing = [session for session in SINGLES if not any(m in shown for m in session)]
        self.assertEqual(missing, [])

    def test_without_spreading_one_session_fills_the_first_ten(self):
        shown = "\n".join(self.first_ten(self.open_memory(spread_gap=0)))
        self.assertIn("Moby Dick", "\n".join(self.first_ten()))
        self.assertNotIn("Moby Dick", shown)

    def test_a_single_fact_question_keeps_its_fused_order(self):
        question = "Did Dana read on the train?"
        spread_off = self.open_memory(spread_gap=0)
        self.assertEqual(self.search(question), self.search(question, memory=spread_off))


if __name__ == "__main__":
    unittest.main()
