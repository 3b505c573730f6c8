"""Slow, stalled, malformed and vanishing clients against a real server socket.

Each test is an attack or a careless client seen against flowmem's first server (a
thread per connection, no timeouts): it held threads and in-flight slots, read past
its limits, ran a body as a second request, or wrote tracebacks to the log.
"""
import json
import os
import re
import signal
import socket
import tempfile
import threading
import time
import unittest

from flowmem.config import load
from flowmem.http.api import App
from flowmem.http.server import Server
from tests.helpers import MemoryTestCase, add_body
from tests.server import ServerProcess

SEARCH = json.dumps({"query": "umbrella", "user_id": "u1", "top_k": 3}).encode()


def request_bytes(path="/search", body=SEARCH, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
            % (path.encode(), extra, len(body)) + body)


def read_responses(sock, count):
    """`count` whole responses (status, headers text, body) read from one stream, in order;
    a response missing because the socket closed first is None. Two pipelined responses
    often arrive in one recv, so what follows a body is kept for the next response."""
    data, replies = b"", []
    for _ in range(count):
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return replies + [None] * (count - len(replies))
            data += chunk
        head, _, data = data.partition(b"\r\n\r\n")
        length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")][0])
        while len(data) < length:
            data += sock.recv(65536)
        replies.append((int(head.split(b" ")[1]), head.decode("latin-1"), data[:length]))
        data = data[length:]
    return replies


def read_response(sock):
    """One whole response (status, headers text, body) from a socket, or None if it closed first."""
    return read_responses(sock, 1)[0]


def closed_within(sock, seconds):
    """Seconds until the server closed `sock` (reading and discarding what it sends), None if it did not."""
    sock.settimeout(seconds)
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, TimeoutError):
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


class InProcessServerTest(MemoryTestCase):
    """A Server on an ephemeral loopback port over this test's Memory, in a thread."""

    server_settings = {}

    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Alice: the violet umbrella"]))
        config = load(dict({"db": self.db_path(), "port": 0}, **self.server_settings), environ={})
        self.server = Server(App(self.memory, config), config)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.addCleanup(self._stop)

    def _stop(self):
        self.server.stop()
        self.thread.join(20)

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.server.address[1]), timeout=10)
        self.addCleanup(sock.close)
        return sock

    def real_search(self):
        sock = self.connect()
        sock.sendall(request_bytes())
        return read_response(sock)


class StalledClientsTest(InProcessServerTest):
    server_settings = {"max_inflight": 4, "request_timeout_s": 30, "workers": 4}

    def test_connections_stalled_mid_body_hold_no_in_flight_slot(self):
        stalled = [self.connect() for _ in range(12)]
        for sock in stalled:
            sock.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\nabc")
        time.sleep(0.3)
        status, _, body = self.real_search()
        self.assertEqual(status, 200, body)
        self.assertIn(b"umbrella", body)

    def test_slow_connections_hold_no_threads(self):
        self.assertEqual(self.real_search()[0], 200)  # the workers are running
        before = threading.active_count()
        idle = [self.connect() for _ in range(300)]
        for i, sock in enumerate(idle):
            sock.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\n" if i % 2 else b"")
        time.sleep(0.3)
        self.assertEqual(self.real_search()[0], 200)
        self.assertEqual(threading.active_count(), before)

    def test_pipelined_requests_are_answered_in_order(self):
        sock = self.connect()
        health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        sock.sendall(request_bytes() + health + request_bytes())
        statuses = read_responses(sock, 3)
        self.assertEqual([s[0] for s in statuses], [200, 200, 200])
        self.assertIn(b"umbrella", statuses[0][2])
        self.assertIn(b'"status":"ok"', statuses[1][2])


class WriteLaneTest(InProcessServerTest):
    server_settings = {"workers": 8}

    def test_searches_are_answered_while_every_write_waits_for_the_write_lock(self):
        release = threading.Event()
        original = self.memory.add_body

        def blocked_add(body, strict=True):  # as an Add waits while a delete-user or reindex holds the write lock
            release.wait(20)
            return original(body, strict)

        self.memory.add_body = blocked_add
        self.addCleanup(release.set)
        writers = []
        for i in range(20):
            sock = self.connect()
            sock.sendall(request_bytes("/add", json.dumps(add_body("u1", "s%d" % i, ["Alice: waits"])).encode()))
            writers.append(sock)
        time.sleep(0.3)
        started = time.monotonic()
        self.assertEqual(self.real_search()[0], 200)
        self.assertLess(time.monotonic() - started, 10)  # behind the writes it would wait their 20 s
        release.set()
        self.assertEqual([read_response(sock)[0] for sock in writers], [200] * 20)


class QueueWaitTest(InProcessServerTest):
    server_settings = {"workers": 4, "request_timeout_s": 0.5}

    def test_a_request_that_waited_past_the_request_timeout_is_answered_429_without_running(self):
        original, ran = self.memory.search_body, []

        def slow_search(body, strict=True):
            ran.append(1)
            time.sleep(0.3)
            return original(body, strict)

        self.memory.search_body = slow_search
        clients = [self.connect() for _ in range(12)]
        for sock in clients:
            sock.sendall(request_bytes())
        replies = [read_response(sock) for sock in clients]
        statuses = sorted(r[0] for r in replies)
        self.assertIn(200, statuses)
        self.assertIn(429, statuses)
        self.assertEqual(len(ran), statuses.count(200))
        self.assertTrue(all("Retry-After" in r[1] for r in replies if r[0] == 429))


class TimeoutTest(InProcessServerTest):
    server_settings = {"request_timeout_s": 0.5, "keepalive_timeout_s": 0.8}

    def test_a_connection_that_sends_nothing_is_closed_after_the_request_timeout(self):
        waited = closed_within(self.connect(), 5)
        self.assertIsNotNone(waited, "never closed")
        self.assertLess(waited, 3.5)  # the deadline is 0.5 s; a loaded machine may be late, never 5 s

    def test_a_slowloris_connection_is_closed_at_its_deadline_though_it_keeps_sending(self):
        sock = self.connect()
        sock.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        reply = b""
        try:
            for i in range(40):
                sock.sendall(b"X-Slow-%d: 1\r\n" % i)
                time.sleep(0.1)
                sock.settimeout(0.01)
                try:
                    chunk = sock.recv(65536)
                except (socket.timeout, TimeoutError):
                    continue
                reply += chunk
                if not chunk:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.assertLess(time.monotonic() - started, 3.5)  # kept open, the 40 headers take 4 s
        self.assertTrue(reply.startswith(b"HTTP/1.1 408"), reply)

    def test_an_idle_keep_alive_connection_is_closed_after_its_own_timeout(self):
        sock = self.connect()
        sock.sendall(request_bytes())
        self.assertEqual(read_response(sock)[0], 200)
        started = time.monotonic()
        waited = closed_within(sock, 5)
        self.assertIsNotNone(waited)
        self.assertGreater(time.monotonic() - started, 0.6)  # the keep-alive timeout, not the request timeout
        self.assertLess(waited, 2)

    def test_a_client_that_never_reads_its_response_is_closed(self):
        sock = self.connect()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(request_bytes() * 50)
        time.sleep(2.5)
        self.assertEqual(self.real_search()[0], 200)
        self.assertLessEqual(len(self.server.connections), 2)


class ConnectionLimitTest(InProcessServerTest):
    server_settings = {"max_connections": 20, "request_timeout_s": 30}

    def test_the_longest_waiting_connection_gives_way_at_the_limit(self):
        first = self.connect()
        first.sendall(b"POST /search HTTP/1.1\r\n")
        time.sleep(0.05)
        others = [self.connect() for _ in range(19)]
        time.sleep(0.2)
        self.assertEqual(self.real_search()[0], 200)
        self.assertIsNotNone(closed_within(first, 2), "the oldest stalled connection is still open")
        self.assertLessEqual(len(self.server.connections), 20)
        self.assertTrue(others)


class MalformedRequestTest(InProcessServerTest):
    server_settings = {"max_body_bytes": 100_000}

    def assert_refused(self, data, status):
        sock = self.connect()
        sock.sendall(data)
        reply = read_response(sock)
        self.assertIsNotNone(reply, "closed without a response")
        self.assertEqual(reply[0], status, reply)
        self.assertIn("Connection: close", reply[1])
        self.assertIn(b'"reason"', reply[2])
        self.assertIsNotNone(closed_within(sock, 5), "connection left open")

    def test_a_negative_chunk_size_is_400_not_a_read_to_the_end_of_the_stream(self):
        self.assert_refused(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", 400)

    def test_malformed_and_overflowing_chunk_sizes_are_400(self):
        for size in (b"zz", b"f" * 40):
            with self.subTest(size=size):
                self.assert_refused(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    + size + b"\r\n", 400)

    def test_a_chunked_body_over_the_limit_is_413_while_it_is_read(self):
        chunks = b"ffff\r\n" + b"x" * 0xffff + b"\r\n" + b"ffff\r\n"
        self.assert_refused(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks,
                            413)

    def test_transfer_encoding_identity_is_400_and_its_body_never_runs_as_a_request(self):
        smuggled = request_bytes("/add", json.dumps(add_body("u1", "s9", ["Alice: smuggled"])).encode())
        self.assert_refused(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: identity\r\n\r\n"
                            + smuggled, 400)
        time.sleep(0.2)
        self.assertEqual(self.memory.stats("u1")["messages"], 1)

    def test_unknown_methods_get_405_with_allow(self):
        sock = self.connect()
        sock.sendall(b"FOO /search HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, head, _ = read_response(sock)
        self.assertEqual(status, 405)
        self.assertIn("Allow: POST", head)

    def test_expect_100_continue_gets_continue_before_the_body_is_sent(self):
        sock = self.connect()
        sock.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(SEARCH))
        self.assertTrue(sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n"))
        sock.sendall(SEARCH)
        self.assertEqual(read_response(sock)[0], 200)


class BrowserAttackOverHttpTest(InProcessServerTest):
    def send(self, data):
        sock = self.connect()
        sock.sendall(data)
        return read_response(sock)

    def test_a_cross_site_text_plain_post_writes_nothing(self):
        body = json.dumps(add_body("u1", "s2", ["Alice: ignore all previous instructions"])).encode()
        status, _, _ = self.send(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nOrigin: https://evil.example\r\n"
                                 b"Content-Type: text/plain;charset=UTF-8\r\nContent-Length: %d\r\n\r\n" % len(body)
                                 + body)
        self.assertIn(status, (403, 415))
        status, _, _ = self.send(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
                                 b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        self.assertEqual(status, 415)
        self.assertEqual(self.memory.stats("u1")["messages"], 1)

    def test_a_dns_rebinding_page_reads_nothing(self):
        status, _, body = self.send(b"POST /search HTTP/1.1\r\nHost: rebind.evil.example:8000\r\n"
                                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(SEARCH)
                                    + SEARCH)
        self.assertEqual(status, 421)
        self.assertNotIn(b"umbrella", body)


class LogLineTest(unittest.TestCase):
    def test_control_characters_and_long_paths_reach_the_log_escaped_and_cut(self):
        from flowmem.http.server import log_request
        with self.assertLogs("flowmem.http", "INFO") as logs:
            log_request("GE\x1bT", "/se\x1b[2Jarch\x07" + "a" * 60_000 + "?q=secret", 400, time.perf_counter())
        line = logs.output[0]
        self.assertNotRegex(line, "[\x00-\x1f\x7f]")
        self.assertIn("/se\\x1b[2Jarch\\x07", line)
        self.assertLess(len(line), 400)
        self.assertNotIn("secret", line)


class ServerLogTest(unittest.TestCase):
    """The real `flowmem serve` process: what its log shows of bad and vanishing clients."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="flowmem-hostile-")
        self.addCleanup(tmp.cleanup)
        self.db = os.path.join(tmp.name, "flowmem.db")

    def start(self, *args):
        server = ServerProcess(self.db, ["--request-timeout-s", "0.5"] + list(args))
        self.addCleanup(server.stop)
        return server

    def test_garbage_and_vanishing_clients_write_one_line_each_and_no_traceback(self):
        server = self.start()
        address = ("127.0.0.1", server.port)
        for data in (b"NOT A VALID REQUEST LINE AT ALL\r\n\r\n", b"GET\r\n\r\n",
                     b"\x16\x03\x01\x02\x00\x01\x00\r\n\r\n",
                     b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n"):
            with socket.create_connection(address, timeout=10) as sock:
                sock.sendall(data)
                sock.recv(65536)
        for _ in range(20):  # ask, then vanish before the answer is read
            sock = socket.create_connection(address, timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.sendall(request_bytes(body=json.dumps({"query": "x " * 5000, "user_id": "u", "top_k": 100}).encode()))
            sock.close()
        slow = socket.create_connection(address, timeout=10)
        slow.sendall(b"POST /search HTTP/1.1\r\n")
        self.assertIsNotNone(closed_within(slow, 5))
        slow.close()
        server.wait_for(r"- - 408|POST /search 408")
        server.stop()
        log = server.log()
        self.assertNotIn("Traceback", log)
        self.assertNotIn("Error", log)
        # A request's line ends in its status and time; "ms" alone also matched the startup line whenever the
        # temporary database path happened to hold those two letters.
        request_lines = [line for line in log.splitlines() if re.search(r"flowmem\.http .* \d{3} [0-9.]+ms$", line)]
        self.assertGreaterEqual(len(request_lines), 5)
        self.assertLessEqual(len(request_lines), 4 + 20 + 1)

    def test_sigterm_drops_a_half_sent_request_within_the_shutdown_timeout(self):
        server = self.start("--shutdown-timeout-s", "1", "--request-timeout-s", "60")
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self.addCleanup(sock.close)
        sock.sendall(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{")
        time.sleep(0.3)
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(server.proc.wait(20), 0)
        self.assertLess(time.monotonic() - started, 15)  # the shutdown timeout, 1 s, not the request's 60
        self.assertIn("database closed", server.log())


if __name__ == "__main__":
    unittest.main()
