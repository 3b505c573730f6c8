"""A user's memory is theirs alone: what they see, how it ranks, and what a search reads."""
import json

from flowmem.storage import fts
from flowmem.text.tokenize import query_terms
from tests.helpers import MemoryTestCase, add_body

MINE = [
    ["Ann: my sister Beth moved to Lisbon in March", "Ben: Lisbon is lovely, does Beth like the food?",
     "Ann: she loves the pastries and the trams", "Ben: trams are the best way to see a city"],
    ["Ann: I started pottery classes on Tuesdays", "Ben: pottery! what do you make?", "Ann: bowls, mostly wonky bowls"],
]
QUESTIONS = ["Where did Beth move?", "What does Ann make in pottery class?", "trams city", "Lisbon food pastries",
             "When are the pottery classes?", "bowls"]


def theirs(i):
    # Other users talk about the same things, so their words would shift shared statistics.
    return [["Cy%d: Lisbon Lisbon trams pottery bowls Beth %d" % (i, j) for j in range(12)],
            ["Di%d: pastries and food and trams in the city" % i] * 5]


class IsolationTest(MemoryTestCase):
    def load(self, memory, with_others):
        if with_others:
            for i in range(6):
                for n, session in enumerate(theirs(i)):
                    # Same session ids and request ids as the measured user: still other writes.
                    memory.add(add_body("other-%d" % i, "s%d" % n, session, request_id="r%d" % n))
            # Their deletions too: a session, one forgotten message, a user whole.
            memory.delete_session("other-0", "s1")
            memory.delete_message("other-1", memory.list_messages("other-1")["data"][0]["id"])
            memory.delete_user("other-2")
        for n, session in enumerate(MINE):
            memory.add(add_body("ann", "s%d" % n, session, request_id="r%d" % n))
        if with_others:
            memory.add(add_body("other-late", "s0", ["Ed: Beth Lisbon pottery bowls trams"] * 3, request_id="r0"))

    def results(self, memory):
        return [json.dumps(memory.search({"query": q, "user_id": "ann", "top_k": 100}), sort_keys=True)
                for q in QUESTIONS]

    def test_results_are_byte_identical_whether_or_not_other_users_exist(self):
        alone = self.open_memory("alone.db")
        crowded = self.open_memory("crowded.db")
        self.load(alone, with_others=False)
        self.load(crowded, with_others=True)
        self.assertEqual(self.results(crowded), self.results(alone))

    def test_a_user_never_sees_another_users_messages(self):
        self.load(self.memory, with_others=True)
        for q in QUESTIONS:
            for item in self.search(q, "ann", 100):
                self.assertTrue(all(line.startswith(("Ann:", "Ben:")) for line in item["content"].split("\n")))
        self.assertTrue(all(i["content"].startswith("Cy3") or i["content"].startswith("Di3")
                            for i in self.search("Lisbon trams", "other-3", 100)))

    def test_a_search_reads_only_the_asking_users_index_entries(self):
        self.load(self.memory, with_others=True)
        store = self.memory.store
        terms = query_terms("Lisbon trams pottery bowls Beth pastries city")
        with store.reading() as reader:
            key = reader.user_key("ann")
            params = [term for _, chunk in fts.postings_sql(key, "message", terms) for term in chunk]
            postings = reader.postings(key, "message", terms)
            own = {row[0] for row in reader.conn.execute(
                "SELECT v.doc_id FROM views v JOIN sessions s ON s.session_key = v.session_key WHERE s.user_key = ?",
                (key,))}
        self.assertTrue(postings)
        self.assertTrue(all(p.startswith(fts.user_term_prefix(key)) for p in params))
        self.assertLessEqual({doc for _, doc in postings}, own)
