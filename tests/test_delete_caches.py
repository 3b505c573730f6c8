"""A deletion forgets what it deleted and nothing of anyone else, in every Store on the file (issue 22, item 5).

A delete used to bump the database-wide index generation, which emptied every user's session
cache and postings, in every process: one user's delete-session made everyone's next searches
cold. Now each deleted session is logged (schema.py `deletions`) and every Store forgets only
that session and its user's postings, at once in its own process and at its next transaction
in any other; one that fell further behind than the log forgets everything.
"""
import os
import subprocess
import sys
import unittest
from unittest import mock

from flowmem.storage import writer
from flowmem.storage.bounded_cache import BoundedCache
from tests.helpers import MemoryTestCase, add_body, matches

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DeleteCachesTest(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.add(add_body("heavy", "h1", ["Kim: my quokka photo", "Amy: lovely", "Kim: from Rottnest"]))
        self.memory.add(add_body("heavy", "h2", ["Kim: the wombat burrow", "Amy: deep"]))
        self.memory.add(add_body("other", "o1", ["Zed: my zanzibarian flamingo"]))
        self.memory.add(add_body("other", "o2", ["Zed: the pelican pier"]))
        self.assertTrue(self.search("quokka wombat", "heavy"))  # heavy's sessions and postings now in memory
        self.assertTrue(self.search("zanzibarian pelican", "other"))

    def keys(self, user_id: str):
        """(user key, session keys) of a user, read from the file."""
        conn = self.memory.store.writer
        user_key = conn.execute("SELECT user_key FROM users WHERE user_id = ?", (user_id,)).fetchone()[0]
        return user_key, [key for (key,) in conn.execute(
            "SELECT session_key FROM sessions WHERE user_key = ? ORDER BY session_key", (user_key,))]

    def held_postings(self, user_key: int, memory=None):
        with (memory or self.memory).store.reading() as reader:
            return reader.held_postings(user_key)

    def assert_heavy_still_warm(self, user_key, sessions, postings):
        cache = self.memory.store.cache
        self.assertEqual([key for key in sessions if key in cache], sessions)
        self.assertIs(self.held_postings(user_key), postings)  # the same object: not read again
        self.assertEqual(self.search("quokka", "heavy")[0]["content"], "Kim: my quokka photo")

    def delete_in_another_process(self, user_id: str, session_id: str) -> None:
        code = ("import sys; from flowmem.config import load; from flowmem.memory import Memory; "
                "m = Memory(load({'db': sys.argv[1], 'synchronous': 'NORMAL'}, environ={})); "
                "print(m.delete_session(sys.argv[2], sys.argv[3])['deleted']); m.close()")
        done = subprocess.run([sys.executable, "-c", code, self.db_path(), user_id, session_id], cwd=ROOT,
                              capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=ROOT))
        self.assertEqual(done.stdout.strip(), "True", done.stderr)

    def test_another_users_cached_sessions_and_postings_survive_a_delete_session(self):
        user_key, sessions = self.keys("heavy")
        postings = self.held_postings(user_key)
        other_key, other_sessions = self.keys("other")
        self.assertTrue(self.memory.delete_session("other", "o1")["deleted"])
        self.assertNotIn(other_sessions[0], self.memory.store.cache)
        self.assertNotIn(other_key, self.memory.store._held.postings)
        self.assert_heavy_still_warm(user_key, sessions, postings)
        self.assertEqual(matches(self.search("zanzibarian flamingo", "other")), [])
        self.assertEqual(self.search("pelican", "other")[0]["content"], "Zed: the pelican pier")

    def test_another_users_caches_survive_a_delete_user(self):
        user_key, sessions = self.keys("heavy")
        postings = self.held_postings(user_key)
        self.assertTrue(self.memory.delete_user("other")["deleted"])
        self.assert_heavy_still_warm(user_key, sessions, postings)
        self.assertEqual(matches(self.search("zanzibarian pelican", "other")), [])

    def test_another_users_caches_survive_a_delete_by_another_process(self):
        user_key, sessions = self.keys("heavy")
        postings = self.held_postings(user_key)
        self.delete_in_another_process("other", "o1")
        self.assert_heavy_still_warm(user_key, sessions, postings)

    def test_content_deleted_by_another_process_is_never_answered_from_this_processs_caches(self):
        other_key, other_sessions = self.keys("other")
        self.delete_in_another_process("other", "o1")
        self.assertEqual(matches(self.search("zanzibarian flamingo", "other")), [])
        self.assertNotIn(other_sessions[0], self.memory.store.cache)
        self.assertEqual(self.search("pelican", "other")[0]["content"], "Zed: the pelican pier")
        with self.memory.store.reading() as reader:
            self.assertNotIn("zanzibarian", reader.held_postings(other_key).terms)

    def test_a_session_deleted_and_sent_again_with_as_many_messages_is_not_answered_from_old_postings(self):
        for deleter in (self.memory, self.open_memory()):  # this Store, then another one on the file
            with self.subTest(deleter="this Store" if deleter is self.memory else "another Store"):
                other_key, _ = self.keys("other")
                before = self.held_postings(other_key)
                self.assertTrue(deleter.delete_session("other", "o2")["deleted"])
                deleter.add(add_body("other", "o2", ["Zed: the heron marsh"], request_id="again-%d" % id(deleter)))
                held = self.held_postings(other_key)
                self.assertEqual(held.n_messages, before.n_messages)  # the version a stale entry would match
                self.assertNotIn("pelican", held.terms)
                self.assertEqual(matches(self.search("pelican pier", "other")), [])
                self.assertEqual(self.search("heron", "other")[0]["content"], "Zed: the heron marsh")
                deleter.delete_session("other", "o2")
                deleter.add(add_body("other", "o2", ["Zed: the pelican pier"], request_id="back-%d" % id(deleter)))
                self.assertEqual(self.search("pelican", "other")[0]["content"], "Zed: the pelican pier")

    def test_a_store_further_behind_than_the_log_forgets_everything_and_still_answers_right(self):
        user_key, sessions = self.keys("heavy")
        other = self.open_memory()
        with mock.patch.object(writer, "DELETION_LOG_ROWS", 2):
            for session in ("o1", "o2"):
                other.delete_session("other", session)
            other.add(add_body("third", "t1", ["Ann: the ibis"]))
            other.delete_session("third", "t1")  # three deletions; the log keeps two
        self.assertEqual(matches(self.search("zanzibarian pelican", "other")), [])
        self.assertFalse([key for key in sessions if key in self.memory.store.cache])
        self.assertEqual(self.search("quokka", "heavy")[0]["content"], "Kim: my quokka photo")

    def add_big_user(self, sessions: int) -> None:
        for i in range(sessions):
            self.memory.add(add_body("big", "b%d" % i, ["Ann: the ibis number %d" % i]))

    def test_deleting_a_user_of_more_sessions_than_the_log_keeps_costs_no_other_user_anything(self):
        user_key, sessions = self.keys("heavy")
        postings = self.held_postings(user_key)
        beside = self.open_memory()  # another Store, which read the log before the deletion
        self.assertTrue(self.search("quokka", "heavy", memory=beside))
        with mock.patch.object(writer, "DELETION_LOG_ROWS", 2):
            self.add_big_user(3)
            for deleter, store in ((self.memory, "this Store"), (beside, "another Store")):
                with self.subTest(deleter=store):
                    deleter.add(add_body("big", "b0", ["Ann: the ibis"], request_id="again-%s" % store))
                    self.assertTrue(deleter.delete_user("big")["deleted"])
                    self.assert_heavy_still_warm(user_key, sessions, postings)
                    self.add_big_user(3)

    def test_a_store_that_missed_a_large_user_deletion_and_one_more_forgets_only_theirs(self):
        user_key, sessions = self.keys("heavy")
        postings = self.held_postings(user_key)
        other = self.open_memory()
        with mock.patch.object(writer, "DELETION_LOG_ROWS", 2):
            self.add_big_user(5)
            other.delete_user("big")
            other.delete_session("other", "o1")
        self.assert_heavy_still_warm(user_key, sessions, postings)
        self.assertEqual(matches(self.search("zanzibarian flamingo", "other")), [])

    def test_a_user_deleted_whole_is_one_entry_of_the_log_and_leaves_none_of_its_sessions_held(self):
        user_key, sessions = self.keys("heavy")
        self.assertEqual([key for key in sessions if key in self.memory.store.cache], sessions)
        before = self.memory.store.writer.execute("SELECT max(seq) FROM deletions").fetchone()[0] or 0
        self.open_memory().delete_user("heavy")  # another Store: this one learns it from the log
        self.assertEqual(matches(self.search("quokka wombat", "heavy")), [])
        self.assertEqual(self.memory.store.writer.execute("SELECT seq, user_key, session_key FROM deletions WHERE"
                                                          " seq > ?", (before,)).fetchall(),
                         [(before + 1, user_key, writer.WHOLE_USER)])
        self.assertEqual([key for key in sessions if key in self.memory.store.cache], [])

    def test_a_reindex_still_empties_every_cache(self):
        user_key, sessions = self.keys("heavy")
        self.open_memory().store.reindex()
        self.assertEqual(self.search("zanzibarian", "other")[0]["content"], "Zed: my zanzibarian flamingo")
        self.assertFalse([key for key in sessions if key in self.memory.store.cache])

    def test_the_log_keeps_its_last_rows_only(self):
        with mock.patch.object(writer, "DELETION_LOG_ROWS", 3):
            for i in range(5):
                self.memory.add(add_body("brief", "b%d" % i, ["Ann: note %d" % i]))
                self.memory.delete_session("brief", "b%d" % i)
        rows = self.memory.store.writer.execute("SELECT seq FROM deletions ORDER BY seq").fetchall()
        self.assertEqual(len(rows), 3)
        with self.memory.store.reading() as reader:
            self.assertEqual(reader.conn.execute("SELECT value FROM meta WHERE key = 'deletions'").fetchone()[0],
                             str(rows[-1][0]))


class ForgottenKeysTest(unittest.TestCase):
    """What BoundedCache keeps of a key once a deletion forgot it."""

    def cache(self):
        return BoundedCache(100, lambda entry: entry[0], lambda entry: 1)

    def test_an_entry_read_before_the_deletion_is_neither_served_to_that_snapshot_nor_kept(self):
        cache = self.cache()
        cache.get("u", 3, lambda held: (3, "new"), deletions=5)
        cache.forget(["u"], 5)
        cache.get("u", 3, lambda held: (3, "fresh"), deletions=5)  # read after the deletion: kept
        loaded = []
        old = cache.get("u", 3, lambda held: loaded.append(held) or (3, "old"), deletions=4)
        self.assertEqual((old, loaded), ((3, "old"), [None]))  # a search that began before it
        self.assertEqual(cache.get("u", 3, lambda held: (3, "again"), deletions=5), (3, "fresh"))

    def test_an_entry_loaded_while_its_key_was_forgotten_is_not_kept(self):
        cache = self.cache()

        def load_then_deleted(held):
            cache.forget(["u"], 7)  # the deletion commits while an older snapshot reads the entry
            return (3, "stale")

        cache.get("u", 3, load_then_deleted, deletions=6)
        self.assertNotIn("u", cache)

    def test_other_keys_are_kept_and_served(self):
        cache = self.cache()
        cache.get("a", 1, lambda held: (1, "a"), deletions=0)
        cache.get("b", 1, lambda held: (1, "b"), deletions=0)
        cache.forget(["a"], 1)
        self.assertEqual(cache.get("b", 1, lambda held: (1, "read again"), deletions=0), (1, "b"))
        self.assertNotIn("a", cache)

    def test_past_its_bound_the_floors_fold_into_one_for_every_key(self):
        cache = self.cache()
        with mock.patch("flowmem.storage.bounded_cache.MAX_FLOORS", 2):
            cache.forget(["a"], 1)
            cache.forget(["b"], 2)
            cache.forget(["c"], 3)
        cache.get("d", 1, lambda held: (1, "d"), deletions=2)
        self.assertNotIn("d", cache)  # older than the highest deletion forgotten: not kept, whatever its key
        cache.get("d", 1, lambda held: (1, "d"), deletions=3)
        self.assertIn("d", cache)

    def test_a_forgotten_groups_entries_go_and_one_read_before_its_deletion_is_not_kept(self):
        cache = BoundedCache(100, lambda entry: entry[0], lambda entry: 1, group=lambda entry: entry[1])
        cache.get("s1", 1, lambda held: (1, "ann"), deletions=0)
        cache.get("s2", 1, lambda held: (1, "ann"), deletions=0)
        cache.get("s3", 1, lambda held: (1, "bob"), deletions=0)
        cache.forget_groups(["ann"], 2)
        self.assertEqual([key in cache for key in ("s1", "s2", "s3")], [False, False, True])
        cache.get("s4", 1, lambda held: (1, "ann"), deletions=1)  # a search that began before the deletion
        self.assertNotIn("s4", cache)
        cache.get("s4", 1, lambda held: (1, "ann"), deletions=2)
        self.assertIn("s4", cache)

    def test_forget_all_drops_every_entry_and_keeps_only_what_is_read_after(self):
        cache = self.cache()
        cache.get("a", 1, lambda held: (1, "a"), deletions=0)
        cache.forget_all(4)
        self.assertEqual(len(cache), 0)
        cache.get("a", 1, lambda held: (1, "a"), deletions=3)
        self.assertNotIn("a", cache)


if __name__ == "__main__":
    unittest.main()
