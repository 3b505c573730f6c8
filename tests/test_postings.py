"""Each user's message postings, held in memory between searches (storage/postings.py), must
be exactly what the FTS5 index holds, at every version of the user's memory."""
import unittest

from flowmem.storage.postings import EMPTY, count_rows, extended
from flowmem.storage.views import KINDS, MESSAGE
from tests.helpers import MemoryTestCase, add_body

TEXTS = [
    "Dana: I bought a red kayak, a red paddle and a red hat",
    "Priya: Nice! Where? 3.5 km from the harbour on 2023-05-07?",
    "Dana: 我们昨天去了公园 with the café crew: naïve Über drivers",
    "Dana: Yesterday, last Friday and two weeks ago: all the same story",
]


def user_key(memory, user_id):
    with memory.store.reading() as reader:
        return reader.user_key(user_id)


def from_index(memory, user_id):
    """The user's message-view postings and document frequencies as FTS5 gives them."""
    key = user_key(memory, user_id)
    with memory.store.reading() as reader:
        reader.postings_cache = None  # read the index itself
        tokens = sorted({t for (t,) in reader.conn.execute(
            "SELECT substr(term, ?) FROM view_index_rows WHERE term >= ? AND term < ?",
            (len("%d_m_" % key) + 1, "%d_m_" % key, "%d_m`" % key))})
        docs = [doc for (doc,) in reader.conn.execute(
            "SELECT doc_id FROM views JOIN sessions USING (session_key) WHERE user_key = ? AND kind = ?",
            (key, MESSAGE))]
        return (reader.postings(key, MESSAGE, tokens), reader.doc_freqs(key, tokens, KINDS), tokens,
                reader.views(docs))


def from_memory(memory, user_id, tokens):
    key = user_key(memory, user_id)
    with memory.store.reading() as reader:
        held = reader.held_postings(key)
        assert held is not None
        first = reader.doc_freqs(key, tokens, KINDS)
        assert reader.doc_freqs(key, tokens, KINDS) == first  # the second time from the memo
        return held, reader.postings(key, MESSAGE, tokens), first, reader.message_views(key, list(held.docs))


class HeldPostingsTest(MemoryTestCase):
    def assert_same_as_index(self, user_id="u1"):
        rows, doc_freqs, tokens, views = from_index(self.memory, user_id)
        held, held_rows, held_doc_freqs, held_views = from_memory(self.memory, user_id, tokens)
        self.assertTrue(rows)
        self.assertEqual(held_rows, rows)
        self.assertEqual(held_doc_freqs, doc_freqs)
        self.assertEqual(list(held_views.items()), list(views.items()))
        self.assertEqual(held.term_frequencies(tokens), count_rows(rows))
        return held

    def test_held_postings_are_the_index_s_after_every_add(self):
        for i, text in enumerate(TEXTS):
            self.memory.add(add_body("u1", "s%d" % (i % 2), [text, text.upper()], request_id="r%d" % i))
            self.memory.add(add_body("u2", "s1", ["Other user: kayak %d" % i], request_id="o%d" % i))
            self.assert_same_as_index()

    def test_an_add_makes_new_held_postings_and_leaves_the_ones_a_search_may_still_read(self):
        self.memory.add(add_body("u1", "s1", ["Dana: a red kayak"], request_id="a"))
        before = self.assert_same_as_index()
        kayak = before.term_frequencies(["kayak"])
        self.memory.add(add_body("u1", "s1", ["Dana: a second kayak"], request_id="b"))
        after = self.assert_same_as_index()
        self.assertIsNot(after, before)
        self.assertEqual(before.term_frequencies(["kayak"]), kayak)
        self.assertEqual(len(after.term_frequencies(["kayak"])["kayak"]), 2)

    def test_a_write_by_another_process_extends_the_held_postings(self):
        self.memory.add(add_body("u1", "s1", ["Dana: a red kayak"], request_id="a"))
        self.assert_same_as_index()
        other = self.open_memory()  # a second Memory on the same file stands for another process
        other.add(add_body("u1", "s2", ["Dana: a blue tent"], request_id="b"))
        held = self.assert_same_as_index()
        self.assertEqual(held.doc_freq("tent"), 1)
        self.assertEqual([i["content"] for i in self.search("tent")][0], "Dana: a blue tent")

    def test_a_deleted_user_s_postings_are_not_served_again(self):
        self.memory.add(add_body("u1", "s1", ["Dana: a red kayak"], request_id="a"))
        self.assertTrue(self.search("kayak"))
        self.memory.delete_user("u1")
        self.memory.add(add_body("u1", "s1", ["Dana: a green tent"], request_id="b"))
        self.assertEqual([i["content"] for i in self.search("kayak tent")], ["Dana: a green tent"])
        self.assert_same_as_index()

    def test_a_user_whose_postings_are_more_than_the_cache_holds_is_read_from_the_index_with_the_same_results(self):
        bounded = self.open_memory(cache_postings_bytes=5)
        for i, text in enumerate(TEXTS):
            self.memory.add(add_body("u1", "s1", [text], request_id="r%d" % i))
        with bounded.store.reading() as reader:
            self.assertIsNone(reader.held_postings(reader.user_key("u1")))
        for question in ("red kayak", "where was the harbour", "公园", "last Friday"):
            self.assertEqual(self.search(question, memory=bounded), self.search(question))


class ExtendedTest(unittest.TestCase):
    def test_extending_in_two_steps_holds_what_one_step_holds(self):
        added = [(1, 7, 1, 3, "a b a"), (2, 7, 2, 2, "b c"), (5, 7, 3, 1, "a")]
        whole = extended(EMPTY, {7: (3, "s", "t")}, added, 6)
        in_steps = extended(extended(EMPTY, {7: (2, "s", "t")}, added[:2], 5), {7: (3, "s", "t")}, added[2:], 6)
        self.assertEqual(in_steps._replace(terms={}), whole._replace(terms={}))
        self.assertEqual({t: (list(d), n) for t, (d, n) in in_steps.terms.items()},
                         {t: (list(d), n) for t, (d, n) in whole.terms.items()})
        self.assertEqual(whole.rows(["a", "b"]), [("a", 1), ("a", 1), ("a", 5), ("b", 1), ("b", 2)])
        self.assertEqual((whole.n_messages, whole.doc_freq("a"), whole.doc_freq("z")), (3, 2, 0))
        self.assertEqual((whole.view(2).first, whole.view(2).length, whole.view(2).session_messages), (2, 2, 3))
        self.assertIsNone(whole.view(3))

    def test_doc_ids_past_32_bits_are_held_whole_beside_smaller_ones(self):
        big = 2 ** 32 + 5
        held = extended(extended(EMPTY, {7: (1, "s", "t")}, [(3, 7, 1, 1, "a")], 1), {7: (2, "s", "t")},
                        [(big, 7, 2, 1, "a b")], 3)
        self.assertEqual(held.term_frequencies(["a", "b"]), {"a": {3: 1, big: 1}, "b": {big: 1}})
        self.assertEqual(held.view(big).first, 2)


if __name__ == "__main__":
    unittest.main()
