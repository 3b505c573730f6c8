"""Live databases: index settings fixed per database, explicit init and reindex, read-only reads.

A Memory held open in the test process stands for a running server; the CLI runs as
a child process beside it, as an operator would run it.
"""
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import unittest

from flowmem.config import load
from flowmem.errors import StoreError
from flowmem.memory import Memory
from flowmem.storage.settings import INDEX_VERSION
from flowmem.storage.store import Store
from tests.helpers import CliMixin, MemoryTestCase, add_body, matches, session_views

SESSION = ["Dana: I went to a pottery workshop yesterday and it was so relaxing.",
           "Priya: Nice! What did you make?",
           "Dana: A small blue bowl. I want to take the evening class next month."]


def by_own_words(items):
    """The items found by the question's own words: not the fallback, nor only by a near spelling or by meaning
    (which reads stems whatever the index holds)."""
    return [i for i in matches(items) if set(i["signals"]) - {"typo", "adjacency", "reply", "meaning"}]


class LiveDatabaseTest(CliMixin, MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.cli_dir = self.tmp
        self.memory.add(add_body("alice", "2023-05-08", SESSION, request_id="r1"))

    def ask(self, query, memory=None):
        return self.search(query, "alice", 5, memory=memory)

    def file_bytes(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_a_cli_command_with_other_index_settings_is_refused_beside_a_live_database(self):
        before = self.ask("What did Dana make at the pottery workshop?")
        for command, flag, stored, value in ((["search", "--user", "alice", "pottery"], "--stem", "1", "0"),
                                             (["stats"], "--window-size", "3", "4"),
                                             (["add", "--user", "bob", "--session", "s", "--content", "hi"],
                                              "--resolve-times", "1", "0")):
            with self.subTest(command=command[0]):
                result = self.run_cli(command[0], "--db", self.db_path(), flag, value, *command[1:])
                name = flag[2:].replace("-", "_")
                self.assert_one_line_error(result, "%s is %s there, %s given" % (name, stored, value),
                                           "`flowmem reindex --db %s %s %s`" % (self.db_path(), flag, value))
        self.assertEqual(self.ask("What did Dana make at the pottery workshop?"), before)
        self.assertTrue(before)

    def test_reindex_beside_an_open_memory_keeps_its_answers_and_applies_the_new_settings(self):
        question = "What did Dana make at the pottery workshop?"
        before = self.ask(question)
        self.assertIn("pottery workshop", self.ask("workshops")[0]["content"])  # stemmed: workshops ~ workshop
        result = self.run_cli("reindex", "--db", self.db_path(), "--stem", "0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("3 of 3 messages", result.stderr)  # progress
        after = self.ask(question)
        self.assertTrue(after)
        self.assertEqual([(i["id"], i["content"]) for i in after], [(i["id"], i["content"]) for i in before])
        self.assertFalse(self.memory.store.settings.stem)
        # Unstemmed now: the question is read as the index is, so its own word matches nothing
        # (only the near-spelling bridge, typo, reaches "workshop", and what it brings next to it).
        self.assertEqual(by_own_words(self.ask("workshops")), [])
        self.assertEqual(self.memory.stats()["index"]["stem"], False)

    def test_searches_during_reindexes_never_come_back_empty(self):
        results, stop = [], threading.Event()

        def keep_searching():
            while not stop.is_set():
                results.append(len(self.ask("pottery bowl")))

        searcher = threading.Thread(target=keep_searching)
        searcher.start()
        try:
            other = Store(self.db_path(), synchronous="NORMAL", cache_messages=0, create=False, check_index=False)
            try:
                for stem in (False, True, False, True):
                    other.reindex({"stem": stem})
            finally:
                other.close()
        finally:
            stop.set()
            searcher.join()
        self.assertTrue(results)
        self.assertNotIn(0, results)

    def test_a_write_after_another_process_reindexed_derives_its_tokens_with_the_new_settings(self):
        self.ask("pottery")
        other = Store(self.db_path(), synchronous="NORMAL", cache_messages=0, create=False, check_index=False)
        other.reindex({"stem": False})
        other.close()
        self.memory.add(add_body("alice", "2023-05-09", ["Dana: the classes started"], request_id="r2"))
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        tokens = conn.execute("SELECT tokens FROM messages WHERE content = 'Dana: the classes started'").fetchone()[0]
        self.assertIn("classes", tokens.split())
        self.assertEqual(self.ask("classes")[0]["content"], "Dana: the classes started")

    def test_an_index_of_an_older_flowmem_is_refused_until_reindexed(self):
        self.memory.close()
        conn = sqlite3.connect(self.db_path())
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'index_version'")
        conn.commit()
        conn.close()
        with self.assertRaises(StoreError) as cm:
            self.open_memory()
        self.assertIn("older flowmem", cm.exception.reason)
        self.assertIn("flowmem reindex --db %s" % self.db_path(), cm.exception.reason)
        self.assert_one_line_error(self.run_cli("search", "--db", self.db_path(), "--user", "alice", "bowl"),
                                   "older flowmem")
        self.assertEqual(self.run_cli("reindex", "--db", self.db_path()).returncode, 0)
        self.assertIn("blue bowl", self.ask("bowl", memory=self.open_memory())[0]["content"])

    def test_a_database_indexed_by_an_earlier_flowmem_keeps_its_own_settings(self):
        memory = self.open_memory("legacy.db", stem=False)
        memory.add(add_body("alice", "2023-05-08", SESSION, request_id="r1"))
        memory.close()
        conn = sqlite3.connect(self.db_path("legacy.db"))
        conn.execute("DELETE FROM meta")  # as flowmem wrote it before: gap in ms, True/False, no generation
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
            ("index_version", str(INDEX_VERSION)), ("window_size", "3"), ("segment_max_messages", "8"),
            ("segment_max_gap_ms", "1800000"), ("stem", "False"), ("split_speakers", "True"),
            ("resolve_times", "True")])
        conn.commit()
        conn.close()
        memory = self.open_memory("legacy.db")
        # Not stemmed, as the index was built: only the near-spelling bridge (typo) reaches "workshop".
        self.assertEqual(by_own_words(self.ask("workshops", memory=memory)), [])
        self.assertIn("pottery workshop", self.ask("workshop", memory=memory)[0]["content"])
        self.assertEqual(memory.stats()["index"], {"window_size": 3, "segment_max_messages": 8,
                                                   "segment_max_gap_s": 1800, "stem": False, "split_speakers": True,
                                                   "resolve_times": True})

    def test_init_creates_a_database_with_the_settings_given_and_never_twice(self):
        path = self.db_path("new.db")
        result = self.run_cli("init", "--db", path, "--window-size", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("window_size=2", result.stdout)
        memory = self.open_memory("new.db")
        memory.add(add_body("u", "s", ["A: one", "B: two", "A: three"]))
        windows = [s for s in session_views(memory, "u", "s") if s.kind == "window"]
        self.assertEqual(windows, [("window", 1, 2), ("window", 2, 3)])
        memory.close()
        before = self.file_bytes(path)
        self.assert_one_line_error(self.run_cli("init", "--db", path), "exists", "flowmem reindex")
        self.assertEqual(self.file_bytes(path), before)

    def test_commands_that_need_a_database_name_it_and_create_nothing(self):
        missing = os.path.join(self.tmp, "nowhere", "missing.db")
        os.mkdir(os.path.dirname(missing))
        for command in (["search", "--user", "alice", "bowl"], ["stats"], ["delete-user", "--user", "alice"],
                        ["reindex"], ["backup", "--to", os.path.join(self.tmp, "copy.db")]):
            with self.subTest(command=command[0]):
                result = self.run_cli(command[0], "--db", missing, *command[1:])
                self.assert_one_line_error(result, missing, "flowmem init")
                self.assertEqual(os.listdir(os.path.dirname(missing)), [])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "copy.db")))


class SidecarTest(CliMixin, MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.cli_dir = self.tmp
        self.memory.add(add_body("alice", "s1", ["Alice: the zebra crossing"]))

    def test_no_command_takes_a_database_files_wal_or_shm_for_a_database(self):
        live = self.db_path()
        self.memory.store.close()  # the WAL is now empty: SQLite would open it as a new database
        self.memory = self.open_memory()
        for suffix in ("-wal", "-shm"):
            for command in (["add", "--user", "x", "--session", "y", "--content", "Dana: typo"], ["stats"],
                            ["search", "--user", "alice", "zebra"], ["delete-user", "--user", "alice"]):
                with self.subTest(suffix=suffix, command=command[0]):
                    size = os.path.getsize(live + suffix)
                    result = self.run_cli(command[0], "--db", live + suffix, *command[1:])
                    self.assert_one_line_error(result, "not a database", "--db " + live)
                    self.assertEqual(os.path.getsize(live + suffix), size)
        self.assertEqual(self.search("zebra", "alice")[0]["content"], "Alice: the zebra crossing")


class ReadOnlyTest(CliMixin, MemoryTestCase):
    """search, stats and backup open the file read-only: no byte of it changes, read-only files work."""

    def setUp(self):
        super().setUp()
        self.cli_dir = self.tmp
        self.memory.add(add_body("alice", "2023-05-08", SESSION, request_id="r1"))
        self.expected = self.search("blue bowl", "alice", 3)
        self.memory.close()

    def delete_mode_copy(self, name):
        """A self-contained copy in journal mode DELETE, made with SQLite alone."""
        path = self.db_path(name)
        source, copy = sqlite3.connect(self.db_path()), sqlite3.connect(path)
        source.backup(copy)
        copy.execute("PRAGMA journal_mode = DELETE")
        source.close()
        copy.close()
        return path

    def cli_search(self, path):
        result = self.run_cli("search", "--db", path, "--user", "alice", "--top-k", "3", "--json", "blue bowl",
                              env={"FLOWMEM_DATE_PREFIX": "0", "FLOWMEM_TIME_ANNOTATIONS": "0"})
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)["data"]

    def test_a_copy_in_delete_mode_is_searched_without_changing_a_byte_of_it(self):
        path = self.delete_mode_copy("copy.db")
        with open(path, "rb") as f:
            before = f.read()
        self.assertEqual(self.cli_search(path), self.expected)
        self.assertEqual(self.run_cli("stats", "--db", path).returncode, 0)
        memory = Memory(load({"db": path}, environ={}), read_only=True)
        self.assertTrue(self.search("bowl", "alice", memory=memory))
        with self.assertRaises(StoreError):
            memory.add(add_body("alice", "s2", ["Dana: not stored"]))
        memory.close()
        with open(path, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(n for n in os.listdir(self.tmp) if n.startswith("copy")), ["copy.db"])

    def test_a_database_on_a_read_only_mount_is_searched(self):
        mount = tempfile.mkdtemp(prefix="flowmem-ro-")
        self.addCleanup(os.rmdir, mount)
        source = os.path.join(self.tmp, "ro-source")
        os.mkdir(source)
        os.rename(self.delete_mode_copy("copy.db"), os.path.join(source, "copy.db"))
        os.rename(self.db_path(), os.path.join(source, "wal.db"))  # closed cleanly: no -wal, no -shm
        if subprocess.run(["mount", "--bind", source, mount], capture_output=True).returncode != 0:
            self.skipTest("cannot bind-mount here (needs root and mount)")
        self.addCleanup(subprocess.run, ["umount", mount], capture_output=True)
        if subprocess.run(["mount", "-o", "remount,bind,ro", mount], capture_output=True).returncode != 0:
            self.skipTest("cannot remount read-only here")
        self.assertFalse(os.access(mount, os.W_OK))
        for name in ("wal.db", "copy.db"):
            with self.subTest(database=name):
                self.assertEqual(self.cli_search(os.path.join(mount, name)), self.expected)
                self.assertEqual(self.run_cli("stats", "--db", os.path.join(mount, name)).returncode, 0)
        self.assertEqual(sorted(os.listdir(mount)), ["copy.db", "wal.db"])


if __name__ == "__main__":
    unittest.main()
