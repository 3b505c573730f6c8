"""The same bytes under every PYTHONHASHSEED: each check runs in child processes, one per seed.

flowmem's promise is byte-identical results on every run: a set's order, which follows the
hash seed, must never reach a score or an order, nor the evaluation suites the scores are
measured on. Each test runs one script or command under several seeds, each in a process of
its own (so this module is in the end-to-end tier; what they run is tested in process in
tests/test_search.py, test_synthetic.py, test_synthetic_chat.py, test_chatstyle.py and test_meaning.py).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from tests import test_synthetic, test_synthetic_chat
from tests.server import ROOT
from tests.test_chatstyle import SAMPLE
from tests.test_synthetic import SyntheticTestCase


class SearchTest(unittest.TestCase):
    """A search's results, its bridges and its coverage sums."""

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


class SyntheticSuiteTest(SyntheticTestCase):
    """The synthetic suite's generator (tools.synthetic) as a command."""

    def test_hash_seed_does_not_matter(self) -> None:
        expected = test_synthetic.dumps(self.dataset).encode("utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            for hash_seed in ("0", "4242"):
                out = os.path.join(tmp, "suite-%s.json" % hash_seed)
                env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=test_synthetic.REPO)
                subprocess.run([sys.executable, *test_synthetic.CLI, "--seed", "1", "--size", "small", "--out", out],
                               check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), expected, "PYTHONHASHSEED=%s changed the output" % hash_seed)


class SyntheticChatTest(unittest.TestCase):
    """The chat suite's generator (tools.synthetic --chat) as a command."""

    def test_the_cli_writes_the_same_bytes_under_another_hash_seed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "chat.json")
            env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=test_synthetic_chat.REPO)
            subprocess.run([sys.executable, *test_synthetic_chat.CLI, "--chat", "--seed", "1", "--out", out],
                           check=True, env=env, capture_output=True)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), test_synthetic_chat.TEXT)


class ChatStyleTest(unittest.TestCase):
    """LoCoMo's turns rewritten as chat (tools.evalkit.chatstyle)."""

    def test_it_is_the_same_under_another_hash_seed(self):
        script = ("import json; from tools.evalkit import dataset; from tools.evalkit.chatstyle import chat_style;"
                  "print(json.dumps(dataset.to_json(chat_style(dataset.load_locomo(%r))), sort_keys=True))" % SAMPLE)
        runs = {subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                               env=dict(os.environ, PYTHONHASHSEED=seed)).stdout for seed in ("1", "2")}
        self.assertEqual(len(runs), 1)


class MeaningTest(unittest.TestCase):
    """A message's meaning vector (flowmem.text.meaning), in a fresh process each."""

    def test_message_vectors_are_the_same_in_a_fresh_process_with_another_hash_seed(self):
        code = ("from flowmem.text import meaning;"
                "print(meaning.message_vector(meaning.text_stems('my retired racing greyhound hates rain')).hex())")
        outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env=dict(os.environ, PYTHONHASHSEED=seed)).stdout for seed in ("0", "1", "77")}
        self.assertEqual(len(outputs), 1)


if __name__ == "__main__":
    unittest.main()
