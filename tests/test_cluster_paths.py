"""Every spelling of a path that flowmem serves reaches, through the HAProxy front, the node it would reach alone.

flowmem's path rules (flowmem/http/routes.py: leading slashes, a trailing slash after a
literal, absolute-form targets, the query form of an empty `{user_id}`) give one route many
spellings; the front (flowmem/cluster/flowmem_route.lua) reads each the same way, so a user's
Adds land on its owner only, whatever spelling the client uses, and a DELETE erases the only
copy. Nothing that names a user goes to "any node": a path no route fits is the front's own
404, and `/users` and `/metrics` in every spelling its 501.

SPELLINGS is one table of targets and what becomes of them; the front is checked against it
through real HAProxy, and the node's Router against the same table, so the two cannot drift
apart unnoticed. The front's route table is checked against flowmem's route table too.
"""
from __future__ import annotations

import random
import re
import unittest
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, List, Optional, Tuple

from flowmem.cluster import haproxy as haproxy_config
from flowmem.errors import BadRequest, InvalidField, MethodNotAllowed, NotFound
from flowmem.http.table import ROUTER, ROUTES
from tests.loopback_cluster import messages_in
from tests.test_cluster_routing import KEY, ClusterCase, note, request

USER = "path user é/%"
Q = urllib.parse.quote(USER, safe="")
QP = urllib.parse.quote_plus(USER)
PER_NODE = ("/users", "/metrics")
ANY = ("/openapi.json", "/docs", "/", "/ui")
BODY = ("/add", "/search")
FRONT = "{front}"  # an absolute-form target's authority: the front's host:port

# (method, target, what becomes of it):
#   ("user", id)            a node answers: the id's owner
#   ("owner", id, status)   the id's owner answers with that refusal (a wrong method, a bad query)
#   ("body",)               POST: the owner of the body's user_id answers
#   ("any",)                any node answers (names no user)
#   ("health",)             the front's own /health
#   ("front", status)       the front answers itself: 400 (a target the node refuses), 404 (no route),
#                           405, 422 (user_id twice), 501 (/users and /metrics have no one node)
SPELLINGS: List[Tuple[str, str, Tuple[Any, ...]]] = [
    ("GET", "/users/%s/sessions" % Q, ("user", USER)),
    ("GET", "//users/%s/sessions" % Q, ("user", USER)),
    ("GET", "///users/%s/sessions/" % Q, ("user", USER)),
    ("GET", "/users/%s/messages/" % Q, ("user", USER)),
    ("GET", "/users/%s/messages?limit=1" % Q, ("user", USER)),
    ("GET", "//users/%s/export/" % Q, ("user", USER)),
    ("GET", "/users//sessions?user_id=%s" % QP, ("user", USER)),
    ("GET", "/users//messages/?limit=1&user_id=%s" % Q, ("user", USER)),
    ("GET", "http://%s/users/%s/sessions" % (FRONT, Q), ("user", USER)),
    ("GET", "http://%s//users/%s/sessions/" % (FRONT, Q), ("user", USER)),
    ("DELETE", "/users/%s/sessions/?session_id=.." % Q, ("user", USER)),
    ("GET", "/users/%2E%2E/sessions", ("user", "..")),
    ("GET", "/users//sessions?user_id=..", ("user", "..")),
    ("GET", "/users//sessions/?user_id=.", ("user", ".")),
    ("GET", "/users/%s/sessions?user_id=x" % Q, ("owner", USER, 422)),
    ("DELETE", "/users/%s?session_id=s1" % Q, ("owner", USER, 422)),
    ("POST", "/users/%s/sessions" % Q, ("owner", USER, 405)),
    ("GET", "/users/?user_id=%s" % QP, ("owner", USER, 405)),
    ("GET", "/users//sessions?user_id=a&user_id=b", ("front", 422)),
    ("GET", "/users/%s/" % Q, ("front", 404)),
    ("DELETE", "/users/%s/" % Q, ("front", 404)),
    ("GET", "/users//sessions", ("front", 404)),
    ("DELETE", "/users/", ("front", 501)),
    ("GET", "/users/%s/bogus" % Q, ("front", 404)),
    ("GET", "/nope", ("front", 404)),
    ("POST", "/add/extra", ("front", 404)),
    ("POST", "/v1/add", ("front", 404)),
    ("GET", "/%61dd", ("front", 404)),
    ("GET", "/docs//", ("front", 404)),
    ("DELETE", "/users/%s/sessions/.." % Q, ("front", 400)),
    ("GET", "/users/./sessions", ("front", 400)),
    ("GET", "*", ("front", 400)),
    ("GET", "/users", ("front", 501)),
    ("GET", "/users/", ("front", 501)),
    ("GET", "//users", ("front", 501)),
    ("GET", "/metrics", ("front", 501)),
    ("GET", "/metrics/", ("front", 501)),
    ("GET", "//metrics", ("front", 501)),
    ("GET", "//metrics/?x=1", ("front", 501)),
    ("GET", "http://%s/metrics/" % FRONT, ("front", 501)),
    ("GET", "/add", ("front", 405)),
    ("DELETE", "//search/", ("front", 405)),
    ("GET", "/health/", ("health",)),
    ("GET", "//health", ("health",)),
    ("GET", "http://%s/health" % FRONT, ("health",)),
    ("GET", "/openapi.json/", ("any",)),
    ("GET", "//docs", ("any",)),
    ("GET", "/", ("any",)),
    ("GET", "//", ("any",)),
    ("GET", "/ui/", ("any",)),
    ("GET", "http://%s/ui" % FRONT, ("any",)),
    ("GET", "http://%s" % FRONT, ("any",)),
    ("POST", "//add", ("body",)),
    ("POST", "/add/", ("body",)),
    ("POST", "///search/", ("body",)),
    ("POST", "http://%s//add" % FRONT, ("body",)),
]

LUA_ROUTE = re.compile(r"\{ '(/[^']*)', '(\w+)'")


def front_routes() -> Dict[str, str]:
    """The front's route table, read from flowmem/cluster/flowmem_route.lua: {template: kind}."""
    with open(haproxy_config.LUA, encoding="utf-8") as f:
        text = f.read()
    start = text.find("local ROUTES = {")
    table = text[start:text.index("\n}\n", start)] if start >= 0 else ""
    return {template: kind for template, kind in LUA_ROUTE.findall(table)}


def node_outcome(method: str, target: str) -> Tuple[Any, ...]:
    """What the node's Router makes of a target, in SPELLINGS' terms (the front's routes, by the node)."""
    found = ROUTER.find(target.replace(FRONT, "127.0.0.1:8400"))
    if found.template in PER_NODE and not found.problem:
        return ("front", 501)
    try:
        match = found.match(method)
    except (BadRequest, NotFound) as e:
        return ("front", e.status)
    except (InvalidField, MethodNotAllowed) as e:
        user = next((r.template for r in found.routes if "{user_id}" in r.template), None)
        if user is None:
            return ("front", e.status)
        try:  # a user's route refused: who the user is, as the node's query form reads it
            name = dict(zip(found.fits[0][1], found.raw))["{user_id}"]
            who = urllib.parse.unquote(name) if name else _only(found.query, "user_id")
        except (KeyError, ValueError):
            return ("front", e.status)
        return ("owner", who, e.status)
    template = match.route.template
    if "user_id" in match.params:
        return ("user", match.params["user_id"])
    if template in BODY:
        return ("body",)
    if template == "/health":
        return ("health",)
    return ("any",) if template in ANY else ("unexpected", template)


def _only(query: str, name: str) -> str:
    """The one value of `name` in a query string (ValueError if it is not given exactly once)."""
    values = [v for n, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if n == name]
    if len(values) != 1:
        raise ValueError(name)
    return values[0]


class RouteTableTest(unittest.TestCase):
    """The front's decision is made from a copy of flowmem's route table: the copy must be whole."""

    def test_the_fronts_route_table_holds_every_flowmem_route_and_only_its_own_besides(self) -> None:
        front = front_routes()
        flowmem = {route.template for route in ROUTES}
        own = {"/nodes/{node}/users", "/nodes/{node}/metrics"}
        self.assertEqual(set(front), flowmem | own)

    def test_each_route_of_the_front_goes_where_its_user_is(self) -> None:
        front = front_routes()
        self.assertTrue(front, "no route table in %s" % haproxy_config.LUA)
        for template, kind in front.items():
            if "{user_id}" in template:
                expected = "user"
            elif template.startswith("/nodes/"):
                expected = "node"
            else:
                expected = {"/add": "body", "/search": "body", "/health": "health"}.get(
                    template, "per_node" if template in PER_NODE else "any")
            self.assertEqual(kind, expected, template)
        self.assertEqual({t for t, k in front.items() if k == "any"}, set(ANY))


class NodeRouterTest(unittest.TestCase):
    """The node's Router reads each spelling of the table as the front does (no HAProxy needed)."""

    def test_the_node_router_reads_every_spelling_as_the_front_does(self) -> None:
        for method, target, expected in SPELLINGS:
            self.assertEqual(node_outcome(method, target), expected, "%s %s" % (method, target))


def answered_by(headers: Dict[str, str]) -> Optional[str]:
    return headers.get("x-flowmem-node")


class FrontPathsTest(ClusterCase):
    """Real HAProxy in front of three nodes: each spelling reaches the node the path rules name."""

    def absolute(self, target: str) -> str:
        return target.replace(FRONT, urllib.parse.urlsplit(self.front_url).netloc)

    def unmatched(self) -> int:
        """How many requests the nodes together answered with no route (their own /metrics, asked directly)."""
        total = 0
        for node in self.cluster["nodes"]:
            req = urllib.request.Request(node["url"] + "/metrics", headers={"Authorization": "Bearer " + KEY})
            with urllib.request.urlopen(req, timeout=30) as resp:
                text = resp.read().decode()
            total += sum(int(n) for n in re.findall(r'^flowmem_requests_total\{route="unmatched",[^}]*\} (\d+)$',
                                                     text, re.M))
        return total

    def test_adds_through_every_spelling_of_add_land_on_the_owner_only(self) -> None:
        user = "spelled adds é/%s" % uuid.uuid4().hex[:8]
        spellings = ["//add", "/add/", "///add", "//add/", self.absolute("http://%s//add" % FRONT)]
        for i, path in enumerate(spellings):
            status, body, headers = request(self.front_url, "POST", path, note(user, "spelled %d zebra" % i))
            self.assertEqual((status, answered_by(headers)), (200, self.owner(user)), (path, body))
        self.assertEqual(self.holders(user), [self.owner(user)])
        self.assertEqual(len(messages_in(self.nodes[self.owner(user)]["db"], user)), len(spellings))

    def test_a_search_with_a_trailing_slash_is_answered_by_the_owner(self) -> None:
        user, word = "searcher-%s" % uuid.uuid4().hex[:8], "zq%sq" % uuid.uuid4().hex[:8]
        self.assertEqual(request(self.front_url, "POST", "/add", note(user, "a %s here" % word))[0], 200)
        for path in ["/search/"] * 4 + ["//search", "//search/"]:  # more than the nodes: round robin shows
            status, body, headers = request(self.front_url, "POST", path, {"query": word, "user_id": user, "top_k": 3})
            self.assertEqual((status, answered_by(headers)), (200, self.owner(user)), path)
            self.assertIn(word, body["data"][0]["content"], path)

    def test_sessions_listed_through_leading_slashes_come_from_the_owner(self) -> None:
        user = "lister %s" % uuid.uuid4().hex[:8]
        self.assertEqual(request(self.front_url, "POST", "/add", note(user, "listed"))[0], 200)
        q = urllib.parse.quote(user, safe="")
        for path in ["//users/%s/sessions" % q] * 4 + ["///users/%s/sessions/" % q,
                                                      "/users//sessions?user_id=%s" % urllib.parse.quote_plus(user)]:
            status, body, headers = request(self.front_url, "GET", path)
            self.assertEqual((status, answered_by(headers)), (200, self.owner(user)), (path, body))
            self.assertEqual([s["session_id"] for s in body["data"]], ["s1"], path)

    def test_the_query_form_user_id_is_decoded_as_parse_qsl_decodes_it(self) -> None:
        rnd = random.Random(22)
        pieces = ["a", "+", "%2B", "%20", "%", "%zz", "%2", "%25", "%C3%A9", "%F0%9F%99%82", "~", "=", "%26", ";"]
        for _ in range(80):
            value = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 5)))
            name = rnd.choice(["user_id", "user%5Fid", "user_%69d"])
            query = rnd.choice(["%s=%s", "%s=%s&limit=1", "&&%s=%s&", "limit=2&%s=%s"]) % (name, value)
            status, _, headers = request(self.front_url, "GET", "/users//sessions?" + query)
            expected = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))["user_id"]
            self.assertIn(status, (200, 422), query)  # 422: a blank id
            self.assertEqual(answered_by(headers), self.owner(expected), query)

    def test_a_delete_through_any_spelling_erases_the_only_copy(self) -> None:
        deletes = ["//users/{q}", "///users/{q}", "/users/?user_id={qp}", "//users/?user_id={q}",
                   "http://%s//users/{q}" % FRONT, "//users/{q}/sessions/s1", "/users/{q}/sessions/?session_id=s1",
                   "/users//sessions/s1?user_id={qp}"]
        for i, spelling in enumerate(deletes):
            user = ".." if i == 2 else "deleted %d é/%s" % (i, uuid.uuid4().hex[:6])
            for path in ("/add", "//add", "/add/"):
                self.assertEqual(request(self.front_url, "POST", path, note(user, "to be deleted"))[0], 200)
            target = self.absolute(spelling.replace("{q}", urllib.parse.quote(user, safe=""))
                                   .replace("{qp}", urllib.parse.quote_plus(user)))
            status, body, headers = request(self.front_url, "DELETE", target)
            self.assertEqual((status, answered_by(headers)), (200, self.owner(user)), (target, body))
            self.assertEqual(self.holders(user), [], target)

    def test_all_users_and_metrics_are_the_fronts_501_in_every_spelling(self) -> None:
        for path in ("/metrics/", "//metrics", "//metrics/", "/users/", "//users", "///users/",
                     self.absolute("http://%s/metrics/" % FRONT)):
            status, body, headers = request(self.front_url, "GET", path)
            self.assertEqual((status, answered_by(headers)), (501, None), path)
            self.assertIn("/nodes/{node}/metrics", body["detail"]["reason"])

    def test_an_unknown_path_is_the_fronts_404_and_reaches_no_node(self) -> None:
        before = self.unmatched()
        for method, path in (("GET", "/nope"), ("GET", "/users/alice/"), ("DELETE", "/users/alice/"),
                             ("GET", "/users//sessions"), ("POST", "/add/extra"), ("POST", "//v1/add"),
                             ("GET", "/users/alice/bogus"), ("GET", "/%61dd"), ("GET", "/nodes/node9/users")):
            status, body, headers = request(self.front_url, method, path, {"user_id": "alice"}
                                            if method == "POST" else None)
            self.assertEqual((status, answered_by(headers)), (404, None), (method, path))
            self.assertIn("reason", body["detail"])
        self.assertEqual(self.unmatched(), before)

    def test_health_in_every_spelling_is_the_fronts_own(self) -> None:
        for path in ("/health/", "//health", "///health/", self.absolute("http://%s/health" % FRONT)):
            status, body, headers = request(self.front_url, "GET", path, key=False)
            self.assertEqual((status, answered_by(headers)), (200, None), path)
            self.assertEqual(body["nodes"], {n: "up" for n in self.nodes}, path)

    def test_the_front_routes_every_spelling_as_the_table_says(self) -> None:
        writer = "table writer %s" % uuid.uuid4().hex[:6]
        for method, spelled, expected in SPELLINGS:
            target = self.absolute(spelled)
            body: Any = None
            if expected == ("body",):
                body = (note(writer, "table") if "add" in target else {"query": "table", "user_id": writer,
                                                                         "top_k": 1})
            status, answer, headers = request(self.front_url, method, target, body)
            where = "%s %s -> %d %s" % (method, target, status, answer)
            kind = expected[0]
            if kind == "user":
                self.assertEqual(answered_by(headers), self.owner(expected[1]), where)
                self.assertLess(status, 500, where)
            elif kind == "owner":
                self.assertEqual((status, answered_by(headers)), (expected[2], self.owner(expected[1])), where)
            elif kind == "body":
                self.assertEqual((status, answered_by(headers)), (200, self.owner(writer)), where)
            elif kind == "any":
                self.assertEqual(status, 200, where)
                self.assertIn(answered_by(headers), self.nodes, where)
            elif kind == "health":
                self.assertEqual((status, answered_by(headers), sorted(answer["nodes"])),
                                 (200, None, sorted(self.nodes)), where)
            else:
                self.assertEqual((status, answered_by(headers)), (expected[1], None), where)
                self.assertTrue(answer["detail"]["reason"], where)


if __name__ == "__main__":
    unittest.main()
