"""The evaluation kit against real processes: the same numbers in-process and over HTTP (a real server), and
`tools.eval` and its `compare` run as commands from a fresh clone. End-to-end tier; the kit's parts are
tested in process in tests/test_evalkit.py."""
import os
import subprocess
import sys
import tempfile
import unittest

from flowmem.config import load
from tests.server import ROOT, ServerProcess
from tests.test_evalkit import SAMPLE
from tools.evalkit import dataset, runner
from tools.evalkit.replay import HttpClient, InProcessClient


class SameNumbersTest(unittest.TestCase):
    def test_in_process_and_http_give_identical_per_question_results(self):
        data = dataset.load_locomo(SAMPLE)
        with tempfile.TemporaryDirectory() as tmp:
            local = InProcessClient(load({"db": os.path.join(tmp, "a.db")}, environ={}))
            try:
                local_run = runner.evaluate(data, local)
            finally:
                local.close()
            server = ServerProcess(os.path.join(tmp, "b.db"))
            try:
                remote = HttpClient(server.endpoint)
                remote_run = runner.evaluate(data, remote)
                remote.close()
            finally:
                server.stop()
            paths = []
            for name, run in (("local", local_run), ("remote", remote_run)):
                paths.append(os.path.join(tmp, name + ".jsonl"))
                runner.write_jsonl(run, paths[-1])
            strip = lambda p: [dict(line, latency_ms=0) for line in runner.read_jsonl(p)]  # noqa: E731
            self.assertEqual(strip(paths[0]), strip(paths[1]))
        self.assertEqual(runner.groups(local_run, ["single-hop"])["overall"]["hit@10"], 1.0)


class EvalCommandTest(unittest.TestCase):
    def test_eval_and_compare_commands_run_from_a_fresh_clone(self):
        with tempfile.TemporaryDirectory() as tmp:
            out_a, out_b = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
            for out, extra in ((out_a, []), (out_b, ["--set", "window_size=2"])):
                result = subprocess.run([sys.executable, "-m", "tools.eval", "locomo", SAMPLE,
                                         "--out", out] + extra, capture_output=True, text=True, cwd=ROOT, timeout=120)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn("| overall | 7 |", result.stdout)
                self.assertIn("2 skipped", result.stdout)
            for spelling in ("compare", "--compare"):
                result = subprocess.run(
                    [sys.executable, "-m", "tools.eval", spelling, out_a, out_b],
                    capture_output=True, text=True, cwd=ROOT, timeout=60)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn("| hit@10 | 7 |", result.stdout)
            categories = sorted({q["category"] for q in runner.read_jsonl(out_a)})
            result = subprocess.run([sys.executable, "-m", "tools.eval", "compare", out_a, out_b,
                                     "--category", categories[0]], capture_output=True, text=True, cwd=ROOT,
                                    timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            n = sum(1 for q in runner.read_jsonl(out_a) if q["category"] == categories[0])
            self.assertLess(n, 7)
            self.assertIn("| hit@10 | %d |" % n, result.stdout)
            self.assertEqual(len(runner.read_jsonl(out_a)), 7)
            self.assertIn("message_ranks", runner.read_jsonl(out_a)[0])



if __name__ == "__main__":
    unittest.main()
