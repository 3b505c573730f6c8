"""The operator's embedder over HTTP (embedding.py) against a fake OpenAI-compatible server: every failure.

An Add is acknowledged whatever the embedder does; its messages wait for vectors, are retried,
and are never given a wrong one; a search answers from the other rankings when the question's
vector does not come, and says why.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from typing import Any, Dict

from flowmem import embedding, memory as memory_module
from flowmem.config import load
from flowmem.errors import ConfigError
from flowmem.http.api import App
from tests.fake_embedder import FakeEmbedder
from tests.helpers import MemoryTestCase, add_body

CONTENTS = ["I adopted a rescue greyhound last spring", "my manager is called Priya",
            "we booked flights to Lisbon for June", "the greyhound sleeps on the sofa all day"]


class EmbedderTestCase(MemoryTestCase):
    def setUp(self) -> None:
        self.fake = FakeEmbedder()
        self.addCleanup(self.fake.close)
        self.patch_retry(0.05)
        quiet = logging.getLogger("flowmem.embedding")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # every failure here is on purpose
        self.addCleanup(quiet.setLevel, level)
        super().setUp()

    def patch_retry(self, seconds: float) -> None:
        old = embedding.RETRY_MIN_S, embedding.RETRY_MAX_S
        embedding.RETRY_MIN_S, embedding.RETRY_MAX_S = seconds, seconds

        def restore() -> None:
            embedding.RETRY_MIN_S, embedding.RETRY_MAX_S = old
        self.addCleanup(restore)

    def open_memory(self, name: str = "flowmem.db", clock: Any = None, **settings: Any) -> memory_module.Memory:
        if "embedder_url" not in settings and hasattr(self, "fake"):
            settings = dict({"embedder_url": self.fake.url, "embedder_model": "fake-1", "embedder_timeout_s": 2.0,
                             "weight_model": 1.0, "model_pool": 10}, **settings)
        return super().open_memory(name, clock, **settings)

    def searched(self, query: str, memory: Any = None) -> Dict[str, Any]:
        return (memory or self.memory).search_body({"query": query, "user_id": "u1", "top_k": 5})

    def add(self, contents: Any = CONTENTS, session: str = "s1") -> Dict[str, Any]:
        return self.memory.add_body(add_body("u1", session, list(contents)))


class VectorsAfterAddTest(EmbedderTestCase):
    def test_messages_get_vectors_after_their_add_and_the_search_ranks_by_them(self):
        self.add()
        self.assertTrue(self.memory.embedding.drain(10))
        answer = self.searched("greyhound")
        self.assertEqual(answer["embedder"], {"waiting": 0})
        self.assertIn("model", answer["data"][0]["signals"])
        stats = self.memory.stats()["embedder"]
        self.assertEqual((stats["model"], stats["dims"], stats["waiting"], stats["written"]), ("fake-1", 32, 0, 4))
        self.assertEqual(self.memory.stats("u1")["embedder"], {"waiting": 0})

    def test_requests_hold_at_most_the_batch_and_carry_the_model_and_the_key(self):
        key_file = os.path.join(self.tmp, "key")
        with open(key_file, "w") as f:
            f.write("sekrit\n")
        memory = self.open_memory("b.db", embedder_batch=3, embedder_key_file=key_file)
        memory.add_body(add_body("u1", "s1", CONTENTS + ["a fifth message", "a sixth", "a seventh"]))
        self.assertTrue(memory.embedding.drain(10))
        self.assertEqual(self.fake.requests, 3)  # 7 texts, 3 a request
        self.assertEqual(set(self.fake.keys), {"Bearer sekrit"})


class FailingEmbedderTest(EmbedderTestCase):
    def assert_nothing_written_then_filled(self, mode: str) -> None:
        self.fake.mode = mode
        started = time.monotonic()
        self.assertTrue(self.add()["success"])
        self.assertLess(time.monotonic() - started, 2.0)  # never waits on the embedder
        self.wait_for(lambda: self.memory.embedding.failures >= 2)  # retried
        self.assertEqual(self.memory.stats()["embedder"]["waiting"], 4)
        self.assertEqual(self.memory.embedding.written, 0)
        with self.memory.store.reading() as reader:
            self.assertEqual(reader.conn.execute("SELECT count(embedding) FROM messages").fetchone()[0], 0)
        self.assertIsNotNone(self.memory.stats()["embedder"]["last_error"])
        self.fake.mode = "ok"
        self.wait_for(lambda: self.memory.embedding.waiting() == 0)
        self.assertEqual(self.memory.embedding.written, 4)

    def wait_for(self, condition: Any) -> None:
        deadline = time.monotonic() + 20
        while not condition():
            self.assertLess(time.monotonic(), deadline, "gave up waiting")
            time.sleep(0.02)

    def test_an_error_writes_nothing_and_is_retried(self):
        self.assert_nothing_written_then_filled("error")

    def test_a_vector_of_the_wrong_dimension_is_never_written(self):
        self.add(["the first message, embedded whole"], session="s0")
        self.assertTrue(self.memory.embedding.drain(10))  # the database's dimension is now 32
        self.fake.mode = "dims"
        self.assertTrue(self.add()["success"])
        self.wait_for(lambda: self.memory.embedding.failures >= 2)
        self.assertEqual(self.memory.stats()["embedder"]["waiting"], 4)
        self.assertIn("31 components, not 32", self.memory.embedding.last_error)

    def test_nan_a_missing_vector_and_garbage_are_refused_whole(self):
        for mode in ("nan", "count", "garbage"):
            with self.subTest(mode=mode):
                self.memory = self.open_memory(mode + ".db")
                self.assert_nothing_written_then_filled(mode)

    def test_a_down_embedder_leaves_adds_and_searches_working(self):
        memory = self.open_memory("down.db", embedder_url="http://127.0.0.1:9/v1", embedder_model="none",
                                  weight_model=1.0, model_pool=10)
        memory.add_body(add_body("u1", "s1", CONTENTS))
        plain = self.open_memory("plain.db", embedder_url=None)
        plain.add_body(add_body("u1", "s1", CONTENTS))
        answer = self.searched("greyhound", memory)
        self.assertIn("error", answer["embedder"])
        self.assertEqual(answer["data"], self.searched("greyhound", plain)["data"])

    def test_a_slow_embedder_costs_a_search_its_timeout_at_most(self):
        self.add()
        self.assertTrue(self.memory.embedding.drain(10))
        self.fake.mode, self.fake.delay_s = "slow", 3.0
        memory = self.open_memory(embedder_timeout_s=0.3)
        started = time.monotonic()
        answer = self.searched("greyhound", memory)
        self.assertLess(time.monotonic() - started, 2.5)
        self.assertIn("longer than 0.3 s", answer["embedder"]["error"])
        self.assertTrue(answer["data"])


class ModelRecordedTest(EmbedderTestCase):
    def test_another_model_is_refused_naming_the_reindex_that_changes_it(self):
        self.add()
        self.assertTrue(self.memory.embedding.drain(10))
        self.memory.close()
        with self.assertRaises(ConfigError) as caught:
            self.open_memory(embedder_model="fake-2")
        self.assertIn("flowmem reindex --db %s --embedder-model fake-2" % self.db_path(), str(caught.exception))

    def test_reindex_with_another_model_clears_the_vectors_and_fills_them_again(self):
        self.add()
        self.assertTrue(self.memory.embedding.drain(10))
        self.memory.close()
        before = self.fake.requests
        config = load({"db": self.db_path(), "embedder_url": self.fake.url, "embedder_model": "fake-2"}, environ={})
        memory_module.reindex(config)
        self.assertGreater(self.fake.requests, before)
        self.memory = self.open_memory(embedder_model="fake-2")
        self.assertEqual(self.memory.stats()["embedder"]["waiting"], 0)
        self.assertEqual(embedding.recorded(self.memory.store), {"dims": 32, "model": "fake-2"})


    def test_the_reindex_the_refusal_names_runs_as_written(self):
        self.add()
        self.assertTrue(self.memory.embedding.drain(10))
        self.memory.close()
        done = subprocess.run([sys.executable, "-m", "flowmem", "reindex", "--db", self.db_path(), "--embedder-url",
                               self.fake.url, "--embedder-model", "fake-2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.memory = self.open_memory(embedder_model="fake-2")
        self.assertEqual(embedding.recorded(self.memory.store), {"dims": 32, "model": "fake-2"})


class MetricsTest(EmbedderTestCase):
    def test_metrics_say_how_many_wait_were_written_and_failed(self):
        self.fake.mode = "error"
        self.add()
        app = App(self.memory, self.memory.config)
        deadline = time.monotonic() + 10
        while self.memory.embedding.failures == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        text = app.metrics.render()
        self.assertIn("flowmem_embedder_waiting_messages 4", text)
        self.assertIn("flowmem_embedder_vectors_total 0", text)
        self.assertRegex(text, r"flowmem_embedder_failures_total [1-9]")
