"""The HAProxy front of a loopback cluster routes every user to the one node that owns it.

Real HAProxy (Debian's haproxy 2.6) in front of real `flowmem serve` nodes, started by
`flowmem cluster up`; skipped with a one-line reason where haproxy is absent, required when CI
is set (tests/components.py). Where each user lives is checked in the nodes' own database
files, opened read-only.
"""
from __future__ import annotations

import http.client
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import uuid
from typing import Any, Dict, List, Optional, Tuple

from flowmem.cluster import control, haproxy as haproxy_config, nodes as cluster_tool
from tests.components import program
from tests.helpers import add_body
from tests.loopback_cluster import LoopbackClusterCase
from tests.server import ROOT

KEY = "cluster-test-key"
TRICKY_IDS = ["plain", "a/b", "100%", "two words", "é", "🙂 emoji", "中文用户", "q\"uote", "back\\slash",
              "plus+sign", "hash#tag", "a/%2F/b", "?x=1&y", " leading space"]


def request(front: str, method: str, path: str, body: Any = None, raw: Optional[bytes] = None,
            key: bool = True) -> Tuple[int, Any, Dict[str, str]]:
    """One request on a new connection: (status, parsed JSON or None, lower-cased headers)."""
    parts = urllib.parse.urlsplit(front)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Content-Type": "application/json"} if (body is not None or raw is not None) else {}
    if key:
        headers["Authorization"] = "Bearer " + KEY
    data = raw if raw is not None else (json.dumps(body, ensure_ascii=False).encode() if body is not None else None)
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        got = {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()
    try:
        parsed = json.loads(payload) if payload else None
    except ValueError:
        parsed = None
    return resp.status, parsed, got


def note(user: str, text: str) -> Dict[str, Any]:
    """An Add of one message to the user's session s1, with a request id of its own."""
    return add_body(user, "s1", [text], uuid.uuid4().hex)


def users_by_node(cluster: Dict[str, Any]) -> Dict[str, List[str]]:
    """{user_id: [nodes whose database holds the user]}, read from the files themselves (read-only)."""
    where: Dict[str, List[str]] = {}
    for node in cluster["nodes"]:
        con = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(node["db"]), uri=True)
        try:
            for (user,) in con.execute("SELECT user_id FROM users"):
                where.setdefault(user, []).append(node["name"])
        finally:
            con.close()
    return where


class ClusterCase(LoopbackClusterCase):
    """Routing needs no Litestream; every request carries the key."""

    api_key = KEY
    replicate = False


class RoutingTest(ClusterCase):
    def test_the_contract_checker_passes_through_the_front(self) -> None:
        done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "contract_check.py"), "--endpoint",
                               self.front_url, "--api-key", KEY, "--user-prefix", "cluster-check é/% "],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-2000:])
        self.assertIn("checks passed", done.stdout)

    def test_each_users_messages_live_on_exactly_one_node_the_owner(self) -> None:
        users = TRICKY_IDS + ["user-%d" % i for i in range(30)]
        for i, user in enumerate(users):
            raw = json.dumps(note(user, "note %d" % i), ensure_ascii=bool(i % 2)).encode()
            status, body, _ = request(self.front_url, "POST", "/add", raw=raw)
            self.assertEqual(status, 200, (user, body))
        where = users_by_node(self.cluster)
        for user in users:
            self.assertEqual(where.get(user), [self.owner(user)], user)
        self.assertEqual({u: n for u, n in where.items() if len(n) != 1}, {}, "users split across nodes")
        self.assertEqual(len({self.owner(u) for u in users}), self.node_count, "every node owns some of 44 users")

    def test_read_after_write_holds_through_the_front(self) -> None:
        for i in range(20):
            user, word = "raw-%d-%s" % (i, uuid.uuid4().hex[:6]), "zq%sq" % uuid.uuid4().hex[:10]
            self.assertEqual(request(self.front_url, "POST", "/add", note(user, "I saw a %s today" % word))[0], 200)
            query = {"query": word, "user_id": user, "top_k": 5}
            status, body, headers = request(self.front_url, "POST", "/search", query)
            self.assertEqual(status, 200)
            self.assertIn(word, body["data"][0]["content"])
            self.assertEqual(headers["x-flowmem-node"], self.owner(user))

    def test_user_routes_by_path_reach_the_owner(self) -> None:
        for user in TRICKY_IDS:
            self.assertEqual(request(self.front_url, "POST", "/add", note(user, "path routed"))[0], 200)
            path = "/users/%s/sessions" % urllib.parse.quote(user, safe="")
            status, body, headers = request(self.front_url, "GET", path)
            self.assertEqual(status, 200, (user, body))
            self.assertEqual(headers["x-flowmem-node"], self.owner(user), user)
            self.assertEqual([s["session_id"] for s in body["data"]], ["s1"], user)
            path = "/users/%s/messages?limit=1" % urllib.parse.quote(user, safe="")
            status, body, _ = request(self.front_url, "GET", path)
            self.assertEqual((status, body["data"][0]["user_id"]), (200, user))

    def test_the_path_user_id_is_decoded_as_flowmem_decodes_it(self) -> None:
        # Python's unquote keeps what is not %XX ("100%", "%zz"): HAProxy's url_dec finds no id there.
        rnd = random.Random(41)
        pieces = ["a", "%", "%zz", "%2", "%25", "%2F", "%C3%A9", "%F0%9F%99%82", "+", "~", "%20", "%e4%b8%ad", "x"]
        for _ in range(120):
            segment = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 5)))
            status, _, headers = request(self.front_url, "GET", "/users/%s/sessions" % segment)
            self.assertIn(status, (200, 422), segment)  # 422: a blank id
            self.assertEqual(headers["x-flowmem-node"], self.owner(urllib.parse.unquote(segment)), segment)

    def test_the_body_user_id_is_read_as_flowmem_reads_it(self) -> None:
        # Searches write nothing: the node that answered shows where an Add would have gone.
        rnd = random.Random(14)
        alphabet = ["a", "é", "🙂", "/", "\\", '"', "%", " ", "中", "\u2028", "\x7f", "+", "#", "Ω", "\U0001F600"]
        for i in range(200):
            user = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 8)))
            body = {"query": "anything", "top_k": 1, "user_id": user,
                    "options": [{"user_id": "nested"}] if i % 3 == 0 else ["x"]}
            raw = json.dumps(body, ensure_ascii=bool(i % 2), indent=2 if i % 5 == 0 else None).encode()
            if i % 4 == 0:
                raw = raw.replace(b"/", b"\\/")
            if i % 7 == 0:
                raw = b'{"user_id": "first of two", ' + raw[1:]  # Python's json keeps the last
            status, _, headers = request(self.front_url, "POST", "/search", raw=raw)
            self.assertIn(status, (200, 422), raw)
            self.assertEqual(headers["x-flowmem-node"], self.owner(user), raw)

    def test_a_request_without_a_user_is_answered_by_a_node_and_writes_nothing(self) -> None:
        before = users_by_node(self.cluster)
        for raw in (b"{", b"[]", b'{"request_id": "r", "session_id": "s", "messages": []}', b'{"user_id": null}'):
            status, body, _ = request(self.front_url, "POST", "/add", raw=raw)
            self.assertIn(status, (400, 422), raw)
            self.assertIn("reason", body["detail"])
        self.assertEqual(users_by_node(self.cluster), before)

    def test_all_users_and_metrics_are_per_node_at_the_front(self) -> None:
        status, body, _ = request(self.front_url, "GET", "/users")
        self.assertEqual(status, 501)
        self.assertIn("/nodes/{node}/users", body["detail"]["reason"])
        user = "listed-" + uuid.uuid4().hex
        request(self.front_url, "POST", "/add", note(user, "hello"))
        status, body, headers = request(self.front_url, "GET", "/nodes/%s/users?limit=1000" % self.owner(user))
        self.assertEqual((status, headers["x-flowmem-node"]), (200, self.owner(user)))
        self.assertIn(user, [u["user_id"] for u in body["data"]])
        self.assertEqual(request(self.front_url, "GET", "/nodes/%s/metrics" % list(self.nodes)[0])[0], 200)

    def test_a_frozen_user_gets_503_and_a_mapped_user_goes_to_its_node(self) -> None:
        user = "moving é/%s" % uuid.uuid4().hex
        other = next(n for n in self.nodes if n != self.owner(user))
        try:
            control.set_owner(self.cluster, user, "frozen")
            status, body, headers = request(self.front_url, "POST", "/add", note(user, "while frozen"))
            self.assertEqual((status, headers.get("retry-after")), (503, "1"))
            self.assertIn("moved", body["detail"]["reason"])
            control.set_owner(self.cluster, user, other)
            self.assertEqual(haproxy_config.read_map(self.cluster["map"])[user], other)
            self.assertEqual(request(self.front_url, "POST", "/add", note(user, "after the move"))[0], 200)
            self.assertEqual(users_by_node(self.cluster)[user], [other])
            _, _, headers = request(self.front_url, "GET", "/users/%s/sessions" % urllib.parse.quote(user, safe=""))
            self.assertEqual(headers["x-flowmem-node"], other)
        finally:
            control.set_owner(self.cluster, user, None)
        self.assertNotIn(user, haproxy_config.read_map(self.cluster["map"]))
        _, _, headers = request(self.front_url, "POST", "/search", {"query": "move", "user_id": user, "top_k": 1})
        slots = haproxy_config.read_slots(self.cluster["slots"])
        self.assertEqual(headers["x-flowmem-node"], haproxy_config.hashed_owner(user, slots))

    def test_the_front_answers_health_itself_with_every_node(self) -> None:
        status, body, _ = request(self.front_url, "GET", "/health", key=False)
        self.assertEqual((status, body), (200, {"status": "ok", "nodes": {n: "up" for n in self.nodes}}))


class NodeDownTest(ClusterCase):
    def test_a_killed_nodes_users_get_503_and_everyone_else_is_served(self) -> None:
        users = ["down-%d" % i for i in range(24)]
        for user in users:
            self.assertEqual(request(self.front_url, "POST", "/add", note(user, "kept word zebra"))[0], 200)
        victim = self.cluster["nodes"][1]
        os.kill(victim["pid"], signal.SIGKILL)
        while cluster_tool.alive(victim["pid"]):
            time.sleep(0.01)
        for user in users:  # at once: before any health check has noticed
            query = {"query": "zebra", "user_id": user, "top_k": 3}
            status, body, headers = request(self.front_url, "POST", "/search", query)
            if self.owner(user) == victim["name"]:
                self.assertEqual(status, 503, user)
                self.assertEqual(headers.get("retry-after"), "1")
                self.assertIn("reason", body["detail"])
            else:
                self.assertEqual(status, 200, user)
                self.assertIn("zebra", body["data"][0]["content"])
        lost = next(u for u in users if self.owner(u) == victim["name"])
        self.assertEqual(request(self.front_url, "POST", "/add", note(lost, "during the outage"))[0], 503)
        self.assertEqual(users_by_node(self.cluster)[lost], [victim["name"]])  # the refused Add went nowhere else
        deadline = time.monotonic() + 10
        while True:
            _, health, _ = request(self.front_url, "GET", "/health", key=False)
            if health["nodes"][victim["name"]] == "down" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        expected = {n["name"]: "down" if n is victim else "up" for n in self.cluster["nodes"]}
        self.assertEqual(health, {"status": "degraded", "nodes": expected})


class BodyLimitTest(ClusterCase):
    node_count = 2
    max_body_bytes = 65536

    def chunked_add(self, body: bytes) -> Tuple[int, Any]:
        parts = urllib.parse.urlsplit(self.front_url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            conn.putrequest("POST", "/add")
            for name, value in (("Content-Type", "application/json"), ("Authorization", "Bearer " + KEY),
                                ("Transfer-Encoding", "chunked")):
                conn.putheader(name, value)
            conn.endheaders()
            try:
                for i in range(0, len(body), 1000):
                    conn.send(b"%x\r\n%s\r\n" % (len(body[i:i + 1000]), body[i:i + 1000]))
                conn.send(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the front refused the body (413) and closed while it was still being sent: read its answer
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        finally:
            conn.close()

    def test_a_chunked_body_within_the_limit_is_routed_whole_and_one_over_it_is_refused(self) -> None:
        # user_id last: routing must see the whole body, never its first buffer's worth.
        for size, expected in ((60000, 200), (70000, 413), (300000, 413)):
            user = "chunked-%d" % size
            body = note(user, "x" * size)
            body["user_id"] = body.pop("user_id")
            status, answer = self.chunked_add(json.dumps(body).encode())
            self.assertEqual(status, expected, answer)
            self.assertEqual(users_by_node(self.cluster).get(user), [self.owner(user)] if status == 200 else None)


class ConfigTest(unittest.TestCase):
    """The generator and the ownership rule, without starting anything."""

    def test_owner_is_the_slot_maps_node_for_crc32_mod_1024_unless_the_shard_map_says_otherwise(self) -> None:
        slots = haproxy_config.initial_slots(haproxy_config.node_names(3))
        self.assertEqual(haproxy_config.slot_of("alice"), 71)  # crc32(b"alice") = 663665735, HAProxy's too
        self.assertEqual(haproxy_config.owner("alice", slots), "node3")  # slot 71 -> node 71 % 3 + 1
        self.assertEqual(haproxy_config.owner("alice", slots, {"alice": "node1"}), "node1")
        bob = haproxy_config.hashed_owner("bob", slots)
        self.assertEqual(haproxy_config.owner("bob", slots, {"alice": "node1"}), bob)
        slots[71] = "node4"
        self.assertEqual(haproxy_config.owner("alice", slots), "node4")

    def test_a_new_clusters_slots_are_shared_out_evenly_and_the_slot_map_reads_back(self) -> None:
        slots = haproxy_config.initial_slots(haproxy_config.node_names(3))
        self.assertEqual([slots.count(n) for n in ("node1", "node2", "node3")], [342, 341, 341])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "slots.map")
            slots[5] = "frozen"
            haproxy_config.write_slots(path, slots)
            self.assertEqual(haproxy_config.read_slots(path), slots)
            with open(path, "a", encoding="utf-8") as f:
                f.write("1024 node1\n")
            with self.assertRaises(ValueError):
                haproxy_config.read_slots(path)

    def test_the_shard_map_keeps_any_user_id(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "shards.map")
            overrides = {user: "node2" for user in TRICKY_IDS}
            overrides["x y"] = "frozen"
            haproxy_config.write_map(path, overrides)
            self.assertEqual(haproxy_config.read_map(path), overrides)
            with open(path, encoding="utf-8") as f:
                self.assertIn("\n782079 frozen\n", f.read())  # the key is the id's UTF-8 in hex: no space in it

    def test_the_generated_configuration_is_valid_for_haproxy(self) -> None:
        binary = program(self, "haproxy", "/usr/sbin/haproxy")
        with tempfile.TemporaryDirectory() as tmp:
            paths = haproxy_config.write_config(tmp, [("node1", "127.0.0.1:1"), ("node2", "127.0.0.1:2")],
                                                "127.0.0.1:3", os.path.join(tmp, "haproxy.sock"))
            done = subprocess.run([binary, "-c", "-f", paths["haproxy.cfg"]], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(paths["haproxy.cfg"], encoding="utf-8") as f:
                text = f.read()
        self.assertNotIn("redispatch", text.split("backend node1")[1])
        self.assertIn("tune.bufsize %d" % (8388608 + haproxy_config.HEADER_ROOM), text)


if __name__ == "__main__":
    unittest.main()
