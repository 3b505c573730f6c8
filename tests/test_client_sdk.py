"""Client and AsyncClient as an SDK: keep-alive, bounded retries of 429 and 503, the keyword calls over HTTP.

A loopback HTTP/1.1 listener (Node) stands in for a server where the test needs to
choose the answers and count the connections; the keyword calls and AsyncClient also
run against a real flowmem server (tests/server.py), beside a Memory given the same
Adds, which must answer alike.
"""
from __future__ import annotations

import asyncio
import http.server
import json
import shutil
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Tuple

from flowmem.async_client import AsyncClient
from flowmem.client import Client
from flowmem.config import load
from flowmem.errors import FlowmemError, InvalidField, NotFound, Overloaded, StorageFull, Unavailable
from flowmem.memory import Memory
from flowmem.sdk import Hit
from tests.helpers import DAY_MS, T0
from tests.server import ServerProcess

Answer = Tuple[int, Dict[str, str], bytes]
OK: Answer = (200, {"Content-Type": "application/json"}, b'{"status": "ok"}')


def refusal(status: int, reason: str, retry_after: str = "") -> Answer:
    headers = {"Content-Type": "application/json"}
    if retry_after:
        headers["Retry-After"] = retry_after
    return status, headers, json.dumps({"detail": {"reason": reason}}).encode()


class Node:
    """An HTTP/1.1 listener on 127.0.0.1 answering its n-th request (from 0) with `answer(n)`, counting
    the connections it accepted (`connections`) and those still open (`open`). `idle_close`: it closes
    each connection after its answer without saying so (no `Connection: close`), as a server whose
    keep-alive timeout passed does. An answer of None closes the connection without answering."""

    def __init__(self, answer: Callable[[int], Any], idle_close: bool = False):
        self.requests: List[Tuple[str, str]] = []
        self.connections = self.open = 0
        lock = threading.Lock()
        node = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with lock:
                    node.connections += 1
                    node.open += 1

            def finish(self) -> None:
                super().finish()
                with lock:
                    node.open -= 1

            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with lock:
                    index = len(node.requests)
                    node.requests.append((self.command, self.path))
                reply = answer(index)
                if reply is None:
                    self.close_connection = True
                    return
                status, headers, body = reply
                self.send_response(status)
                for name, value in dict(headers, **{"Content-Length": str(len(body))}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = idle_close

            do_GET = do_POST = do_DELETE = handle_one

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_closed(self, timeout: float = 5.0) -> int:
        """The number of connections still open once none is, or `timeout` passed."""
        deadline = time.monotonic() + timeout
        while self.open and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.open

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class NodeTestCase(unittest.TestCase):
    def node(self, answer: Callable[[int], Any], idle_close: bool = False) -> Node:
        node = Node(answer, idle_close)
        self.addCleanup(node.close)
        return node


class KeepAliveTest(NodeTestCase):
    def test_calls_reuse_one_connection_and_closing_the_client_closes_it(self):
        node = self.node(lambda n: OK)
        with Client(node.origin, timeout=10) as client:
            for _ in range(5):
                self.assertEqual(client.health(), {"status": "ok"})
        self.assertEqual((len(node.requests), node.connections), (5, 1))
        self.assertEqual(node.wait_closed(), 0)

    def test_a_connection_the_server_closed_while_idle_is_replaced_and_the_request_sent_once(self):
        node = self.node(lambda n: OK, idle_close=True)
        client = Client(node.origin, timeout=10)
        self.addCleanup(client.close)
        for _ in range(4):
            time.sleep(0.05)  # the close has arrived: the kept connection is dead when the next call uses it
            self.assertEqual(client.health(), {"status": "ok"})
        self.assertEqual((len(node.requests), node.connections), (4, 4))

    def test_a_new_connection_closed_before_an_answer_is_not_sent_again(self):
        node = self.node(lambda n: None)
        with self.assertRaises(Unavailable) as caught:
            Client(node.origin, timeout=10).health()
        self.assertIn("cannot reach", caught.exception.reason)
        self.assertEqual((len(node.requests), node.connections), (1, 1))

    def test_each_thread_has_its_own_connection(self):
        node = self.node(lambda n: OK)
        client = Client(node.origin, timeout=10)
        self.addCleanup(client.close)
        threads = [threading.Thread(target=lambda: [client.health() for _ in range(3)]) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual((len(node.requests), node.connections), (9, 3))

    def test_a_kept_connection_survives_the_real_servers_keep_alive_timeout(self):
        tmp = tempfile.mkdtemp(prefix="flowmem-keepalive-")
        self.addCleanup(shutil.rmtree, tmp, True)
        server = ServerProcess(tmp + "/served.db", env={"FLOWMEM_KEEPALIVE_TIMEOUT_S": "0.2"})
        self.addCleanup(server.stop)
        with Client(server.endpoint, timeout=10) as client:
            self.assertEqual(client.health()["status"], "ok")
            time.sleep(0.6)  # the server closes the idle connection
            self.assertEqual(client.health()["status"], "ok")


class RetryTest(NodeTestCase):
    def test_a_429_is_sent_again_after_its_retry_after_on_the_same_connection(self):
        node = self.node(lambda n: refusal(429, "too many requests in flight", "1") if n == 0 else OK)
        started = time.monotonic()
        with Client(node.origin, timeout=10) as client:
            self.assertEqual(client.health(), {"status": "ok"})
        self.assertGreaterEqual(time.monotonic() - started, 0.95)
        self.assertEqual((len(node.requests), node.connections), (2, 1))

    def test_a_503_is_retried_at_most_retries_times_then_raised_with_the_servers_reason(self):
        node = self.node(lambda n: refusal(503, "database is busy; nothing was written", "0"))
        with self.assertRaises(Unavailable) as caught:
            Client(node.origin, timeout=10, retries=3).add({"request_id": "r", "user_id": "u"})
        self.assertEqual(caught.exception.reason, "database is busy; nothing was written")
        self.assertEqual(len(node.requests), 4)
        self.assertEqual([method for method, _ in node.requests], ["POST"] * 4)

    def test_retries_zero_never_sends_again(self):
        node = self.node(lambda n: refusal(429, "too many requests in flight", "0"))
        with self.assertRaises(Overloaded):
            Client(node.origin, timeout=10, retries=0).health()
        self.assertEqual(len(node.requests), 1)

    def test_other_statuses_are_never_retried(self):
        for status, kind in ((500, FlowmemError), (507, StorageFull), (404, NotFound), (422, InvalidField)):
            with self.subTest(status=status):
                node = self.node(lambda n, status=status: refusal(status, "x refused", "0"))
                with self.assertRaises(kind):
                    Client(node.origin, timeout=10).health()
                self.assertEqual(len(node.requests), 1)

    def test_a_retry_after_longer_than_the_cap_is_raised_at_once_never_retried_sooner(self):
        node = self.node(lambda n: refusal(503, "restoring a backup", "3600"))
        started = time.monotonic()
        with self.assertRaises(Unavailable) as caught:
            Client(node.origin, timeout=10, max_retry_wait=5).health()
        self.assertLess(time.monotonic() - started, 4.5)  # a retry would have waited the cap, 5 s, at least
        self.assertEqual((caught.exception.retry_after, len(node.requests)), (3600, 1))


class ServedTestCase(unittest.TestCase):
    """A real server for the class, and a Memory on another file given the same Adds."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="flowmem-sdk-")
        cls.server = ServerProcess(cls.tmp + "/served.db", env={"FLOWMEM_API_KEY": "k"})
        cls.client = Client(cls.server.endpoint, api_key="k", timeout=30)
        cls.memory = Memory(load({"db": cls.tmp + "/local.db", "synchronous": "NORMAL"}, environ={}))
        for target in (cls.client, cls.memory):
            target.add(["I went kayaking on the lake", "the lake was cold"], user_id="alice", session_id="s1",
                       timestamp=T0, metadata={"source": "chat"})
            target.add("kayaking again, this time at sea", user_id="alice", session_id="s2", timestamp=T0 + DAY_MS)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()
        cls.memory.close()
        shutil.rmtree(cls.tmp, True)


class ClientKeywordCallsTest(ServedTestCase):
    def test_the_keyword_calls_answer_as_memory_does(self):
        for c in (self.client, self.memory):  # the same words again are a new message, with the same id on both
            self.assertTrue(c.add("kayaking again, this time at sea", user_id="alice", session_id="s2",
                                  timestamp=T0 + DAY_MS).stored)
        found = self.client.search("kayaking", user_id="alice", limit=5)
        self.assertTrue(found and all(isinstance(hit, Hit) for hit in found))
        self.assertEqual(found, self.memory.search("kayaking", user_id="alice", limit=5))
        self.assertEqual(self.client.list(user_id="alice"), self.memory.list(user_id="alice"))
        self.assertEqual(self.client.list(user_id="alice", metadata={"source": "chat"}, order="desc"),
                         self.memory.list(user_id="alice", metadata={"source": "chat"}, order="desc"))
        first = self.client.list(user_id="alice")[0]
        self.assertEqual(self.client.get(first.id, user_id="alice"), self.memory.get(first.id, user_id="alice"))
        self.assertEqual(self.client.sessions("alice"), self.memory.sessions("alice"))
        self.assertEqual(self.client.users(), self.memory.users())

    def test_delete_forgets_one_message_over_http(self):
        self.client.add("soon forgotten", user_id="carol", timestamp=T0)
        [message] = self.client.list(user_id="carol")
        self.assertTrue(self.client.delete(message.id, user_id="carol"))
        self.assertFalse(self.client.delete(message.id, user_id="carol"))
        with self.assertRaises(NotFound):
            self.client.get(message.id, user_id="carol")

    def test_an_unknown_message_field_is_refused_as_memory_refuses_it_not_ignored(self):
        for c in (self.client, self.memory):
            with self.assertRaises(InvalidField) as caught:
                c.add([{"role": "user", "content": "x", "metdata": {}}], user_id="alice")
            self.assertEqual(caught.exception.field, "messages[0].metdata")


class AsyncClientTest(ServedTestCase):
    def run_async(self, coroutine: Any) -> Any:
        return asyncio.run(coroutine)

    def test_the_async_calls_answer_as_client_does(self):
        async def calls() -> Dict[str, Any]:
            async with AsyncClient(self.server.endpoint, api_key="k", timeout=30) as memory:
                again = await memory.add("kayaking again, this time at sea", user_id="alice", session_id="s2",
                                         timestamp=T0 + DAY_MS)
                found = await memory.search("kayaking", user_id="alice", limit=5)
                listed = await memory.list(user_id="alice", limit=2)
                got = await memory.get(listed[0].id, user_id="alice")
                body = await memory.search({"query": "kayaking", "user_id": "alice", "top_k": 5})
                return {"again": again, "found": found, "listed": listed, "got": got, "body": body,
                        "sessions": await memory.sessions("alice"), "users": await memory.users()}

        out = self.run_async(calls())
        self.assertTrue(out["again"].stored)  # the same words said again: a new message
        self.assertEqual(out["found"], self.client.search("kayaking", user_id="alice", limit=5))
        self.assertEqual(out["body"], self.client.search({"query": "kayaking", "user_id": "alice", "top_k": 5}))
        self.assertEqual(out["listed"], self.client.list(user_id="alice", limit=2))
        self.assertEqual(out["got"], out["listed"][0])
        self.assertEqual(out["sessions"], self.client.sessions("alice"))
        self.assertEqual(out["users"], self.client.users())

    def test_async_delete_and_the_servers_errors(self):
        async def calls() -> Tuple[bool, bool, str, str]:
            async with AsyncClient(self.server.endpoint, api_key="k", timeout=30) as memory:
                added = await memory.add("to forget", user_id="dave", timestamp=T0)
                [message] = await memory.list(user_id="dave")
                first, second = (await memory.delete(message.id, user_id="dave"),
                                 await memory.delete(message.id, user_id="dave"))
                try:
                    await memory.search("q", user_id="dave", filters={"sesion_id": "s"})
                except InvalidField as e:
                    field = e.field
                try:
                    async with AsyncClient(self.server.endpoint, api_key="wrong") as stranger:
                        await stranger.users()
                except FlowmemError as e:
                    status = str(e.status)
                return first and added.stored, second, field, status

        self.assertEqual(self.run_async(calls()), (True, False, "filters.sesion_id", "401"))


class AsyncWireTest(NodeTestCase):
    def test_async_calls_share_one_kept_connection_closed_on_leaving(self):
        node = self.node(lambda n: OK)

        async def calls() -> None:
            async with AsyncClient(node.origin, timeout=10) as memory:
                await asyncio.gather(*(memory.health() for _ in range(5)))

        asyncio.run(calls())
        self.assertEqual((len(node.requests), node.connections), (5, 1))
        self.assertEqual(node.wait_closed(), 0)

    def test_async_retries_a_429_and_replaces_a_connection_closed_while_idle(self):
        node = self.node(lambda n: refusal(429, "busy", "0") if n == 0 else OK, idle_close=True)

        async def calls() -> List[Any]:
            async with AsyncClient(node.origin, timeout=10) as memory:
                answers = []
                for _ in range(3):
                    answers.append(await memory.health())
                    await asyncio.sleep(0.05)
                return answers

        self.assertEqual(asyncio.run(calls()), [{"status": "ok"}] * 3)
        self.assertEqual((len(node.requests), node.connections), (4, 4))

    def test_async_raises_the_last_refusal_and_never_retries_other_statuses(self):
        node = self.node(lambda n: refusal(503 if n < 3 else 500, "database is busy", "0"))

        async def call(retries: int) -> FlowmemError:
            try:
                async with AsyncClient(node.origin, timeout=10, retries=retries) as memory:
                    await memory.health()
            except FlowmemError as e:
                return e
            raise AssertionError("no error")

        error = asyncio.run(call(2))
        self.assertEqual((type(error), error.reason, len(node.requests)), (Unavailable, "database is busy", 3))
        self.assertEqual(asyncio.run(call(2)).status, 500)
        self.assertEqual(len(node.requests), 4)


if __name__ == "__main__":
    unittest.main()
