"""The operator's embedder in Python (`Memory(path, embed=callable)`): vectors stored and ranked, off by default.

The packed scores are checked against plain integer dot products (the reference), and what
deleting, importing and opening read-only do to the vectors.
"""
from __future__ import annotations

import json
import random
import threading
import unittest
from typing import Any, Dict, List
from unittest import mock

from flowmem.config import load
from flowmem.embedding import EmbedderFailed, stored_vectors
from flowmem.memory import Memory
from flowmem.storage import model_vectors
from tests.fake_embedder import vector
from tests.helpers import MemoryTestCase, add_body

CONTENTS = ["I adopted a rescue greyhound last spring", "my manager is called Priya",
            "we booked flights to Lisbon for June", "the greyhound sleeps on the sofa all day"]
WEIGHTED = {"weight_model": 1.0, "model_pool": 10}


def embed(texts: List[str]) -> List[List[float]]:
    return [vector(t) for t in texts]


class PackedScoresTest(unittest.TestCase):
    def test_packed_scores_are_the_integer_dot_products_at_every_dimension(self):
        rnd = random.Random(7)
        for dims in (3, 32, 384, 528, 529, 1536, 4096):
            with self.subTest(dims=dims):
                stored = [model_vectors.quantised([rnd.gauss(0, 1) for _ in range(dims)]) for _ in range(50)]
                entry = model_vectors.held(1, dims, [(i, 1, i, v, i) for i, v in enumerate(stored)])
                query = model_vectors.components(stored[0])
                slots = model_vectors.scores(entry, query)
                expected = [sum(a * b for a, b in zip(query, model_vectors.components(v))) for v in stored]
                self.assertEqual([s - model_vectors.constant(query) for s in slots], expected)

    def test_an_entry_extended_by_new_vectors_scores_as_one_packed_from_all_of_them(self):
        rnd = random.Random(8)
        for dims, block, sizes in ((384, 4, (3, 2, 5, 4, 1, 1, 1)), (529, 4, (4, 1, 1)), (16, 3, (7, 3, 1, 1))):
            with self.subTest(dims=dims), mock.patch.object(model_vectors, "BLOCK", block), \
                    mock.patch.object(model_vectors, "MAX_TAIL", 2):
                stored = [model_vectors.quantised([rnd.gauss(0, 1) for _ in range(dims)]) for _ in range(sum(sizes))]
                rows = [(i, 1, i, v, 10 + i) for i, v in enumerate(stored)]
                entry = model_vectors.held(sizes[0], dims, rows[:sizes[0]])
                done = sizes[0]
                for size in sizes[1:]:
                    entry = model_vectors.extended(entry, done + size, rows[done:done + size])
                    done += size
                whole = model_vectors.held(done, dims, rows)
                query = model_vectors.components(stored[-1])
                self.assertEqual(model_vectors.scores(entry, query), model_vectors.scores(whole, query))
                self.assertEqual((list(entry.docs), entry.keys, entry.positions, entry.last_rowid, entry.written),
                                 (list(whole.docs), whole.keys, whole.positions, whole.last_rowid, whole.written))
                self.assertTrue(all(size <= block for _, _, size in entry.blocks))
                self.assertLessEqual(len(entry.blocks), len(whole.blocks) + 2)  # the tail packed again past MAX_TAIL

    def test_quantised_vectors_are_unit_length_scaled_and_clipped(self):
        stored = model_vectors.quantised([3.0, 4.0] + [0.0] * 14)
        self.assertEqual(model_vectors.components(stored)[:3], [38, 50, 0])  # 0.6 and 0.8 of 63 x sqrt(16) / 4
        self.assertEqual(max(model_vectors.components(model_vectors.quantised([1.0] + [0.0] * 99))), 63)

    def test_what_is_not_a_vector_is_refused_naming_why(self):
        cases = {"asked for 2 vectors, got 1": [[1.0, 0.0]], "not 2": [[1.0, 0.0], [1.0]],
                 "NaN or infinity": [[1.0, 0.0], [float("inf"), 0.0]], "zeros": [[1.0, 0.0], [0.0, 0.0]],
                 "not a list of numbers": [[1.0, 0.0], ["a", "b"]]}
        for reason, vectors in cases.items():
            with self.subTest(reason=reason), self.assertRaises(EmbedderFailed) as caught:
                stored_vectors(vectors, 2, None)
            self.assertIn(reason, str(caught.exception))
        with self.assertRaises(EmbedderFailed):
            stored_vectors([[1.0, 0.0]], 1, 3)  # the database's vectors have 3


class CallableEmbedderTest(MemoryTestCase):
    def open_embedded(self, name: str, **settings: Any) -> Memory:
        flags: Dict[str, Any] = {"db": self.db_path(name), "synchronous": "NORMAL", **self.settings, **WEIGHTED}
        flags.update(settings)
        memory = Memory(load(flags, environ={}), clock=None, embed=embed)
        self.addCleanup(memory.close)
        return memory

    def filled(self, name: str, contents: List[str] = CONTENTS) -> Memory:
        memory = self.open_embedded(name)
        memory.add_body(add_body("u1", "s1", contents))
        self.assertTrue(memory.embedding.drain(10))
        return memory

    def ask(self, memory: Memory, query: str = "greyhound sofa") -> Dict[str, Any]:
        return memory.search_body({"query": query, "user_id": "u1", "top_k": 5})

    def test_off_by_default_a_search_says_nothing_of_an_embedder_and_its_weight_changes_nothing(self):
        self.memory.add_body(add_body("u1", "s1", CONTENTS))
        plain = self.ask(self.memory)
        self.assertNotIn("embedder", plain)
        self.assertNotIn("embedder", self.memory.stats())
        weighted = self.open_memory("w.db", **WEIGHTED)
        weighted.add_body(add_body("u1", "s1", CONTENTS))
        self.assertEqual(json.dumps(self.ask(weighted)), json.dumps(plain))

    def test_the_same_vectors_give_the_same_bytes(self):
        first, second = self.filled("a.db"), self.filled("b.db")
        self.assertEqual(json.dumps(self.ask(first)), json.dumps(self.ask(second)))
        self.assertIn("model", self.ask(first)["data"][0]["signals"])

    def test_a_search_after_more_vectors_land_reads_only_those_and_answers_as_a_fresh_read(self):
        memory = self.filled("a.db", CONTENTS[:2])
        self.ask(memory)  # the user's vectors held
        memory.add_body(add_body("u1", "s2", CONTENTS[2:]))
        self.assertTrue(memory.embedding.drain(10))
        with mock.patch.object(model_vectors, "held", wraps=model_vectors.held) as read_whole:
            extended = self.ask(memory)
        self.assertEqual(read_whole.call_count, 0)
        fresh = self.filled("b.db", CONTENTS[:2])
        fresh.add_body(add_body("u1", "s2", CONTENTS[2:]))
        self.assertTrue(fresh.embedding.drain(10))
        self.assertEqual(json.dumps(extended), json.dumps(self.ask(fresh)))

    def test_after_a_message_is_deleted_every_other_keeps_its_own_vector(self):
        memory = self.filled("a.db")
        first = self.ask(memory)["data"]
        memory.delete_message("u1", first[0]["id"])
        kept = self.filled("b.db", [c for c in CONTENTS if c != first[0]["content"]])
        ranks = lambda answer: [(i["content"], i["signals"].get("model")) for i in answer["data"]]  # noqa: E731
        self.assertEqual(ranks(self.ask(memory)), ranks(self.ask(kept)))

    def test_deleting_a_user_leaves_no_mark_of_their_vectors(self):
        memory = self.filled("a.db")
        memory.delete_user("u1")
        with memory.store.reading() as reader:
            self.assertEqual(reader.conn.execute("SELECT count(*) FROM embedding_marks").fetchone()[0], 0)

    def test_an_import_gets_its_vectors(self):
        source = self.filled("a.db")
        target = self.open_embedded("b.db")
        target.import_records(source.export("u1"))
        self.assertTrue(target.embedding.drain(10))
        self.assertEqual(target.stats()["embedder"]["written"], len(CONTENTS))

    def test_an_embedder_that_raises_never_fails_an_add(self):
        def broken(texts: List[str]) -> List[List[float]]:
            raise RuntimeError("the model fell over")
        memory = Memory(load({"db": self.db_path("x.db"), "synchronous": "NORMAL", **WEIGHTED}, environ={}),
                        clock=None, embed=broken)
        self.addCleanup(memory.close)
        self.assertTrue(memory.add_body(add_body("u1", "s1", CONTENTS))["stored"])
        answer = self.ask(memory)
        self.assertEqual(answer["embedder"], {"error": "the model fell over"})
        self.assertTrue(answer["data"])

    def test_a_read_only_memory_searches_by_the_stored_vectors_and_writes_none(self):
        writer = self.filled("a.db")
        expected = self.ask(writer)
        reader = Memory(load({"db": self.db_path("a.db"), **self.settings, **WEIGHTED}, environ={}), read_only=True,
                        clock=None, embed=embed)
        self.addCleanup(reader.close)
        self.assertEqual(self.ask(reader)["data"], expected["data"])


class QuestionTextTest(MemoryTestCase):
    def test_the_question_is_embedded_without_the_names_of_the_users_speakers(self):
        asked: List[str] = []

        def recording(texts: List[str]) -> List[List[float]]:
            asked.extend(texts)
            return embed(texts)
        memory = Memory(load({"db": self.db_path("n.db"), "synchronous": "NORMAL", **WEIGHTED}, environ={}),
                        clock=None, embed=recording)
        self.addCleanup(memory.close)
        memory.add_body(add_body("u1", "s1", ["Caroline: I adopted a greyhound", "Melanie: my boss is Priya"]))
        self.assertTrue(memory.embedding.drain(10))
        asked.clear()
        memory.search_body({"query": "What did Caroline adopt, and who is Priya?", "user_id": "u1", "top_k": 3})
        self.assertEqual(asked, ["What did adopt, and who is Priya?"])


def by_topic(texts: List[str]) -> List[List[float]]:
    """A model that knows a greyhound is a pet: texts about either share a vector, as do any two of travel."""
    topics = (("pet", "greyhound"), ("flight", "trip", "lisbon"), ("manager", "boss"))
    return [[1.0 if any(w in t.lower() for w in words) else 0.01 for words in topics] for t in texts]


class ModelAsMeaningTest(MemoryTestCase):
    def test_a_question_sharing_no_word_with_its_evidence_finds_it_by_the_model(self):
        memory = Memory(load({"db": self.db_path("t.db"), "synchronous": "NORMAL", **self.settings}, environ={}),
                        clock=None, embed=by_topic)
        self.addCleanup(memory.close)
        memory.add_body(add_body("u1", "s1", CONTENTS[1:3] + ["we walked the dog in the park", CONTENTS[0]]))
        self.assertTrue(memory.embedding.drain(10))
        top = memory.search_body({"query": "What pet do I have?", "user_id": "u1", "top_k": 3})["data"][0]
        self.assertEqual(top["content"], CONTENTS[0])
        self.assertEqual(top["signals"].get("meaning"), 1)


class ModelRerankWeightsTest(MemoryTestCase):
    CONTENTS = ["the greyhound sleeps on the sofa all day", "greyhound again!", "we walked the greyhound in the park"]

    def top(self, embedder: Any, short: float) -> str:
        flags = {"db": self.db_path("r%s%g.db" % (embedder is not None, short)), "synchronous": "NORMAL",
                 **self.settings, "rerank_model_weights": "fused=1,short=%g" % short}
        memory = Memory(load(flags, environ={}), clock=None, embed=embedder)
        self.addCleanup(memory.close)
        memory.add_body(add_body("u1", "s1", self.CONTENTS))
        self.assertTrue(memory.embedding is None or memory.embedding.drain(10))
        return memory.search_body({"query": "greyhound", "user_id": "u1", "top_k": 3})["data"][0]["content"]

    def test_the_rerank_weighs_by_its_model_weights_only_when_the_embedders_cosines_are_the_meaning(self):
        self.assertEqual(self.top(by_topic, 8), self.CONTENTS[1])  # the short message promoted
        self.assertNotEqual(self.top(by_topic, -8), self.CONTENTS[1])
        self.assertEqual(self.top(None, 8), self.top(None, -8))  # without an embedder the setting is not read


class FairnessTest(MemoryTestCase):
    def test_one_users_backlog_never_keeps_anothers_vectors_waiting_behind_it(self):
        started, release, asked = threading.Event(), threading.Event(), []

        def slow_start(texts: List[str]) -> List[List[float]]:
            started.set()
            release.wait(10)
            asked.append(texts[0].split()[0])
            return embed(texts)
        memory = Memory(load({"db": self.db_path("f.db"), "synchronous": "NORMAL", "embedder_batch": 2},
                             environ={}), clock=None, embed=slow_start)
        self.addCleanup(memory.close)
        memory.add_body(add_body("a", "s1", ["alice says %d" % i for i in range(10)]))
        self.assertTrue(started.wait(10))  # alice's first batch is being embedded
        memory.add_body(add_body("b", "s1", ["bob says hi", "bob says bye"]))
        release.set()
        self.assertTrue(memory.embedding.drain(10))
        self.assertEqual(asked, ["alice", "bob", "alice", "alice", "alice", "alice"])
