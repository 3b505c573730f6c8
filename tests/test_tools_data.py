"""Tools that need data they do not have say so in one line; the contract checker says what it writes, where."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

from tests.server import ROOT, ServerProcess
from tools import locomo_dev

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")
SYNTHETIC = os.path.join(ROOT, "fixtures", "synthetic-small.json")

# Each tool that reads LoCoMo, with the arguments that name the file.
LOCOMO_TOOLS = (
    ("eval.py", ["locomo", "{path}"]),
    ("tune.py", ["--data", "{path}", "--show"]),
    ("ablation.py", ["--locomo", "{path}"]),
    ("crossval.py", ["--data", "{path}"]),
    ("bench_locomo.py", ["{path}"]),
    ("bench_query_caps.py", ["{path}"]),
    ("bench_search_cpu.py", ["{path}"]),
    ("result_hash.py", ["locomo", "{path}"]),
)


def run_tool(name, args, cwd=ROOT):
    """tools/`name` run as a user runs it: `python3 -m tools.NAME` with the clone importable from `cwd`.

    contract_check.py is the exception: independent of the clone on purpose, it runs by its path.
    """
    if name == "contract_check.py":
        command = [sys.executable, os.path.join(ROOT, "tools", name)]
    else:
        command = [sys.executable, "-m", "tools." + name[:-len(".py")]]
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(command + args, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


class MissingDataTest(unittest.TestCase):
    def assert_one_line(self, result, *words):
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        for word in words:
            self.assertIn(word, lines[0])

    def test_every_locomo_tool_names_a_missing_file_and_where_to_get_it(self):
        missing = os.path.join(tempfile.gettempdir(), "no-such-dir", "locomo10-dev.json")
        for name, args in LOCOMO_TOOLS:
            with self.subTest(tool=name):
                result = run_tool(name, [a.format(path=missing) for a in args])
                self.assert_one_line(result, "error: LoCoMo file not found: " + missing,
                                     "https://github.com/snap-research/locomo", "data/locomo10.json", "README")

    def test_a_file_that_is_not_locomo_is_said_to_be_so(self):
        for name, args in LOCOMO_TOOLS[:2]:
            with self.subTest(tool=name):
                self.assert_one_line(run_tool(name, [a.format(path=SYNTHETIC) for a in args]),
                                     SYNTHETIC, "is not a LoCoMo-format file")

    def test_the_default_path_is_inside_the_clone_whatever_the_working_directory(self):
        with tempfile.TemporaryDirectory() as elsewhere:
            result = run_tool("eval.py", ["locomo"], cwd=elsewhere)
        if result.returncode == 0:
            self.skipTest("data/locomo10-dev.json is present in this clone")
        self.assert_one_line(result, os.path.join(ROOT, "data", "locomo10-dev.json"))
        self.assertNotIn("..", result.stderr.split("(")[0])


class ReadmeTest(unittest.TestCase):
    def test_the_readme_and_the_docs_name_no_path_outside_the_clone(self):
        docs = os.path.join(ROOT, "docs")
        paths = [os.path.join(ROOT, "README.md")] + sorted(
            os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
        for path in paths:
            with self.subTest(file=os.path.relpath(path, ROOT)), open(path, encoding="utf-8") as f:
                text = f.read()
                # a relative link between the docs (../README.md) stays inside; nothing may climb out
                escaping = [p for p in re.findall(r"\.\./[^\s)`'\"]*", text)
                            if not os.path.normpath(os.path.join(os.path.dirname(path), p)).startswith(ROOT + os.sep)]
                self.assertEqual(escaping, [])
                self.assertNotIn("shared/data", text)
        with open(paths[0], encoding="utf-8") as f:
            self.assertIn("https://github.com/snap-research/locomo", f.read())


class LocomoDevTest(unittest.TestCase):
    def test_the_development_split_is_the_five_named_conversations_in_file_order(self):
        samples = [{"sample_id": "conv-%d" % n, "qa": []} for n in (26, 30, 41, 42, 43, 44, 47, 48, 49, 50)]
        data = locomo_dev.dev_split(list(reversed(samples)))
        self.assertEqual([s["sample_id"] for s in json.loads(data)], ["conv-43", "conv-42", "conv-41", "conv-30",
                                                                      "conv-26"])
        with self.assertRaises(ValueError) as cm:
            locomo_dev.dev_split(samples[1:])
        self.assertIn("conv-26", str(cm.exception))

    def test_the_command_writes_the_split_and_says_whether_it_is_the_measured_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            source, out = os.path.join(tmp, "locomo10.json"), os.path.join(tmp, "data", "dev.json")
            with open(source, "w", encoding="utf-8") as f:
                json.dump([{"sample_id": "conv-%d" % n, "text": "é"} for n in (26, 30, 41, 42, 43, 50)], f)
            result = run_tool("locomo_dev.py", [source, "--out", out])
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("NOT the bytes", result.stdout)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(len(json.load(f)), 5)
            result = run_tool("locomo_dev.py", [os.path.join(tmp, "nowhere.json")])
            self.assertEqual(result.returncode, 1)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


class ContractCheckerPrefixTest(unittest.TestCase):
    def test_it_warns_before_writing_and_every_user_it_writes_has_the_prefix(self):
        tmp = tempfile.TemporaryDirectory(prefix="flowmem-check-")
        self.addCleanup(tmp.cleanup)
        db = os.path.join(tmp.name, "scratch.db")
        server = ServerProcess(db)
        try:
            result = run_tool("contract_check.py", ["--endpoint", server.endpoint, "--user-prefix", "scratch/"])
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(result.returncode, 0, result.stdout[-2000:])
        self.assertIn("warning: the checks write test users (user_id starting 'scratch/') into the memory behind "
                      + server.endpoint, result.stderr)
        conn = sqlite3.connect(db)
        self.addCleanup(conn.close)
        users = [u for (u,) in conn.execute("SELECT user_id FROM users")]
        self.assertGreater(len(users), 10)
        self.assertEqual([u for u in users if not u.startswith("scratch/")], [])


if __name__ == "__main__":
    unittest.main()
