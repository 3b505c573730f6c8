"""tools/ablation.py: a row per weighted signal of the registry, changes with paired intervals, a column group
per conversation style."""
import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

from flowmem.config import load
from tests.server import ROOT
from tools import ablation
from tools.evalkit import dataset as datasets, metrics, runner
from tools.evalkit.replay import InProcessClient

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")


def outcome(qid, rank):
    """An outcome whose single gold turn landed at message rank `rank` (None: not returned)."""
    turns = [["x%d" % i] for i in range(1, (rank or 3) + 1)]
    if rank:
        turns[rank - 1] = ["gold"]
    items = [{"id": t[0], "content": t[0]} for t in turns]
    return metrics.outcome(qid, "c", ["gold"], items, turns, {"gold": "gold"}, 0.0)


class AblationRowsTest(unittest.TestCase):
    def test_every_weighted_signal_of_the_registry_has_a_row(self):
        labels = [label for label, _ in ablation.rungs()]
        for signal in ("bm25", "window", "dated", "options", "adjacency", "feedback", "speaker"):
            self.assertTrue(any(label.split(" (")[0] in ("without " + signal, "with " + signal) for label in labels),
                            signal)

    def test_the_signal_rows_follow_the_registry(self):
        with mock.patch.object(ablation, "SIGNAL_NAMES", ("window", "feedback")):
            rows = ablation.signal_rungs(load({}, environ={}))
        self.assertEqual([label for label, _ in rows], ["without window", "without feedback"])
        self.assertEqual(rows[1][1], {"tail_weight_feedback": 0.0})

    def test_a_change_comes_with_its_paired_bootstrap_interval(self):
        base = [outcome("q%d" % i, 1) for i in range(40)]
        worse = [outcome("q%d" % i, 1 if i % 2 else None) for i in range(40)]
        diff, low, high = ablation.paired_change(base, worse, "hit@1", 500)
        self.assertAlmostEqual(diff, -0.5)
        self.assertTrue(low <= -0.5 <= high < 0, (low, high))
        self.assertEqual(ablation.paired_change(base, base, "hit@1", 500), (0.0, 0.0, 0.0))

    def test_a_ranking_row_reranks_prepared_questions_as_a_fresh_index_would_answer(self):
        data = datasets.load_locomo(SAMPLE)
        suite = ablation.Suite(data)
        settings = {"weight_bm25": 2.0, "weight_window": 0.0, "weight_dated": 0.0}
        self.assertTrue(ablation.ranking_only(settings))
        self.assertFalse(ablation.ranking_only({"stem": False}))
        with tempfile.TemporaryDirectory() as tmp:
            client = InProcessClient(load(dict(settings, db=os.path.join(tmp, "a.db")), environ={}))
            try:
                fresh = runner.evaluate(data, client)
            finally:
                client.close()
        reranked = suite.run(settings)
        self.assertEqual([(o.qid, o.message_ranks, o.top_ids) for o in reranked.outcomes],
                         [(o.qid, o.message_ranks, o.top_ids) for o in fresh.outcomes])


class AblationColumnsTest(unittest.TestCase):
    def test_the_header_has_a_column_group_per_style(self):
        columns, alignment = ablation.header()
        titles = [c.strip() for c in columns.strip("|").split("|")]
        for group in ("LoCoMo", "LoCoMo chat", "synthetic", "synthetic chat"):
            self.assertIn(group + " hit@1", titles)
        self.assertLess(titles.index("LoCoMo chat hit@1"), titles.index("synthetic hit@1"))
        self.assertLess(titles.index("synthetic chat hit@1"), titles.index("updates: new first and old in 20"))
        self.assertEqual(len(titles), 2 + 4 * 4)
        self.assertEqual(alignment.count("|") - 1, len(titles))

    def test_the_first_rows_fill_every_column_group(self):
        with tempfile.TemporaryDirectory() as tmp:
            synthetic, rows = os.path.join(tmp, "synthetic.json"), os.path.join(tmp, "rows.json")
            with open(synthetic, "w", encoding="utf-8") as f:
                json.dump(datasets.to_json(datasets.load_locomo(SAMPLE)), f)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                ablation.main(["--locomo", SAMPLE, "--synthetic", synthetic, "--synthetic-chat", synthetic,
                               "--json", rows, "--resamples", "50", "--rows", "2"])
            with open(rows, encoding="utf-8") as f:
                written = json.load(f)
        self.assertEqual([row["label"] for row in written], [label for label, _ in ablation.rungs()[:2]])
        for row in written:
            for name in ("locomo", "locomo_chat", "synthetic", "synthetic_chat"):
                self.assertLessEqual(set(ablation.TARGETS), set(row[name]["summary"]), name)
        self.assertEqual(set(written[1]["locomo_chat"]["changes"]), set(ablation.TARGETS))
        lines = [line for line in printed.getvalue().splitlines() if line.startswith("| all defaults")]
        self.assertEqual(lines[0].count("|") - 1, 2 + 4 * 4)


if __name__ == "__main__":
    unittest.main()
