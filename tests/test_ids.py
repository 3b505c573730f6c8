"""Message, view and item ids: unique across the whole database, stable across restarts and rebuilds."""
import hashlib
import sqlite3
import unittest
from unittest import mock

from flowmem.storage import ids, schema
from flowmem.storage.ids import session_tag
from flowmem.storage.schema import MIGRATIONS, SCHEMA_VERSION
from tests.helpers import MemoryTestCase, add_body


class IdsTest(MemoryTestCase):
    def ids(self, user, query="pottery bowl", memory=None):
        return sorted((i["id"], tuple(i["source_message_ids"]))
                      for i in self.search(query, user, 20, memory=memory))

    def test_two_users_with_the_same_session_id_get_different_ids_that_survive_restarts_and_rebuilds(self):
        for user in ("alice", "bob"):
            self.memory.add(add_body(user, "2023-05-08", ["Dana: a pottery bowl", "Priya: blue?", "Dana: yes, blue",
                                                          "Priya: nice bowl"], request_id="r"))
        alice, bob = self.ids("alice"), self.ids("bob")
        self.assertTrue(alice)
        self.assertFalse({i for i, _ in alice} & {i for i, _ in bob})
        self.memory.close()
        reopened = self.open_memory()
        self.assertEqual((self.ids("alice", memory=reopened), self.ids("bob", memory=reopened)), (alice, bob))
        reopened.store.reindex({"window_size": 2})
        reopened.store.reindex({"window_size": 3})
        self.assertEqual((self.ids("alice", memory=reopened), self.ids("bob", memory=reopened)), (alice, bob))

    def test_the_tag_is_derived_from_user_and_session_as_documented(self):
        # The README tour's ids: user "alice", session "2023-05-08".
        self.assertEqual(session_tag("alice", "2023-05-08"), "db9ee74dec25058d")
        self.memory.add(add_body("alice", "2023-05-08", ["Dana: I went to a pottery workshop yesterday"]))
        self.assertEqual(self.search("pottery", "alice")[0]["id"], "m-db9ee74dec25058d-1")
        # No separator can make two pairs meet: the pair is encoded as a JSON array.
        self.assertNotEqual(session_tag("a", "b-c"), session_tag("a-b", "c"))
        self.assertNotEqual(session_tag("a\x00", "b"), session_tag("a", "\x00b"))

    def test_a_taken_tag_gives_way_to_the_next_candidate(self):
        def colliding(user_id, session_id, attempt=0):
            return "same-%d" % attempt

        with mock.patch.object(ids, "session_tag", colliding):
            self.memory.add(add_body("alice", "s", ["Dana: first"], request_id="a"))
            self.memory.add(add_body("bob", "t", ["Dana: second"], request_id="b"))
        self.assertEqual(self.search("first", "alice")[0]["id"], "m-same-0-1")
        self.assertEqual(self.search("second", "bob")[0]["id"], "m-same-1-1")

    def test_a_schema_1_database_gets_unique_tags_and_keeps_its_messages(self):
        path = self.db_path("v1.db")
        # Today's writer fills the columns of migrations 4 to 6; the schema-1 file gets them up front.
        with mock.patch.object(schema, "MIGRATIONS", [MIGRATIONS[0] + MIGRATIONS[3] + MIGRATIONS[4] + MIGRATIONS[5]]), \
                mock.patch.object(schema, "SCHEMA_VERSION", 1):
            old = self.open_memory("v1.db")
            for user in ("alice", "bob"):
                old.add(add_body(user, "2023-05-08", ["Dana: the pottery bowl of %s" % user], request_id="r"))
            old.close()
        conn = sqlite3.connect(path)
        # What flowmem wrote before schema 2: sha256(session_id), the same for both users.
        conn.execute("UPDATE sessions SET tag = ?", (hashlib.sha256(b"2023-05-08").hexdigest()[:16],))
        conn.commit()
        conn.close()
        memory = self.open_memory("v1.db")
        self.assertEqual(memory.store.schema_version(), SCHEMA_VERSION)
        ids = {user: self.search("pottery", user, memory=memory)[0]["id"] for user in ("alice", "bob")}
        self.assertEqual(ids, {user: "m-%s-1" % session_tag(user, "2023-05-08") for user in ("alice", "bob")})
        with self.assertRaises(sqlite3.IntegrityError):  # unique from now on
            memory.store.writer.execute("UPDATE sessions SET tag = 'x'")
        self.assertEqual(memory.stats()["messages"], 2)


class DeletedIdsTest(MemoryTestCase):
    """A deleted message's id is never given again, whichever way its session comes back."""

    def ids_of(self, user="alice", session="s"):
        return [m["id"] for m in self.memory.list_messages(user, session_id=session)["data"]]

    def assert_comes_back_with_new_ids(self, forget):
        self.memory.add(add_body("alice", "s", ["Dana: the only message"], request_id="first"))
        old = self.ids_of()
        forget()
        self.memory.add(add_body("alice", "s", ["Dana: a new message"], request_id="second"))
        new = self.ids_of()
        self.assertFalse(set(old) & set(new), (old, new))
        # A stale or resent delete of the old id forgets nothing of the new message.
        self.assertFalse(self.memory.delete_message("alice", old[0])["deleted"])
        self.assertEqual(self.ids_of(), new)
        return new

    def test_forgetting_a_sessions_only_message_then_adding_again_gives_a_new_id(self):
        self.assert_comes_back_with_new_ids(lambda: self.memory.delete_message("alice", self.ids_of()[0]))

    def test_a_session_deleted_and_sent_again_gives_new_ids(self):
        self.assert_comes_back_with_new_ids(lambda: self.memory.delete_session("alice", "s"))

    def test_a_user_removed_with_their_last_session_and_sent_again_gives_new_ids(self):
        self.memory.add(add_body("alice", "other", ["Dana: another session"], request_id="other"))
        self.memory.delete_session("alice", "other")
        self.assertEqual(self.memory.list_users()["data"], [])  # removed with their last session
        self.assert_comes_back_with_new_ids(lambda: self.memory.delete_session("alice", "s"))

    def test_a_user_deleted_whole_leaves_nothing_not_even_the_floor(self):
        self.memory.add(add_body("alice", "s", ["Dana: the only message"], request_id="first"))
        self.memory.delete_session("alice", "s")
        self.memory.delete_user("alice")  # nothing of alice is kept, so her next ids are those of a new user
        self.assertEqual(self.memory.store.writer.execute("SELECT count(*) FROM retired_users").fetchone()[0], 0)
        self.memory.add(add_body("alice", "s", ["Dana: a new message"], request_id="second"))
        self.assertEqual(self.ids_of(), ["m-%s-1" % session_tag("alice", "s")])

    def test_another_users_deletions_never_change_a_users_ids(self):
        self.memory.add(add_body("bob", "s", ["Dana: hello"], request_id="b"))
        self.memory.delete_session("bob", "s")
        self.memory.add(add_body("alice", "2023-05-08", ["Dana: hello"], request_id="a"))
        self.assertEqual(self.ids_of(session="2023-05-08"), ["m-%s-1" % session_tag("alice", "2023-05-08")])

    def test_a_session_that_comes_back_twice_never_meets_either_old_id(self):
        seen = set(self.assert_comes_back_with_new_ids(lambda: self.memory.delete_session("alice", "s")))
        self.memory.delete_session("alice", "s")
        self.memory.store.reindex()  # the floor outlives a rebuilt index's description
        self.memory.add(add_body("alice", "s", ["Dana: a third message"], request_id="third"))
        self.assertFalse(seen & set(self.ids_of()))

    def test_a_users_session_sent_after_one_of_theirs_was_deleted_takes_a_later_attempt(self):
        self.memory.add(add_body("alice", "kept", ["Dana: kept"], request_id="k"))
        self.memory.add(add_body("alice", "gone", ["Dana: gone"], request_id="g"))
        self.memory.delete_session("alice", "gone")
        self.memory.add(add_body("alice", "2023-05-08", ["Dana: hello"], request_id="a"))
        self.assertEqual(self.ids_of(session="2023-05-08"), ["m-%s-1" % session_tag("alice", "2023-05-08", 1)])

if __name__ == "__main__":
    unittest.main()
