"""Tuning ranks as serving does: the items tools/evalkit/tuning.py scores are the ones Memory.search returns.

tools/evalkit/tuning.py prepares each question once (pipeline.prepare) and ranks it again with
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
from tests.fake_embedder import vector
from tests.server import ROOT
from tools import crossval
from tools.evalkit import dataset as datasets, tuning
from tools.evalkit.replay import ask, replay

SYNTHETIC = os.path.join(ROOT, "fixtures", "synthetic-small.json")
SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")
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
        cls.db = os.path.join(cls.tmp, "tuning.db")
        cls.data = datasets.load_json(SYNTHETIC)
        memory = cls.memory_with({})
        try:
            for conversation in cls.data.conversations:
                replay(memory, conversation)
            cls.questions = tuning.prepare(cls.data, memory)
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
        ranking = tuning.ranking_of(settings)
        return {q.qid: tuning.ranked_items(q, ranking) for q in self.questions}

    def served(self, settings):
        """{qid: the items a Memory configured with `settings` returns}, asked as tools/eval.py asks."""
        memory = self.memory_with(settings)
        try:
            return {q.qid: ask(memory, conversation, q, tuning.TOP_K)[0]
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


class TunedOrderWithAnEmbedderIsServedOrderTest(TunedOrderIsServedOrderTest):
    """The same with the operator's embedder: tune embeds every question as search does (tools/learn_rerank.py
    learns rerank_model_weights on these)."""

    @classmethod
    def memory_with(cls, settings):
        return Memory(load(dict(settings, db=cls.db, synchronous="OFF"), environ={}),
                      embed=lambda texts: [vector(t) for t in texts])

    def test_the_questions_are_prepared_with_the_embedders_cosines_as_the_meaning(self):
        pools = [q.prepared.pool for q in self.questions if q.prepared is not None]
        self.assertTrue(pools and all(p.meaning_by_model for p in pools))


class CrossValidationTest(unittest.TestCase):
    """tools/crossval.py: each fold tunes on the other conversations only."""

    @classmethod
    def setUpClass(cls):
        cls.data = datasets.load_locomo(SAMPLE)
        cls.questions, cls.owners = tuning.index_styles(cls.data, "both", {})
        cls.conversations = list(dict.fromkeys(cls.owners))  # as written, then as typed chat
        cls.written = [c.user_id for c in cls.data.conversations]
        cls.start = tuning.start_settings({})

    def test_every_question_is_asked_of_both_styles(self):
        self.assertEqual(self.conversations, self.written + [c + tuning.CHAT_SUFFIX for c in self.written])
        self.assertEqual(len(self.questions), 2 * sum(len(c.questions) for c in self.data.conversations))

    def test_each_fold_tunes_on_every_conversation_but_the_one_it_holds_out(self):
        seen = []

        def spy(training, start, label):
            seen.append(list(training))
            return start, {}
        folds = crossval.run_folds(self.conversations, self.start, spy, lambda training: {})
        self.assertEqual([f.held_out for f in folds], self.written)
        for fold, training in zip(folds, seen):  # held out in both styles
            held_out = [fold.held_out, fold.held_out + tuning.CHAT_SUFFIX]
            self.assertFalse(set(held_out) & set(training))
            self.assertEqual(sorted(training + held_out), sorted(self.conversations))

    def test_the_ascent_of_a_fold_ranks_no_question_of_its_held_out_conversation(self):
        cache = crossval.TrialCache(self.questions, self.owners)
        held_out = self.written[0]
        training = [c for c in self.conversations if crossval.fold_of(c) != held_out]
        crossval.ascent_tuner(cache, 1, "coarse")(training, self.start, "")
        ranked = {conversation for conversation, _ in cache.values}
        self.assertFalse({held_out, held_out + tuning.CHAT_SUFFIX} & ranked)
        self.assertEqual(ranked, set(training))
        self.assertGreater(len(cache.values), 10)

    def test_a_fold_limited_to_some_settings_tries_no_other(self):
        cache = crossval.TrialCache(self.questions, self.owners)
        start = dict(self.start, weight_reply=0.0)
        tried = []

        def spy(trial):
            tried.append(trial)
            return cache.summary(self.conversations[1:], trial)
        settings, _ = tuning.ascend([], dict(start), 1, weight_grid=(0.0, 0.5), scorer=spy, only=["weight_reply"])
        moved = {name for trial in tried for name in trial if trial[name] != start[name]}
        self.assertEqual(moved, {"weight_reply"})
        self.assertEqual(len(tried), 2)
        self.assertEqual({n for n in settings if settings[n] != start[n]} - {"weight_reply"}, set())

    def test_a_folds_training_objective_is_tune_score_on_its_training_questions(self):
        cache = crossval.TrialCache(self.questions, self.owners)
        training = self.conversations[1:]
        mine = [q for q, owner in zip(self.questions, self.owners) if owner in training]
        for settings in (self.start, dict(self.start, weight_bm25=2.0, rrf_k=5)):
            expected = tuning.score(mine, settings)
            got = cache.summary(training, settings)
            self.assertEqual({t: got[t] for t in tuning.TARGETS}, {t: expected[t] for t in tuning.TARGETS})

    def test_held_out_questions_are_ranked_with_the_settings_of_their_own_fold(self):
        first = self.written[0]
        other = dict(self.start, weight_bm25=3.0, weight_window=0.0, weight_segment=0.0, weight_dated=0.0)
        folds = [crossval.Fold(c, [], other if c == first else self.start, {}, {}, 0.0) for c in self.written]
        got = crossval.held_out_outcomes(self.questions, self.owners, folds)
        expected = [a if crossval.fold_of(w) == first else b for a, b, w in
                    zip(tuning.outcomes(self.questions, other), tuning.outcomes(self.questions, self.start),
                        self.owners)]
        self.assertEqual(got, expected)
        self.assertNotEqual(got, tuning.outcomes(self.questions, self.start))

class MultipleChoiceTest(unittest.TestCase):
    def test_each_recast_question_has_its_answer_among_four_distinct_options(self):
        data = datasets.load_json(SYNTHETIC)
        recast = tuning.as_multiple_choice(data)
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
