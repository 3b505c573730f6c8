"""End to end over a real socket: `python -m flowmem serve` on 127.0.0.1 with an ephemeral port."""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from flowmem.config import load
from flowmem.memory import Memory
from tests.helpers import add_body
from tests.server import ROOT, ServerProcess


def read_until_closed(sock):
    reply = b""
    while True:
        data = sock.recv(65536)
        if not data:
            return reply
        reply += data


class ServerTestCase(unittest.TestCase):
    extra_args = []

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="flowmem-http-")
        self.addCleanup(self.tmp.cleanup)
        self.db = os.path.join(self.tmp.name, "flowmem.db")
        self.server = ServerProcess(self.db, self.extra_args)
        self.addCleanup(self.server.stop)

    def connection(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=20)
        self.addCleanup(conn.close)
        return conn

    def request(self, conn, method, path, payload=None, headers=None):
        body = json.dumps(payload).encode() if payload is not None else None
        conn.request(method, path, body=body, headers=dict({"Content-Type": "application/json"}, **(headers or {})))
        response = conn.getresponse()
        return response.status, json.loads(response.read()), response


class EndToEndTest(ServerTestCase):
    def test_add_search_health_over_one_keep_alive_connection(self):
        conn = self.connection()
        status, body, _ = self.request(conn, "POST", "/add", add_body("u1", "s1", ["Alice: the violet umbrella"]))
        self.assertEqual((status, body["success"]), (200, True))
        status, body, _ = self.request(conn, "POST", "/search", {"query": "umbrella", "user_id": "u1", "top_k": 3})
        self.assertEqual(status, 200)
        self.assertEqual(body["data"][0]["content"], "[2023-05-08] Alice: the violet umbrella")
        self.assertEqual(body["data"][0]["source_message_ids"], [body["data"][0]["id"]])
        status, body, _ = self.request(conn, "GET", "/health")
        self.assertEqual((status, body["status"]), (200, "ok"))

    def test_errors_keep_the_connection_usable_or_close_it_cleanly(self):
        conn = self.connection()
        status, body, _ = self.request(conn, "POST", "/add", {"user_id": "u1"})
        self.assertEqual(status, 422)
        self.assertIn("request_id", body["detail"]["reason"])
        status, _, _ = self.request(conn, "GET", "/missing")
        self.assertEqual(status, 404)
        self.assertEqual(self.request(conn, "GET", "/health")[0], 200)

    def test_an_oversized_body_is_refused_before_it_is_read(self):
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=20)
        self.addCleanup(sock.close)
        sock.sendall(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 9437184\r\n\r\n{")
        reply = read_until_closed(sock).decode()
        self.assertTrue(reply.startswith("HTTP/1.1 413"), reply)
        self.assertIn('"reason"', reply)

    def test_chunked_bodies_are_read(self):
        payload = json.dumps(add_body("u1", "s1", ["Alice: chunked capybara"])).encode()
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=20)
        self.addCleanup(sock.close)
        half = len(payload) // 2
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (payload[:half], payload[half:])) + b"0\r\n\r\n"
        sock.sendall(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                     b"Connection: close\r\n\r\n" + chunks)
        reply = read_until_closed(sock)
        self.assertTrue(reply.startswith(b"HTTP/1.1 200"), reply)

    def test_garbage_request_lines_get_a_json_error(self):
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=20)
        self.addCleanup(sock.close)
        sock.sendall(b"NOT A VALID REQUEST LINE AT ALL\r\n\r\n")
        reply = read_until_closed(sock).decode()
        self.assertRegex(reply, r"^HTTP/1\.[01] 400")
        self.assertIn('{"detail":{"reason":', reply)

    def test_logs_show_method_path_status_and_time_but_never_content(self):
        conn = self.connection()
        self.request(conn, "POST", "/add", add_body("u1", "s1", ["Alice: confidential xylograph"]))
        self.request(conn, "POST", "/search", {"query": "confidential xylograph", "user_id": "u1", "top_k": 3})
        self.server.wait_for(r"POST /search 200 [\d.]+ms")
        self.assertRegex(self.server.log(), r"POST /add 200 [\d.]+ms")
        self.assertNotIn("xylograph", self.server.log())
        self.assertNotIn("confidential", self.server.log())


class AuthServerTest(ServerTestCase):
    def setUp(self):
        keyfile = tempfile.NamedTemporaryFile("w", delete=False, suffix=".key")
        keyfile.write("file-key-123\n")
        keyfile.close()
        self.addCleanup(os.unlink, keyfile.name)
        self.extra_args = ["--api-key-file", keyfile.name]
        super().setUp()

    def test_key_from_file_is_required_except_for_health(self):
        conn = self.connection()
        payload = {"query": "x", "user_id": "u", "top_k": 1}
        self.assertEqual(self.request(conn, "POST", "/search", payload)[0], 401)
        self.assertEqual(self.request(conn, "POST", "/search", payload, {"X-Api-Key": "file-key-123"})[0], 200)
        self.assertEqual(self.request(conn, "GET", "/health")[0], 200)


class ContractCheckerTest(AuthServerTest):
    def test_the_independent_contract_checker_passes(self):
        result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "contract_check.py"),
                                 "--endpoint", self.server.endpoint, "--api-key", "file-key-123"],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-2000:])
        self.assertNotIn("FAIL", result.stdout)


class ShutdownTest(ServerTestCase):
    def test_sigterm_finishes_the_request_in_flight_and_closes_the_database(self):
        payload = json.dumps(add_body("u1", "s1", ["Alice: in flight %d heron" % i for i in range(200)])).encode()
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=20)
        self.addCleanup(sock.close)
        sock.sendall(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(payload)
                     + payload[:100])
        time.sleep(0.5)  # the server has accepted the connection and is reading the body
        self.server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        sock.sendall(payload[100:])
        reply = sock.recv(65536).decode()
        self.assertTrue(reply.startswith("HTTP/1.1 200"), reply)
        self.assertEqual(self.server.proc.wait(20), 0)
        self.assertIn("database closed", self.server.log())
        wal = self.db + "-wal"
        self.assertFalse(os.path.exists(wal) and os.path.getsize(wal) > 0, "WAL not checkpointed")
        memory = Memory(load({"db": self.db}, environ={}))
        self.addCleanup(memory.close)
        self.assertEqual(memory.stats("u1")["messages"], 200)

    def test_an_idle_keep_alive_connection_does_not_hold_up_shutdown(self):
        conn = self.connection()
        self.assertEqual(self.request(conn, "GET", "/health")[0], 200)
        started = time.monotonic()
        self.server.proc.send_signal(signal.SIGINT)
        self.assertEqual(self.server.proc.wait(20), 0)
        self.assertLess(time.monotonic() - started, 5)


if __name__ == "__main__":
    unittest.main()
