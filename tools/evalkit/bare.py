"""The bare FTS5 baseline as a client: what a plain SQLite full-text search retrieves.

One FTS5 table with the `porter unicode61` tokenizer holds every message's content as
sent ("Speaker: text"); a search is the question's words less flowmem's question
stopwords, quoted and ORed, in `bm25()` order, one item per message. It speaks the
contract's Add and Search bodies, so tools/eval.py replays and scores it exactly as it
does flowmem (`--baseline fts5`), and tools/bench_locomo.py times the same query.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Any, Dict, List

from flowmem.storage.ids import message_id, session_tag
from flowmem.text.tokenize import QUESTION_STOPWORDS

BARE_SQL = "SELECT rowid FROM bare WHERE bare MATCH ? ORDER BY bm25(bare) LIMIT ?"
_WORD = re.compile(r"\w+")


def bare_expression(question: str) -> str:
    """The bare baseline's MATCH: the question's words, less question stopwords, quoted and ORed."""
    words = [w for w in _WORD.findall(question.lower()) if w not in QUESTION_STOPWORDS]
    return " OR ".join('"%s"' % w for w in dict.fromkeys(words))


class BareFts5Client:
    """The bare baseline in memory: Add stores each message as one FTS5 row, Search ranks them by bm25()."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute("CREATE VIRTUAL TABLE bare USING fts5(content, user_id UNINDEXED, message_id UNINDEXED,"
                          " tokenize='porter unicode61')")
        self.sessions: Dict[tuple, int] = {}  # (user, session) -> messages so far

    def add(self, body: Dict[str, Any]) -> Dict[str, Any]:
        key = (body["user_id"], body["session_id"])
        tag = session_tag(*key)
        rows = []
        for m in body["messages"]:
            self.sessions[key] = self.sessions.get(key, 0) + 1
            rows.append((m["content"], body["user_id"], message_id(tag, self.sessions[key])))
        self.conn.executemany("INSERT INTO bare (content, user_id, message_id) VALUES (?, ?, ?)", rows)
        return {"success": True}

    def search(self, body: Dict[str, Any]) -> Dict[str, Any]:
        expression = bare_expression(body["query"])
        if not expression:
            return {"data": []}
        rows = self.conn.execute(
            "SELECT content, message_id FROM bare WHERE bare MATCH ? AND user_id = ? ORDER BY bm25(bare), rowid"
            " LIMIT ?", (expression, body["user_id"], int(body.get("top_k", 10)))).fetchall()
        data: List[Dict[str, Any]] = [{"id": mid, "content": content, "source_message_ids": [mid]}
                                      for content, mid in rows]
        return {"data": data}

    def close(self) -> None:
        self.conn.close()
