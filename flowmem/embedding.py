"""The operator's own embedder: vectors for every message after its Add, and one for each question.

Off by default. Configured with `embedder_url` (an OpenAI-compatible endpoint: `POST
{url}/embeddings` with `{"model": ..., "input": [texts]}` answered by `{"data":
[{"embedding": [...]}, ...]}`, spoken with urllib: nothing is installed for it) or, in
Python, `Memory(path, embed=callable)`: a function from a list of texts to a list of vectors.

Nothing the embedder does can lose or stall an Add: an Add commits as it always has, then
tells the Embedding (notify()), whose one background thread fetches the vectors of that
user's messages that have none, `embedder_batch` texts a call, users taking turns a batch
each, and stores them (storage/model_vectors.py). An answer that is not one vector per text, all of the
database's dimension, finite and not zero, is refused whole (nothing written); a failure
(an error, a timeout, a refusal) leaves the messages waiting and the user queued again, after
a pause that doubles up to RETRY_MAX_S. stats() and /metrics say how many wait and why.
On start every user with waiting messages is queued: a restart, an import or a reindex
fills in what is missing.

A search asks for the question's vector once, before its read snapshot opens, within
`embedder_timeout_s`; one that fails or takes longer is answered from the other rankings,
and says so (question()). The model's name and the vectors' dimension are recorded in the
database (meta `embedder`): opening it with another model is refused, naming the reindex
that clears the old vectors (set_model()).
"""
from __future__ import annotations

import collections
import concurrent.futures
import json
import logging
import math
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .errors import ConfigError
from .retrieval.model_channel import ModelQuestion
from .storage import model_vectors
from .storage.store import Store

log = logging.getLogger("flowmem.embedding")

Embed = Callable[[List[str]], Sequence[Sequence[float]]]
RETRY_MIN_S = 1.0
RETRY_MAX_S = 60.0
META_KEY = "embedder"


class EmbedderFailed(Exception):
    """The embedder did not give usable vectors; the message says why."""


def http_embedder(url: str, model: str, key: Optional[str], timeout_s: float) -> Embed:
    """An Embed that POSTs to the OpenAI-compatible `{url}/embeddings` (urllib), each call within `timeout_s`."""
    endpoint = url.rstrip("/") + "/embeddings"
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key

    def embed(texts: List[str]) -> List[List[float]]:
        body = json.dumps({"model": model, "input": texts}).encode("utf-8")
        request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as e:
            raise EmbedderFailed("%s answered %d" % (endpoint, e.code)) from e
        except (OSError, ValueError) as e:  # refused, timed out, reset; not JSON
            raise EmbedderFailed("%s: %s" % (endpoint, e)) from e
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise EmbedderFailed("%s answered no data list" % endpoint)
        # The data may come in any order; each names its input by index (as OpenAI's does).
        ordered = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d.get("index"), int) else 0)
        return [d.get("embedding") for d in ordered]

    return embed


def stored_vectors(vectors: Any, count: int, dims: Optional[int]) -> List[bytes]:
    """The stored bytes of `count` vectors the embedder answered, all of `dims` components (any one length
    if None); EmbedderFailed naming the problem if any is not such a vector."""
    if not isinstance(vectors, (list, tuple)) or len(vectors) != count:
        raise EmbedderFailed("asked for %d vectors, got %s" % (count, len(vectors) if isinstance(vectors, (
            list, tuple)) else type(vectors).__name__))
    out: List[bytes] = []
    for vector in vectors:
        try:
            values = [float(x) for x in vector]
        except (TypeError, ValueError) as e:
            raise EmbedderFailed("a vector is not a list of numbers") from e
        want = dims if dims is not None else (len(out[0]) if out else len(values))
        if len(values) != want:
            raise EmbedderFailed("a vector of %d components, not %d" % (len(values), want))
        if not all(math.isfinite(x) for x in values):
            raise EmbedderFailed("a vector holds NaN or infinity")
        stored = model_vectors.quantised(values)
        if stored is None:
            raise EmbedderFailed("a vector of zeros")
        out.append(stored)
    return out


def recorded(store: Store) -> Optional[Dict[str, Any]]:
    """The model and dimension the database's vectors are of ({"model", "dims"}), None before any."""
    with store.reading() as reader:
        row = reader.conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return json.loads(row[0]) if row else None


def set_model(store: Store, model: str) -> bool:
    """Record `model` as the database's embedder, clearing another model's vectors (every message then
    waits again): what `flowmem reindex --embedder-model` does. Whether anything was cleared."""
    with store.writing() as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        if row is not None and json.loads(row[0]).get("model") == model:
            return False
        model_vectors.clear(conn)
        conn.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
    return row is not None  # every mark bumped: no Store serves a held entry of the old vectors


class Embedding:
    """One database's embedder: a background thread filling in vectors, and the question's vector."""

    def __init__(self, store: Store, embed: Embed, model: str, batch: int, timeout_s: float):
        self.store, self.embed, self.model, self.batch, self.timeout_s = store, embed, model, batch, timeout_s
        known = recorded(store)
        if known is not None and known.get("model") != model:
            raise ConfigError("database %s holds vectors of embedder model %r, not %r: `flowmem reindex --db %s "
                              "--embedder-model %s` clears them and fills them in again"
                              % (store.path, known.get("model"), model, store.path, model))
        self.dims: Optional[int] = None if known is None else int(known["dims"])
        # Users waiting their turn, first come first served: a user with a batch left goes to the back, so
        # one user's 100,000 messages never keep another's first vectors waiting behind them.
        self._queue: "collections.OrderedDict[int, None]" = collections.OrderedDict()
        self._wake = threading.Condition()
        self._closed = False
        self._retry_at = 0.0
        self._pause = RETRY_MIN_S
        self.written = 0
        self.failures = 0
        self.last_error: Optional[str] = None
        self._asking = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="flowmem-embed-q")
        self._thread = threading.Thread(target=self._run, name="flowmem-embed", daemon=True)
        if not store.read_only:
            self.rescan()
            self._thread.start()

    # -- writes ---------------------------------------------------------------------

    def notify(self, user_key: Optional[int]) -> None:
        """The user's messages may wait for vectors (an Add was stored): queue them."""
        if user_key is None:
            return
        with self._wake:
            self._queue.setdefault(user_key)
            self._wake.notify()

    def rescan(self) -> None:
        """Queue every user some of whose messages wait (after an import, or at start)."""
        if self.store.read_only:
            return
        with self.store.reading() as reader:
            users = model_vectors.users_waiting(reader.conn)
        with self._wake:
            for user_key in users:
                self._queue.setdefault(user_key)
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (not self._queue or time.monotonic() < self._retry_at):
                    self._wake.wait(None if not self._queue else max(0.01, self._retry_at - time.monotonic()))
                if self._closed:
                    return
                user_key, _ = self._queue.popitem(last=False)
            try:
                if self._fill_batch(user_key):
                    with self._wake:
                        self._queue.setdefault(user_key)  # more of theirs wait: after the others' turn
                self._pause = RETRY_MIN_S
            except Exception as e:  # noqa: BLE001 - whatever the embedder does, nothing is lost: retried later
                self.failures += 1
                self.last_error = str(e)[:500] or type(e).__name__
                log.warning("embedder failed (retry in %.0f s): %s", self._pause, self.last_error)
                with self._wake:
                    self._queue.setdefault(user_key)
                    self._retry_at = time.monotonic() + self._pause
                self._pause = min(RETRY_MAX_S, self._pause * 2)

    def _fill_batch(self, user_key: int) -> bool:
        """Vectors for up to `batch` of the user's messages that have none; whether any were asked for."""
        with self.store.reading() as reader:
            rows = model_vectors.waiting(reader.conn, user_key, self.batch)
        if not rows:
            self.last_error = None
            return False
        stored = stored_vectors(self.embed([content for _, content in rows]), len(rows), self.dims)
        with self.store.writing() as conn:
            if self.dims is None:
                self.dims = len(stored[0])
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             (META_KEY, json.dumps({"model": self.model, "dims": self.dims}, sort_keys=True)))
            self.written += model_vectors.write(conn, user_key, [(rowid, content, vector) for (rowid, content),
                                                                 vector in zip(rows, stored)])
        return True

    def drain(self, timeout_s: float = 60.0) -> bool:
        """Wait until no message waits (True) or `timeout_s` passes, or the embedder fails (False)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._wake:
                idle = not self._queue
            if idle and self.waiting() == 0:
                return True
            if self.last_error is not None and self._retry_at > time.monotonic():
                return False
            time.sleep(0.02)
        return False

    def waiting(self, user_key: Optional[int] = None) -> int:
        """How many messages (of the user, if given) have no vector yet."""
        with self.store.reading() as reader:
            return model_vectors.waiting_count(reader.conn, user_key)

    def status(self) -> Dict[str, Any]:
        """What stats and /metrics report: the model, how many wait, written and failed, the last error."""
        return {"model": self.model, "dims": self.dims, "waiting": self.waiting(), "written": self.written,
                "failures": self.failures, "last_error": self.last_error}

    # -- questions ------------------------------------------------------------------

    def question(self, text: str) -> Tuple[Optional[ModelQuestion], Optional[str]]:
        """The question's vector by the embedder, within `timeout_s`; (None, why) if it did not come."""
        future = self._asking.submit(self.embed, [text])
        try:
            stored = stored_vectors(future.result(timeout=self.timeout_s), 1, self.dims)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return None, "the embedder took longer than %g s" % self.timeout_s
        except Exception as e:  # noqa: BLE001 - a search answers from its other rankings whatever happened
            return None, str(e)[:200] or type(e).__name__
        if self.dims is None:
            return None, "no message has a vector yet"
        return ModelQuestion(tuple(model_vectors.components(stored[0]))), None

    def close(self) -> None:
        """Stop the background thread (what waits stays waiting, for the next start)."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._asking.shutdown(wait=False)
