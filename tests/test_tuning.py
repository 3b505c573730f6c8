"""Tuning ranks as serving does: the items tools/tune.py scores are the ones Memory.search returns.

tools/tune.py prepares each question once (pipeline.prepare) and ranks it again with
every trial's settings through pipeline.ranked_items, the function search() ends
with. These tests replay the synthetic suite into a memory, prepare its questions as
tune does, and ask a Memory with the same settings every question.
"""
import os
import shutil
import tempfile
import unittest

from flowmem.config import load
from flowmem.memory import Memory
from tests.server import ROOT
from tools import tune
from tools.evalkit import dataset as datasets
from tools.evalkit.replay import ask, replay

SYNTHETIC = os.path.join(ROOT, "fixtures", "synthetic-small.json")
# Settings tune changes, each away from its default: the weights of the head and the tail,
# the fusion constant, the head's length, how the slots are filled, the state-update rerank.
CHANGED = {"weight_bm25": 1.0, "weight_window": 0.2, "weight_coverage": 0.5, "weight_names": 0.3,
           "weight_adjacency": 0.0, "tail_weight_feedback": 0.0, "tail_weight_speaker": 1.0, "rrf_k": 10,
           "head_size": 5, "message_share": 0.5, "state_update_window": 50, "weight_reply": 0.5,
           "options_boost_max": 3.0, "spread_keep": 1, "spread_gap": 2}


class TunedOrderIsServedOrderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="flowmem-tuning-")
        cls.db = os.path.join(cls.tmp, "tune.db")
        cls.data = datasets.load_json(SYNTHETIC)
        memory = cls.memory_with({})
        try:
            for conversation in cls.data.conversations:
                replay(memory, conversation)
            cls.questions = tune.prepare(cls.data, memory)
        finally:
            memory.close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    @classmethod
    def memory_with(cls, settings):
        return Memory(load(dict(settings, db=cls.db, synchronous="OFF"), environ={}))

    def tuned(self, settings):
        """{qid: the items tune scores with `settings`}, from the questions prepared once."""
        ranking = tune.ranking_of(settings)
        return {q.qid: tune.ranked_items(q, ranking) for q in self.questions}

    def served(self, settings):
        """{qid: the items a Memory configured with `settings` returns}, asked as tools/eval.py asks."""
        memory = self.memory_with(settings)
        try:
            return {q.qid: ask(memory, conversation, q, tune.TOP_K)[0]
                    for conversation in self.data.conversations for q in conversation.questions}
        finally:
            memory.close()

    def assert_tuned_is_served(self, settings):
        tuned, served = self.tuned(settings), self.served(settings)
        self.assertEqual(list(tuned), list(served))
        for qid, items in served.items():
            with self.subTest(qid=qid):
                self.assertEqual([i["id"] for i in tuned[qid]], [i["id"] for i in items])
                self.assertEqual(tuned[qid], items)  # scores, contents and signals too
        self.assertGreater(sum(1 for items in served.values() if items), len(served) // 2)
        return tuned

    def test_tune_ranks_every_question_as_search_does_with_the_default_settings(self):
        self.assert_tuned_is_served({})

    def test_tune_ranks_every_question_as_search_does_with_changed_settings(self):
        changed = self.assert_tuned_is_served(CHANGED)
        defaults = self.tuned({})
        self.assertNotEqual(changed, defaults, "the changed settings must change some order")



class MultipleChoiceTest(unittest.TestCase):
    def test_each_recast_question_has_its_answer_among_four_distinct_options(self):
        data = datasets.load_json(SYNTHETIC)
        recast = tune.as_multiple_choice(data)
        places = set()
        for conversation in recast.conversations:
            for q in conversation.questions:
                with self.subTest(qid=q.qid):
                    self.assertEqual(len(set(q.options)), 4)
                    self.assertEqual(q.options.count(q.answer), 1)
                places.add(q.options.index(q.answer))
        self.assertEqual(places, {0, 1, 2, 3})


if __name__ == "__main__":
    unittest.main()
