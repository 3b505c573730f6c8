"""Search pauses Python's cyclic garbage collector, and leaves it as it found it."""
import gc
import unittest
from unittest import mock

from flowmem import memory as memory_module
from tests.helpers import MemoryTestCase, add_body


class CollectorPauseTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Dana: the pottery class was fun"]))
        self.seen = []
        real = memory_module.search

        def spy(*args, **kwargs):
            self.seen.append(gc.isenabled())
            return real(*args, **kwargs)
        patcher = mock.patch.object(memory_module, "search", spy)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(gc.enable)

    def test_the_collector_is_off_during_a_search_and_on_again_after(self):
        self.assertTrue(self.search("pottery?"))
        self.assertEqual(self.seen, [False])
        self.assertTrue(gc.isenabled())

    def test_the_collector_is_on_again_after_a_search_that_fails(self):
        with mock.patch.object(memory_module, "search", side_effect=RuntimeError("disk gone")):
            with self.assertRaises(RuntimeError):
                self.search("pottery?")
        self.assertTrue(gc.isenabled())

    def test_with_pause_gc_off_the_collector_runs_during_searches(self):
        self.memory = self.open_memory(pause_gc=False)
        self.search("pottery?")
        self.assertEqual(self.seen, [True])

    def test_a_collector_switched_off_by_someone_else_stays_off(self):
        gc.disable()
        self.search("pottery?")
        self.assertFalse(gc.isenabled())


if __name__ == "__main__":
    unittest.main()
