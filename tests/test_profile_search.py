"""tools/profile_search.py: it times the served search in place, so what it measures is what search answers."""
from flowmem.retrieval import candidates, pipeline, signals
from tests.helpers import T0, MemoryTestCase, add_body
from tools import profile_search
from tools.benchkit.heavy_user import USER

LINES = ["Ana: I adopted a beagle named Biscuit last spring.", "Ben: what a cute name!",
         "Ana: I work night shifts as a nurse at St Mary's.", "Ben: that sounds exhausting",
         "Ana: my sister lives in Leeds with her two kids.", "Ben: do you visit often?"]
ASKED = ["What is Ana's dog called?", "Where does Ana's sister live?", "How often does Ben visit?"]


class ProfileSearchTest(MemoryTestCase):
    def test_the_profiled_searches_answer_as_searches_do_and_every_stage_is_put_back(self):
        self.memory.add(add_body(USER, "s1", LINES, timestamp=T0))
        plain = [self.memory.search({"user_id": USER, "query": q, "top_k": 100}) for q in ASKED]
        before = (pipeline.final_order, candidates._Gathering.__dict__["pool"], dict(signals.SIGNALS))
        ms, found, answers = profile_search.profiled(self.memory, ASKED, passes=2)
        self.assertEqual(answers, plain)
        self.assertEqual((pipeline.final_order, candidates._Gathering.__dict__["pool"], dict(signals.SIGNALS)),
                         before)
        for label in ("search", "prepare", "pool", "final order", "fusion", "items", "evidence grade"):
            self.assertGreater(ms[label], 0.0, label)
        self.assertLessEqual(ms["prepare"] + ms["final order"] + ms["items"], ms["search"])
        self.assertGreater(found["messages holding a question word"], 0)
        self.assertIn("| search |", profile_search.table(ms, found))
