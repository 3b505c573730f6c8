"""An OpenAI-compatible embeddings server for tests: standard library only, told how to misbehave.

`POST /v1/embeddings` answers `{"data": [{"index": i, "embedding": [...]}]}`. A text's vector is
words() hashed into DIMS buckets (texts sharing words are near, every run alike), given in
reverse index order (a client must read the indexes). `mode` makes it fail as embedders do:
"error" (500), "slow" (sleeps `delay_s` first), "dims" (one component too few), "nan", "count"
(one vector too few), "garbage" (not JSON). `requests` counts the calls, `keys` the
Authorization headers seen, `inputs` the texts asked for.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Optional

from tools.benchkit import hashed_vectors

DIMS = 32


def vector(text: str, dims: int = DIMS) -> List[float]:
    """A text's vector: its words hashed into `dims` buckets (tools/benchkit/hashed_vectors.py)."""
    return hashed_vectors.vector(text, dims)


class FakeEmbedder:
    """The server on a free loopback port; `url` is its base (http://127.0.0.1:PORT/v1)."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.delay_s = 0.0
        self.requests = 0
        self.keys: List[Optional[str]] = []
        self.inputs: List[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                fake.requests += 1
                fake.keys.append(self.headers.get("Authorization"))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                fake.inputs += texts
                if fake.mode == "slow":
                    time.sleep(fake.delay_s)
                if fake.mode == "error":
                    return self._send(500, b'{"error": {"message": "down"}}')
                if fake.mode == "garbage":
                    return self._send(200, b"<html>not json</html>")
                vectors = [vector(t) for t in texts]
                if fake.mode == "dims":
                    vectors = [v[:-1] for v in vectors]
                if fake.mode == "nan":
                    vectors[-1][0] = float("nan")
                if fake.mode == "count":
                    vectors = vectors[:-1]
                data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
                self._send(200, json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode())

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the slow mode's test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/v1" % self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
