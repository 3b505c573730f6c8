"""What flowmem.Client puts on the wire: no redirect followed (the key never leaves its endpoint),
ids `.` and `..` in the query form, and an import that stops partway saying what is stored.

Loopback listeners stand in for servers and record every request they receive: one on
127.0.0.1 that redirects, one on 127.0.0.2 (another origin, as a redirect's target
would be) that must receive nothing. The dot ids also run against a real server
(tests/server.py), whose router reads the query form.
"""
from __future__ import annotations

import http.server
import json
import shutil
import tempfile
import threading
import unittest
import urllib.parse
from typing import Any, Callable, Dict, List, Tuple

from flowmem.client import Client
from flowmem.errors import FlowmemError, StorageFull
from tests.helpers import add_body
from tests.server import ServerProcess

Answer = Callable[["Recorder", http.server.BaseHTTPRequestHandler], Tuple[int, Dict[str, str], bytes]]


class Recorder:
    """An HTTP listener on `host` (port 0) that records (method, target, headers) of every request and
    answers each with `answer(self, handler)`: (status, headers, body)."""

    def __init__(self, host: str, answer: Answer):
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                recorder.requests.append((self.command, self.path, dict(self.headers)))
                status, headers, body = answer(recorder, self)
                self.send_response(status)
                for name, value in dict(headers, **{"Content-Length": str(len(body))}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = handle_one

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.origin = "http://%s:%d" % (host, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def json_answer(status: int, payload: Any) -> Tuple[int, Dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


class RedirectTest(unittest.TestCase):
    def setUp(self) -> None:
        self.elsewhere = Recorder("127.0.0.2", lambda r, h: json_answer(200, {"data": []}))
        self.addCleanup(self.elsewhere.close)

    def redirecting(self, status: int, location: str) -> Recorder:
        recorder = Recorder("127.0.0.1", lambda r, h: (status, {"Location": location}, b""))
        self.addCleanup(recorder.close)
        return recorder

    def test_a_redirect_to_another_host_is_never_followed_and_the_key_never_sent_there(self):
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status):
                location = self.elsewhere.origin + "/search"
                front = self.redirecting(status, location)
                client = Client(front.origin, api_key="secret-key", timeout=10)
                with self.assertRaises(FlowmemError) as caught:
                    client.search({"query": "q", "user_id": "u", "top_k": 1})
                self.assertEqual(caught.exception.status, status)
                self.assertIn(str(status), caught.exception.reason)
                self.assertIn(location, caught.exception.reason)
                self.assertEqual(len(front.requests), 1)
                self.assertEqual(front.requests[0][2].get("Authorization"), "Bearer secret-key")
        self.assertEqual(self.elsewhere.requests, [], "a redirect took the request (and its key) to another host")

    def test_a_redirect_within_the_same_origin_is_not_followed_either(self):
        front = self.redirecting(307, "/search2")
        with self.assertRaises(FlowmemError) as caught:
            Client(front.origin, api_key="k", timeout=10).add(add_body("u", "s", ["Alice: hi"]))
        self.assertEqual(caught.exception.status, 307)
        self.assertIn("/search2", caught.exception.reason)
        self.assertEqual([method for method, _, _ in front.requests], ["POST"])


class HostileAnswersTest(unittest.TestCase):
    def test_an_answer_the_client_cannot_read_is_unavailable_or_its_status_never_an_exception_of_its_own(self):
        answers = [json_answer(200, None)[:2] + (b"[" * 5000 + b"]" * 5000,),
                   (200, {}, b'{"a": ' + b"9" * 5000 + b"}"), (200, {}, b"\xff\xfe"),
                   (429, {"Retry-After": "\u00b2".encode().decode("latin-1")}, b"{}"),
                   (503, {"Retry-After": "9" * 5000}, b'{"detail": {"reason": "busy"}}')]
        for answer in answers:
            status, headers, body = answer
            with self.subTest(status=status, body=body[:20], headers=str(headers)[:40]):
                node = Recorder("127.0.0.1", lambda r, h, answer=answer: answer)
                self.addCleanup(node.close)
                with self.assertRaises(FlowmemError) as caught:
                    Client(node.origin, timeout=10, retries=0).health()  # a 429's retries: test_client_sdk.py
                self.assertLess(len(caught.exception.reason), 300)


class DotIdsOnTheWireTest(unittest.TestCase):
    def setUp(self) -> None:
        self.node = Recorder("127.0.0.1", lambda r, h: json_answer(200, {"data": [], "next_cursor": None}))
        self.addCleanup(self.node.close)
        self.client = Client(self.node.origin, timeout=10)

    def sent(self, call: Callable[[], Any]) -> Tuple[List[str], Dict[str, List[str]]]:
        """The path segments and query parameters of the one request `call` made."""
        before = len(self.node.requests)
        call()
        _, target, _ = self.node.requests[before]
        self.assertEqual(len(self.node.requests), before + 1)
        parts = urllib.parse.urlsplit(target)
        return parts.path.split("/")[1:], urllib.parse.parse_qs(parts.query, keep_blank_values=True)

    def test_no_path_the_client_sends_holds_a_dot_segment_the_id_goes_in_the_query(self):
        c = self.client
        calls: List[Tuple[Callable[[], Any], Dict[str, str]]] = [
            (lambda: c.delete_session("alice", ".."), {"session_id": ".."}),
            (lambda: c.delete_session("..", "."), {"user_id": "..", "session_id": "."}),
            (lambda: c.delete_user(".."), {"user_id": ".."}),
            (lambda: c.delete_user("."), {"user_id": "."}),
            (lambda: c.list_sessions(".."), {"user_id": ".."}),
            (lambda: c.list_messages("..", session_id=".."), {"user_id": "..", "session_id": ".."}),
            (lambda: c.get_message("..", "m-1-1"), {"user_id": ".."}),
            (lambda: c.export_page("."), {"user_id": "."}),
            (lambda: c.import_records([add_body("..", "s", ["Alice: hi"])]), {"user_id": ".."}),
        ]
        for call, expected in calls:
            segments, query = self.sent(call)
            with self.subTest(segments=segments, query=query):
                self.assertFalse({".", ".."} & set(segments), segments)
                for name, value in expected.items():
                    self.assertEqual(query.get(name), [value])

    def test_other_ids_stay_in_the_path_percent_encoded(self):
        segments, query = self.sent(lambda: self.client.delete_session("team/a", "..."))
        self.assertEqual(segments, ["users", "team%2Fa", "sessions", "..."])
        self.assertEqual(query, {})


class DotIdsOnARealServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.mkdtemp(prefix="flowmem-dots-")
        cls.server = ServerProcess(cls.tmp + "/served.db", env={"FLOWMEM_API_KEY": "k"})
        cls.client = Client(cls.server.endpoint, api_key="k", timeout=30)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        shutil.rmtree(cls.tmp, True)

    def test_deleting_the_session_named_dot_dot_deletes_that_session_alone(self):
        for user in ("alice", ".."):
            for session in ("..", ".", "s1"):
                self.client.add(add_body(user, session, ["Alice: in %s" % session], "%s/%s" % (user, session)))
            with self.subTest(user=user):
                listed = {s["session_id"] for s in self.client.list_sessions(user)["data"]}
                self.assertEqual(listed, {"..", ".", "s1"})
                self.assertEqual(self.client.delete_session(user, "..")["messages"], 1)
                listed = {s["session_id"] for s in self.client.list_sessions(user)["data"]}
                self.assertEqual(listed, {".", "s1"})
                messages = self.client.list_messages(user, session_id=".")["data"]
                self.assertEqual([m["content"] for m in messages], ["Alice: in ."])
                self.assertEqual(self.client.get_message(user, messages[0]["id"])["session_id"], ".")
        self.assertTrue(self.client.delete_user("..")["deleted"])
        self.assertEqual(self.client.list_sessions("..")["data"], [])
        self.assertEqual({s["session_id"] for s in self.client.list_sessions("alice")["data"]}, {".", "s1"})


class ImportStoppedTest(unittest.TestCase):
    def test_an_import_stopped_in_a_later_batch_says_which_records_are_stored_in_all(self):
        def answer(recorder: Recorder, handler: Any) -> Tuple[int, Dict[str, str], bytes]:
            records = json.loads(handler.body)["records"]
            if len(recorder.requests) == 1:  # the first batch: stored whole
                return json_answer(200, {"requests": len(records), "stored": len(records), "already_stored": 0,
                                         "messages": len(records)})
            return 507, {"Content-Type": "application/json", "Retry-After": "5"}, json.dumps({"detail": {
                "reason": "the import stopped after its first 2 records, which are stored; disk full",
                "records_stored": 2}}).encode()

        node = Recorder("127.0.0.1", answer)
        self.addCleanup(node.close)
        records = [add_body("a", "s", ["Alice: %d" % i], "a%d" % i) for i in range(3)]
        records += [add_body("b", "s", ["Bob: %d" % i], "b%d" % i) for i in range(5)]
        with self.assertRaises(StorageFull) as caught:
            Client(node.origin, timeout=10).import_records(records)
        error = caught.exception
        self.assertEqual(error.detail, {"records_stored": 5})  # type: ignore[attr-defined]
        self.assertIn("its first 5 records (records[0] to records[4]) are stored, none after them", error.reason)
        self.assertEqual(error.retry_after, 5)
        self.assertEqual(len(node.requests), 2)

    def test_an_import_stopped_without_a_count_names_what_is_known(self):
        def answer(recorder: Recorder, handler: Any) -> Tuple[int, Dict[str, str], bytes]:
            if len(recorder.requests) == 1:
                return json_answer(200, {"requests": 1, "stored": 1, "already_stored": 0, "messages": 1})
            return json_answer(503, {"detail": {"reason": "database is busy; nothing was written"}})

        node = Recorder("127.0.0.1", answer)
        self.addCleanup(node.close)
        records = [add_body("a", "s", ["Alice: 0"], "a0"), add_body("b", "s", ["Bob: 0"], "b0")]
        with self.assertRaises(FlowmemError) as caught:
            Client(node.origin, timeout=10, retries=0).import_records(records)
        self.assertEqual(caught.exception.detail, {"records_stored": 1})  # type: ignore[attr-defined]
        self.assertIn("records[0] is stored; whether records[1] was, the server did not say", caught.exception.reason)


if __name__ == "__main__":
    unittest.main()
