"""Replay a dataset through Add and Search, as the challenge platform does.

Two clients speak the same language (contract bodies in, contract bodies out):
`InProcessClient` calls flowmem's core directly, `HttpClient` posts to a running
server. Replay is identical for both, so the numbers must be too.

One user per conversation, one session_id per session, Adds of at most 20 messages,
every message carrying its turn's timestamp. Each returned item is mapped back to the
turns it contains through its `source_message_ids` (flowmem's provenance); for an
item without them, each line of its content is matched to a turn's text.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Tuple

from flowmem import portable
from flowmem.config import Config
from flowmem.memory import Memory
from flowmem.storage.ids import message_id, session_tag

from .dataset import Conversation, Question

MAX_ADD_MESSAGES = portable.MAX_ADD_MESSAGES


class InProcessClient:
    """flowmem's core in this process, on the database named by `config.db`."""

    def __init__(self, config: Config):
        self.memory = Memory(config)

    def add(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self.memory.add(body)

    def search(self, body: Dict[str, Any]) -> Dict[str, Any]:
        # With an embedder (--set embedder_url=...), every message has its vector before a question is
        # asked: what a user who added long ago meets, not what a search a moment after an Add sees.
        embedding = self.memory.embedding
        if embedding is not None and not embedding.drain(3600):
            raise RuntimeError("the embedder failed: %s" % embedding.last_error)
        return self.memory.search(body)

    def close(self) -> None:
        self.memory.close()


class HttpClient:
    """A running server at `endpoint` (e.g. http://127.0.0.1:8000), one keep-alive connection per thread."""

    def __init__(self, endpoint: str, api_key: Optional[str] = None, timeout: float = 100.0):
        parsed = urllib.parse.urlsplit(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("endpoint must look like http://host:port, got %r" % endpoint)
        self._scheme, self._host, self._port = parsed.scheme, parsed.hostname, parsed.port
        self._prefix = parsed.path.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = "Bearer " + api_key
        self._timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = self._local.conn = cls(self._host, self._port, timeout=self._timeout)
        return conn

    def _post(self, path: str, body: Dict[str, Any]) -> Dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request("POST", self._prefix + path, body=data, headers=self._headers)
                response = conn.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, OSError):
                # A kept-alive connection the server closed: reconnect once.
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        if response.status != 200:
            raise RuntimeError("POST %s gave %d: %s"
                               % (path, response.status, payload[:300].decode("utf-8", "replace")))
        return json.loads(payload)

    def add(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self._post("/add", body)

    def search(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self._post("/search", body)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()


def add_bodies(conversation: Conversation, max_messages: int = MAX_ADD_MESSAGES) -> List[Dict[str, Any]]:
    """The Add bodies that replay a conversation: per session, chunks of at most `max_messages`
    (flowmem.portable.session_add_bodies(), as `flowmem import` sends a LoCoMo file)."""
    bodies = []
    for session in conversation.sessions:
        messages = []
        for turn in session.turns:
            message: Dict[str, Any] = {"role": turn.role, "content": turn.content}
            if turn.timestamp_ms is not None:
                message["timestamp"] = turn.timestamp_ms
            messages.append(message)
        bodies += portable.session_add_bodies(conversation.user_id, session.session_id, messages, max_messages)
    return bodies


def replay(client: Any, conversation: Conversation) -> float:
    """Add a whole conversation; returns the seconds it took."""
    started = time.perf_counter()
    for body in add_bodies(conversation):
        client.add(body)
    return time.perf_counter() - started


class TurnMap:
    """Maps returned items back to the turns of one conversation."""

    def __init__(self, conversation: Conversation):
        self.by_message_id: Dict[str, str] = {}
        self.by_text: Dict[str, str] = {}
        for session in conversation.sessions:
            tag = session_tag(conversation.user_id, session.session_id)
            for position, turn in enumerate(session.turns, 1):
                self.by_message_id[message_id(tag, position)] = turn.turn_id
                self.by_text.setdefault(turn.content, turn.turn_id)
        self.text = {t.turn_id: t.content for s in conversation.sessions for t in s.turns}
        self.parts = conversation.parts or {}  # a gold turn sent as several messages -> theirs

    def turns_of(self, item: Dict[str, Any]) -> List[Optional[str]]:
        """The turn ids of an item's messages, in order (None for a message that is no turn)."""
        ids = item.get("source_message_ids")
        if isinstance(ids, list):
            return [self.by_message_id.get(i) for i in ids]
        return [self.by_text.get(line) for line in str(item.get("content", "")).split("\n")]


def ask(client: Any, conversation: Conversation, question: Question, top_k: int) -> Tuple[List[Dict[str, Any]], float]:
    """Search one question; returns the items and the latency in ms."""
    body: Dict[str, Any] = {"query": question.question, "user_id": conversation.user_id, "top_k": top_k}
    if question.options:
        body["options"] = list(question.options)
    started = time.perf_counter()
    data = client.search(body)["data"]
    return data, (time.perf_counter() - started) * 1000
