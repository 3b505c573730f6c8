"""Storage errors: a full disk or a held lock gives a clear retryable error, writes nothing, and heals by itself."""
import errno
import os
import sqlite3
import subprocess
import tempfile
import unittest

from flowmem.config import load
from flowmem.errors import StorageFull, Unavailable
from flowmem.memory import Memory
from flowmem.storage.sqlite_errors import storage_error
from tests.helpers import MemoryTestCase, add_body

BIG = ["Dana: a long message about pottery, number %d: %s" % (i, "clay wheel glaze kiln " * 40) for i in range(60)]


class StorageChecks(MemoryTestCase):
    """What every storage failure must leave: nothing written, searches working."""

    def counts(self, memory=None):
        stats = (memory or self.memory).stats("u1")
        return stats["messages"], stats["requests"]

    def assert_add_fails_whole_then_search_works(self, memory, error):
        before = self.counts(memory)
        with self.assertRaises(error) as cm:
            memory.add(add_body("u1", "s2", BIG, request_id="big"))
        self.assertEqual(self.counts(memory), before)  # no message, no idempotency record
        self.assertEqual(self.search("teapot", memory=memory)[0]["content"], "Dana: I made a teapot")
        self.assertGreater(cm.exception.retry_after, 0)
        return cm.exception


class StorageErrorTest(StorageChecks):
    def test_a_database_at_its_size_limit_gives_storage_full_and_takes_the_same_add_once_raised(self):
        self.memory.add(add_body("u1", "s1", ["Dana: I made a teapot"], request_id="small"))
        writer = self.memory.store.writer
        writer.execute("PRAGMA max_page_count = %d" % writer.execute("PRAGMA page_count").fetchone()[0])
        error = self.assert_add_fails_whole_then_search_works(self.memory, StorageFull)
        self.assertEqual(error.status, 507)
        self.assertIn("full", error.reason)
        writer.execute("PRAGMA max_page_count = 1073741823")
        self.assertTrue(self.memory.add(add_body("u1", "s2", BIG, request_id="big"))["success"])
        self.assertEqual(self.counts(), (61, 2))

    def test_a_write_that_waits_past_the_busy_timeout_gets_unavailable(self):
        self.memory.add(add_body("u1", "s1", ["Dana: I made a teapot"], request_id="small"))
        other = sqlite3.connect(self.db_path(), isolation_level=None)
        self.addCleanup(other.close)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock (a reindex, say)
        self.memory.store.writer.execute("PRAGMA busy_timeout = 50")
        error = self.assert_add_fails_whole_then_search_works(self.memory, Unavailable)
        self.assertEqual(error.status, 503)
        other.execute("ROLLBACK")
        self.assertTrue(self.memory.add(add_body("u1", "s2", BIG, request_id="big"))["success"])

    def test_errors_are_told_apart_by_their_message_where_python_gives_no_error_code(self):
        for message, kind in (("database or disk is full", StorageFull), ("database is locked", Unavailable),
                              ("database table is locked", Unavailable), ("disk I/O error", Unavailable)):
            with self.subTest(message=message):
                self.assertIsInstance(storage_error(sqlite3.OperationalError(message), "x.db"), kind)
        self.assertIsNone(storage_error(sqlite3.OperationalError("no such table: x"), "x.db"))


class FullDiskTest(StorageChecks):
    """On a small tmpfs, filled to the last byte."""

    def mount_small_disk(self, size: str) -> str:
        directory = tempfile.mkdtemp(prefix="flowmem-full-")
        self.addCleanup(os.rmdir, directory)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", directory],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest("cannot mount a tmpfs here (needs root): %s" % mounted.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", directory], capture_output=True)
        return directory

    @staticmethod
    def fill(directory: str) -> str:
        path = os.path.join(directory, "filler")
        with open(path, "wb", buffering=0) as f:
            for size in (1 << 20, 4096, 1):
                try:
                    while True:
                        f.write(b"\0" * size)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
        return path

    def test_on_a_full_disk_an_add_gets_storage_full_writes_nothing_and_succeeds_once_space_returns(self):
        directory = self.mount_small_disk("8m")
        memory = Memory(load({"db": os.path.join(directory, "full.db"), "synchronous": "NORMAL",
                              "date_prefix": False, "time_annotations": False}, environ={}))
        self.addCleanup(memory.close)
        memory.add(add_body("u1", "s1", ["Dana: I made a teapot"], request_id="small"))
        memory.store.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the next Add must grow the WAL
        filler = self.fill(directory)

        error = self.assert_add_fails_whole_then_search_works(memory, StorageFull)
        self.assertEqual(error.status, 507)
        memory.store.checkpointer.checkpoint()  # must not raise on a full disk
        self.assertTrue(memory.store.checkpointer.is_alive())

        os.remove(filler)
        self.assertTrue(memory.add(add_body("u1", "s2", BIG, request_id="big"))["success"])
        self.assertEqual(self.counts(memory), (61, 2))
        self.assertIn("number 7:", self.search("glaze kiln 7", memory=memory)[0]["content"])


if __name__ == "__main__":
    unittest.main()
