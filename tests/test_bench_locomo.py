"""The heavy user's corpus (tools/benchkit/heavy_user.py) and bench_locomo's bare baseline query."""
import os
import unittest

from tests.server import ROOT
from tools import bench_locomo
from tools.benchkit import heavy_user
from tools.evalkit import dataset as datasets

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")


class CorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = datasets.load_locomo(SAMPLE)
        cls.once = sum(len(s.turns) for c in cls.data.conversations for s in c.sessions)

    def messages(self, n):
        return [m for body in heavy_user.corpus(self.data, n) for m in body["messages"]]

    def test_the_user_holds_exactly_the_messages_asked_for_even_past_the_end_of_the_file(self):
        for n in (1, self.once - 1, self.once, 2 * self.once + 3):
            self.assertEqual(len(self.messages(n)), n)

    def test_every_add_is_one_users_and_at_most_the_platforms_twenty_messages(self):
        bodies = list(heavy_user.corpus(self.data, 3 * self.once))
        self.assertEqual({b["user_id"] for b in bodies}, {heavy_user.USER})
        self.assertLessEqual(max(len(b["messages"]) for b in bodies), 20)
        self.assertEqual(len({b["request_id"] for b in bodies}), len(bodies))

    def test_a_copy_keeps_the_text_in_new_sessions_dated_a_year_later(self):
        first, second = self.messages(self.once), self.messages(2 * self.once)[self.once:]
        self.assertEqual([m["content"] for m in first], [m["content"] for m in second])
        dated = [(a, b) for a, b in zip(first, second) if "timestamp" in a]
        self.assertTrue(dated)
        self.assertTrue(all(b["timestamp"] - a["timestamp"] == datasets.YEAR_MS for a, b in dated))
        sessions = [{b["session_id"] for b in heavy_user.corpus(self.data, self.once)}]
        later = {b["session_id"] for b in heavy_user.corpus(self.data, 2 * self.once)} - sessions[0]
        self.assertEqual(len(later), len(sessions[0]))

    def test_the_questions_drawn_are_the_same_for_the_same_seed(self):
        a = heavy_user.questions(self.data, 5, 7)
        self.assertEqual(a, heavy_user.questions(self.data, 5, 7))
        self.assertEqual(len(set(a)), 5)


class BareQueryTest(unittest.TestCase):
    def test_the_bare_query_ors_the_questions_words_less_its_stopwords(self):
        self.assertEqual(bench_locomo.bare_expression("When did Caroline go to the LGBTQ support group?"),
                         '"caroline" OR "go" OR "lgbtq" OR "support" OR "group"')

    def test_a_question_of_stopwords_alone_has_no_bare_query(self):
        self.assertEqual(bench_locomo.bare_expression("What was it?"), "")


if __name__ == "__main__":
    unittest.main()
