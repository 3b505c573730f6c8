import sqlite3
import threading
import unittest
from unittest import mock

from flowmem.errors import InvalidField
from flowmem.storage import views
from tests.helpers import T0, MemoryTestCase, add_body


class AddValidationTest(MemoryTestCase):
    def assert_rejected(self, body, field):
        with self.assertRaises(InvalidField) as cm:
            self.memory.add(body)
        self.assertEqual(cm.exception.field, field)
        self.assertIn(field, cm.exception.reason)
        self.assertEqual(self.memory.stats()["messages"], 0, "a rejected Add must write nothing")

    def good(self):
        return add_body("u1", "s1", ["Alice: hello there", "Bob: hi", "Alice: bye now"])

    def test_each_required_field_is_named_when_missing_blank_or_mistyped(self):
        for field in ("request_id", "user_id", "session_id"):
            for bad in (None, "", "   ", 7, ["x"]):
                body = self.good()
                if bad is None:
                    del body[field]
                else:
                    body[field] = bad
                with self.subTest(field=field, value=bad):
                    self.assert_rejected(body, field)

    def test_messages_must_be_a_non_empty_array_of_objects(self):
        for bad in (None, [], "text", {"role": "user"}):
            body = self.good()
            body["messages"] = bad
            with self.subTest(value=bad):
                self.assert_rejected(body, "messages")
        body = self.good()
        body["messages"][1] = "just a string"
        self.assert_rejected(body, "messages[1]")

    def test_bad_message_fields_are_named_with_their_index(self):
        cases = [("role", None), ("role", " "), ("role", 3), ("content", None), ("content", ""),
                 ("content", "\n\t"), ("content", ["a"]), ("timestamp", "1683554160000"), ("timestamp", 1.5),
                 ("timestamp", True), ("timestamp", float("nan")), ("timestamp", 10**20)]
        for name, bad in cases:
            body = self.good()
            if bad is None:
                del body["messages"][2][name]
            else:
                body["messages"][2][name] = bad
            with self.subTest(field=name, value=bad):
                self.assert_rejected(body, "messages[2].%s" % name)

    def test_unpaired_surrogates_are_rejected_not_crashed_on(self):
        body = self.good()
        body["messages"][0]["content"] = "broken \ud800 text"
        self.assert_rejected(body, "messages[0].content")

    def test_integral_float_and_missing_timestamps_are_accepted(self):
        body = add_body("u1", "s1", ["Alice: float stamp"])
        body["messages"][0]["timestamp"] = float(T0)
        self.memory.add(body)
        self.memory.add(add_body("u1", "s2", ["Alice: no stamp"], timestamp=None))
        body = add_body("u1", "s3", ["Alice: null stamp"])
        body["messages"][0]["timestamp"] = None
        self.memory.add(body)
        items = {i["content"]: i for i in self.search("stamp", top_k=10)}
        self.assertEqual(items["Alice: float stamp"]["created_at"], "2023-05-08T13:56:00.000+00:00")
        self.assertIsNone(items["Alice: no stamp"]["created_at"])
        self.assertIsNone(items["Alice: null stamp"]["created_at"])

    def test_unknown_fields_are_ignored_named_and_ids_echoed_byte_for_byte_over_the_contract(self):
        body = add_body("usér 1 🙂 ", " s\u00a01", ["Alice: hello"], request_id="  r\"1\\ ")
        body["app_id"] = "a"
        body["messages"][0]["metdata"] = {"x": 1}
        self.assertEqual(self.memory.add_body(body, strict=False), {
            "success": True, "request_id": "  r\"1\\ ", "user_id": "usér 1 🙂 ", "session_id": " s\u00a01",
            "stored": True, "dated_on_receipt": 0, "ignored_fields": ["app_id", "messages[0].metdata"]})

    def test_the_python_api_refuses_an_unknown_field_naming_it_and_writes_nothing(self):
        body = add_body("u1", "s1", ["Alice: hello"], request_id="r1")
        body["messages"][0]["metdata"] = {"x": 1}
        with self.assertRaises(InvalidField) as raised:
            self.memory.add(body)
        self.assertEqual(raised.exception.field, "messages[0].metdata")
        self.assertIn("is not a field of an Add message", raised.exception.reason)
        self.assertEqual(self.memory.stats("u1"), {"user_id": "u1", "exists": False})


class IdempotencyTest(MemoryTestCase):
    def count(self, word, user="u1"):
        return sum(1 for i in self.search(word, user, 100) if i["view"] == views.MESSAGE)

    def test_a_retry_returns_the_same_answer_and_writes_nothing(self):
        body = add_body("u1", "s1", ["Alice: unique walrus"], request_id="r1")
        first = self.memory.add(body)
        self.assertTrue(first["stored"])
        for _ in range(3):
            self.assertEqual(self.memory.add(body), dict(first, stored=False))
        self.assertEqual(self.count("walrus"), 1)
        self.assertEqual(self.memory.stats("u1")["messages"], 1)

    def test_first_write_wins_and_a_replay_of_another_body_says_it_stored_nothing_and_differs(self):
        self.memory.add(add_body("u1", "s1", ["Alice: original narwhal"], request_id="r1"))
        replay = self.memory.add(add_body("u1", "s1", ["Alice: replacement narwhal"], request_id="r1"))
        self.assertEqual((replay["stored"], replay.get("body_differs")), (False, True))
        self.assertEqual([i["content"] for i in self.search("narwhal")], ["Alice: original narwhal"])
        same = self.memory.add(add_body("u1", "s1", ["Alice: original narwhal"], request_id="r1"))
        self.assertEqual((same["stored"], "body_differs" in same), (False, False))

    def test_same_request_id_under_another_user_is_another_write(self):
        self.memory.add(add_body("u1", "s1", ["Alice: shared request"], request_id="r1"))
        self.memory.add(add_body("u2", "s1", ["Bob: shared request"], request_id="r1"))
        self.assertEqual(self.count("request", "u1"), 1)
        self.assertEqual(self.count("request", "u2"), 1)

    def test_sixteen_overlapping_retries_store_it_exactly_once(self):
        body = add_body("u1", "s1", ["Alice: racing %d okapi" % i for i in range(20)], request_id="race")
        barrier = threading.Barrier(16)
        answers, errors = [], []

        def send():
            try:
                barrier.wait()
                answers.append(self.memory.add(body))
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=send) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(answers), 16)
        self.assertEqual(sorted(a["stored"] for a in answers), [False] * 15 + [True])
        self.assertTrue(all(dict(a, stored=True) == dict(answers[0], stored=True) for a in answers))
        self.assertEqual(self.memory.stats("u1")["messages"], 20)
        self.assertEqual(self.memory.stats("u1")["requests"], 1)
        self.assertEqual(self.count("okapi"), 20)


class AtomicityTest(MemoryTestCase):
    def test_a_failure_midway_leaves_nothing_and_the_retry_succeeds(self):
        body = add_body("u1", "s1", ["Alice: atomic %d ibis" % i for i in range(5)], request_id="r1")
        with mock.patch("flowmem.storage.views.plan_tail", side_effect=RuntimeError("disk on fire")):
            with self.assertRaises(RuntimeError):
                self.memory.add(body)
        conn = sqlite3.connect(self.db_path())
        self.addCleanup(conn.close)
        for table in ("users", "requests", "sessions", "messages", "views"):
            self.assertEqual(conn.execute("SELECT count(*) FROM %s" % table).fetchone()[0], 0, table)
        self.assertEqual(self.search("ibis"), [])
        self.memory.add(body)
        self.assertEqual(self.memory.stats("u1")["messages"], 5)


class ReadAfterWriteTest(MemoryTestCase):
    def test_an_acknowledged_add_is_searchable_at_once_from_another_thread(self):
        found = []
        for i in range(20):
            word = "token%dzz" % i
            self.memory.add(add_body("u1", "s%d" % i, ["Alice: %s here" % word]))
            t = threading.Thread(target=lambda w=word: found.append(bool(self.search(w))))
            t.start()
            t.join()
        self.assertEqual(found, [True] * 20)

    def test_an_acknowledged_add_survives_reopening(self):
        memory = self.open_memory("durable.db", synchronous="FULL")
        memory.add(add_body("u1", "s1", ["Alice: persisted pelican"]))
        memory.close()
        self.assertEqual(len(self.search("pelican", memory=self.open_memory("durable.db"))), 1)


if __name__ == "__main__":
    unittest.main()
