import unittest

from flowmem.retrieval.fusion import competition_ranks, fuse


class CompetitionRanksTest(unittest.TestCase):
    def test_best_is_one_and_ties_share_a_rank(self):
        self.assertEqual(competition_ranks({"a": 3.0, "b": 5.0, "c": 3.0, "d": 1.0}),
                         {"b": 1, "a": 2, "c": 2, "d": 4})

    def test_items_without_a_positive_score_are_not_ranked(self):
        self.assertEqual(competition_ranks({"a": 0.0, "b": -1.0, "c": 2.0}), {"c": 1})


class FuseTest(unittest.TestCase):
    SIGNAL_RANKS = {"bm25": {"a": 1, "b": 2, "c": 3}, "window": {"b": 1, "c": 2}, "speaker": {"c": 1}}

    def test_each_signal_adds_its_weight_over_k_plus_its_rank(self):
        fused = fuse(self.SIGNAL_RANKS, {"bm25": 1.0, "window": 0.5, "speaker": 0.25}, k=60)
        self.assertAlmostEqual(fused["a"], 1.0 / 61)
        self.assertAlmostEqual(fused["b"], 1.0 / 62 + 0.5 / 61)
        self.assertAlmostEqual(fused["c"], 1.0 / 63 + 0.5 / 62 + 0.25 / 61)

    def test_agreement_of_signals_beats_one_strong_signal(self):
        fused = fuse({"x": {"lone": 1, "both": 2}, "y": {"both": 2}}, {"x": 1.0, "y": 1.0}, k=60)
        self.assertGreater(fused["both"], fused["lone"])

    def test_a_signal_without_weight_adds_nothing(self):
        fused = fuse(self.SIGNAL_RANKS, {"bm25": 1.0}, k=60)
        self.assertEqual(set(fused), {"a", "b", "c"})
        self.assertEqual(fused["c"], 1.0 / 63)

    def test_adding_to_a_base_equals_fusing_everything(self):
        weights = {"bm25": 1.0, "window": 0.5, "speaker": 0.25}
        whole = fuse(self.SIGNAL_RANKS, weights, k=60)
        base = fuse({"bm25": self.SIGNAL_RANKS["bm25"]}, weights, k=60)
        stepwise = fuse({n: r for n, r in self.SIGNAL_RANKS.items() if n != "bm25"}, weights, k=60, base=base)
        self.assertEqual(set(stepwise), set(whole))
        for key in whole:
            self.assertAlmostEqual(stepwise[key], whole[key], places=15)
        self.assertEqual(base, fuse({"bm25": self.SIGNAL_RANKS["bm25"]}, weights, k=60))  # the base is not changed

    def test_a_change_of_weight_over_a_base_may_lower_scores(self):
        base = fuse(self.SIGNAL_RANKS, {"bm25": 1.0, "speaker": 0.5}, k=60)
        lowered = fuse({"speaker": self.SIGNAL_RANKS["speaker"]}, {"speaker": -0.25}, k=60, base=base)
        self.assertAlmostEqual(lowered["c"], fuse(self.SIGNAL_RANKS, {"bm25": 1.0, "speaker": 0.25}, k=60)["c"],
                               places=15)


if __name__ == "__main__":
    unittest.main()
