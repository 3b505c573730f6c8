"""The bench kit (tools/benchkit/): what every bench shares behaves as the benches' reports rely on."""
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import unittest

from tests.server import ROOT
from tools.benchkit import stats
from tools.benchkit.report import fmt, mib


class StatsTest(unittest.TestCase):
    def test_the_two_percentiles_are_linear_and_nearest_rank(self):
        values = [5, 1, 3, 2, 4]
        self.assertEqual(stats.percentile(values, 50), 3)
        self.assertEqual(stats.percentile([1, 2], 50), 1.5)  # between the ranks
        self.assertEqual(stats.nearest_rank([1, 2], 50), 1)  # a measured value
        self.assertEqual(stats.nearest_rank(list(range(1, 101)), 95), 95)
        self.assertEqual(stats.nearest_rank([], 50), 0.0)
        self.assertNotEqual(stats.percentile([], 50), stats.percentile([], 50))  # NaN: nothing measured

    def test_the_summary_counts_and_takes_the_linear_percentiles(self):
        summary = stats.summary([1.0, 2.0, 3.0, 4.0])
        self.assertEqual((summary["n"], summary["p50_ms"], summary["max_ms"], summary["mean_ms"]), (4, 2.5, 4.0, 2.5))

    def test_timed_bare_gives_a_latency_and_the_rows_of_each_expression(self):
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        conn.executemany("INSERT INTO t VALUES (?)", [("red apple",), ("green apple",), ("red car",)])
        sql = "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid LIMIT ?"
        times, rows = stats.timed_bare(conn, sql, ["apple", "red", "blue"], 5)
        self.assertEqual(rows, [[(1,), (2,)], [(1,), (3,)], []])
        self.assertEqual(len(times), 3)
        self.assertTrue(all(t >= 0 for t in times))


class ReportTest(unittest.TestCase):
    def test_cells_say_dash_for_nothing_and_mib_takes_its_precision(self):
        self.assertEqual(fmt(None), "-")
        self.assertEqual(fmt(float("nan")), "-")
        self.assertEqual(mib(1536), "2")
        self.assertEqual(mib(1536, "%.1f"), "1.5")

    def test_the_command_line_names_a_module_or_package_as_typed_and_hides_the_key(self):
        with tempfile.TemporaryDirectory() as tmp:
            package = os.path.join(tmp, "kitprobe")
            os.makedirs(package)
            with open(os.path.join(package, "__init__.py"), "w") as f:
                f.write("")
            with open(os.path.join(package, "__main__.py"), "w") as f:
                f.write("from tools.benchkit.report import command_line\nprint(command_line())\n")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, tmp]))
            out = subprocess.run([sys.executable, "-m", "kitprobe", "--api-key", "s3cret", "--x"], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(out, "python -m kitprobe --api-key '***' --x")


class CheckoutTest(unittest.TestCase):
    def run_python(self, code: str) -> str:
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_use_flowmem_imports_the_package_of_another_checkout_and_its_modules_from_there(self):
        with tempfile.TemporaryDirectory() as other:
            os.makedirs(os.path.join(other, "flowmem"))
            with open(os.path.join(other, "flowmem", "__init__.py"), "w") as f:
                f.write("WHERE = 'other'\n")
            with open(os.path.join(other, "flowmem", "config.py"), "w") as f:
                f.write("WHERE = 'other config'\n")
            out = self.run_python("""
                import sys
                from tools.benchkit.checkout import use_flowmem
                before = list(sys.path)
                print(use_flowmem(%r).WHERE)
                from flowmem import config
                print(config.WHERE, sys.path == before)
                try:
                    use_flowmem(%r)
                except RuntimeError:
                    print("refused")
            """ % (other, ROOT))
        self.assertEqual(out.split("\n")[:3], ["other", "other config True", "refused"])


if __name__ == "__main__":
    unittest.main()
