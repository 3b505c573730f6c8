"""The learned rerank of the head: what each candidate's evidence says, and what reordering keeps."""
import unittest

from flowmem.retrieval import rerank
from flowmem.retrieval.pool import Message, Pool
from flowmem.retrieval.query import analyze
from flowmem.retrieval.ranking import Ranking
from tests.helpers import MemoryTestCase, add_body


def message(key, content, dated=False):
    return Message(key, "s", "t", (), None, (), ((1, 1),) if dated else (), content)


def pool(contents, hits, meaning=None, idf=None):
    messages = {(1, i): message((1, i), c) for i, c in enumerate(contents, 1)}
    return Pool(messages, {}, {}, [], idf or {}, {}, sorted(hits), hits, {}, {}, {}, meaning=meaning or {})


class EvidenceTest(unittest.TestCase):
    def features(self, question, contents, hits, meaning=None, idf=None):
        query = analyze(question)
        p = pool(contents, {(1, i): frozenset(h) for i, h in hits.items()}, meaning, idf)
        order = sorted(p.messages)
        keys = rerank.candidates(order, p, 30, 10)
        fused = {k: 1.0 / i for i, k in enumerate(order, 1)}
        evidence = rerank.features(query, p, order, fused, keys, tuple(query.terms))
        return {key[1]: dict(zip(rerank.FEATURES, evidence[key])) for key in keys}

    def test_a_greeting_that_holds_only_the_name_asked_about_says_so(self):
        got = self.features("What sports does Rowan play?", ["Rowan: hey Rowan!! long time", "Rowan: I row on sundays"],
                            {1: ["rowan"], 2: ["rowan", "play"]}, idf={"rowan": 1.0, "sport": 3.0, "play": 2.0})
        self.assertEqual(got[1]["names_only"], 1.0)
        self.assertEqual(got[2]["names_only"], 0.0)

    def test_an_amount_asked_for_is_held_by_the_message_with_a_number_only(self):
        got = self.features("How much is the rent?", ["Ana: the flat is 950 a month", "Ana: the flat is lovely"],
                            {1: ["flat"], 2: ["flat"]})
        self.assertEqual(got[1]["wants"], 1.0)
        self.assertEqual(got[2]["wants"], -1.0)

    def test_a_question_that_asks_for_nothing_in_particular_leaves_wants_at_zero(self):
        got = self.features("What does Ana think of the flat?", ["Ana: the flat is 950 a month"], {1: ["flat"]})
        self.assertEqual(got[1]["wants"], 0.0)

    def test_the_nearest_in_meaning_join_the_candidates_beyond_the_depth(self):
        p = pool(["a", "b", "c", "d"], {(1, 1): frozenset(["x"])}, meaning={(1, 4): 0.9, (1, 3): 0.1})
        self.assertEqual(rerank.candidates([(1, 1), (1, 2)], p, 1, 1), [(1, 1), (1, 4)])


class TiesTest(unittest.TestCase):
    def test_messages_of_equal_fused_score_get_the_same_fused_evidence(self):
        order = [(1, 1), (1, 2), (1, 3), (1, 4)]
        scores = {(1, 1): 0.5, (1, 2): 0.3, (1, 3): 0.3, (1, 4): 0.1}
        self.assertEqual(rerank.competition_places(order, scores, order), {(1, 1): 0, (1, 2): 1, (1, 3): 1, (1, 4): 3})


class ReorderTest(unittest.TestCase):
    def test_scores_never_rise_down_the_reordered_list(self):
        order = [(1, i) for i in range(1, 8)]
        scores = {key: 1.0 / i for i, key in enumerate(order, 1)}
        keys = [(1, 1), (1, 2), (1, 6)]  # one from deep in the order
        evidence = {(1, 1): (0.0,), (1, 2): (1.0,), (1, 6): (2.0,)}
        out, new = rerank.reordered(order, scores, keys, evidence, (1.0,))
        self.assertEqual(out[:3], [(1, 6), (1, 2), (1, 1)])
        self.assertEqual(sorted(out), sorted(order))
        values = [new[k] for k in out]
        self.assertEqual(values, sorted(values, reverse=True))

    def test_equal_learned_scores_keep_the_fused_order(self):
        order = [(1, 3), (1, 1), (1, 2)]
        evidence = {k: (1.0,) for k in order}
        out, _ = rerank.reordered(order, {k: 1.0 for k in order}, order, evidence, (1.0,))
        self.assertEqual(out, order)

    def test_weights_naming_no_feature_are_refused_by_name(self):
        with self.assertRaises(ValueError) as caught:
            Ranking(rerank_weights="fused=1,loudness=2").rerank_vector()
        self.assertIn("loudness", str(caught.exception))

    def test_the_shipped_weights_name_only_features(self):
        self.assertEqual(set(rerank.weights()) - set(rerank.FEATURES), set())


class RerankSearchTest(MemoryTestCase):
    def test_a_depth_of_zero_leaves_the_fused_order_as_it_was(self):
        self.memory.add(add_body("u1", "s1", ["Rowan: hey Rowan!!", "Kit: I row on sundays", "Rowan: I keep bees",
                                              "Kit: nice", "Rowan: the hive is 40 years old"]))
        on = self.search("What does Rowan keep?")
        off = self.open_memory(rerank_depth=0).search({"query": "What does Rowan keep?", "user_id": "u1",
                                                       "top_k": 10})["data"]
        self.assertEqual(sorted(i["id"] for i in on), sorted(i["id"] for i in off))
        self.assertTrue(on and off)


if __name__ == "__main__":
    unittest.main()
