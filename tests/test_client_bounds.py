"""What a server can make Client and AsyncClient wait for and hold: one timeout for a whole request, and
answers no longer than `max_answer_bytes`.

A raw loopback listener (Script, the bench kit's ScriptedServer) stands in for a hostile server: it reads each request,
then writes what its script says, as slowly as it says (a byte at a time to trickle), and
counts the bytes it got out before the client hung up. A call's timeout bounds it whole:
a trickle that keeps every read short of the timeout must still end the call near it, far
short of the trickle's end. An answer past the bound is refused, having read at most the
bound of it (none where it states its length).
"""
from __future__ import annotations

import asyncio
import time
import unittest
from typing import Any, Callable, List

from flowmem.async_client import AsyncClient
from flowmem.client import Client
from flowmem.errors import FlowmemError, Unavailable
from flowmem.wire import DEFAULT_MAX_ANSWER_BYTES, AnswerTooLarge
from tools.benchkit.scripted import ScriptedServer

MiB = 1024 * 1024
HEALTH = b'{"status": "ok"}'
Script = ScriptedServer


def trickle(data: bytes, every_s: float) -> Callable[[Callable[[bytes], None]], None]:
    """A script sending `data` a byte at a time, one each `every_s` seconds."""
    def write(send: Callable[[bytes], None]) -> None:
        for i in range(len(data)):
            send(data[i:i + 1])
            time.sleep(every_s)
    return write


def endless(head: bytes) -> Callable[[Callable[[bytes], None]], None]:
    """A script sending `head`, then zeros in 1 MiB pieces until the client stops reading (at most 1 GiB)."""
    def write(send: Callable[[bytes], None]) -> None:
        send(head)
        piece = b"0" * MiB
        for _ in range(1024):
            send(piece)
    return write


def answer(body: bytes, chunked: bool = False) -> bytes:
    """An HTTP/1.1 200 with `body`, framed by its Content-Length, or in one chunk."""
    if chunked:
        return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def close_delimited(body: bytes) -> Callable[[Callable[[bytes], None]], None]:
    def write(send: Callable[[bytes], None]) -> None:
        send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body)
    return write


class ScriptTestCase(unittest.TestCase):
    def script(self, write: Callable[[Callable[[bytes], None]], None]) -> Script:
        script = Script(write)
        self.addCleanup(script.close)
        return script

    def health(self, kind: str, origin: str, **kwargs: Any) -> Any:
        """GET /health by Client or AsyncClient (`kind`), with the constructor's `kwargs`: its answer."""
        if kind == "Client":
            with Client(origin, retries=0, **kwargs) as client:
                return client.health()

        async def call() -> Any:
            async with AsyncClient(origin, retries=0, **kwargs) as client:
                return await client.health()
        return asyncio.run(call())

    def refused(self, kind: str, origin: str, **kwargs: Any) -> FlowmemError:
        with self.assertRaises(FlowmemError) as caught:
            self.health(kind, origin, **kwargs)
        return caught.exception


class WholeRequestTimeoutTest(ScriptTestCase):
    def test_a_trickled_answer_ends_the_call_at_its_timeout_not_at_the_trickles_end(self):
        # 4 bytes a second: each read returns well within the 1 s timeout, and the answer takes over 13 s
        # (status line and headers trickled, or sent at once and the body trickled). The call must end
        # near its timeout: a loaded machine may be late, so 8 s, still far short of the trickle.
        body = b'{"status": "ok", "padding": "%s"}' % (b" " * 20)
        head, _, _ = answer(body).partition(b"\r\n\r\n")
        scripts = {"the headers": trickle(answer(body), 0.25),
                   "the body": lambda send: (send(head + b"\r\n\r\n"), trickle(body, 0.25)(send))}
        for kind in ("Client", "AsyncClient"):
            for trickled, write in scripts.items():
                with self.subTest(kind=kind, trickled=trickled):
                    script = self.script(write)
                    started = time.monotonic()
                    error = self.refused(kind, script.origin, timeout=1.0)
                    waited = time.monotonic() - started
                    self.assertIsInstance(error, Unavailable)
                    self.assertIn("timeout", error.reason)
                    self.assertLess(waited, 8.0)

    def test_an_answer_within_the_timeout_is_read_as_before(self):
        script = self.script(lambda send: send(answer(HEALTH)))
        for kind in ("Client", "AsyncClient"):
            with self.subTest(kind=kind):
                self.assertEqual(self.health(kind, script.origin, timeout=5.0), {"status": "ok"})

    def test_a_kept_connection_gets_a_new_deadline_for_each_request(self):
        # Each answer takes 0.6 s of a 1 s timeout: three on one connection take 1.8 s, and each is whole.
        def write(send: Callable[[bytes], None]) -> None:
            time.sleep(0.6)
            send(answer(HEALTH))

        script = self.script(write)
        with Client(script.origin, timeout=1.0, retries=0) as client:
            self.assertEqual([client.health() for _ in range(3)], [{"status": "ok"}] * 3)


class AnswerBoundTest(ScriptTestCase):
    def test_an_answer_longer_than_max_answer_bytes_is_refused_naming_the_bound(self):
        body = b'{"status": "%s"}' % (b"x" * 5000)
        scripts = {"stated": lambda send: send(answer(body)), "unstated": close_delimited(body),
                   "chunked": lambda send: send(answer(body, chunked=True))}
        for kind in ("Client", "AsyncClient"):
            for framing, write in scripts.items():
                if kind == "AsyncClient" and framing == "chunked":
                    continue  # AsyncClient reads no chunks at all (an Unavailable of its own)
                with self.subTest(kind=kind, framing=framing):
                    error = self.refused(kind, self.script(write).origin, timeout=10, max_answer_bytes=1000)
                    self.assertIsInstance(error, AnswerTooLarge)
                    self.assertIn("max_answer_bytes=1000", error.reason)
                    self.assertIn("GET /health", error.reason)
                    if framing == "stated":
                        self.assertIn("%d bytes" % len(body), error.reason)

    def test_an_answer_as_long_as_the_bound_is_read_whole(self):
        for kind in ("Client", "AsyncClient"):
            for framing in ("stated", "unstated"):
                with self.subTest(kind=kind, framing=framing):
                    write = (lambda send: send(answer(HEALTH))) if framing == "stated" else close_delimited(HEALTH)
                    answered = self.health(kind, self.script(write).origin, timeout=10,
                                           max_answer_bytes=len(HEALTH))
                    self.assertEqual(answered, {"status": "ok"})

    def test_a_runaway_answer_is_refused_having_read_at_most_the_default_bound(self):
        # 256 MiB stated (or unstated, ended by nothing): the client stops at 64 MiB, not at the end.
        stated = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (256 * MiB)
        unstated = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
        for kind in ("Client", "AsyncClient"):
            for framing, head in (("stated", stated), ("unstated", unstated)):
                with self.subTest(kind=kind, framing=framing):
                    script = self.script(endless(head))
                    error = self.refused(kind, script.origin, timeout=60)
                    self.assertIsInstance(error, AnswerTooLarge)
                    # What the socket buffers take on top of what the client read: a few MiB.
                    read_at_most = 0 if framing == "stated" else DEFAULT_MAX_ANSWER_BYTES
                    self.assertLess(self.sent_when_done(script), read_at_most + 32 * MiB)

    def sent_when_done(self, script: Script) -> int:
        """What `script` had sent once its writes stopped (the client hung up), read after it settled."""
        counts: List[int] = []
        while len(counts) < 3 or counts[-1] != counts[-3]:
            counts.append(script.sent)
            time.sleep(0.05)
        return counts[-1]


if __name__ == "__main__":
    unittest.main()
