"""How a request target becomes a route (flowmem/http/routes.py, rules 1-5), through App.handle and a socket.

Each spelling a client, a browser or a platform sends must reach the route it names,
and none may turn into another route: issue 22 saw `DELETE /users/alice/sessions/..`
(sent by browsers and curl as `DELETE /users/alice/`) delete the whole user, and
`DELETE /users/bob?session_id=s1` delete all of bob.
"""
import json
import socket
import threading

from flowmem.config import load
from flowmem.http.api import App, writes
from flowmem.http.server import Server
from flowmem.http.table import ROUTER, ROUTES
from tests.helpers import MemoryTestCase, add_body
from tests.test_http_manage import ManageTestCase

SESSIONS = {"alice": [".", "..", "...", "s1", "s2"], "bob": ["s1", "s2"], "..": ["s1"], ".": ["s1"]}


def concrete(template, values):
    """A template's path with `values` in place of its `{name}` segments."""
    return "/".join(values.get(s[1:-1], s) if s.startswith("{") else s for s in template.split("/")) or "/"


class PathTestCase(ManageTestCase):
    def setUp(self):
        super().setUp()
        for user, sessions in SESSIONS.items():
            for session in sessions:
                self.stored(user, session, ["Note of %s in %s" % (user, session)])
        self.message_id = self.memory.list_messages("alice", session_id="s1")["data"][0]["id"]
        self.values = {"user_id": "alice", "session_id": "s1", "message_id": self.message_id}

    def sessions(self):
        """Every user's sessions, as stored now."""
        return {u["user_id"]: sorted(s["session_id"] for s in self.memory.list_sessions(u["user_id"])["data"])
                for u in self.memory.list_users()["data"]}

    def sessions_without(self, user, session):
        out = {u: sorted(s) for u, s in SESSIONS.items()}
        out[user] = [s for s in out[user] if s != session]
        return {u: s for u, s in out.items() if s}

    def delete(self, path, body=b""):
        return self.call("DELETE", path, headers=self.auth, raw=body)

    def assert_nothing_deleted(self):
        self.assertEqual(self.sessions(), {u: sorted(s) for u, s in SESSIONS.items()})


class SlashesTest(PathTestCase):
    """Rules 2 and 3: leading slashes count as one; a trailing slash only after a literal."""

    def test_every_route_is_reached_with_extra_leading_slashes_and_a_trailing_one_after_a_literal(self):
        for route in ROUTES:
            path = concrete(route.template, self.values)
            spellings = ["/" + path, "//" + path, "///" + path.lstrip("/")]
            if not route.template.rsplit("/", 1)[-1].startswith("{") and path != "/":
                spellings += [path + "/", "//" + path + "/"]
            for spelling in spellings:
                with self.subTest(route=route.template, spelling=spelling):
                    self.assertEqual(self.app.router.find(spelling).template, route.template)
                    self.assertEqual(ROUTER.canonical_path(spelling), path)

    def test_reads_and_writes_answer_the_same_under_every_spelling(self):
        for path in ("/users/alice/sessions", "/users/alice/messages", "/users/alice/messages/" + self.message_id,
                     "/users", "/health", "/users/alice/export"):
            expected = self.get(path)
            for spelling in ("/" + path, "///" + path, path + "/" if "messages/" not in path else "/" + path):
                with self.subTest(spelling=spelling):
                    self.assertEqual(self.get(spelling)[:2], expected[:2])
        for i, spelling in enumerate(("/add", "//add", "///add", "//add/", "/add/")):
            body = add_body("carol", "c%d" % i, ["Carol: note %d" % i])
            self.assertEqual(self.call("POST", spelling, body, self.auth)[0], 200, spelling)
        self.assertEqual(len(self.memory.list_sessions("carol")["data"]), 5)
        status, body, _ = self.call("POST", "//search/", {"query": "note", "user_id": "carol", "top_k": 10},
                                    self.auth)
        self.assertEqual((status, len(body["data"])), (200, 5))
        self.assertEqual(self.delete("//users/bob/sessions/s1")[1]["deleted"], True)
        self.assertEqual(self.sessions(), self.sessions_without("bob", "s1") | {"carol": ["c%d" % i for i in range(5)]})

    def test_a_trailing_slash_after_a_path_value_is_404_and_deletes_nothing(self):
        for path in ("/users/alice/", "//users/alice/", "/users/alice/sessions/s1/",
                     "/users/bob/sessions/s2/"):
            with self.subTest(path=path):
                status, body, _ = self.delete(path)
                self.assert_error(status, 404, body)
        self.assert_nothing_deleted()
        self.assertEqual(self.get("/users/alice/messages/%s/" % self.message_id)[0], 404)
        self.assertIsNone(ROUTER.canonical_path("/users/alice/"))

    def test_only_one_trailing_slash_is_ignored(self):
        for path in ("/add//", "/users//", "/health//"):
            self.assertEqual(self.call("GET", path, headers=self.auth)[0], 404, path)

    def test_a_delete_that_lost_its_dot_segment_is_never_another_delete(self):
        # What a browser or curl sends for DELETE /users/alice/sessions/.. and /users/alice/sessions/.
        for path in ("/users/alice/", "/users/alice/sessions/"):
            self.assertIn(self.delete(path)[0], (404, 405), path)
        self.assertEqual(self.delete("/users/alice/sessions/")[2]["Allow"], "GET, HEAD")
        self.assert_nothing_deleted()


class QueryFormTest(PathTestCase):
    """Rule 4: an empty `{name}` segment takes its value from the query parameter `name`."""

    def test_deleting_session_dot_dot_in_the_query_form_deletes_exactly_that_session(self):
        status, body, _ = self.delete("/users/alice/sessions/?session_id=..")
        self.assertEqual((status, body), (200, {"deleted": True, "user_id": "alice", "session_id": "..",
                                                "messages": 1}))
        self.assertEqual(self.sessions(), self.sessions_without("alice", ".."))
        self.assertEqual(self.delete("/users/alice/sessions/?session_id=.")[1]["session_id"], ".")
        self.assertEqual(self.sessions()["alice"], ["...", "s1", "s2"])

    def test_a_user_dot_dot_is_listed_and_deleted_in_the_query_form(self):
        status, body, _ = self.get("/users//sessions?user_id=..")
        self.assertEqual((status, [s["session_id"] for s in body["data"]]), (200, ["s1"]))
        status, body, _ = self.get("/users//messages?user_id=.&order=desc")
        self.assertEqual([m["content"] for m in body["data"]], ["Note of . in s1"])
        self.assertEqual(self.delete("/users/?user_id=..")[1], {"deleted": True, "user_id": ".."})
        expected = {u: sorted(s) for u, s in SESSIONS.items() if u != ".."}
        self.assertEqual(self.sessions(), expected)

    def test_every_path_value_of_every_route_may_use_the_query_form(self):
        for route in ROUTES:
            for name in route.path_parameters():
                path = concrete(route.template, dict(self.values, **{name: ""}))
                query = "?%s=%s" % (name, self.values[name])
                with self.subTest(route=route.template, name=name):
                    self.assertEqual(ROUTER.canonical_path(path + query), concrete(route.template, self.values))
        message = self.get("/users/alice/messages/?message_id=" + self.message_id)[1]
        self.assertEqual(message["content"], "Note of alice in s1")
        self.assertEqual(self.delete("/users//sessions/s2?user_id=bob")[1]["deleted"], True)
        self.assertEqual(self.sessions(), self.sessions_without("bob", "s2"))

    def test_percent_encoded_dots_still_name_a_dot_id(self):
        self.assertEqual(self.delete("/users/alice/sessions/%2E%2E")[1]["session_id"], "..")
        self.assertEqual(self.get("/users/%2e/sessions")[1]["data"][0]["session_id"], "s1")
        self.assertEqual(self.sessions(), self.sessions_without("alice", ".."))

    def test_an_empty_segment_without_its_parameter_is_no_value(self):
        for method, path, status in (("GET", "/users//sessions", 404), ("GET", "/users//messages?limit=5", 404),
                                     ("DELETE", "/users//sessions/s1", 404), ("DELETE", "/users/", 405),
                                     ("DELETE", "/users/?limit=5", 405), ("DELETE", "/users/alice/sessions/", 405)):
            with self.subTest(method=method, path=path):
                self.assertEqual(self.call(method, path, headers=self.auth)[0], status)
        self.assert_nothing_deleted()

    def test_a_path_value_given_in_the_query_too_is_422_and_deletes_nothing(self):
        for path, name in (("/users/alice/sessions/s1?session_id=s2", "session_id"),
                           ("/users/bob?user_id=bob", "user_id"), ("/users/alice/sessions/s1?user_id=bob", "user_id")):
            with self.subTest(path=path):
                status, body, _ = self.delete(path)
                self.assert_error(status, 422, body, [name, "given twice"])
        self.assert_nothing_deleted()
        status, body, _ = self.get("/users/alice/messages?user_id=alice")
        self.assert_error(status, 422, body, ["user_id", "given twice"])

    def test_a_blank_id_in_the_query_form_is_422_naming_it(self):
        status, body, _ = self.delete("/users/?user_id=")
        self.assert_error(status, 422, body, ["user_id"])
        self.assert_nothing_deleted()

    def test_the_query_form_of_a_delete_takes_the_writers_lane(self):
        self.assertTrue(writes("DELETE", "/users/alice/sessions/?session_id=.."))
        self.assertTrue(writes("DELETE", "/users/?user_id=.."))
        self.assertFalse(writes("DELETE", "/users/alice/"))


class RefusedTest(PathTestCase):
    """Rule 5: every route refuses what it does not take, and a target an intermediary could misread."""

    def test_deleting_a_user_with_a_session_parameter_is_422_and_deletes_nothing(self):
        status, body, _ = self.delete("/users/bob?session_id=s1")
        self.assert_error(status, 422, body, ["session_id", "DELETE /users/{user_id}", "takes none"])
        self.assert_nothing_deleted()

    def test_every_route_refuses_a_query_parameter_it_does_not_take(self):
        before = self.memory.list_messages("carol")["data"]
        for route in ROUTES:
            path = concrete(route.template, self.values)
            payload = add_body("carol", "c1", ["Carol: hi"]) if route.action == "add" else \
                {"records": [add_body("carol", "c1", ["Carol: hi"])]} if route.action == "import_records" else \
                {"query": "note", "user_id": "alice", "top_k": 3} if route.action == "search" else None
            for method in (route.method, "HEAD") if route.method == "GET" else (route.method,):
                with self.subTest(method=method, route=route.template):
                    status, body, _ = self.call(method, path + "?bogus=1", payload, self.auth)
                    self.assertEqual(status, 422)
                    if method != "HEAD":
                        self.assert_error(status, 422, body, ["bogus", route.template])
        self.assert_nothing_deleted()
        self.assertEqual(self.memory.list_messages("carol")["data"], before)

    def test_a_body_on_a_route_that_takes_none_is_400_naming_it_and_runs_nothing(self):
        for route in ROUTES:
            if route.method == "POST":
                continue
            path = concrete(route.template, self.values)
            for method in (route.method, "HEAD") if route.method == "GET" else (route.method,):
                with self.subTest(method=method, route=route.template):
                    status, body, _ = self.call(method, path, headers=self.auth, raw=b'{"session_id": "s1"}')
                    self.assertEqual(status, 400)
                    if method != "HEAD":
                        self.assert_error(status, 400, body, [route.template, "no request body"])
        self.assert_nothing_deleted()
        self.assertEqual(self.delete("/users/bob", b"x")[0], 400)
        self.assertEqual(self.delete("/users/bob/sessions/s1", b"{}")[0], 400)
        self.assert_nothing_deleted()

    def test_head_is_routed_as_get(self):
        self.assertEqual(self.call("HEAD", "/users/alice/", headers=self.auth)[0], 404)
        self.assertEqual(self.call("HEAD", "//users/alice/sessions/", headers=self.auth)[0], 200)
        self.assertEqual(self.call("HEAD", "/users//sessions?user_id=..", headers=self.auth)[0], 200)
        self.assertEqual(self.call("HEAD", "/users/alice/sessions/..", headers=self.auth)[0], 400)

    def test_a_target_that_could_reach_a_server_as_another_path_is_400_and_deletes_nothing(self):
        for target, words in (("/users/alice/sessions/..", "dot segment"), ("/users/alice/sessions/.", "dot segment"),
                              ("/users/alice/../bob", "dot segment"), ("/users/./alice", "dot segment"),
                              ("/users/alice#/sessions/s1", "'#'"), ("/users/bob#", "'#'"),
                              ("users/bob", "path starting with /"), ("*", "path starting with /"),
                              ("ftp://127.0.0.1/users/bob", "http://"), ("http://evil@127.0.0.1/users/bob", "userinfo"),
                              ("http:///users/bob", "needs a host")):
            with self.subTest(target=target):
                status, body, _ = self.delete(target)
                self.assert_error(status, 400, body, [words])
                self.assertIsNone(ROUTER.canonical_path(target))
        self.assert_nothing_deleted()

    def test_only_a_slash_separates_segments(self):
        # `;`, a backslash and an encoded slash or dot are characters of the id, never separators.
        for path, user in (("/users/alice;/sessions/s1", "alice;"),
                           ("/users/alice%2Fsessions%2Fs1", "alice/sessions/s1"),
                           ("/users/alice\\sessions\\s1", "alice\\sessions\\s1"),
                           ("/users/alice;session_id=s1", None), ("/users/%2E%2E%2Fbob", "../bob")):
            with self.subTest(path=path):
                status, body, _ = self.delete(path)
                self.assertEqual((status, body["deleted"]), (200, False))
                if user is not None:
                    self.assertEqual(body["user_id"], user)
        for path in ("/users\\alice/sessions", "/users;/alice/sessions", "/users/alice/sessions;/s1", "/add;",
                     "/users/alice/%2E%2E/sessions", "/%75sers/alice/sessions"):
            with self.subTest(path=path):
                self.assertEqual(self.call("DELETE", path, headers=self.auth)[0], 404)
        self.assert_nothing_deleted()


class AbsoluteFormTest(PathTestCase):
    """Rule 1: `GET http://host/users HTTP/1.1` is served as /users, its authority standing in for Host."""

    def test_an_absolute_form_target_is_served_as_its_path_and_query(self):
        status, body, _ = self.call("GET", "http://127.0.0.1:8000/users?limit=2", headers=self.auth)
        self.assertEqual((status, len(body["data"])), (200, 2))
        self.assertEqual(self.call("GET", "HTTP://localhost:8000", headers=self.auth)[0], 200)  # the inspector
        self.assertEqual(self.call("GET", "http://[::1]:8000/health/")[0], 200)
        status, body, _ = self.call("DELETE", "http://localhost/users/bob/sessions/s1", headers=self.auth)
        self.assertEqual((status, body["deleted"]), (200, True))
        self.assertEqual(self.delete("https://127.0.0.1//users/alice/sessions/?session_id=..")[1]["session_id"], "..")
        self.assertEqual(self.sessions()["bob"], ["s2"])
        self.assertNotIn("..", self.sessions()["alice"])
        self.assertEqual(ROUTER.canonical_path("http://h:1//users/a%2Fb/export?limit=1"), "/users/a%2Fb/export")
        self.assertTrue(writes("DELETE", "http://localhost/users/bob"))

    def test_the_authority_stands_in_for_the_host_header(self):
        headers = dict(self.auth, Host="127.0.0.1:8000")
        status, body, _ = self.call("GET", "http://rebind.evil.example:8000/users", headers=headers)
        self.assert_error(status, 421, body, ["rebind.evil.example"])
        status, _, _ = self.call("GET", "http://127.0.0.1:8000/users", headers=dict(self.auth, Host="evil.example"))
        self.assertEqual(status, 200)
        # A page of this server, as its absolute-form target names it, is its own origin; another is not.
        same = dict(self.auth, Origin="http://127.0.0.1:8000", Host="evil.example")
        self.assertEqual(self.call("DELETE", "http://127.0.0.1:8000/users/bob/sessions/s2", headers=same)[0], 200)
        other = dict(self.auth, Origin="http://127.0.0.1:8000", Host="127.0.0.1:8000")
        self.assertEqual(self.call("DELETE", "http://127.0.0.1:9999/users/bob/sessions/s1", headers=other)[0], 403)
        self.assertEqual(self.sessions()["bob"], ["s1"])


class OverTheWireTest(MemoryTestCase):
    """The same rules through http.server's parser and the connection loop of a real Server."""

    def setUp(self):
        super().setUp()
        for session in ("..", "s1"):
            self.memory.add(add_body("alice", session, ["Alice: note in " + session]))
        config = load({"db": self.db_path(), "port": 0}, environ={})
        self.server = Server(App(self.memory, config), config)
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 20)
        self.addCleanup(self.server.stop)

    def send(self, request_line, body=b""):
        with socket.create_connection(("127.0.0.1", self.server.address[1]), timeout=20) as sock:
            sock.sendall(b"%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (request_line.encode(), len(body), body))
            reply = b""
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                reply += data
        head, _, payload = reply.partition(b"\r\n\r\n")
        return int(head.split(b" ")[1]), json.loads(payload) if payload else None

    def sessions(self):
        return [s["session_id"] for s in self.memory.list_sessions("alice")["data"]]

    def test_absolute_form_slashes_and_the_query_form_over_a_socket(self):
        status, body = self.send("GET http://127.0.0.1:%d/users?limit=5" % self.server.address[1])
        self.assertEqual((status, [u["user_id"] for u in body["data"]]), (200, ["alice"]))
        self.assertEqual(self.send("GET //health/")[0], 200)
        self.assertEqual(self.send("DELETE /users/alice/")[0], 404)
        self.assertEqual(self.send("DELETE /users/alice?session_id=s1")[0], 422)
        self.assertEqual(self.send("DELETE /users/alice", b'{"session_id": "s1"}')[0], 400)
        self.assertEqual(self.send("DELETE /users/alice/sessions/..")[0], 400)
        self.assertEqual(self.sessions(), ["..", "s1"])
        status, body = self.send("DELETE http://localhost//users/alice/sessions/?session_id=..")
        self.assertEqual((status, body["session_id"], body["deleted"]), (200, "..", True))
        self.assertEqual(self.sessions(), ["s1"])


class DocumentedTest(PathTestCase):
    def test_every_operation_documents_the_422_and_400_every_route_can_give_and_says_the_path_rules(self):
        spec = self.call("GET", "/openapi.json")[1]
        for path, operations in spec["paths"].items():
            for method, operation in operations.items():
                with self.subTest(method=method, path=path):
                    self.assertIn("422", operation["responses"])
                    self.assertIn("400", operation["responses"])
        for words in ("//add is /add", "/users/u/ is 404", "?session_id=..", "422", "GET http://host/users"):
            self.assertIn(words, spec["info"]["description"])


class InspectorPolicyTest(PathTestCase):
    def test_the_inspector_policy_allows_its_own_script_and_style_by_hash_and_nothing_inline_else(self):
        import base64
        import hashlib
        import re

        response = self.app.handle("GET", "/", {}, b"")
        policy = dict(p.strip().split(" ", 1) for p in dict(response.headers)["Content-Security-Policy"].split(";"))
        page = re.sub(rb"<!--.*?-->", b"", response.body, flags=re.S)
        for tag in ("script", "style"):
            with self.subTest(tag=tag):
                bodies = re.findall(rb"<%s>(.*?)</%s>" % (tag.encode(), tag.encode()), page, re.S)
                self.assertEqual(len(bodies), 1)
                digest = base64.b64encode(hashlib.sha256(bodies[0]).digest()).decode()
                self.assertEqual(policy["%s-src" % tag], "'sha256-%s'" % digest)
        self.assertNotIn(b"style=", page)  # an inline style attribute would need 'unsafe-inline'
