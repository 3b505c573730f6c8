"""One connection's explicit state (flowmem/http/connection.py): the steps it may take, and the
states a real Server's connection is in as a client sends, waits and closes."""
import socket
import threading
import time
from unittest import mock

from flowmem.config import load
from flowmem.http.api import App
from flowmem.http.connection import NEXT, Connection, State, StepRefused
from flowmem.http.server import Server
from tests.helpers import MemoryTestCase

HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n"


def a_connection(test):
    ours, theirs = socket.socketpair()
    test.addCleanup(ours.close)
    test.addCleanup(theirs.close)
    return Connection(ours, time.monotonic(), 10.0, 1024)


class StepsTest(MemoryTestCase):
    def test_a_new_connection_is_reading_and_refuses_to_be_idle_before_it_answered(self):
        conn = a_connection(self)
        self.assertIs(conn.state, State.READING)
        with self.assertRaises(ValueError):
            conn.become(State.IDLE)
        with self.assertRaises(ValueError):
            conn.become(State.WRITING)  # a response before any request went to a worker
        self.assertIs(conn.state, State.READING)

    def test_a_keep_alive_exchange_walks_reading_answering_writing_idle_and_back(self):
        conn = a_connection(self)
        for state in (State.ANSWERING, State.WRITING, State.IDLE, State.READING, State.ANSWERING, State.DRAINING):
            conn.become(state)
            self.assertIs(conn.state, state)
        with self.assertRaises(ValueError):
            conn.become(State.READING)  # a draining connection never reads another request

    def test_every_state_can_close_and_nothing_follows_closed(self):
        for state in State:
            if state is not State.CLOSED:
                self.assertIn(State.CLOSED, NEXT[state], state)
        conn = a_connection(self)
        conn.become(State.CLOSED)
        for state in State:
            with self.assertRaises(ValueError):
                conn.become(state)

    def test_only_connections_that_wait_on_their_client_give_way_to_a_new_one(self):
        waiting = set()
        for state in State:
            conn = a_connection(self)
            conn.state = state
            if conn.waiting():
                waiting.add(state)
        self.assertEqual(waiting, {State.READING, State.IDLE, State.DRAINING})


class ServerStatesTest(MemoryTestCase):
    """The state a real Server (in a thread, on an ephemeral port) keeps for one client's connection."""

    def setUp(self):
        super().setUp()
        config = load({"db": self.db_path(), "port": 0}, environ={})
        self.server = Server(App(self.memory, config), config)
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 20)
        self.addCleanup(self.server.stop)
        self.sock = socket.create_connection(("127.0.0.1", self.server.address[1]), timeout=10)
        self.addCleanup(self.sock.close)

    def states_become(self, states, within=5.0):
        """Whether the server's connections are in `states` within `within` seconds (the loop runs apart)."""
        until = time.monotonic() + within
        while time.monotonic() < until:
            try:
                now = [c.state for c in list(self.server.connections)]
            except RuntimeError:  # the loop changed the set while it was copied
                continue
            if now == states:
                return True
            time.sleep(0.01)
        return False

    def state_becomes(self, state):
        return self.states_become([state])

    def answer(self):
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.endswith(b"}"):
            data = self.sock.recv(65536)
            if not data:
                break
            reply += data
        return reply

    def test_a_keep_alive_connection_is_idle_after_its_answer_and_reading_at_the_next_byte(self):
        self.assertTrue(self.state_becomes(State.READING))
        self.sock.sendall(HEALTH % b"")
        self.assertTrue(self.answer().startswith(b"HTTP/1.1 200"))
        self.assertTrue(self.state_becomes(State.IDLE))
        self.sock.sendall(b"GET /hea")
        self.assertTrue(self.state_becomes(State.READING))
        self.sock.sendall(b"lth HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.assertTrue(self.answer().startswith(b"HTTP/1.1 200"))
        self.assertTrue(self.state_becomes(State.IDLE))

    def test_a_connection_that_asked_to_close_drains_until_its_client_closes(self):
        self.sock.sendall(HEALTH % b"Connection: close\r\n")
        self.assertIn(b"Connection: close", self.answer())
        self.assertTrue(self.state_becomes(State.DRAINING))
        self.sock.close()
        self.assertTrue(self.states_become([]))  # closed, and gone from the loop

    def test_a_refused_request_closes_after_its_answer(self):
        self.sock.sendall(b"POST /add HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n")
        self.assertTrue(self.answer().startswith(b"HTTP/1.1 400"))
        self.assertTrue(self.state_becomes(State.DRAINING))

    def test_a_step_the_state_does_not_allow_closes_that_connection_and_the_server_serves_on(self):
        real = Connection.become

        def refusing(conn, state):  # a loop bug, once: the first request's step to ANSWERING
            if state is State.ANSWERING and not refused:
                refused.append(conn)
                raise StepRefused("a bug")
            real(conn, state)

        refused = []
        with mock.patch.object(Connection, "become", refusing), self.assertLogs("flowmem", "ERROR"):
            self.sock.sendall(HEALTH % b"")
            self.assertEqual(self.answer(), b"")  # that connection closed without an answer
        again = socket.create_connection(("127.0.0.1", self.server.address[1]), timeout=10)
        self.addCleanup(again.close)
        again.sendall(HEALTH % b"")
        self.assertTrue(again.recv(65536).startswith(b"HTTP/1.1 200"))
