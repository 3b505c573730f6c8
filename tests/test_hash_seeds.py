"""Search results are the same bytes under every PYTHONHASHSEED: each check runs a search in child processes.

flowmem's promise is byte-identical results on every run: a set's order, which follows the
hash seed, must never reach a score or an order. Each test runs one script under several
seeds, each in a process of its own (so this module is in the end-to-end tier; the search
itself is tested in process in tests/test_search.py).
"""
import json
import os
import subprocess
import sys
import unittest

from tests.server import ROOT


class DeterminismTest(unittest.TestCase):
    SCRIPT = r"""
import json, sys, tempfile, os
sys.path.insert(0, sys.argv[1])
from flowmem.config import load
from flowmem.memory import Memory
d = tempfile.mkdtemp()
m = Memory(load({"db": os.path.join(d, "x.db"), "synchronous": "OFF"}, environ={}))
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
for s in range(6):
    msgs = [{"role": "user", "content": "P%d: %s %s %s" % (i % 2, words[(s + i) % 8], words[(s * i) % 8], words[i % 8]),
             "timestamp": 1683554160000 + s * 86400000} for i in range(25)]
    m.add({"request_id": "r%d" % s, "user_id": "u", "session_id": "sess-%d" % s, "messages": msgs})
out = [m.search({"query": q, "user_id": "u", "top_k": 100})
       for q in ("alpha beta", "gamma", "theta zeta eta", "P1 delta")]
print(json.dumps(out, sort_keys=True))
"""

    # Related words (the lexicon) and near spellings (the user's vocabulary) weigh many
    # terms per message: their sums and the pool they build must not follow the hash seed.
    BRIDGES_SCRIPT = r"""
import json, sys, tempfile, os
sys.path.insert(0, sys.argv[1])
from flowmem.config import load
from flowmem.memory import Memory
d = tempfile.mkdtemp()
m = Memory(load({"db": os.path.join(d, "x.db"), "synchronous": "OFF"}, environ={}))
lines = ["my sister got married in spring", "the wedding ceremony was lovely", "we wed at the town hall",
         "I ride my bike daily", "cycling and pedalling all week", "the kids and the children played",
         "she is allergic to nuts", "an allergy test", "a great restaurant downtown", "restaurants are costly"]
msgs = [{"role": "user", "content": "P%d: %s" % (i % 2, lines[i % len(lines)]), "timestamp": 1683554160000 + i}
        for i in range(40)]
m.add({"request_id": "r", "user_id": "u", "session_id": "s", "messages": msgs})
out = [m.search({"query": q, "user_id": "u", "top_k": 100})
       for q in ("marriage of my child", "bicycle allergic", "restuarant wedding", "matrimony kid")]
print(json.dumps(out, sort_keys=True))
"""

    # A float sum depends on its order; a message's terms are held in a set, whose order
    # follows PYTHONHASHSEED. Many terms with unround weights make any such order show.
    COVERAGE_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
from flowmem.retrieval import signals
from flowmem.retrieval.pool import Pool
from flowmem.retrieval.query import analyze
terms = ["w%d" % i for i in range(12)]
query = analyze(" ".join(terms), stemmed=False, dates=False)
idf = {t: 1.0 / (3 + i) + 0.1 * i for i, t in enumerate(terms)}
hits = {(1, n): frozenset(terms[n % 3:]) for n in range(6)}
pool = Pool(messages={}, views={}, view_bm25={}, option_view_bm25=[], idf=idf, feedback={}, matched=sorted(hits),
            hits=hits, best_bm25={}, related={}, typo={})
print(sorted((key, repr(value)) for key, value in signals.coverage(query, pool).items()))
"""

    def _outputs(self, script, seeds):
        outputs = set()
        for seed in seeds:
            env = dict(os.environ, PYTHONHASHSEED=seed)
            result = subprocess.run([sys.executable, "-c", script, ROOT], env=env, capture_output=True, check=True)
            outputs.add(result.stdout)
        return outputs

    def test_results_are_byte_identical_across_hash_seeds(self):
        outputs = self._outputs(self.SCRIPT, ("0", "1", "12345", "random"))
        self.assertEqual(len(outputs), 1)
        self.assertGreater(len(json.loads(outputs.pop())[0]["data"]), 10)

    def test_related_and_typo_bridges_are_byte_identical_across_hash_seeds(self):
        outputs = self._outputs(self.BRIDGES_SCRIPT, ("0", "1", "7", "12345", "random"))
        self.assertEqual(len(outputs), 1)
        signals = [set(item["signals"]) for result in json.loads(outputs.pop()) for item in result["data"]]
        self.assertTrue(any("related" in s for s in signals) and any("typo" in s for s in signals))

    def test_coverage_is_the_same_float_across_hash_seeds(self):
        self.assertEqual(len(self._outputs(self.COVERAGE_SCRIPT, [str(seed) for seed in range(8)])), 1)


if __name__ == "__main__":
    unittest.main()
