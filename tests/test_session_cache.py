import unittest

from flowmem.storage.session_cache import SessionCache, SessionData
from tests.helpers import MemoryTestCase, add_body


def data(n_messages: int) -> SessionData:
    return SessionData(n_messages, {seq: ((), None, (), ()) for seq in range(1, n_messages + 1)}, (), {}, {})


class Loader:
    """A load() that counts its calls."""

    def __init__(self, n_messages: int):
        self.n_messages, self.calls = n_messages, 0

    def __call__(self) -> SessionData:
        self.calls += 1
        return data(self.n_messages)


class SessionCacheTest(unittest.TestCase):
    def test_long_messages_count_as_several_against_the_bound(self):
        cache = SessionCache(100)
        heavy = data(3)._replace(cost=90)
        cache.get_session(1, 3, lambda: heavy)
        cache.get_session(2, 3, Loader(3))
        cache.get_session(3, 3, Loader(20))  # 90 + 3 + 20 > 100: the least recently used, the heavy one, goes
        self.assertNotIn(1, cache)
        self.assertIn(2, cache)
        self.assertIn(3, cache)

    def test_a_session_is_loaded_once_while_its_message_count_holds(self):
        cache, load = SessionCache(100), Loader(3)
        first = cache.get_session(1, 3, load)
        self.assertIs(cache.get_session(1, 3, load), first)
        self.assertEqual(load.calls, 1)

    def test_a_session_that_grew_is_loaded_again(self):
        cache = SessionCache(100)
        cache.get_session(1, 3, Loader(3))
        grown = Loader(5)
        self.assertEqual(cache.get_session(1, 5, grown).n_messages, 5)
        self.assertEqual(grown.calls, 1)

    def test_the_least_recently_used_session_leaves_first_when_the_bound_is_passed(self):
        cache = SessionCache(10)
        loads = {key: Loader(4) for key in (1, 2, 3)}
        cache.get_session(1, 4, loads[1])
        cache.get_session(2, 4, loads[2])
        cache.get_session(1, 4, loads[1])  # 1 is now more recent than 2
        cache.get_session(3, 4, loads[3])  # 12 messages > 10: 2 goes
        cache.get_session(1, 4, loads[1])
        cache.get_session(2, 4, loads[2])
        self.assertEqual((loads[1].calls, loads[2].calls), (1, 2))

    def test_after_a_clear_nothing_read_from_an_older_snapshot_is_kept(self):
        cache = SessionCache(100)
        cache.get_session(1, 3, Loader(3), generation=0)
        cache.clear(1)  # the index changed: a rebuild, a deleted user
        self.assertNotIn(1, cache)
        stale = Loader(3)
        cache.get_session(2, 3, stale, generation=0)  # a search that began before the change
        cache.get_session(2, 3, stale, generation=0)
        self.assertEqual((stale.calls, len(cache)), (2, 0))
        fresh = Loader(3)
        cache.get_session(2, 3, fresh, generation=1)
        cache.get_session(2, 3, fresh, generation=1)
        self.assertEqual((fresh.calls, len(cache)), (1, 1))

    def test_a_session_larger_than_the_bound_is_served_but_not_kept(self):
        cache, load = SessionCache(2), Loader(3)
        cache.get_session(1, 3, load)
        cache.get_session(1, 3, load)
        self.assertEqual(load.calls, 2)


class CachedSearchTest(MemoryTestCase):
    """Search keeps sessions in memory; what it shows must still be what is stored now."""

    def test_messages_added_to_a_cached_session_are_found_and_shown(self):
        self.memory.add(add_body("u1", "s1", ["Dana: I bought a red kayak", "Priya: Nice, where?"], request_id="a"))
        self.assertEqual(self.search("kayak")[0]["content"], "Dana: I bought a red kayak")
        self.memory.add(add_body("u1", "s1", ["Dana: At the harbor shop, with a yellow paddle"], request_id="b"))
        items = self.search("yellow paddle")
        self.assertEqual(items[0]["content"], "Dana: At the harbor shop, with a yellow paddle")
        self.assertEqual(items[0]["source_message_ids"][0].rsplit("-", 1)[1], "3")

    def test_a_write_by_another_process_is_seen_by_a_cached_search(self):
        self.memory.add(add_body("u1", "s1", ["Dana: I bought a red kayak", "Priya: Nice, where?"], request_id="a"))
        self.search("kayak")  # s1 is now cached here
        other = self.open_memory()  # a second Memory on the same file stands for another process
        other.add(add_body("u1", "s1", ["Dana: At the harbor shop, with a yellow paddle"], request_id="b"))
        contents = [item["content"] for item in self.search("kayak paddle", top_k=10)]
        self.assertIn("Dana: At the harbor shop, with a yellow paddle", contents)
        self.assertIn("Dana: I bought a red kayak", contents)

    def test_a_word_held_by_several_cached_messages_is_kept_once(self):
        self.memory.add(add_body("u1", "s1", ["Dana: my kayak is red", "Priya: a kayak? since when"], request_id="a"))
        self.search("kayak")
        with self.memory.store.reading() as reader:
            (user_key,) = reader.conn.execute("SELECT user_key FROM users WHERE user_id = 'u1'").fetchone()
            data = reader.session(reader.latest_message_views(user_key, 1)[0])
        features = [data.messages[position] for position in sorted(data.messages)]
        kayak = [t for _, _, tokens, _ in features[:2] for t in tokens if t == "kayak"]
        self.assertEqual(len(kayak), 2)
        self.assertIs(kayak[0], kayak[1])  # one string, not one per message: the cache's memory per word said


if __name__ == "__main__":
    unittest.main()
