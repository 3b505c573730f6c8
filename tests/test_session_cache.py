import random
import unittest

from flowmem.storage import session_load
from flowmem.storage.session_cache import SessionCache, SessionData
from tests.helpers import T0, MemoryTestCase, add_body


def data(n_messages: int) -> SessionData:
    return SessionData(n_messages, {seq: ((), None, (), ()) for seq in range(1, n_messages + 1)}, (), {}, {})


class Loader:
    """A load() that counts its calls."""

    def __init__(self, n_messages: int):
        self.n_messages, self.calls = n_messages, 0

    def __call__(self, held=None) -> SessionData:
        self.calls += 1
        return data(self.n_messages)


class SessionCacheTest(unittest.TestCase):
    def test_long_messages_count_as_several_against_the_bound(self):
        cache = SessionCache(100)
        heavy = data(3)._replace(cost=90)
        cache.get_session(1, 3, lambda held: heavy)
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



def comparable(data: SessionData):
    """What a session entry holds, in values a test compares: its views as (doc id, kind, first, last, length),
    without the message count each view carries (session_load.py: a held view keeps the one it was read with)."""
    def view(v):
        return (v.doc_id, v.kind, v.first, v.last, v.length)
    return {"n_messages": data.n_messages, "messages": data.messages, "rows": data.rows, "doc_freqs": data.doc_freqs,
            "cost": data.cost, "views": [view(v) for v in data.views], "user_key": data.user_key,
            "segment_start": data.segment_start, "turns": dict(data.turns),
            "views_at": {p: [view(v) for v in held] for p, held in data.views_at.items()}}


class ExtendedSessionTest(MemoryTestCase):
    """An Add to a session search holds extends the held entry with what was appended (session_load.py)."""

    def add(self, contents, request_id, gap_ms=0, role=None, timestamp=True):
        """Add `contents` to u1's session s1, `gap_ms` after the last, one role unless `role` alternates them."""
        self.t = getattr(self, "t", T0) + gap_ms
        messages = []
        for i, content in enumerate(contents):
            self.t += 1000
            m = {"role": role or ("user" if i % 2 == 0 else "assistant"), "content": content}
            if timestamp:
                m["timestamp"] = self.t
            messages.append(m)
        self.memory.add({"request_id": request_id, "user_id": "u1", "session_id": "s1", "messages": messages})

    def held_and_whole(self):
        """The session as search reads it now (from the cache), and the same session read whole."""
        with self.memory.store.reading() as reader:
            user_key = reader.user_key("u1")
            view = reader.latest_message_views(user_key, 1)[0]
            data = reader.session(view)
            return data, session_load.load(reader.conn, view.session_key, view.session_messages, None)

    def test_an_add_to_a_held_session_keeps_what_was_held_of_its_earlier_messages(self):
        self.add(["Dana: I bought a red kayak", "Priya: Nice, where?", "Dana: at the harbor"], "a")
        held, _ = self.held_and_whole()
        self.add(["Dana: with a yellow paddle"], "b")
        extended, whole = self.held_and_whole()
        self.assertEqual(extended.n_messages, 4)
        self.assertIs(extended.messages[1], held.messages[1])  # not read again: the held features themselves
        self.assertIs(extended.rows[2], held.rows[2])
        self.assertEqual(comparable(extended), comparable(whole))

    def test_a_session_extended_add_by_add_equals_the_session_read_whole(self):
        rng = random.Random(5)
        words = ["kayak", "paddle", "harbor", "lunch", "ferry", "tide", "gull", "rope", "oar", "dock"]
        previous = None
        for i in range(40):  # Adds of 1 to 6 messages: pauses that cut segments, bursts of one speaker, undated ones
            contents = ["%s: %s" % (rng.choice(["Dana", "Priya"]), " ".join(rng.sample(words, 3)))
                        for _ in range(rng.randint(1, 6))]
            if i == 7:
                contents.append("Dana: " + "long " * 900)  # a long message counts as several against the bound
            self.add(contents, "add-%d" % i, gap_ms=rng.choice([0, 0, 3_600_000]),
                     role=rng.choice([None, "user"]), timestamp=rng.random() > 0.1)
            data, whole = self.held_and_whole()
            with self.subTest(add=i):
                self.assertEqual(comparable(data), comparable(whole))
                if previous is not None:
                    self.assertIs(data.messages[1], previous.messages[1])  # extended, not read whole
            previous = data

    def test_a_search_still_reading_the_held_entry_sees_it_as_it_was(self):
        self.add(["Dana: I bought a red kayak", "Priya: Nice, where?", "Dana: at the harbor"], "a")
        held, _ = self.held_and_whole()
        before = comparable(held)
        self.add(["Dana: with a yellow paddle", "Priya: and a rope"], "b")
        self.held_and_whole()
        self.assertEqual(comparable(held), before)

    def test_searches_after_each_add_answer_as_a_store_that_reads_the_session_whole(self):
        rng = random.Random(11)
        words = ["kayak", "paddle", "harbor", "lunch", "ferry", "tide", "gull", "rope", "oar", "dock", "sail"]
        for i in range(25):
            self.add(["%s: %s" % (rng.choice(["Dana", "Priya"]), " ".join(rng.sample(words, 4)))
                      for _ in range(rng.randint(1, 4))], "add-%d" % i, gap_ms=rng.choice([0, 3_600_000]),
                     role=rng.choice([None, "user"]))
            query = " ".join(rng.sample(words, 2))
            held = self.memory.search({"query": query, "user_id": "u1", "top_k": 20})
            cold = self.open_memory()  # nothing held: every session read whole
            with self.subTest(add=i):
                self.assertEqual(held, cold.search({"query": query, "user_id": "u1", "top_k": 20}))
            cold.close()


if __name__ == "__main__":
    unittest.main()
