"""flowmem's BM25 against the reference: SQLite FTS5's own bm25()."""
import sqlite3
import unittest

from flowmem.memory import make_ranking
from flowmem.retrieval import bm25
from flowmem.retrieval.pipeline import prepare
from flowmem.retrieval.query import analyze
from flowmem.storage.views import MESSAGE
from flowmem.text import timeexpr
from flowmem.text.tokenize import split_speaker, tokenize
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
# FTS5's bm25() has these parameters built in; bm25.py takes them as arguments.
FTS5_K1, FTS5_B = 1.2, 0.75
QUESTIONS = ("Who barks at the mailman?", "beagle puppy Rex", "marathon knees", "cat morning",
             "What does Bob do on Sunday with his cat every morning?")


def reference_scores(documents, terms):
    """FTS5's bm25() over a table holding exactly `documents` (token lists), for an OR of `terms`."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE ref USING fts5(body, tokenize=\"ascii tokenchars '_.'\")")
    conn.executemany("INSERT INTO ref(rowid, body) VALUES (?, ?)",
                     [(i, " ".join(tokens)) for i, tokens in enumerate(documents, 1)])
    match = " OR ".join('"%s"' % t for t in terms)
    out = {rowid: -score for rowid, score in
           conn.execute("SELECT rowid, bm25(ref) FROM ref WHERE ref MATCH ?", (match,))}
    conn.close()
    return out


def formula_scores(terms, tf, lengths, n_docs, total_length):
    """bm25.py's BM25 with FTS5's parameters and idf from `tf` (which holds every document): FTS5's own case."""
    present = [t for t in terms if tf.get(t)]
    idf = {t: bm25.idf(n_docs, len(tf[t])) for t in present}
    return bm25.weighted_scores(present, idf, tf, lengths, n_docs, total_length, k1=FTS5_K1, b=FTS5_B)


class Bm25ReferenceTest(unittest.TestCase):
    def test_the_formula_matches_fts5_bm25(self):
        documents = [tokenize(split_speaker(c)[1]) for c in CONVERSATION * 2]
        for question in QUESTIONS:
            terms = analyze(question).terms
            tf = {}
            for i, tokens in enumerate(documents, 1):
                for t in terms:
                    if tokens.count(t):
                        tf.setdefault(t, {})[i] = tokens.count(t)
            ours = formula_scores(terms, tf, {i: len(d) for i, d in enumerate(documents, 1)}, len(documents),
                                  sum(len(d) for d in documents))
            reference = reference_scores(documents, terms)
            with self.subTest(question=question):
                self.assertEqual(set(ours), set(reference))
                for doc, score in reference.items():
                    self.assertAlmostEqual(ours[doc], score, places=12)

    def test_rare_terms_weigh_more_and_common_terms_keep_a_tiny_positive_weight(self):
        self.assertGreater(bm25.idf(100, 1), bm25.idf(100, 10))
        self.assertEqual(bm25.idf(100, 80), 1e-6)

    def test_longer_documents_score_lower_for_the_same_term_count(self):
        scores = formula_scores(["t"], {"t": {1: 1, 2: 1}}, {1: 5, 2: 50}, n_docs=10, total_length=200)
        self.assertGreater(scores[1], scores[2])


class PerUserStatisticsTest(MemoryTestCase):
    """Search's message BM25 is FTS5's bm25() over the user's own messages, whoever else is stored."""

    def setUp(self):
        super().setUp()
        self.memory.add(add_body("solo", "s1", CONVERSATION))
        self.memory.add(add_body("solo", "s2", CONVERSATION[::-1]))

    def message_scores(self, question):
        ranking = make_ranking(self.memory.config)
        with self.memory.store.reading() as reader:
            pool = prepare(reader, "solo", question, (), ranking).pool
        return {(v.session_key, v.first): pool.view_bm25[d] for d, v in pool.views.items()
                if v.kind == MESSAGE and d in pool.view_bm25}

    def reference(self, question):
        with self.memory.store.reading() as reader:
            rows = reader.conn.execute(
                "SELECT m.session_key, m.seq, m.tokens FROM messages m JOIN sessions s USING (session_key)"
                " JOIN users u USING (user_key) WHERE u.user_id = 'solo' ORDER BY m.session_key, m.seq").fetchall()
        # Lengths count the words of the text: date tokens are indexed but not counted.
        texts = [[t for t in r[2].split() if not timeexpr.is_date_token(t)] for r in rows]
        scores = reference_scores(texts, analyze(question).terms)
        return {(rows[i - 1][0], rows[i - 1][1]): s for i, s in scores.items()}

    def test_message_scores_equal_fts5_over_the_users_messages(self):
        for question in QUESTIONS:
            with self.subTest(question=question):
                ours, reference = self.message_scores(question), self.reference(question)
                self.assertEqual(set(ours), set(reference))
                for key, score in reference.items():
                    self.assertAlmostEqual(ours[key], score, places=12)

    def test_other_users_do_not_move_a_users_scores(self):
        before = self.message_scores(QUESTIONS[0])
        for i in range(5):
            self.memory.add(add_body("other%d" % i, "s", ["Zoe: the mailman barks back, mailman mailman"] * 10))
        self.assertEqual(self.message_scores(QUESTIONS[0]), before)


if __name__ == "__main__":
    unittest.main()
