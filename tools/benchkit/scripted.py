"""A hostile server for the client's bounds: a loopback listener that answers as a script says.

It reads each request's head, then hands the connection's send to the script, which writes
what it likes as slowly as it likes (a byte a second, to trickle; gigabytes, to flood), and
counts the bytes that got out before the client hung up. tools/bench_client_bounds.py
measures what it costs Client and AsyncClient; tests/test_client_bounds.py checks the bounds.
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Callable


class ScriptedServer:
    """A loopback listener answering every request with `write(send)`; `sent` counts what got out."""

    def __init__(self, write: Callable[[Callable[[bytes], None]], None]):
        self.sent = 0
        self._write = write
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.origin = "http://127.0.0.1:%d" % self._listener.getsockname()[1]
        self._stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:  # the clients' GET /health carries no body
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk

            def send(chunk: bytes) -> None:
                if self._stopped.is_set():
                    raise OSError("stopped")
                conn.sendall(chunk)
                self.sent += len(chunk)
            try:
                self._write(send)
            except OSError:  # the client hung up
                pass

    def settled(self) -> int:
        """What was sent, once sending has stopped for 0.2 s (the client closed its end)."""
        last = -1
        while self.sent != last:
            last = self.sent
            time.sleep(0.2)
        return last

    def close(self) -> None:
        self._stopped.set()
        self._listener.close()
