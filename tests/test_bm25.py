"""flowmem's BM25 against the reference: SQLite FTS5's own bm25() on a one-user table."""
import sqlite3
import unittest

from flowmem import bm25, fts
from flowmem.search import Scoring, candidates
from flowmem.tokenize import query_terms

from tests.helpers import MemoryTestCase, add_body

CONVERSATION = [
    "Alice: I adopted a beagle puppy named Rex last week",
    "Bob: A beagle! Do beagles bark a lot?",
    "Alice: Rex barks at the mailman every morning",
    "Bob: My cat ignores the mailman completely",
    "Alice: Rex and the cat would not be friends",
    "Bob: I am training for a marathon in October",
    "Alice: A marathon sounds hard, my knees would hate it",
    "Bob: I run ten miles every Sunday morning with my cat watching",
]


class Bm25ReferenceTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("solo", "s1", CONVERSATION))
        self.memory.add(add_body("solo", "s2", CONVERSATION[::-1]))

    def ours(self, question):
        with self.memory.store.reading() as reader:
            key, n_docs, total = reader.user("solo")
            hits = candidates(reader, key, n_docs, total, query_terms(question), Scoring())
        return key, {hit.view.doc_id: hit.score for hit in hits}

    def reference(self, key, question):
        match = " OR ".join('"%s"' % fts.term(key, t) for t in query_terms(question))
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        rows = conn.execute("SELECT rowid, bm25(%s) FROM %s WHERE %s MATCH ?" % (fts.TABLE, fts.TABLE, fts.TABLE),
                            (match,))
        return {rowid: -score for rowid, score in rows}

    def test_scores_equal_fts5_bm25_on_a_one_user_table(self):
        for question in ("Who barks at the mailman?", "beagle puppy Rex", "marathon knees", "cat morning",
                         "What does Bob do on Sunday with his cat every morning?"):
            with self.subTest(question=question):
                key, ours = self.ours(question)
                reference = self.reference(key, question)
                self.assertEqual(set(ours), set(reference))
                for doc, score in reference.items():
                    self.assertAlmostEqual(ours[doc], score, places=12)

    def test_other_users_change_fts5_bm25_but_not_ours(self):
        question = "Who barks at the mailman?"
        key, before = self.ours(question)
        reference_before = self.reference(key, question)
        for i in range(5):
            self.memory.add(add_body("other%d" % i, "s", ["Zoe: the mailman barks back, mailman mailman"] * 10))
        _, after = self.ours(question)
        reference_after = self.reference(key, question)
        self.assertEqual(after, before)
        self.assertNotEqual(reference_after, reference_before)


class IdfTest(unittest.TestCase):
    def test_rare_terms_weigh_more_and_common_terms_keep_a_tiny_positive_weight(self):
        self.assertGreater(bm25.idf(100, 1), bm25.idf(100, 10))
        self.assertEqual(bm25.idf(100, 80), 1e-6)

    def test_longer_documents_score_lower_for_the_same_term_count(self):
        tf = {"t": {1: 1, 2: 1}}
        scores = bm25.scores(["t"], tf, {1: 5, 2: 50}, n_docs=10, total_length=200)
        self.assertGreater(scores[1], scores[2])


if __name__ == "__main__":
    unittest.main()
