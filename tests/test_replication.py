"""Replication with Litestream: checkpoints left to it, and a node rebuilt from its replica.

The first tests need nothing outside flowmem (the checkpoints setting). The rest run a
real `litestream replicate` beside a real `flowmem serve` (flowmem/cluster/replication.py), kill
both, delete the database and restore it from the replica: they are skipped with a
one-line reason where Litestream is not installed, and fail instead under CI
(tests/components.py).
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
import unittest
import urllib.request
from typing import Any, Dict, List

from flowmem.client import Client
from flowmem.cluster import replication
from flowmem.config import load
from flowmem.errors import ConfigError
from flowmem.memory import Memory
from tests.components import program
from tests.helpers import add_body
from tests.server import ServerProcess

SYNC_INTERVAL = "1s"
SETTLE_S = 5.0  # past Litestream's monitor and sync intervals (1 s each): what was acknowledged is replicated


class CheckpointsSettingTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="flowmem-ckpt-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def memory(self, checkpoints: str) -> Memory:
        memory = Memory(load({"db": os.path.join(self.dir, checkpoints + ".db"), "checkpoints": checkpoints},
                             environ={}))
        self.addCleanup(memory.close)
        for n in range(20):
            memory.add(add_body("u%d" % (n % 2), "s", ["message %d about the lake" % n], request_id="r%d" % n))
        return memory

    def test_external_checkpoints_start_no_checkpointer_and_leave_the_wal_after_delete_user(self):
        memory = self.memory("external")
        self.assertFalse(memory.store.checkpointer.is_alive())
        memory.delete_user("u0")
        self.assertGreater(os.path.getsize(memory.config.db + "-wal"), 0)  # Litestream's to checkpoint
        self.assertEqual(memory.search({"user_id": "u0", "query": "lake", "top_k": 5})["data"], [])

    def test_flowmem_checkpoints_truncate_the_wal_after_delete_user(self):
        memory = self.memory("flowmem")
        self.assertTrue(memory.store.checkpointer.is_alive())
        memory.delete_user("u0")
        self.assertEqual(os.path.getsize(memory.config.db + "-wal"), 0)

    def test_checkpoints_take_flowmem_or_external_only(self):
        with self.assertRaisesRegex(ConfigError, "checkpoints must be flowmem or external"):
            load({"checkpoints": "litestream"}, environ={})
        self.assertEqual(load(environ={"FLOWMEM_CHECKPOINTS": "external"}).checkpoints, "external")


class LitestreamConfigurationTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="flowmem-ls-config-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_the_litestream_configuration_names_the_database_and_its_file_replica(self):
        db, replica = os.path.join(self.dir, "a b#c.db"), os.path.join(self.dir, "replica")
        text = replication.config_for(db, replica, "2s")
        self.assertIn('- path: "%s"' % db, text)
        self.assertIn('path: "%s"' % replica, text)
        self.assertIn("sync-interval: 2s", text)
        self.assertIn("type: s3", text)  # object storage, documented as a comment


def raw_search(endpoint: str, body: Dict[str, Any]) -> bytes:
    """The Search response's bytes, as a client receives them."""
    request = urllib.request.Request(endpoint + "/search", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


QUERIES = [("ana", "pottery bowl"), ("ana", "garden tomatoes"), ("ana", "what did I say about the lake"),
           ("ben", "train to Lisbon"), ("ben", "pottery"), ("cai", "pottery bowl")]


class RestoreFromReplicaTest(unittest.TestCase):
    def setUp(self):
        program(self, "litestream")
        self.dir = tempfile.mkdtemp(prefix="flowmem-replica-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.db = os.path.join(self.dir, "flowmem.db")

    def serve(self) -> ServerProcess:
        server = ServerProcess(self.db, env=replication.start_flowmem_env())
        self.addCleanup(server.stop)
        return server

    def fill(self, client: Client) -> None:
        """Three users; one of ana's sessions and all of cai are deleted before the loss."""
        days = ["the pottery class made a blue bowl", "tomatoes in the garden are ripe", "we swam in the lake"]
        for n, text in enumerate(days * 4):
            client.add(add_body("ana", "s%d" % (n % 3), ["Ana: %s, day %d" % (text, n), "Nice, tell me more"],
                                request_id="a%d" % n))
            client.add(add_body("ben", "t%d" % (n % 2), ["Ben: the train to Lisbon leaves at %d" % n],
                                request_id="b%d" % n))
            client.add(add_body("cai", "c", ["Cai: my pottery bowl cracked, day %d" % n], request_id="c%d" % n))
        self.assertTrue(client.delete_session("ana", "s2")["deleted"])
        self.assertTrue(client.delete_user("cai")["deleted"])

    def state(self, endpoint: str) -> Dict[str, Any]:
        client = Client(endpoint)
        searches: List[bytes] = [raw_search(endpoint, {"user_id": u, "query": q, "top_k": 10}) for u, q in QUERIES]
        return {"searches": searches, "users": client.list_users()["data"],
                "ana_sessions": [s["session_id"] for s in client.list_sessions("ana")["data"]]}

    def lose_and_restore(self, server: ServerProcess, litestream: Any) -> None:
        """Kill flowmem and Litestream at once, delete every file of the node but the replica, restore."""
        server.proc.kill()
        litestream.kill()
        server.proc.wait(10)
        litestream.wait(10)
        for path in (self.db, self.db + "-wal", self.db + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        shutil.rmtree(os.path.join(self.dir, ".flowmem.db-litestream"), ignore_errors=True)
        self.assertFalse(os.path.exists(self.db))
        restored = replication.restore(os.path.join(self.dir, "replica"), self.db)  # integrity-checked
        self.assertEqual(restored["users"], 2)

    def test_a_node_restored_from_its_replica_answers_every_search_byte_for_byte_as_before_the_loss(self):
        """The restored file passes SQLite's and FTS5's integrity checks, then serves as before the loss."""
        server = self.serve()
        litestream = replication.start_litestream(self.db, self.dir, SYNC_INTERVAL)
        self.addCleanup(lambda: litestream.poll() is None and litestream.kill())
        self.fill(Client(server.endpoint))
        before = self.state(server.endpoint)
        self.assertEqual(before["ana_sessions"], ["s0", "s1"])
        self.assertEqual([u["user_id"] for u in before["users"]], ["ana", "ben"])
        self.assertEqual(json.loads(before["searches"][-1])["data"], [])  # cai is gone
        time.sleep(SETTLE_S)

        self.lose_and_restore(server, litestream)
        self.assertEqual(replication.check(self.db)["users"], 2)  # SQLite's and FTS5's integrity checks
        conn = sqlite3.connect(self.db)
        try:
            self.assertEqual(conn.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            cai = conn.execute("SELECT count(*) FROM users WHERE user_id = 'cai'").fetchone()[0]
        finally:
            conn.close()
        self.assertEqual(cai, 0)
        after = self.state(self.serve().endpoint)
        self.assertEqual(after["users"], before["users"])
        self.assertEqual(after["ana_sessions"], before["ana_sessions"])  # the deleted session stays deleted
        for (user, query), old, new in zip(QUERIES, before["searches"], after["searches"]):
            self.assertEqual(new, old, "search %r of %s differs after the restore" % (query, user))
        self.assertTrue(any(json.loads(s)["data"] for s in after["searches"]))


if __name__ == "__main__":
    unittest.main()
