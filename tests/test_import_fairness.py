"""Imports never keep other users' Adds waiting (issue 22, item 6), and an import refused partway
says exactly what it stored (item 4).

Imports write in chunks, each one transaction (Memory.import_records), under a write lock
granted in turn (storage/fair_lock.py), in a lane of workers of their own (server.py). No test
here measures time: threads are ordered by events and by what the lock says waits for it.
"""
import json
import threading
import time
import unittest
from unittest import mock

from flowmem import importing as chunking
from flowmem.commands import export_import as cli_portable
from flowmem.commands.command import UsageError
from flowmem.config import load
from flowmem.errors import InvalidField, StorageFull
from flowmem.http.api import App
from flowmem.http.lanes import lane_of
from flowmem.http.server import Server
from flowmem.storage import appending
from flowmem.storage.fair_lock import FairLock
from tests.helpers import MemoryTestCase, add_body
from tests.test_http_hostile import read_response, request_bytes

WAIT_S = 20  # what a test waits for a thread at most before it fails (never reached when all is well)


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("never happened: " + what)
        time.sleep(0.002)


def records(n: int, user: str = "imp"):
    return [add_body(user, "s%d" % (i // 10), ["Kim: imported note %d about kites" % i], request_id="r%d" % i)
            for i in range(n)]


class FairLockTest(unittest.TestCase):
    def test_waiters_get_the_lock_in_the_order_they_asked(self):
        lock, order = FairLock(), []
        lock.acquire()
        threads = []
        for name in "abcd":
            thread = threading.Thread(target=lambda name=name: (lock.acquire(), order.append(name), lock.release()))
            thread.start()
            threads.append(thread)
            wait_until(lambda: lock.waiting() == len(threads), "%s waits" % name)
        lock.release()
        for thread in threads:
            thread.join(WAIT_S)
        self.assertEqual(order, list("abcd"))
        self.assertFalse(lock.locked())

    def test_a_holder_that_releases_and_asks_again_goes_behind_the_one_waiting(self):
        lock, order = FairLock(), []
        lock.acquire()
        waiter = threading.Thread(target=lambda: (lock.acquire(), order.append("waiter"), lock.release()))
        waiter.start()
        wait_until(lambda: lock.waiting() == 1, "the waiter waits")
        lock.release()
        with lock:  # at once, as an import's next chunk would: the waiter had it first
            order.append("again")
        waiter.join(WAIT_S)
        self.assertEqual(order, ["waiter", "again"])

    def test_releasing_an_unheld_lock_is_an_error(self):
        with self.assertRaises(RuntimeError):
            FairLock().release()


class ChunkedImportTest(MemoryTestCase):
    def message_rowid(self, user: str, content: str) -> int:
        return self.memory.store.writer.execute(
            "SELECT m.rowid FROM messages m JOIN sessions s USING (session_key) JOIN users u USING (user_key)"
            " WHERE u.user_id = ? AND m.content = ?", (user, content)).fetchone()[0]

    def test_an_add_sent_while_an_import_writes_a_chunk_commits_before_the_imports_next_chunk(self):
        inside, go_on = threading.Event(), threading.Event()
        original = appending.add

        def held_add(conn, settings, user_id, *rest):
            if user_id == "imp" and not inside.is_set():
                inside.set()  # the import's first chunk, inside its transaction
                go_on.wait(WAIT_S)
            return original(conn, settings, user_id, *rest)

        with mock.patch.object(appending, "add", held_add), mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 5):
            importing = threading.Thread(target=self.memory.import_records, args=(records(20),))
            importing.start()
            self.assertTrue(inside.wait(WAIT_S))
            adding = threading.Thread(target=self.memory.add, args=(add_body("bob", "b1", ["Bob: my own note"]),))
            adding.start()
            wait_until(lambda: self.memory.store._write_lock.waiting() == 1, "the Add waits for the write lock")
            go_on.set()
            adding.join(WAIT_S)
            importing.join(WAIT_S)
        bob = self.message_rowid("bob", "Bob: my own note")
        self.assertLess(self.message_rowid("imp", "Kim: imported note 4 about kites"), bob)  # the first chunk
        self.assertGreater(self.message_rowid("imp", "Kim: imported note 5 about kites"), bob)  # the next one
        self.assertEqual(self.memory.stats("imp")["messages"], 20)

    def test_an_import_is_written_in_chunks_of_a_bounded_number_of_messages(self):
        transactions = []
        original = self.memory.store.add_many
        self.memory.store.add_many = lambda adds: transactions.append(len(adds)) or original(adds)
        with mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 7):
            counts = self.memory.import_records(records(30))
        self.assertEqual(transactions, [7, 7, 7, 7, 2])
        self.assertEqual(counts, {"requests": 30, "stored": 30, "already_stored": 0, "messages": 30})

    def fill_the_disk_at(self, request_id: str):
        """appending.add that makes the database full (its size limit: tests/test_storage_errors.py) as
        it reaches the record `request_id`, whose transaction then fails."""
        original = appending.add

        def filling(conn, settings, user_id, session_id, rid, *rest):
            if rid == request_id:
                conn.execute("PRAGMA max_page_count = %d" % conn.execute("PRAGMA page_count").fetchone()[0])
            return original(conn, settings, user_id, session_id, rid, *rest)

        self.addCleanup(self.memory.store.writer.execute, "PRAGMA max_page_count = 1073741823")
        return mock.patch.object(appending, "add", filling)

    def test_an_import_stopped_by_a_full_disk_after_some_chunks_says_exactly_which_records_are_stored(self):
        with self.fill_the_disk_at("r24"), mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 8):
            with self.assertRaises(StorageFull) as cm:
                self.memory.import_records(records(60) + [add_body("imp", "big", ["Kim: " + "kite " * 20000])])
        error = cm.exception  # a StorageFull as any other: 507, Retry-After
        self.assertEqual((error.status, error.detail), (507, {"records_stored": 24}))
        self.assertIn("first 24 of 61 records", error.reason)
        self.assertNotIn("nothing was written", error.reason)
        self.assertGreater(error.retry_after, 0)
        self.assertEqual(self.memory.stats("imp")["requests"], 24)  # exactly the first 24
        self.memory.store.writer.execute("PRAGMA max_page_count = 1073741823")
        again = self.memory.import_records(records(60))  # sending it all again stores only the rest
        self.assertEqual((again["already_stored"], again["stored"]), (24, 36))

    def test_an_import_refused_before_any_chunk_is_written_says_none_was(self):
        writer_conn = self.memory.store.writer
        self.memory.add(add_body("u1", "s1", ["Dana: first"]))
        writer_conn.execute("PRAGMA max_page_count = %d" % writer_conn.execute("PRAGMA page_count").fetchone()[0])
        self.addCleanup(writer_conn.execute, "PRAGMA max_page_count = 1073741823")
        with self.assertRaises(StorageFull) as cm:
            self.memory.import_records([add_body("imp", "big", ["Kim: " + "kite " * 20000])])
        self.assertEqual((cm.exception.status, cm.exception.detail), (507, {"records_stored": 0}))
        self.assertIn("nothing was written", cm.exception.reason)
        self.assertIn("none of this import's records were stored", cm.exception.reason)
        self.assertFalse(self.memory.stats("imp")["exists"])

    def test_a_malformed_record_read_from_an_iterable_stops_the_import_after_the_records_before_it(self):
        good = records(12)
        bad = dict(good[0], messages="not a list")
        with mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 5):
            with self.assertRaises(InvalidField) as cm:
                self.memory.import_records(iter(good[:7] + [bad] + good[8:]))
        self.assertEqual(cm.exception.field, "records[7].messages")
        self.assertIn("the 7 records before it are stored", cm.exception.reason)
        self.assertEqual(self.memory.stats("imp")["requests"], 7)


class ImportLaneTest(MemoryTestCase):
    """Over HTTP: imports in a lane of their own."""

    def test_imports_adds_and_searches_go_to_their_own_lanes(self):
        def head(method, target):
            return ("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (method, target)).encode()

        self.assertEqual(lane_of(head("POST", "/users/u1/import")), "import")
        self.assertEqual(lane_of(head("POST", "/add")), "write")
        self.assertEqual(lane_of(head("DELETE", "/users/u1")), "write")
        self.assertEqual(lane_of(head("POST", "/search")), "read")
        self.assertEqual(lane_of(head("GET", "/users/u1/import")), "read")  # a 405, answered by a reader

    def test_an_add_is_answered_while_imports_hold_every_import_thread(self):
        config = load({"db": self.db_path(), "port": 0, "workers": 4}, environ={})  # one writer, one importer
        server = Server(App(self.memory, config), config)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        running, release = threading.Event(), threading.Event()
        original = self.memory.import_records

        def held_import(bodies, progress=None, strict=True):
            running.set()
            release.wait(WAIT_S)
            return original(bodies, progress, strict)

        self.memory.import_records = held_import
        self.addCleanup(lambda: (release.set(), server.stop(), thread.join(WAIT_S)))
        importer = self.connect(server)
        importer.sendall(request_bytes("/users/imp/import", json.dumps({"records": records(3)}).encode()))
        self.assertTrue(running.wait(WAIT_S))
        adder = self.connect(server)
        adder.sendall(request_bytes("/add", json.dumps(add_body("bob", "b1", ["Bob: answered"])).encode()))
        status, _, body = read_response(adder)  # the import still runs
        self.assertEqual(status, 200, body)
        self.assertFalse(release.is_set())
        release.set()
        status, _, body = read_response(importer)
        self.assertEqual((status, json.loads(body)["stored"]), (200, 3))

    def test_an_import_refused_partway_over_http_says_how_many_records_it_stored(self):
        config = load({"db": self.db_path(), "port": 0}, environ={})
        server = Server(App(self.memory, config), config)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(lambda: (server.stop(), thread.join(WAIT_S)))
        sock = self.connect(server)
        body = {"records": records(10) + [add_body("imp", "big", ["Kim: " + "kite " * 20000], request_id="big")]}
        chunks = mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 10)
        with ChunkedImportTest.fill_the_disk_at(self, "big"), chunks:
            sock.sendall(request_bytes("/users/imp/import", json.dumps(body).encode()))
            status, head, answer = read_response(sock)
        detail = json.loads(answer)["detail"]
        self.assertEqual((status, detail["records_stored"]), (507, 10), answer)
        self.assertIn("first 10 of 11 records", detail["reason"])
        self.assertIn("Retry-After", head)

    def connect(self, server):
        import socket

        sock = socket.create_connection(("127.0.0.1", server.address[1]), timeout=WAIT_S)
        self.addCleanup(sock.close)
        return sock


class CliImportTest(MemoryTestCase):
    def test_flowmem_import_stopped_by_a_full_disk_names_the_line_it_stopped_at_and_what_is_stored(self):
        lines = [("line %d" % (i + 1), body) for i, body in enumerate(records(30))]
        with ChunkedImportTest.fill_the_disk_at(self, "r20"), \
                mock.patch.object(chunking, "IMPORT_CHUNK_MESSAGES", 10):
            with self.assertRaises(UsageError) as cm:
                cli_portable.import_records(self.memory, "dump.jsonl", "flowmem dump", lines)
        self.assertIn("import of dump.jsonl stopped at its line 21", cm.exception.reason)
        self.assertIn("first 20 of 30 records, which are stored", cm.exception.reason)
        self.assertEqual(self.memory.stats("imp")["requests"], 20)


if __name__ == "__main__":
    unittest.main()
