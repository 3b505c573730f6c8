"""The caches of users' postings and vectors count what an entry holds in bytes (issue 31, item 7).

Their bounds are in bytes (cache_postings_bytes, cache_vector_bytes), so an entry's weight
is an estimate of the memory it holds (postings.py: HeldPostings.nbytes; vectors.py:
nbytes()), checked here against what tracemalloc sees the entry allocate, for a user of many
distinct words (their overhead dominates) and one of few words said often (the occurrences do).
"""
import gc
import os
import random
import tracemalloc

from flowmem.storage.postings import EMPTY
from flowmem.storage.vectors import nbytes
from flowmem.text import meaning
from tests.helpers import T0, MemoryTestCase
from tools.benchkit.corpus import TextGen

TOLERANCE = 0.2  # the estimate is within a fifth of what is allocated
FLOWMEM_FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "flowmem", "*")


class CacheBytesTest(MemoryTestCase):
    def add_user(self, user: str, messages: int, vocabulary: int) -> None:
        rng, text = random.Random(3), TextGen(3, vocabulary)
        for start in range(0, messages, 20):
            self.memory.add({"request_id": "r%d" % start, "user_id": user, "session_id": "s%d" % (start // 40),
                             "messages": [{"role": "user", "content": "Kim: " + text.sentence(rng, 14),
                                           "timestamp": T0 + 1000 * (start + i)} for i in range(20)]})

    def allocated(self, load):
        """(what `load(reader)` returns, the bytes it left allocated). Loaded once first, unmeasured: what a
        process sets up at its first read (compiled patterns, lazily built tables) is no part of an entry,
        and whether an earlier test did it depends on which tests share the process."""
        with self.memory.store.reading() as reader:
            load(reader)
        gc.collect()
        tracemalloc.start()
        try:
            with self.memory.store.reading() as reader:
                held = load(reader)
            gc.collect()  # what the load left in garbage cycles is not held
            # Only what flowmem's own code allocated: another test's thread left running in this
            # process (tests/parallel.py runs several modules in one) allocates elsewhere meanwhile.
            snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, FLOWMEM_FILES)])
            return held, sum(stat.size for stat in snapshot.statistics("filename"))
        finally:
            tracemalloc.stop()

    def assert_close(self, estimate: int, allocated: int) -> None:
        self.assertLess(abs(estimate - allocated), TOLERANCE * allocated, (estimate, allocated))

    def test_a_users_postings_count_about_the_bytes_they_hold(self):
        for user, messages, vocabulary in (("many words", 300, 3000), ("few words", 800, 20)):
            with self.subTest(user=user):
                self.add_user(user, messages, vocabulary)

                def load(reader, user=user):
                    user_key = reader.user_key(user)
                    words = reader.bm25_statistics(user_key)["message"][1]
                    return reader._extend(user_key, EMPTY, words)  # read whole, as the cache does first

                held, allocated = self.allocated(load)
                self.assertEqual(held.n_messages, messages)
                self.assert_close(held.nbytes, allocated)

    def test_a_users_vectors_count_about_the_bytes_they_hold(self):
        # "older": most of its vectors past a window of 300, held by their first components only.
        for user, messages, vocabulary, window in (("few", 200, 2000, 5000), ("more", 1200, 2000, 5000),
                                                   ("older", 1200, 2000, 300)):
            with self.subTest(user=user):
                self.add_user(user, messages, vocabulary)

                def load(reader, user=user, window=window):
                    reader.vectors_cache = None  # read whole, as the cache does first
                    held = reader.held_vectors(reader.user_key(user), meaning.table().dims, window)
                    held.position(held.keys[0])  # the memo a search fills
                    return held

                held, allocated = self.allocated(load)
                self.assertGreater(len(held.docs) + len(held.old.docs), messages // 2)
                self.assert_close(nbytes(held), allocated)
