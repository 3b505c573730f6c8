"""tools/learn_rerank.py: the ascent on prepared cases, and its leave-one-life-out figures."""
from __future__ import annotations

import unittest
from unittest import mock

from flowmem.retrieval import rerank
from tools import learn_rerank

N = len(rerank.FEATURES)
SHORT = rerank.FEATURES.index("short")


def case(life: str, gold_short: bool) -> learn_rerank.Case:
    """Two candidates: the fused first, and a short one; the evidence is the short one when `gold_short`."""
    first = (1.0,) + (0.0,) * (N - 1)
    short = tuple(0.5 if i == 0 else (1.0 if i == SHORT else 0.0) for i in range(N))
    return learn_rerank.Case("d", life, [first, short], [1 if gold_short else 0], None)


class LivesOutTest(unittest.TestCase):
    def test_each_question_is_ranked_by_the_weights_learned_without_its_life(self):
        # Life "a" is won by promoting short messages, life "b" by keeping them down: each fold learns the other's.
        groups = {"d": [case("a", True)] * 3 + [case("b", False)] * 3}
        with mock.patch.object(learn_rerank, "TOLERANCE", 1.0):  # no floor: the folds may move either way
            out = learn_rerank.cross_validate(groups, rounds=2, folds="lives")
        self.assertEqual(out["life a"]["learned"]["hit@1"], 0.0)  # learned on b: short ones stay down
        self.assertEqual(out["life b"]["learned"]["hit@1"], 0.0)  # learned on a: short ones go up
        self.assertEqual(out["lives out d"]["learned"]["hit@1"], 0.0)  # what neither fold saw, it got wrong
        self.assertEqual(out["lives out d"]["fused"]["hit@1"], 0.5)
        self.assertEqual(learn_rerank.summary(groups["d"], learn_rerank.ascend(groups, 2))["hit@1"], 0.5)

    def test_a_dataset_with_questions_of_no_life_gets_no_lives_out_figure(self):
        groups = {"d": [case("a", True), case("b", False)], "s": [case("", True)]}
        out = learn_rerank.cross_validate(groups, rounds=1, folds="lives")
        self.assertIn("lives out d", out)
        self.assertNotIn("lives out s", out)


if __name__ == "__main__":
    unittest.main()
