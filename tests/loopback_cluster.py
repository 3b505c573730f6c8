"""The cluster tests' shared base: a real loopback cluster (`flowmem cluster up`), HAProxy in front, started per class.

No tests here (unittest discovery looks for test*.py): tests/test_cluster_routing.py,
tests/test_move_user.py and tests/test_rebalance.py subclass LoopbackClusterCase, which
skips each test with a one-line reason where haproxy is absent and fails it under CI
(tests/components.py).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest
import warnings
from typing import Any, Dict, List, Optional, Tuple

from flowmem.client import Client
from flowmem.cluster import control, haproxy as haproxy_config, nodes as loopback, placement
from tests.components import program
from tests.server import ROOT

TOPICS = ["hiking in the alps", "a beagle called Rex", "sourdough bread", "the chess club", "learning Portuguese",
          "a trip to Kyoto", "the garden tomatoes", "a marathon in October"]


def messages_in(db: str, user_id: str) -> List[str]:
    """The user's message contents as stored in a node's database file (read-only)."""
    with contextlib.closing(sqlite3.connect("file:%s?mode=ro" % db, uri=True)) as conn:
        rows = conn.execute("SELECT m.content FROM messages m JOIN sessions s USING (session_key)"
                            " JOIN users u USING (user_key) WHERE u.user_id = ?", (user_id,))
        return [content for (content,) in rows]


class LoopbackClusterCase(unittest.TestCase):
    """A loopback cluster behind HAProxy, started once for the class in a temporary directory and stopped after.

    Each test gets `self.cluster` (cluster.json, read again: a test may add a node),
    `self.nodes` (its nodes by name), `self.front_url` and `self.front`, a Client of the front.
    """

    node_count = 3
    api_key: Optional[str] = None  # every node's and the front's key, when set
    max_body_bytes = haproxy_config.MAX_BODY_BYTES
    replicate = True  # Litestream beside each node, where it is installed
    searched_topics = 5  # how many of TOPICS searches() asks

    cluster: Dict[str, Any] = {}
    directory = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.directory = tempfile.mkdtemp(prefix="flowmem-cluster-")
        if not loopback.haproxy_binary():
            return  # setUp skips each test (or fails it under CI)
        key_file = None
        if cls.api_key is not None:
            key_file = os.path.join(cls.directory, "api-key")
            with open(key_file, "w", encoding="utf-8") as f:
                f.write(cls.api_key + "\n")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)  # the cluster's processes outlive their Popen
                cls.cluster = loopback.up(cls.directory, cls.node_count, 0, key_file, replicate=cls.replicate,
                                          max_body_bytes=cls.max_body_bytes)
        except BaseException:
            if os.path.exists(os.path.join(cls.directory, "cluster.json")):
                loopback.down(cls.directory)  # what started before the failure
            shutil.rmtree(cls.directory, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.cluster:
            loopback.down(cls.directory)
        shutil.rmtree(cls.directory, ignore_errors=True)

    def setUp(self) -> None:
        program(self, "haproxy", "/usr/sbin/haproxy")
        self.cluster = loopback.load(self.directory)
        self.nodes = {node["name"]: node for node in self.cluster["nodes"]}
        self.front_url = self.cluster["front"]
        self.front = Client(self.front_url, self.api_key)

    def owner(self, user: str) -> str:
        return control.owner(self.cluster, user)

    def searches(self, user: str) -> List[Tuple[int, bytes]]:
        """The raw answers of the front to a fixed set of the user's searches."""
        plan = placement.cluster_plan(self.directory, user, None)
        return [plan.search_bytes(self.front_url, {"user_id": user, "query": topic, "top_k": 5})
                for topic in TOPICS[:self.searched_topics]]

    def holders(self, user: str) -> List[str]:
        """The nodes whose database file holds messages of the user."""
        return [node["name"] for node in self.cluster["nodes"] if messages_in(node["db"], user)]

    def tool(self, action: str, *args: str, timeout: float = 300) -> str:
        """`flowmem cluster ACTION ARGS` run as a command; its output, once it has exited 0."""
        result = subprocess.run([sys.executable, "-m", "flowmem", "cluster", action, *args], cwd=ROOT,
                                capture_output=True, text=True, timeout=timeout)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result.stdout
