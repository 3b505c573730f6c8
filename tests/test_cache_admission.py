"""A full cache keeps the entries asked for again soonest (storage/admission.py; issue 31, item 7).

With room for four heavy users, a fifth searched in turn with them made a cache that keeps
whatever it loads (LRU) evict, at each load, the user searched next: no search was
answered from memory. A newcomer now takes the room only of entries idle longer than it
took to come back, so a loop over more users than fit keeps those held, users asked once
evict no one, and a user asking again soon still gets in as under LRU.
"""
import unittest
from typing import Dict, List

from flowmem.storage.bounded_cache import BoundedCache
from tests.helpers import MemoryTestCase, add_body


class Loads:
    """Ask a cache of entries weighing 1 each for keys, counting the loads per key."""

    def __init__(self, bound: int, admission: bool = True):
        self.cache: BoundedCache = BoundedCache(bound, lambda entry: 1, lambda entry: 1, admission=admission)
        self.loads: Dict[str, int] = {}

    def ask(self, keys: List[str]) -> None:
        for key in keys:
            self.cache.get(key, 1, lambda held, key=key: self.loads.update({key: self.loads.get(key, 0) + 1}) or 1)


class AdmissionTest(unittest.TestCase):
    def test_a_loop_over_one_more_key_than_fit_loads_only_that_one_again(self):
        cache = Loads(4)
        cache.ask(["a", "b", "c", "d", "e"] * 10)
        self.assertEqual(cache.loads, {"a": 1, "b": 1, "c": 1, "d": 1, "e": 10})

    def test_without_admission_the_same_loop_loads_every_key_every_time(self):
        cache = Loads(4, admission=False)  # the session cache's way: every load kept, least recently used out
        cache.ask(["a", "b", "c", "d", "e"] * 10)
        self.assertEqual(cache.loads, {key: 10 for key in "abcde"})

    def test_keys_asked_once_evict_none_of_those_asked_again(self):
        cache = Loads(3)
        cache.ask([key for i in range(30) for key in ("a", "b", "c", "once-%d" % i)])
        self.assertEqual({key: n for key, n in cache.loads.items() if not key.startswith("once")},
                         {"a": 1, "b": 1, "c": 1})

    def test_a_key_asked_again_soon_takes_the_room_of_one_idle_longer(self):
        cache = Loads(2)
        cache.ask(["a", "b", "a", "b", "c", "a", "c", "a", "c", "a"])  # b idle since c's first request
        self.assertEqual(cache.loads, {"a": 1, "b": 1, "c": 2})
        self.assertNotIn("b", cache.cache)

    def test_a_new_key_takes_the_room_of_entries_idle_past_the_horizon_as_lru_would(self):
        cache = Loads(2)
        cache.ask(["a", "b"] + ["b"] * 10 + ["c", "c", "c"])  # a idle for ten requests: more than 2 x 2 + 2
        self.assertEqual(cache.loads, {"a": 1, "b": 1, "c": 1})
        self.assertNotIn("a", cache.cache)

    def test_a_held_entry_grown_is_kept_and_makes_its_room_from_the_others(self):
        cache: BoundedCache = BoundedCache(10, lambda entry: entry, lambda entry: entry, admission=True)
        for key in ("a", "b", "c"):
            cache.get(key, 3, lambda held: 3)
        cache.get("a", 7, lambda held: 7)  # an extension: its user is asked for, it stays
        self.assertEqual(("a" in cache, "b" in cache, "c" in cache), (True, False, True))

    def test_get_kept_loads_nothing_for_a_key_that_would_not_be_kept(self):
        cache: BoundedCache = BoundedCache(4, lambda entry: 1, lambda entry: 1, admission=True)
        for key in "abcd":
            cache.get(key, 1, lambda held: 1)
        loaded: List[str] = []
        self.assertIsNone(cache.get_kept("e", 1, lambda held: loaded.append("e") or 1, 1))
        self.assertIsNone(cache.get_kept("f", 1, lambda held: loaded.append("f") or 1, 5))  # more than the bound
        self.assertEqual(cache.get_kept("a", 1, lambda held: loaded.append("a") or 1, 1), 1)
        self.assertEqual(loaded, [])


class HeavyUsersTest(MemoryTestCase):
    """Users searched in turn, more than the caches of postings and vectors hold."""

    users = ("ann", "bob", "cat")

    def setUp(self) -> None:
        super().setUp()
        for user in self.users:
            self.memory.add(add_body(user, "s1", ["%s: my dog likes the park in the morning" % user.title(),
                                                  "Kim: and my cat likes the garden at night"]))

    def held(self, memory, user: str):
        with memory.store.reading() as reader:
            user_key = reader.user_key(user)
            return reader.held_postings(user_key), reader.held_vectors(user_key, 256, 100)

    def room_for_two(self):
        """A Memory whose caches hold two of the users' postings and vectors, not three."""
        probe = self.held(self.memory, "ann")
        return self.open_memory(cache_postings_bytes=probe[0].nbytes * 2 + 1,
                                cache_vector_bytes=self.vector_bytes(probe[1]) * 2 + 1)

    @staticmethod
    def vector_bytes(held) -> int:
        from flowmem.storage.vectors import nbytes
        return nbytes(held)

    def test_a_loop_over_more_users_than_fit_serves_those_held_from_memory(self):
        memory = self.room_for_two()
        first = {user: self.held(memory, user) for user in self.users}
        for _ in range(3):
            for user in self.users:
                held = self.held(memory, user)
                if user == "cat":  # the one not admitted: its postings from the index, its vectors read each time
                    self.assertIsNone(held[0])
                else:
                    self.assertIs(held[0], first[user][0])
                    self.assertIs(held[1], first[user][1])

    def test_users_searched_from_the_index_get_the_same_results(self):
        memory = self.room_for_two()
        for _ in range(2):
            for user in self.users:
                for question in ("dog park", "cat garden night"):
                    self.assertEqual(self.search(question, user, memory=memory), self.search(question, user))


if __name__ == "__main__":
    unittest.main()
