"""HTTP policy through App.handle, no socket: statuses, error shape, auth, limits."""
import json
import threading

from flowmem.config import load
from flowmem.errors import PayloadTooLarge
from flowmem.http_api import App

from tests.helpers import MemoryTestCase, add_body


def body_reader(payload: bytes):
    def read(limit):
        if len(payload) > limit:
            raise PayloadTooLarge("request body is %d bytes; the limit is %d" % (len(payload), limit))
        return payload
    return read


class AppTestCase(MemoryTestCase):
    key = None
    max_body_bytes = 8 * 1024 * 1024

    def setUp(self):
        super().setUp()
        config = load({"db": self.db_path(), "api_key": self.key, "max_body_bytes": self.max_body_bytes}, environ={})
        self.app = App(self.memory, config)

    def call(self, method, path, payload=None, headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(payload).encode() if payload is not None else b"")
        response = self.app.handle(method, path, headers or {}, body_reader(data))
        return response.status, json.loads(response.body), dict(response.headers)

    def assert_error(self, status, expected_status, body, words=()):
        self.assertEqual(status, expected_status, body)
        self.assertEqual(list(body), ["detail"])
        self.assertIsInstance(body["detail"]["reason"], str)
        for w in words:
            self.assertIn(w, body["detail"]["reason"])


class RoutingTest(AppTestCase):
    def test_add_then_search_round_trip(self):
        status, body, headers = self.call("POST", "/add", add_body("u1", "s1", ["Alice: the red balloon"]))
        self.assertEqual(status, 200)
        self.assertEqual(body["success"], True)
        self.assertEqual(headers["Content-Type"], "application/json")
        status, body, _ = self.call("POST", "/search", {"query": "balloon", "user_id": "u1", "top_k": 5})
        self.assertEqual(status, 200)
        self.assertEqual(body["data"][0]["content"], "Alice: the red balloon")

    def test_health_shows_versions_and_no_content(self):
        self.call("POST", "/add", add_body("u1", "s1", ["Alice: secret platypus"]))
        status, body, _ = self.call("GET", "/health")
        self.assertEqual(status, 200)
        self.assertEqual(body["status"], "ok")
        self.assertIn("version", body)
        self.assertIn("sqlite_version", body)
        self.assertNotIn("platypus", json.dumps(body))

    def test_unknown_path_is_404_and_wrong_method_405(self):
        status, body, _ = self.call("GET", "/nope")
        self.assert_error(status, 404, body)
        status, body, headers = self.call("GET", "/add")
        self.assert_error(status, 405, body, ["POST"])
        self.assertEqual(headers["Allow"], "POST")
        status, body, _ = self.call("DELETE", "/health")
        self.assert_error(status, 405, body)

    def test_trailing_slash_and_query_string_are_tolerated(self):
        self.assertEqual(self.call("GET", "/health/?verbose=1")[0], 200)


class BadInputTest(AppTestCase):
    max_body_bytes = 200_000

    def test_invalid_json_is_400(self):
        for raw in (b"", b"   ", b"{", b"{'a': 1}", b"\xff\xfe", b"NaN", b'{"top_k": NaN}', b"[" * 100_000,
                    b'{"a": 1' + b"0" * 5000 + b"}"):
            with self.subTest(raw=raw[:20]):
                status, body, _ = self.call("POST", "/search", raw=raw)
                self.assert_error(status, 400, body)

    def test_a_body_that_is_not_an_object_is_400_as_the_contract_says(self):
        for raw in (b"[]", b'"text"', b"42", b"null"):
            status, body, _ = self.call("POST", "/add", raw=raw)
            self.assert_error(status, 400, body, ["object"])

    def test_malformed_fields_are_422_naming_the_field(self):
        payload = add_body("u1", "s1", ["Alice: a", "Bob: b", "Alice: c"])
        payload["messages"][2]["content"] = "  "
        status, body, _ = self.call("POST", "/add", payload)
        self.assert_error(status, 422, body, ["messages[2].content"])

    def test_a_body_over_the_limit_is_413(self):
        payload = add_body("u1", "s1", ["Alice: " + "x" * 300_000])
        status, body, _ = self.call("POST", "/add", payload)
        self.assert_error(status, 413, body, ["limit"])
        self.assertEqual(self.memory.stats()["messages"], 0)

    def test_a_bug_is_a_500_without_details(self):
        self.memory.search = None  # any unexpected exception inside the core
        status, body, _ = self.call("POST", "/search", {"query": "x", "user_id": "u", "top_k": 1})
        self.assert_error(status, 500, body)
        self.assertEqual(body["detail"]["reason"], "internal error")


class AuthTest(AppTestCase):
    key = "s3cret-key"

    def test_add_and_search_need_the_key_in_any_of_three_headers(self):
        search = {"query": "x", "user_id": "u", "top_k": 1}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-Api-Key": "s3cret-ke"}, {"Authorization": "s3cret-key"},
                        {"Authorization": "Basic s3cret-key"}, {"Authorization": "Bearer"}):
            with self.subTest(headers=headers):
                status, body, _ = self.call("POST", "/search", search, headers)
                self.assert_error(status, 401, body)
        for headers in ({"Authorization": "Bearer s3cret-key"}, {"Authorization": "Token s3cret-key"},
                        {"Authorization": "bearer  s3cret-key "}, {"X-Api-Key": "s3cret-key"}):
            with self.subTest(headers=headers):
                self.assertEqual(self.call("POST", "/search", search, headers)[0], 200)
                self.assertEqual(self.call("POST", "/add", add_body("u", "s", ["A: b"]), headers)[0], 200)

    def test_a_rejected_request_writes_nothing_and_health_stays_open(self):
        status, _, _ = self.call("POST", "/add", add_body("u", "s", ["A: sneaky"]))
        self.assertEqual(status, 401)
        self.assertEqual(self.memory.stats()["messages"], 0)
        self.assertEqual(self.call("GET", "/health")[0], 200)


class OverloadTest(AppTestCase):
    def test_requests_over_the_in_flight_limit_get_429_with_retry_after(self):
        config = load({"db": self.db_path(), "max_inflight": 1}, environ={})
        app = App(self.memory, config)
        entered, release = threading.Event(), threading.Event()
        original = self.memory.search

        def slow(body):
            entered.set()
            release.wait(10)
            return original(body)

        self.memory.search = slow
        payload = json.dumps({"query": "x", "user_id": "u", "top_k": 1}).encode()
        first = threading.Thread(target=app.handle, args=("POST", "/search", {}, body_reader(payload)))
        first.start()
        entered.wait(10)
        response = app.handle("POST", "/search", {}, body_reader(payload))
        release.set()
        first.join()
        self.assertEqual(response.status, 429)
        self.assertIn(("Retry-After", "1"), response.headers)
        self.assertEqual(app.handle("POST", "/search", {}, body_reader(payload)).status, 200)
