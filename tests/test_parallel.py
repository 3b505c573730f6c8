"""make test's runner (tests/parallel.py): modules dealt to processes, their outcomes summed, a failure kept."""
import io
import unittest
from contextlib import redirect_stdout

from tests import parallel


class ParallelRunnerTest(unittest.TestCase):
    def test_modules_are_dealt_round_robin_in_the_order_given(self):
        self.assertEqual(parallel.shares(["a", "b", "c", "d", "e"], 2), [["a", "c", "e"], ["b", "d"]])
        self.assertEqual(parallel.shares(["a"], 4), [["a"]])
        self.assertEqual(parallel.shares(["a", "tests.test_cache_bytes", "b"], 2),
                         [["a"], ["b"], ["tests.test_cache_bytes"]])

    def test_the_counts_are_read_from_unittests_summary(self):
        self.assertEqual(parallel.counts("...\nRan 12 tests in 0.3s\n\nOK\n"), (12, 0))
        self.assertEqual(parallel.counts("Ran 5 tests in 1.0s\n\nFAILED (failures=2, errors=1, skipped=3)\n"), (5, 3))

    def test_a_share_that_fails_or_cannot_import_fails_the_run(self):
        out = io.StringIO()
        with redirect_stdout(out):
            status = parallel.main(["tests.test_bm25", "tests.no_such_module", "--jobs", "2"])
        self.assertEqual(status, 1)
        self.assertRegex(out.getvalue().splitlines()[-1], r"^\d+ passed, [1-9]\d* failed$")


if __name__ == "__main__":
    unittest.main()
