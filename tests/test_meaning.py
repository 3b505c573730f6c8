"""The meaning channel: word vectors shipped as data, message vectors stored, nearest-in-meaning search."""
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import unittest

from flowmem.retrieval import meaning as meaning_channel, pipeline
from flowmem.storage import coarse_vectors, vectors
from flowmem.text import meaning
from tests.helpers import MemoryTestCase, add_body, matches

# The shipped file (tools/build_meaning/; CI does not rebuild it: torch is gigabytes).
SHIPPED_SHA256 = "e9b25cfc8556bd2ba9cca0102ea5a4351aa07cd276862843b0fc38dd28e0b692"


class ShippedTableTest(unittest.TestCase):
    def test_the_shipped_word_vectors_are_the_file_the_build_made(self):
        with open(meaning.DATA, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), SHIPPED_SHA256)

    def test_the_shipped_file_has_its_format_and_one_vector_and_weight_per_word(self):
        with open(meaning.DATA, "rb") as f:
            self.assertEqual(f.read(len(meaning.MAGIC)), meaning.MAGIC)
        table = meaning.read_table(meaning.DATA)
        self.assertEqual(table.dims, 256)
        self.assertGreater(len(table.rows), 50_000)
        self.assertEqual(len(table.vectors), table.dims * len(table.rows))
        self.assertEqual(len(table.weights), len(table.rows))
        self.assertIn("greyhound", table.rows)
        self.assertLess(table.weights[table.rows["have"]], table.weights[table.rows["greyhound"]])

    def test_a_truncated_file_is_refused(self):
        path = os.path.join(tempfile.mkdtemp(prefix="flowmem-test-"), "truncated.bin")
        with open(meaning.DATA, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:-10])
        self.addCleanup(os.remove, path)
        with self.assertRaises(ValueError):
            meaning.read_table(path)


class VectorArithmeticTest(unittest.TestCase):
    def test_words_near_in_meaning_have_vectors_nearer_than_unrelated_ones(self):
        def cosine(a, b):
            va, vb = meaning.mean_vector(meaning.text_stems(a)), meaning.mean_vector(meaning.text_stems(b))
            return sum(x * y for x, y in zip(va, vb))
        self.assertGreater(cosine("What pet do I have?", "She's a retired racing greyhound"),
                           cosine("What pet do I have?", "The quarterly report is due on Friday"))

    def test_a_text_without_a_known_content_word_has_no_vector(self):
        self.assertIsNone(meaning.message_vector(["the", "and", "qwzx"]))

    def test_the_packed_dot_products_equal_the_plain_ones(self):
        stored = [meaning.message_vector(meaning.text_stems(t)) for t in
                  ("a dog in the park", "stock prices fell", "my violin lesson")]
        held = vectors.extended(vectors.empty(meaning.table().dims), {1: 3},
                                [(i + 1, 1, i + 1, v) for i, v in enumerate(stored)], 10)
        query = meaning.mean_vector(meaning.text_stems("puppy"))
        plain = [sum(q * (b - meaning.OFFSET) for q, b in zip(query, v)) for v in stored]
        self.assertEqual(vectors.dot_products(held, query), plain)

    def test_only_the_latest_vectors_up_to_the_limit_are_held_and_they_still_score_right(self):
        stored = [meaning.message_vector(meaning.text_stems(t)) for t in ("a dog", "a cat", "a car", "a tree")]
        held = vectors.extended(vectors.empty(meaning.table().dims), {1: 4},
                                [(i + 1, 1, i + 1, v) for i, v in enumerate(stored)], 2)
        self.assertEqual(list(held.docs), [3, 4])
        query = meaning.mean_vector(["dog"])
        self.assertEqual(vectors.dot_products(held, query),
                         [sum(q * (b - meaning.OFFSET) for q, b in zip(query, v)) for v in stored[2:]])

    def test_vectors_past_the_window_are_held_by_their_first_components_whichever_way_they_arrived(self):
        texts = ("a dog", "a cat", "a car", "a tree", "a violin", "stock prices")
        rows = [(i + 1, 1, i + 1, meaning.message_vector(meaning.text_stems(t))) for i, t in enumerate(texts)]
        dims = meaning.table().dims
        at_once = vectors.extended(vectors.empty(dims), {1: 6}, rows, 2)
        one_by_one = vectors.empty(dims)
        for n in range(1, 7):
            one_by_one = vectors.extended(one_by_one, {1: n}, rows[n - 1:n], 2)
        self.assertEqual(list(at_once.docs), [5, 6])
        self.assertEqual(list(at_once.old.docs), [1, 2, 3, 4])
        self.assertEqual((one_by_one.docs, one_by_one.old), (at_once.docs, at_once.old))
        query = meaning.mean_vector(["dog"])
        coarse = coarse_vectors.DIMS
        by_hand = [sum(q * (b - meaning.OFFSET) for q, b in zip(query[:coarse], v[:coarse])) for _, _, _, v in rows[:4]]
        self.assertEqual(coarse_vectors.nearest(at_once.old, query, 4), sorted(range(4), key=lambda i: -by_hand[i]))

    def test_a_process_that_only_opens_lists_and_exports_never_reads_the_word_vectors(self):
        code = ("import sys, tempfile, os; from flowmem.memory import Memory; from flowmem.text import meaning;"
                "m = Memory(os.path.join(tempfile.mkdtemp(), 'x.db')); m.stats(); m.list_users(); list(m.export());"
                "print(meaning._table is None)")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        self.assertEqual(result.stdout.strip(), "True")


class NearestSlotsTest(unittest.TestCase):
    def test_the_nearest_are_the_largest_slots_the_later_of_equal_ones_first_as_a_full_sort_has_them(self):
        rng = random.Random(5)
        for _ in range(500):
            slots = [rng.randint(0, rng.choice((2, 40, 10 ** 6))) for _ in range(rng.randint(0, 200))]
            size = rng.randint(0, 50)
            reference = sorted(range(len(slots)), key=lambda i: (-slots[i], -i))[:size]
            self.assertEqual(meaning_channel.passing_best(slots, list(range(len(slots))), size, None), reference)


class PlacesTest(unittest.TestCase):
    def test_the_nearest_in_meaning_moves_up_to_its_place_and_scores_stay_non_increasing(self):
        order = [(1, 1), (1, 2), (1, 3), (1, 4)]
        scores = {(1, 1): 0.4, (1, 2): 0.3, (1, 3): 0.2, (1, 4): 0.1}
        nearness = {(1, 4): 0.9, (1, 1): 0.5, (2, 7): 0.8}
        out, new = meaning_channel.placed(order, scores, meaning_channel.nearest_first(nearness, 5), [2, 3])
        self.assertEqual(out, [(1, 1), (1, 4), (2, 7), (1, 2), (1, 3)])
        ranked = [new[k] for k in out]
        self.assertEqual(ranked, sorted(ranked, reverse=True))

    def test_a_message_already_above_its_place_is_left_where_it_is(self):
        order = [(1, 1), (1, 2), (1, 3)]
        out, _ = meaning_channel.placed(order, {k: 1.0 - k[1] / 10 for k in order}, [(1, 1)], [3])
        self.assertEqual(out, order)


class MeaningSearchTest(MemoryTestCase):
    LIFE = ["The weather was lovely today", "Traffic on the ring road was terrible",
            "She's a retired racing greyhound", "I'm badly allergic to shellfish",
            "The quarterly report is due on Friday", "My sister is visiting next weekend"]

    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", self.LIFE, request_id="r1"))

    def test_a_question_sharing_no_word_with_its_memory_finds_it_through_meaning(self):
        items = self.search("Do I have a dog?", top_k=3)
        self.assertEqual(items[0]["content"], "She's a retired racing greyhound")
        self.assertIn("meaning", items[0]["signals"])
        self.assertGreater(items[0]["score"], 0)

    def test_a_message_older_than_the_whole_vectors_is_still_found_through_meaning_with_its_exact_cosine(self):
        self.memory.add(add_body("u1", "s2", ["Paid the gas bill", "Booked a haircut", "Watered the plants"],
                                 request_id="r2"))
        memory = self.open_memory(meaning_scan=3)  # the greyhound is among the six past the window
        items = self.search("Do I have a dog?", top_k=3, memory=memory)
        self.assertEqual(items[0]["content"], "She's a retired racing greyhound")
        whole = self.search("Do I have a dog?", top_k=3)[0]
        self.assertEqual(items[0]["signals"]["meaning"], whole["signals"]["meaning"])

    def test_messages_past_the_whole_vectors_are_left_out_when_none_are_rescored(self):
        self.memory.add(add_body("u1", "s2", ["Paid the gas bill", "Booked a haircut", "Watered the plants"],
                                 request_id="r2"))
        memory = self.open_memory(meaning_scan=3, meaning_rescore=0)
        contents = [i["content"] for i in self.search("Do I have a dog?", top_k=3, memory=memory)]
        self.assertNotIn("She's a retired racing greyhound", contents)

    def test_every_message_past_the_whole_vectors_gets_the_cosine_a_whole_scan_gives_it(self):
        self.memory.add(add_body("u1", "s2", ["Paid the gas bill", "Booked a haircut", "Watered the plants"],
                                 request_id="r2"))

        def cosines(memory, scan, rescore):
            with memory.store.reading() as reader:
                user = reader.user_key("u1")
                keys = [(s, p) for s, n in reader.conn.execute("SELECT session_key, n_messages FROM sessions")
                        for p in range(1, n + 1)]
                near = meaning_channel.nearness(reader, user, meaning.text_stems("Do I have a dog?"), {}, 20,
                                                scan, rescore)
                return near.cosines(keys, reader, set(keys))

        whole = cosines(self.memory, 100, 0)
        self.assertEqual(len(whole), 9)
        self.assertEqual(cosines(self.open_memory(meaning_scan=3, meaning_rescore=1), 3, 1), whole)
        # With none rescored, the messages past the window are not compared at all: only the 3 whole ones are.
        self.assertEqual(cosines(self.open_memory(meaning_scan=3, meaning_rescore=0), 3, 0),
                         {key: value for key, value in whole.items() if key[0] == max(k[0] for k in whole)})

    def test_without_the_channel_the_same_question_gets_only_the_latest_messages(self):
        memory = self.open_memory(meaning_pool=0)
        self.assertEqual(matches(self.search("Do I have a dog?", top_k=3, memory=memory)), [])

    def test_the_gate_keeps_an_exact_match_first(self):
        self.memory.add(add_body("u1", "s2", ["We walked the dog along the beach", "Pepper loves the beach"],
                                 request_id="r2"))
        items = self.search("Where did we walk the dog?", top_k=3)
        self.assertEqual(items[0]["content"], "We walked the dog along the beach")
        self.assertNotIn("fallback", items[0]["signals"])

    def test_windows_around_a_message_found_by_meaning_come_with_it(self):
        with self.memory.store.reading() as reader:
            pool = pipeline.prepare(reader, "u1", "Do I have a dog?", [], self.memory._ranking).pool
        greyhound = (min(v.session_key for v in pool.views.values()), 3)
        self.assertIn(greyhound, pool.meaning)
        windows = [v for v in pool.views.values() if v.kind == "window"]
        self.assertTrue(any(v.first <= greyhound[1] <= v.last for v in windows))

    def test_another_users_messages_are_never_found_by_meaning(self):
        self.memory.add(add_body("u2", "s1", ["My puppy chewed my shoes"], request_id="r9"))
        contents = [i["content"] for i in self.search("Do I have a dog?", "u1", top_k=10)]
        self.assertNotIn("My puppy chewed my shoes", contents)

    def test_a_deleted_session_is_no_longer_found_by_meaning(self):
        self.memory.add(add_body("u1", "pets", ["We adopted a kitten called Miso"], request_id="r3"))
        self.assertIn("We adopted a kitten called Miso", [i["content"] for i in self.search("Any cats?", top_k=3)])
        self.memory.delete_session("u1", "pets")
        self.assertNotIn("We adopted a kitten called Miso",
                         "\n".join(i["content"] for i in self.search("Any cats?", top_k=10)))

    def test_reindex_gives_every_message_the_vector_the_add_gave_it(self):
        def stored():
            with self.memory.store.reading() as reader:
                return reader.conn.execute("SELECT session_key, seq, meaning FROM messages ORDER BY 1, 2").fetchall()
        before = stored()
        self.assertTrue(all(row[2] for row in before))
        with self.memory.store.writing() as conn:
            conn.execute("UPDATE messages SET meaning = NULL")
        self.memory.store.reindex()
        self.assertEqual(stored(), before)


if __name__ == "__main__":
    unittest.main()
