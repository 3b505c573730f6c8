"""A ranking regression fails `make test`: floors on the committed synthetic suite.

Each floor sits just below what `python -m tools.eval synthetic` measured when it was
set (README, Results); raise them when retrieval improves, never lower them to make
a change pass. The overall floors hold for the original users (numbered below
synthetic.HARD_FIRST); the harder groups appended after them (tools/evalkit/
synthetic_hard.py) have floors of their own, set just under what the code scored when
they were added (`python -m tools.eval synthetic`, 2026-11-30), to be raised as they improve.
"""
import os
import tempfile
import unittest

from flowmem.config import load
from tests.server import ROOT
from tools.evalkit import dataset, metrics, runner
from tools.evalkit.replay import InProcessClient
from tools.evalkit.synthetic import HARD_FIRST

FIXTURE = os.path.join(ROOT, "fixtures", "synthetic-small.json")
FLOORS = {"hit@1": 0.81, "hit@10": 0.92, "recall@100": 0.97, "mrr": 0.85}  # measured 0.828, 0.931, 0.985, 0.869
UPDATES_FLOOR = 0.90  # knowledge updates: new value first and old value still in the first 20 messages
TIMES_RIGHT_FLOOR, TIMES_WRONG_CEILING = 0.95, 0.01
# The harder groups, measured: paraphrase (14 original + 20 new) hit@1 0.088 hit@10 0.294; typo 0.438 0.562;
# period 0.333 0.833 (hit@10 is easy there: the evidence has only two same-worded distractors); update-cue
# 0.375 0.875, and the new state ranked before the old one in 0.688 of them. With the meaning channel (issue 23,
# docs/meaning.md): paraphrase hit@10 0.588; update-cue hit@10 0.812 (one question's evidence pushed past the
# 10th place by a message placed by meaning), new state first 0.750.
GROUP_FLOORS = {"paraphrase": {"hit@1": 0.14, "hit@10": 0.58}, "typo": {"hit@1": 0.43, "hit@10": 0.55},
                "period": {"hit@1": 0.33, "hit@10": 0.83}, "update-cue": {"hit@1": 0.37, "hit@10": 0.81}}
UPDATE_CUE_NEW_FIRST_FLOOR = 0.74


class SyntheticFloorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = dataset.load_json(FIXTURE)
        with tempfile.TemporaryDirectory() as tmp:
            client = InProcessClient(load({"db": os.path.join(tmp, "floor.db"), "synchronous": "OFF"}, environ={}))
            try:
                cls.outcomes = runner.evaluate(cls.data, client)
            finally:
                client.close()

    def test_retrieval_stays_above_its_floors(self):
        original = [o for o in self.outcomes.outcomes if int(o.qid.split("/")[0][-2:]) < HARD_FIRST]
        self.assertEqual(len(original), 203)
        overall = metrics.summarize(original)
        for metric, floor in FLOORS.items():
            with self.subTest(metric=metric):
                self.assertGreaterEqual(overall[metric], floor)

    def test_the_harder_groups_stay_above_their_floors(self):
        groups = runner.groups(self.outcomes, list(GROUP_FLOORS))
        for group, floors in GROUP_FLOORS.items():
            for metric, floor in floors.items():
                with self.subTest(group=group, metric=metric):
                    self.assertGreaterEqual(groups[group][metric], floor)

    def test_knowledge_updates_rank_the_new_value_first_and_keep_the_old(self):
        self.assertGreaterEqual(runner.update_order(self.outcomes, "knowledge-update")["both"], UPDATES_FLOOR)

    def test_everyday_update_cues_rank_the_new_state_first(self):
        self.assertGreaterEqual(runner.update_order(self.outcomes, "update-cue")["new_first"],
                                UPDATE_CUE_NEW_FIRST_FLOOR)

    def test_relative_times_resolve_to_the_right_dates(self):
        times = runner.time_resolution(self.data)
        self.assertGreaterEqual(times["right"] / times["labelled"], TIMES_RIGHT_FLOOR)
        self.assertLessEqual(times["wrong"] / times["labelled"], TIMES_WRONG_CEILING)
        self.assertEqual(times["vague_resolved"], 0)


if __name__ == "__main__":
    unittest.main()
