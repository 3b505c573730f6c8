import os
import sqlite3
import threading
import time
import unittest
from unittest import mock

from flowmem.errors import StoreError
from flowmem.storage import schema
from flowmem.storage.schema import SCHEMA_VERSION
from flowmem.storage.store import Store
from flowmem.text.features import MAX_MESSAGE_CHARS
from flowmem.text.stem import stem
from tests.helpers import T0, MemoryTestCase, add_body, index_terms, matches, message


class SchemaTest(MemoryTestCase):
    def test_new_database_is_wal_and_at_the_current_schema_version(self):
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA journal_mode").fetchone()[0], "wal")
        self.assertEqual(conn.execute("PRAGMA user_version").fetchone()[0], SCHEMA_VERSION)

    def test_reopening_keeps_data_and_does_not_migrate_again(self):
        self.memory.add(add_body("u1", "s1", ["Alice: the blue kite"]))
        self.memory.close()
        again = self.open_memory()
        self.assertEqual(again.stats()["messages"], 1)
        self.assertEqual(self.search("kite", memory=again)[0]["content"], "Alice: the blue kite")

    def test_a_database_from_a_newer_flowmem_is_refused(self):
        path = self.db_path("future.db")
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = %d" % (SCHEMA_VERSION + 1))
        conn.close()
        with self.assertRaises(StoreError) as cm:
            Store(path, synchronous="FULL", cache_messages=0)
        self.assertIn("schema version", cm.exception.reason)

    def test_migrations_upgrade_an_older_database_step_by_step(self):
        path = self.db_path("old.db")
        old = schema.MIGRATIONS
        Store(path, synchronous="FULL", cache_messages=0).close()  # a new database at the current version
        memory = self.open_memory("old.db")
        memory.add(add_body("u1", "s1", ["Alice: before the upgrade"]))
        memory.close()
        newer = old + [["CREATE TABLE step_two (x)"]]
        with mock.patch.object(schema, "MIGRATIONS", newer), \
                mock.patch.object(schema, "SCHEMA_VERSION", len(newer)):
            s = Store(path, synchronous="FULL", cache_messages=0)
            applied = [r[0] for r in s.writer.execute("SELECT name FROM sqlite_master WHERE name = 'step_two'")]
            version = s.schema_version()
            s.close()
            upgraded = self.search("upgrade", memory=self.open_memory("old.db"))
        self.assertEqual(applied, ["step_two"])
        self.assertEqual(version, len(old) + 1)
        self.assertEqual(upgraded[0]["content"], "Alice: before the upgrade")

    def test_a_file_that_is_not_a_database_gives_a_clear_error(self):
        path = self.db_path("junk.db")
        with open(path, "wb") as f:
            f.write(b"this is not sqlite" * 100)
        with self.assertRaises(StoreError) as cm:
            Store(path, synchronous="FULL", cache_messages=0)
        self.assertIn(path, cm.exception.reason)

    def test_close_checkpoints_the_wal_into_the_database_file(self):
        self.memory.add(add_body("u1", "s1", ["Alice: durable words"]))
        self.memory.close()
        wal = self.db_path() + "-wal"
        self.assertFalse(os.path.exists(wal) and os.path.getsize(wal) > 0)
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("SELECT content FROM messages").fetchone()[0], "Alice: durable words")


class CheckpointTest(MemoryTestCase):
    def test_writes_reach_the_database_file_in_the_background(self):
        self.memory.add(add_body("u1", "s1", ["Alice: checkpointed cormorant"]))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self._in_main_file(b"cormorant"):
            time.sleep(0.05)
        self.assertTrue(self._in_main_file(b"cormorant"), "the WAL was never copied back")

    def test_a_steady_stream_of_writes_cannot_grow_the_wal_without_bound(self):
        checkpointer = self.memory.store.checkpointer
        checkpointer.wal_limit_bytes = 256 * 1024
        for i in range(40):
            self.memory.add(add_body("u1", "s%d" % i, ["Alice: message %d of a long burst %s" % (j, "x" * 200)
                                                       for j in range(20)], request_id="r%d" % i))
            checkpointer.checkpoint()  # what the thread does after writes, run here so the test needs no timing
        self.assertLessEqual(os.path.getsize(self.db_path() + "-wal"), 256 * 1024 + 200 * 1024)
        self.assertEqual(self.memory.stats("u1")["messages"], 800)

    def test_closing_stops_the_background_thread(self):
        thread = self.memory.store.checkpointer
        self.assertTrue(thread.is_alive())
        self.memory.close()
        self.assertFalse(thread.is_alive())

    def test_closing_while_the_background_thread_waits_for_the_write_lock_returns(self):
        store = self.memory.store
        store.checkpointer.wal_limit_bytes = 0  # every checkpoint of the thread truncates, under the write lock
        self.memory.add(add_body("u1", "s1", ["Alice: the last words before closing"]))
        closer = threading.Thread(target=self.memory.close, daemon=True)  # a hung one must not hold the tests
        with store._write_lock:  # a write in progress, as close() is called and the thread wakes up after it
            closer.start()
            time.sleep(0.2)
            store.checkpointer.wrote.set()
            time.sleep(1.0)  # past the thread's interval: both wait for this lock now, close() first
        closer.join(10)
        self.assertFalse(closer.is_alive(), "close() waited forever for the checkpoint thread")
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("SELECT count(*) FROM messages").fetchone()[0], 1)

    def _in_main_file(self, needle):
        with open(self.db_path(), "rb") as f:
            return needle in f.read()


class VerbatimTest(MemoryTestCase):
    def test_messages_are_stored_and_returned_byte_for_byte(self):
        texts = ["  Alice:  spaced\tout  ", "Bob: emoji 🙂 and 中文 and \u0000 nul and \x1b escape",
                 "Carol: line one\r\nline two", "Dave: ünïcödé — “quotes” 'single' \\ backslash"]
        self.memory.add({"request_id": "r", "user_id": "u1", "session_id": "s",
                         "messages": [message(t) for t in texts]})
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        stored = [r[0] for r in conn.execute("SELECT content FROM messages ORDER BY seq")]
        self.assertEqual(stored, texts)
        contents = {i["content"] for i in self.search("emoji spaced line ünïcödé", top_k=100)}
        for t in texts:
            self.assertIn(t, contents)

    def test_role_timestamp_request_and_order_are_kept(self):
        self.memory.add({"request_id": "req-9", "user_id": "u1", "session_id": "s",
                         "messages": [message("a one", "user", T0), message("b two", "assistant", None),
                                      message("c three", "tool", T0 + 5)]})
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        rows = conn.execute("SELECT seq, role, content, timestamp_ms, request_id FROM messages ORDER BY seq").fetchall()
        self.assertEqual(rows, [(1, "user", "a one", T0, "req-9"), (2, "assistant", "b two", None, "req-9"),
                                (3, "tool", "c three", T0 + 5, "req-9")])


class DeleteUserTest(MemoryTestCase):
    def test_nothing_of_a_deleted_user_remains_index_included(self):
        self.memory.add(add_body("gone", "s1", ["Zed: my zanzibarian flamingo", "Amy: nice", "Zed: yes"]))
        self.memory.add(add_body("gone", "s2", ["Zed: second session words"]))
        self.memory.add(add_body("kept", "s1", ["Kim: my quokka photo"]))
        key = self.memory.store.writer.execute("SELECT user_key FROM users WHERE user_id='gone'").fetchone()[0]
        self.assertTrue(index_terms(self.memory, key))
        self.assertTrue(self._file_contains(b"zanzibarian"))

        self.assertEqual(self.memory.delete_user("gone"), {"deleted": True, "user_id": "gone"})

        self.assertEqual(index_terms(self.memory, key), [])
        conn = self.memory.store.writer
        for table, where in (("users", "user_id = 'gone'"), ("requests", "user_key = %d" % key),
                             ("sessions", "user_key = %d" % key),
                             ("messages", "content LIKE 'Zed:%'"),
                             ("views", "session_key NOT IN (SELECT session_key FROM sessions)")):
            self.assertEqual(conn.execute("SELECT count(*) FROM %s WHERE %s" % (table, where)).fetchone()[0], 0, table)
        self.assertEqual(self.search("flamingo", "gone"), [])
        self.assertEqual(self.memory.stats("gone"), {"user_id": "gone", "exists": False})
        self.memory.close()
        # Not even freed pages or index segments keep the words (secure_delete + FTS5 optimize + checkpoint).
        self.assertFalse(self._file_contains(b"zanzibarian"))
        again = self.open_memory()
        self.assertEqual(self.search("quokka", "kept", memory=again)[0]["content"], "Kim: my quokka photo")

    def test_deleted_user_can_add_again_and_old_request_ids_are_forgotten(self):
        body = add_body("u1", "s1", ["Alice: first life"], request_id="r1")
        self.memory.add(body)
        self.memory.delete_user("u1")
        self.memory.add(add_body("u1", "s1", ["Alice: second life"], request_id="r1"))
        self.assertEqual([i["content"] for i in self.search("life", top_k=5)], ["Alice: second life"])

    def test_deleting_an_unknown_user_reports_it(self):
        self.assertEqual(self.memory.delete_user("nobody"), {"deleted": False, "user_id": "nobody"})

    def add_gone_and_kept(self):
        self.memory.add(add_body("gone", "s1", ["Zed: my zanzibarian flamingo", "Amy: nice", "Zed: yes"]))
        self.memory.add(add_body("kept", "s1", ["Kim: my quokka photo"]))
        self.assertTrue(self.search("zanzibarian flamingo", "gone"))  # gone's session is now in memory
        self.assertTrue(self.search("quokka", "kept"))
        return [r[0] for r in self.memory.store.writer.execute(
            "SELECT session_key FROM sessions s JOIN users u USING (user_key) WHERE u.user_id = 'gone'")]

    def test_a_search_right_after_deletion_cannot_see_cached_content(self):
        sessions = self.add_gone_and_kept()
        self.assertTrue(self.memory.delete_user("gone")["deleted"])
        self.assertFalse([key for key in sessions if key in self.memory.store.cache])
        self.assertEqual(len(self.memory.store.cache), 1)  # kept's session stays (tests/test_delete_caches.py)
        self.assertEqual(stem.cache_info().currsize, 0)  # not even the words it said, as stems
        self.assertEqual(self.search("zanzibarian flamingo", "gone"), [])
        self.assertFalse(self._file_contains(b"zanzibarian"))  # at once, in the file and its WAL
        self.assertEqual(self.search("quokka", "kept")[0]["content"], "Kim: my quokka photo")

    def test_a_deletion_by_another_process_empties_this_processs_cache(self):
        sessions = self.add_gone_and_kept()
        self.open_memory().delete_user("gone")  # a second Memory stands for `flowmem delete-user` beside a server
        self.assertEqual(self.search("quokka", "kept")[0]["content"], "Kim: my quokka photo")
        self.assertFalse([key for key in sessions if key in self.memory.store.cache])

    def _file_contains(self, needle: bytes) -> bool:
        data = b""
        for suffix in ("", "-wal"):
            if os.path.exists(self.db_path() + suffix):
                with open(self.db_path() + suffix, "rb") as f:
                    data += f.read()
        return needle in data


if __name__ == "__main__":
    unittest.main()


class ManyTermsTest(MemoryTestCase):
    def test_lookups_of_more_terms_than_sqlite_takes_bound_values_give_the_same_results(self):
        self.memory.add(add_body("u1", "s1", ["Alice: the blue kite", "Bob: a red kite", "Alice: blue sky"]))
        real = ["blue", "kite", "red", "sky"]
        with self.memory.store.reading() as reader:
            if hasattr(reader.conn, "setlimit"):  # Python 3.11+: make the limit small, the test fast
                reader.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
                many = 2_500
            else:  # above SQLite's default limit (32,766) and the larger ones some builds use
                many = 250_001
            noise = ["zq%d" % i for i in range(many)]
            key = reader.user_key("u1")
            expected = reader.postings(key, "message", real), reader.doc_freqs(key, real)
            self.assertTrue(expected[0])
            got = reader.postings(key, "message", noise + real), reader.doc_freqs(key, noise + real)
            self.assertEqual(len(reader.views(list(range(1, many)))),
                             reader.conn.execute("SELECT count(*) FROM views").fetchone()[0])
        self.assertEqual(got, expected)


class LongMessageTest(MemoryTestCase):
    def test_a_message_of_megabytes_is_stored_whole_and_indexed_and_shown_up_to_the_cap(self):
        import json
        long = "Alice: the violet umbrella " + "lorem ipsum " * 200_000 + " the hidden walrus"
        started = time.monotonic()
        self.memory.add(add_body("u1", "s1", [long] * 5))
        self.assertLess(time.monotonic() - started, 10)
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("SELECT content FROM messages LIMIT 1").fetchone()[0], long)
        started = time.monotonic()
        items = self.search("violet umbrella", top_k=100)
        self.assertLess(time.monotonic() - started, 5)
        self.assertTrue(items[0]["content"].startswith("Alice: the violet umbrella lorem"))
        self.assertTrue(items[0]["content"].endswith(
            "[... %d more characters not shown]" % (len(long) - MAX_MESSAGE_CHARS)))
        self.assertLess(len(json.dumps(items)), 2 * 5 * 3 * MAX_MESSAGE_CHARS)
        self.assertEqual(matches(self.search("hidden walrus")), [])  # past the cap: not indexed
