"""The evaluation kit: LoCoMo loading, metric definitions, comparison (the same numbers in-process and over
HTTP, and the commands from a fresh clone: tests/test_evalkit_process.py)."""
import os
import unittest

from tests.server import ROOT
from tools.benchkit.stats import nearest_rank as percentile
from tools.evalkit import compare, dataset, metrics, runner
from tools.evalkit.replay import add_bodies

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")


class LocomoLoaderTest(unittest.TestCase):
    def test_replays_like_the_platform(self):
        data = dataset.load_locomo(SAMPLE)
        conv = data.conversations[0]
        self.assertEqual(conv.user_id, "sample-1")
        self.assertEqual([s.session_id for s in conv.sessions], ["session_1", "session_2"])
        turn = conv.turns()["D1:3"]
        self.assertEqual(turn.content, "Ada: Saturn, the rings should be visible next week."
                                       " [shares a photo: a photo of a brass telescope on a balcony]")
        self.assertEqual(turn.timestamp_ms, 1683554160000)  # 1:56 pm on 8 May, 2023, UTC
        self.assertEqual([t.role for t in conv.sessions[0].turns][:2], ["user", "assistant"])

    def test_invalid_evidence_is_skipped_and_listed_never_guessed(self):
        data = dataset.load_locomo(SAMPLE)
        self.assertEqual([s["question"] for s in data.skipped], ["Broken evidence", "No evidence"])
        self.assertEqual(sum(len(c.questions) for c in data.conversations), 7)
        categories = [q.category for q in data.conversations[0].questions]
        self.assertEqual(categories, ["single-hop", "temporal", "multi-hop", "single-hop", "adversarial"])

    def test_adds_hold_at_most_twenty_messages_of_one_session(self):
        turns = [dataset.Turn("D1:%d" % i, "user", "A: %d" % i, 1) for i in range(1, 46)]
        conv = dataset.Conversation("u", [dataset.Session("s1", turns)], [])
        bodies = add_bodies(conv)
        self.assertEqual([len(b["messages"]) for b in bodies], [20, 20, 5])
        self.assertEqual(len({b["request_id"] for b in bodies}), 3)


class MetricsTest(unittest.TestCase):
    TEXT = {"a": "A: alpha", "b": "B: beta", "c": "C: gamma", "x": "X: other", "y": "Y: more"}

    def outcome(self, gold, item_turns):
        items = [{"id": str(i), "content": "\n".join(self.TEXT[t] for t in turns)}
                 for i, turns in enumerate(item_turns)]
        return metrics.outcome("q", "cat", gold, items, item_turns, self.TEXT, 1.0)

    def test_windows_spend_one_rank_per_message_and_repeats_spend_none(self):
        o = self.outcome(["b"], [["x", "y", "a"], ["a", "b"]])
        self.assertEqual(o.message_ranks, {"b": 4})
        self.assertEqual(o.item_ranks, {"b": 2})
        m = o.values()
        self.assertEqual((m["hit@1"], m["hit@3"], m["hit@10"], m["mrr"]), (0.0, 0.0, 1.0, 0.25))
        self.assertEqual((m["item_hit@1"], m["item_mrr"]), (0.0, 0.5))

    def test_recall_full_and_context_budget(self):
        o = self.outcome(["a", "c"], [["a"], ["x"], ["y"]])
        m = o.values()
        self.assertEqual((m["recall@10"], m["full@100"], m["hit@1"]), (0.5, 0.0, 1.0))
        self.assertEqual(o.context_ends["a"], len("A: alpha"))
        self.assertIsNone(o.context_ends["c"])
        long = {"id": "0", "content": "z" * 2500 + "\nB: beta"}
        far = metrics.outcome("q", "cat", ["b"], [long], [[None, "b"]], self.TEXT, 1.0)
        self.assertEqual(far.message_ranks, {"b": 2})
        self.assertEqual(far.values()["ctx@2000"], 0.0)
        self.assertEqual(far.values()["ctx@8000"], 1.0)

    def test_summary_groups(self):
        hit = self.outcome(["a"], [["a"]])
        miss = metrics.outcome("q2", "adversarial", ["c"], [], [], self.TEXT, 1.0)
        groups = metrics.by_group([hit, miss], ["cat", "adversarial"], runner.UNANSWERABLE)
        self.assertEqual(groups["overall"]["hit@1"], 0.5)
        self.assertEqual(groups["answerable"]["hit@1"], 1.0)
        self.assertEqual(groups["adversarial"]["n"], 1)

    def test_percentile_is_nearest_rank(self):
        self.assertEqual(percentile([5, 1, 3, 2, 4], 50), 3)
        self.assertEqual(percentile(list(range(1, 101)), 95), 95)


class CompareTest(unittest.TestCase):
    def line(self, qid, hit):
        return {"qid": qid, "metrics": {name: float(hit) for name in metrics.ALL_METRICS}}

    def test_paired_difference_and_reproducible_interval(self):
        a = [self.line("q%d" % i, i % 2) for i in range(40)]
        b = [self.line("q%d" % i, 1) for i in range(40)]
        rows = compare.compare(a, b, ["hit@1"], resamples=500)
        self.assertAlmostEqual(rows[0]["diff"], 0.5)
        self.assertLessEqual(rows[0]["ci_low"], 0.5)
        self.assertGreaterEqual(rows[0]["ci_high"], 0.5)
        self.assertGreater(rows[0]["ci_low"], 0.2)
        self.assertEqual((rows[0]["better"], rows[0]["worse"]), (20, 0))
        self.assertEqual(rows, compare.compare(a, b, ["hit@1"], resamples=500))


if __name__ == "__main__":
    unittest.main()


class HaystackTest(unittest.TestCase):
    """dataset.with_haystack: each user made heavy with the other conversations' text, questions unchanged."""

    @classmethod
    def setUpClass(cls):
        cls.data = dataset.load_locomo(SAMPLE)
        cls.heavy = dataset.with_haystack(cls.data, 50)

    def test_each_user_holds_the_messages_asked_for_its_own_first(self):
        for before, after in zip(self.data.conversations, self.heavy.conversations):
            own = sum(len(s.turns) for s in before.sessions)
            self.assertEqual(sum(len(s.turns) for s in after.sessions), max(50, own))
            self.assertEqual(after.sessions[:len(before.sessions)], before.sessions)
            self.assertEqual(after.questions, before.questions)

    def test_added_turns_name_no_evidence_and_speak_with_the_users_own_labels(self):
        for before, after in zip(self.data.conversations, self.heavy.conversations):
            labels = {t.content.split(":", 1)[0] for s in before.sessions for t in s.turns}
            added = [t for s in after.sessions[len(before.sessions):] for t in s.turns]
            self.assertTrue(added)
            gold = {g for q in before.questions for g in q.gold}
            self.assertFalse(gold & {t.turn_id for t in added})
            self.assertLessEqual({t.content.split(":", 1)[0] for t in added}, labels)
            self.assertEqual(len({t.turn_id for t in added}), len(added))
