"""Shared test fixtures: a Memory on a temporary database, message builders, the CLI as a child process."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, List, Optional

from flowmem.config import load
from flowmem.memory import Memory
from flowmem.storage import fts
from flowmem.storage.views import KINDS, Span

DAY_MS = 86_400_000
T0 = 1683554160000  # 2023-05-08 13:56 UTC, a LoCoMo session date


def message(content: str, role: str = "user", timestamp: Optional[int] = T0) -> Dict[str, Any]:
    m: Dict[str, Any] = {"role": role, "content": content}
    if timestamp is not None:
        m["timestamp"] = timestamp
    return m


def add_body(user: str, session: str, contents: List[str], request_id: Optional[str] = None,
             timestamp: Optional[int] = T0) -> Dict[str, Any]:
    return {
        "request_id": request_id or "%s/%s/%d/%s" % (user, session, len(contents), contents[0][:20]),
        "user_id": user,
        "session_id": session,
        "messages": [message(c, "user" if i % 2 == 0 else "assistant", timestamp) for i, c in enumerate(contents)],
    }


def matches(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The items a search found by matching, without the latest-messages fallback (retrieval/fallback.py)."""
    return [i for i in items if "fallback" not in i["signals"]]


def session_views(memory: Memory, user_id: str, session_id: str) -> List[Span]:
    """The views a session has now, read from its database, in a stable order (kind, then first message)."""
    with memory.store.reading() as reader:
        rows = reader.conn.execute(
            "SELECT v.kind, v.first_seq, v.last_seq FROM views v JOIN sessions s USING (session_key)"
            " JOIN users u USING (user_key) WHERE u.user_id = ? AND s.session_id = ?", (user_id, session_id))
        return sorted((Span(*row) for row in rows), key=lambda s: (KINDS.index(s.kind), s.first))


def index_terms(memory: Memory, user_key: int) -> List[str]:
    """Every term of the FTS5 index stored under a user key (fts.py: each starts with the user's prefix)."""
    prefix = fts.user_term_prefix(user_key)
    with memory.store.reading() as reader:
        terms = reader.conn.execute("SELECT term FROM %s" % fts.ROWS_TABLE)
        return [term for (term,) in terms if term.startswith(prefix)]


class MemoryTestCase(unittest.TestCase):
    """A test case with a fresh Memory in a temporary directory, closed afterwards.

    Items' content is plain (no day prefix, no time annotations) unless a test case's
    `settings` say otherwise, so tests of other behaviour can compare it to the
    messages they stored; tests/test_temporal.py covers the decorated form.
    """

    settings: Dict[str, Any] = {"date_prefix": False, "time_annotations": False}

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="flowmem-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.memory = self.open_memory()

    def db_path(self, name: str = "flowmem.db") -> str:
        return os.path.join(self.tmp, name)

    def open_memory(self, name: str = "flowmem.db", clock: Optional[Callable[[], float]] = None,
                    **settings: Any) -> Memory:
        """A Memory on `name` in the test's directory. `clock` None by default: messages sent without a
        timestamp stay undated (as in a database from before receipt dating), so that a test's results
        never depend on when it ran; the tests of receipt dating give one."""
        flags = {"db": self.db_path(name), "synchronous": "NORMAL"}
        flags.update(self.settings)
        flags.update(settings)
        memory = Memory(load(flags, environ={}), clock=clock)
        self.addCleanup(memory.close)
        return memory

    def search(self, query: str, user: str = "u1", top_k: int = 10,
               memory: Optional[Memory] = None) -> List[Dict[str, Any]]:
        return (memory or self.memory).search({"query": query, "user_id": user, "top_k": top_k})["data"]


class CliMixin:
    """Runs `python -m flowmem ...` in a child process, as a user would, from `self.cli_dir`."""

    cli_dir: str

    def run_cli(self, *args: str, stdin: Optional[str] = None,
                env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        environ.update(env or {}, PYTHONPATH=root)
        return subprocess.run([sys.executable, "-m", "flowmem"] + list(args), input=stdin, capture_output=True,
                              text=True, env=environ, cwd=self.cli_dir, timeout=120)

    def assert_one_line_error(self, result: "subprocess.CompletedProcess[str]", *words: str) -> None:
        test: Any = self
        test.assertNotEqual(result.returncode, 0)
        test.assertNotIn("Traceback", result.stderr)
        lines = result.stderr.strip().splitlines()
        test.assertEqual(len(lines), 1, result.stderr)
        for w in words:
            test.assertIn(w, lines[0])
