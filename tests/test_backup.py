"""Online backup: a consistent, self-contained, checked copy while Adds keep succeeding."""
import os
import sqlite3
import threading
import time
import unittest

from flowmem.config import load
from flowmem.errors import BackupRefused
from flowmem.memory import Memory
from tests.cli_inprocess import InProcessCli
from tests.helpers import MemoryTestCase, add_body

QUESTIONS = ["What did Dana make at the pottery workshop?", "blue bowl", "evening class", "sunrise lake", "Priya"]


class BackupTest(InProcessCli, MemoryTestCase):
    """The `backup` command run in this process (tests/cli_inprocess.py): its refusals and output are main()'s."""

    def setUp(self):
        super().setUp()
        self.cli_dir = self.tmp
        for day in range(5):
            self.memory.add(add_body("alice", "s%d" % day, [
                "Dana: I went to a pottery workshop on day %d" % day, "Priya: What did you make?",
                "Dana: A small blue bowl, number %d. The evening class is next." % day,
                "Priya: I painted a sunrise over the lake."], request_id="a%d" % day))
        for n in range(60):  # other users' data, so that copying takes a while
            self.memory.add(add_body("filler", "f%d" % n, ["F: filler line %d of %d %s" % (i, n, "word " * 20)
                                                           for i in range(20)], request_id="f%d" % n))

    def answers(self, memory):
        return [self.search(q, "alice", 10, memory=memory) for q in QUESTIONS]

    def open_copy(self, path):
        memory = Memory(load({"db": path, "date_prefix": False, "time_annotations": False}, environ={}),
                        read_only=True, create=False)
        self.addCleanup(memory.close)
        return memory

    def test_a_backup_taken_while_adds_go_on_is_consistent_and_searches_the_same(self):
        finished, failures, stop = [], [], threading.Event()

        def keep_adding():
            n = 0
            while not stop.is_set():
                try:
                    self.memory.add(add_body("busy", "b%d" % (n % 7), ["B: busy line %d" % n, "C: reply %d" % n],
                                             request_id="b%d" % n))
                    finished.append(time.monotonic())
                except Exception as e:  # noqa: BLE001 - any failure of an Add fails the test
                    failures.append(e)
                n += 1

        adder = threading.Thread(target=keep_adding)
        adder.start()
        during = 0
        try:
            time.sleep(0.05)
            for attempt in range(5):
                target = self.db_path("copy-%d.db" % attempt)
                started = time.monotonic()
                copied = self.memory.backup(target)
                ended = time.monotonic()
                during += sum(1 for t in finished if started <= t <= ended)
        finally:
            stop.set()
            adder.join()
        self.assertEqual(failures, [])
        self.assertGreater(during, 0, "no Add finished while a backup ran")
        self.assertEqual(copied["path"], target)
        conn = sqlite3.connect(target)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA journal_mode").fetchone()[0], "delete")
        stored, promised = conn.execute("SELECT (SELECT count(*) FROM messages),"
                                        " (SELECT sum(n_messages) FROM requests)").fetchone()
        self.assertEqual(stored, promised)  # every copied Add whole: one snapshot
        self.assertEqual(stored, copied["messages"])
        self.assertFalse([n for n in os.listdir(self.tmp) if n.startswith(("copy-4.db-", ".copy"))])
        self.assertEqual(self.answers(self.open_copy(target)), self.answers(self.memory))

    def test_a_backup_never_overwrites_a_file_unless_forced(self):
        target = self.db_path("copy.db")
        with open(target, "wb") as f:
            f.write(b"precious")
        result = self.run_cli("backup", "--db", self.db_path(), "--to", target)
        self.assert_one_line_error(result, target, "--force")
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"precious")
        result = self.run_cli("backup", "--db", self.db_path(), "--to", target, "--force")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("integrity checked", result.stdout)
        self.assertEqual(self.answers(self.open_copy(target)), self.answers(self.memory))
        self.assertEqual(sorted(n for n in os.listdir(self.tmp) if "copy" in n), ["copy.db"])

    def test_a_refused_target_is_a_backup_refusal_not_a_bad_request(self):
        target = self.db_path("copy.db")
        with open(target, "wb") as f:
            f.write(b"precious")
        for refused in (target, self.db_path()):
            with self.subTest(target=refused):
                with self.assertRaises(BackupRefused) as cm:
                    self.memory.backup(refused, False)
                self.assertEqual(cm.exception.status, 409)
                self.assertIn(refused, cm.exception.reason)


    def test_a_backup_never_replaces_the_live_database_its_files_or_a_database_in_use(self):
        live = self.db_path()
        answers = self.answers(self.memory)
        other = self.open_memory("other.db")  # open, so its WAL is beside it
        other.add(add_body("bob", "s1", ["Bob: in use"]))
        for target in (live, live + "-wal", live + "-shm", self.db_path("other.db")):
            with self.subTest(target=target):
                result = self.run_cli("backup", "--db", live, "--to", target, "--force")
                self.assert_one_line_error(result, target)
        self.assertEqual(self.answers(self.memory), answers)
        self.assertEqual(other.stats("bob")["messages"], 1)
        self.assertEqual(other.stats()["users"], 1)


class CheckpointBesideLongReadsTest(MemoryTestCase):
    def test_a_truncating_checkpoint_gives_way_to_a_long_read_instead_of_stalling_writes(self):
        self.memory.add(add_body("u1", "s1", ["Alice: before the long read"], request_id="r0"))
        reader = sqlite3.connect(self.db_path(), isolation_level=None)  # stands for a long backup
        self.addCleanup(reader.close)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchone()
        self.memory.add(add_body("u1", "s1", ["Alice: during the long read"], request_id="r1"))
        checkpointer = self.memory.store.checkpointer
        checkpointer.wal_limit_bytes = 1  # every checkpoint wants to truncate the WAL
        started = time.monotonic()
        self.assertFalse(checkpointer.checkpoint())  # it gave up: the old snapshot is still read
        self.memory.add(add_body("u1", "s1", ["Alice: still writing"], request_id="r2"))
        self.assertLess(time.monotonic() - started, 5.0)
        reader.execute("COMMIT")
        self.assertTrue(checkpointer.checkpoint())
        self.assertEqual(os.path.getsize(self.db_path() + "-wal"), 0)


if __name__ == "__main__":
    unittest.main()
