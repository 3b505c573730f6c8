"""The grade of a search's evidence (retrieval/strength.py): strong where the memory states what is
asked, weak or none where it never says it, none where no word matched; the items come back either way.
"""
import unittest

from flowmem.retrieval import strength
from tests.helpers import T0, MemoryTestCase, add_body

LIFE = ["Dana: I adopted a beagle named Biscuit last spring.", "Priya: aww what a cute name!",
        "Dana: I work as a nurse at St Mary's, night shifts mostly.", "Priya: that sounds exhausting",
        "Dana: my sister Jo lives in Leeds with her two kids.", "Priya: do you visit often?",
        "Dana: every other weekend, the train takes two hours."]


class EvidenceGradeTest(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.add(add_body("u", "s1", LIFE, timestamp=T0))

    def grade(self, question: str) -> str:
        answer = self.memory.search_body({"user_id": "u", "query": question, "top_k": 5})
        self.assertTrue(answer["data"], "the items still come back")
        return answer["evidence"]

    def test_a_question_the_memory_answers_in_its_words_is_strong(self):
        for question in ("Where does Dana's sister live?", "Where does Dana work?"):
            with self.subTest(question=question):
                self.assertEqual(self.grade(question), strength.STRONG)

    def test_a_question_about_what_the_memory_never_says_is_weak_or_none(self):
        for question in ("What is Dana's blood type?", "Does Dana play the piano?", "What car does Dana drive?"):
            with self.subTest(question=question):
                self.assertIn(self.grade(question), (strength.WEAK, strength.NONE))

    def test_a_question_no_word_of_which_the_memory_holds_is_none(self):
        self.assertEqual(self.grade("zxqv blorp"), strength.NONE)


class GradeTest(unittest.TestCase):
    def test_the_grade_falls_with_the_score_at_the_two_thresholds(self):
        model = strength.Model((1.0,) + (0.0,) * (len(strength.FEATURES) - 1), 0.0, 0.3, 0.6)
        below_none, between, above = strength.Model(model.weights, -2.0, 0.3, 0.6), model, strength.Model(
            model.weights, 2.0, 0.3, 0.6)
        vector = (0.0,) * len(strength.FEATURES)
        self.assertEqual(strength.grade(vector, below_none), strength.NONE)  # score 0.12
        self.assertEqual(strength.grade(vector, between), strength.WEAK)  # score 0.5
        self.assertEqual(strength.grade(vector, above), strength.STRONG)  # score 0.88
        self.assertEqual(strength.grade(None, above), strength.NONE)

    def test_the_shipped_model_names_every_feature_and_orders_its_thresholds(self):
        model = strength.shipped()
        self.assertEqual(len(model.weights), len(strength.FEATURES))
        self.assertTrue(any(model.weights))
        self.assertLessEqual(model.none_below, model.weak_below)
