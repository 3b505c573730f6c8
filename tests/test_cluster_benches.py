"""The cluster's benchmark tools still run: each as a command, with tiny parameters, exits 0 and prints its figures.

tools/bench_cluster.py, bench_rebalance.py, bench_replica.py and measure_rpo.py are run by
hand, rarely, and call into flowmem/cluster/ (nodes, control, move, rebalance): a change of
those that breaks a bench (bench_cluster once called cluster.owner with its old signature)
is caught here. Each needs HAProxy or Litestream: skipped with a one-line reason where it
is absent, required when CI is set (tests/components.py). The figures are not checked.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from flowmem.config import load
from flowmem.memory import Memory
from tests.components import program
from tests.helpers import add_body

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 120


class ClusterBenchesTest(unittest.TestCase):
    def bench(self, tool: str, *args: str) -> str:
        """`python3 -m tools.<tool> ARGS`'s output (from the clone's root); the test fails unless it exits 0."""
        result = subprocess.run([sys.executable, "-m", "tools." + tool[:-len(".py")], *args], cwd=ROOT,
                                capture_output=True, text=True, timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 0, "%s %s:\n%s%s" % (tool, " ".join(args), result.stdout,
                                                                 result.stderr[-4000:]))
        return result.stdout

    def test_bench_cluster_prints_its_table(self):
        program(self, "haproxy", "/usr/sbin/haproxy")
        out = self.bench("bench_cluster.py", "--adds", "16", "--searches", "8", "--users", "4", "--clients", "2")
        self.assertRegex(out, r"Adds/s: one node directly \d+")
        self.assertIn("| through the front | Adds/s |", out)
        self.assertRegex(out, r"\| 1 node \| \d+ \|")
        self.assertRegex(out, r"\| 3 nodes \| \d+ \|")

    def test_bench_rebalance_prints_its_table_with_users_moved(self):
        program(self, "haproxy", "/usr/sbin/haproxy")
        # 160 users: bench-116 and bench-158 are in slots 1023 and 1020, the plan's first two handovers.
        out = self.bench("bench_rebalance.py", "--users", "160", "--messages", "2", "--slots", "2")
        self.assertIn("| slot | users moved |", out)
        self.assertRegex(out, r"\| 1023 \| 1 \| [0-9.]+ \| [0-9.]+ \|")
        self.assertRegex(out, r"\| 1020 \| 1 \| [0-9.]+ \| [0-9.]+ \|")
        self.assertIn("2 users moved", out)
        self.assertIn("aborted 0", out)

    def test_bench_replica_prints_its_figures(self):
        program(self, "litestream")
        directory = tempfile.mkdtemp(prefix="flowmem-bench-replica-test-")
        self.addCleanup(shutil.rmtree, directory, True)
        db = os.path.join(directory, "source.db")
        memory = Memory(load({"db": db}, environ={}))
        try:
            for n in range(15):  # 300 messages: the 5 Adds of 20 below copy 100 of them
                memory.add(add_body("u%d" % (n % 3), "s%d" % n,
                                    ["message %d.%d about the lake and the garden" % (n, i) for i in range(20)]))
        finally:
            memory.close()
        out = self.bench("bench_replica.py", db, "--adds", "5", "--settle", "2")
        for figure in ("snapshot_mb", "replica_bytes_per_message", "restore_and_check_s", "check_s"):
            self.assertRegex(out, r"(?m)^%s: [0-9.]+$" % figure)
        self.assertRegex(out, r"(?m)^messages_added: 100$")
        self.assertRegex(out, r"(?m)^restored_messages: 400$")

    def test_measure_rpo_prints_its_trial(self):
        program(self, "litestream")
        # --bound 60: this checks that the tool runs; the recovery point itself is measured at full size.
        # 3 s of warm-up and 2 of Adds: a loss before Litestream's first sync leaves no replica to restore.
        out = self.bench("measure_rpo.py", "--trials", "1", "--duration", "2", "--warmup", "3", "--clients", "2",
                         "--bound", "60")
        self.assertTrue(re.search(r"trial 1: \d+ Adds acknowledged, \d+ lost", out), out)
        self.assertIn("sync interval 1s, 1 trials:", out)


if __name__ == "__main__":
    unittest.main()
