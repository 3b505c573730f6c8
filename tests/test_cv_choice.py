"""tools/cv_choice.py: each conversation is scored by the configuration the other conversations chose."""
from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import unittest
from typing import Dict

from tools import cv_choice


def write_run(path: str, hits: Dict[str, float]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for qid, hit in sorted(hits.items()):
            f.write(json.dumps({"qid": qid, "metrics": {"hit@1": hit}}) + "\n")


class CvChoiceTest(unittest.TestCase):
    def test_a_fold_is_scored_by_the_choice_of_the_others_not_by_its_own_best(self):
        tmp = tempfile.mkdtemp(prefix="flowmem-cv-")
        # "a" wins on c1 and c2, "b" on c3 alone: held out, c3 is scored by "a" (0), c1 and c2 by "a" too.
        write_run(os.path.join(tmp, "a.jsonl"), {"c1/q0": 1, "c2/q0": 1, "c3/q0": 0})
        write_run(os.path.join(tmp, "b.jsonl"), {"c1/q0": 0, "c2/q0": 0, "c3/q0": 1})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cv_choice.main(["a=" + os.path.join(tmp, "a.jsonl"), "b=" + os.path.join(tmp, "b.jsonl"),
                            "--metrics", "hit@1"])
        lines = out.getvalue().splitlines()
        self.assertIn("| c3 | 1 | a | 0.000 |", lines)
        self.assertIn("| chosen per fold (held out) | 3 | 0.667 |", lines)
