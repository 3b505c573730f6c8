"""The management routes through App.handle, no socket: paths, query strings, keys, browsers, writes."""
import json
import urllib.parse

from flowmem.config import load
from flowmem.http.api import App, writes
from flowmem.http.table import ROUTER, ROUTES
from tests.helpers import add_body
from tests.test_http_app import AppTestCase

ODD_USER = "team/a 100% é\u4e2d"  # a slash, a percent sign, a space and non-ASCII: all valid ids
ODD_SESSION = "2023/05/08 #1?"


def q(text):
    return urllib.parse.quote(text, safe="")


class ManageTestCase(AppTestCase):
    key = "k"
    auth = {"X-Api-Key": "k"}

    def call(self, method, path, payload=None, headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(payload).encode() if payload is not None else b"")
        response = self.app.handle(method, path, headers or {}, data)
        headers = dict(response.headers)
        is_json = headers.get("Content-Type") == "application/json" and response.body
        return response.status, json.loads(response.body) if is_json else response.body, headers

    def get(self, path, headers=None):
        return self.call("GET", path, headers=dict(self.auth, **(headers or {})))

    def stored(self, user, session, contents, request_id=None):
        self.assertEqual(self.memory.add(add_body(user, session, contents, request_id))["success"], True)


class PathTest(ManageTestCase):
    def test_an_id_holding_a_slash_percent_space_or_unicode_is_named_by_percent_encoding_it(self):
        self.stored(ODD_USER, ODD_SESSION, ["Alice: one", "Bob: two"])
        status, body, _ = self.get("/users/%s/messages" % q(ODD_USER))
        self.assertEqual(status, 200, body)
        self.assertEqual([m["content"] for m in body["data"]], ["Alice: one", "Bob: two"])
        self.assertEqual({m["user_id"] for m in body["data"]}, {ODD_USER})
        message_id = body["data"][1]["id"]
        status, message, _ = self.get("/users/%s/messages/%s" % (q(ODD_USER), q(message_id)))
        self.assertEqual((status, message["content"], message["session_id"]), (200, "Bob: two", ODD_SESSION))
        status, body, _ = self.get("/users/%s/sessions" % q(ODD_USER))
        self.assertEqual([s["session_id"] for s in body["data"]], [ODD_SESSION])
        status, body, _ = self.call("DELETE", "/users/%s/sessions/%s" % (q(ODD_USER), q(ODD_SESSION)),
                                    headers=self.auth)
        self.assertEqual((status, body["deleted"], body["session_id"], body["messages"]), (200, True, ODD_SESSION, 2))

    def test_an_unencoded_slash_is_another_path_not_part_of_the_id(self):
        self.stored("a/b", "s", ["Alice: hidden"])
        self.assertEqual(self.get("/users/a/b/messages")[0], 404)
        self.assertEqual(self.get("/users/a%2Fb/messages")[0], 200)
        self.assertEqual(self.get("/users/a%2fb/messages")[1]["data"][0]["content"], "Alice: hidden")

    def test_a_path_value_that_is_not_utf8_is_422_naming_it(self):
        status, body, _ = self.get("/users/%FF%FE/sessions")
        self.assert_error(status, 422, body, ["user_id"])

    def test_unknown_paths_are_404_and_other_methods_405_with_allow(self):
        for path in ("/users/u/nothing", "/users/u/sessions/s/x", "/users//messages", "/v1/users"):
            with self.subTest(path=path):
                status, body, _ = self.get(path)
                self.assert_error(status, 404, body)
        for method, path, allow in (("POST", "/users", "GET, HEAD"), ("GET", "/users/u", "DELETE"),
                                    ("PUT", "/users/u/sessions/s", "DELETE"), ("GET", "/users/u/import", "POST"),
                                    ("DELETE", "/users/u/messages", "GET, HEAD"), ("POST", "/metrics", "GET, HEAD")):
            with self.subTest(method=method, path=path):
                status, body, headers = self.call(method, path, headers=self.auth)
                self.assert_error(status, 405, body, [method])
                self.assertEqual(headers["Allow"], allow)

    def test_head_answers_as_get_does(self):
        self.stored("u1", "s1", ["Alice: hi"])
        for path in ("/users", "/users/u1/messages", "/health", "/docs", "/"):
            with self.subTest(path=path):
                get = self.app.handle("GET", path, self.auth, b"")
                head = self.app.handle("HEAD", path, self.auth, b"")
                self.assertEqual((head.status, head.headers), (get.status, get.headers))

    def test_the_contract_routes_are_unchanged(self):
        self.assertEqual(self.call("POST", "/add", add_body("u1", "s1", ["A: b"]), self.auth)[0], 200)
        self.assertEqual(self.call("GET", "/health/")[0], 200)
        self.assertEqual(self.call("GET", "/add", headers=self.auth)[2]["Allow"], "POST")


class QueryTest(ManageTestCase):
    def setUp(self):
        super().setUp()
        for i in range(5):
            self.stored("u1", "s%d" % i, ["Alice: message %d" % i], request_id="r%d" % i)

    def test_pages_follow_next_cursor_to_the_end(self):
        seen, cursor = [], ""
        while cursor is not None:
            status, body, _ = self.get("/users/u1/messages?limit=2&cursor=%s" % q(cursor))
            self.assertEqual(status, 200, body)
            self.assertLessEqual(len(body["data"]), 2)
            seen += [m["content"] for m in body["data"]]
            cursor = body["next_cursor"]
        self.assertEqual(seen, ["Alice: message %d" % i for i in range(5)])

    def test_query_values_reach_memory_as_given(self):
        body = self.get("/users/u1/messages?order=desc&limit=1")[1]
        self.assertEqual([m["content"] for m in body["data"]], ["Alice: message 4"])
        body = self.get("/users/u1/messages?session_id=s2")[1]
        self.assertEqual([m["content"] for m in body["data"]], ["Alice: message 2"])
        self.assertEqual(len(self.get("/users/u1/messages?since=2023-05-08&until=2023-05-09")[1]["data"]), 5)
        self.assertEqual(self.get("/users/u1/messages?until=1683554160000")[1]["data"], [])
        self.assertEqual(len(self.get("/users?limit=1000")[1]["data"]), 1)

    def test_a_bad_parameter_is_422_naming_it(self):
        for query, field in (("limt=5", "limt"), ("limit=5&limit=6", "limit"), ("limit=abc", "limit"),
                             ("limit=0", "limit"), ("limit=1001", "limit"), ("order=up", "order"),
                             ("cursor=garbage", "cursor"), ("since=yesterday", "since"), ("%FF=1", "query")):
            with self.subTest(query=query):
                status, body, _ = self.get("/users/u1/messages?" + query)
                self.assert_error(status, 422, body, [field])

    def test_an_unknown_user_has_no_sessions_or_messages_and_no_message_is_404(self):
        self.assertEqual(self.get("/users/nobody/messages")[1], {"data": [], "next_cursor": None})
        self.assertEqual(self.get("/users/nobody/sessions")[1], {"data": [], "next_cursor": None})
        status, body, _ = self.get("/users/nobody/messages/m-0123456789abcdef-1")
        self.assert_error(status, 404, body)
        message_id = self.get("/users/u1/messages")[1]["data"][0]["id"]
        self.assertEqual(self.get("/users/other/messages/%s" % message_id)[0], 404)


class DeleteTest(ManageTestCase):
    def test_delete_needs_no_body_and_deleting_again_says_deleted_false(self):
        self.stored("u1", "s1", ["Alice: gone soon"])
        self.stored("u1", "s2", ["Alice: stays"])
        first = self.call("DELETE", "/users/u1/sessions/s1", headers=self.auth)
        again = self.call("DELETE", "/users/u1/sessions/s1", headers=self.auth)
        self.assertEqual((first[0], first[1]["deleted"], again[0], again[1]["deleted"]), (200, True, 200, False))
        self.assertEqual([m["content"] for m in self.get("/users/u1/messages")[1]["data"]], ["Alice: stays"])
        status, body, _ = self.call("DELETE", "/users/u1", headers=self.auth)
        self.assertEqual((status, body), (200, {"deleted": True, "user_id": "u1"}))
        self.assertEqual(self.call("DELETE", "/users/u1", headers=self.auth)[1]["deleted"], False)
        self.assertEqual(self.get("/users")[1]["data"], [])

    def test_deletes_and_imports_are_writes_and_reads_are_not(self):
        self.assertEqual([r.method for r in ROUTES if r.writes], ["POST", "DELETE", "DELETE", "DELETE", "POST"])
        self.assertTrue(writes("DELETE", "/users/a%2Fb"))
        self.assertTrue(writes("DELETE", "/users/u/messages/m-1-1"))
        self.assertTrue(writes("DELETE", "/users/u/sessions/s"))
        self.assertTrue(writes("POST", "/users/u/import"))
        self.assertTrue(writes("POST", "/add"))
        for method, path in (("GET", "/users/u/messages"), ("POST", "/search"), ("GET", "/users"),
                             ("GET", "/users/u/export"), ("POST", "/users/u"), ("GET", "/nope")):
            self.assertFalse(writes(method, path), (method, path))


class ExportImportTest(ManageTestCase):
    def test_an_export_imported_elsewhere_gives_the_same_search_results(self):
        for i in range(7):
            self.stored("u1", "s%d" % (i // 3), ["Alice: the kayak trip %d" % i, "Bob: paddles %d" % i],
                        request_id="r%d" % i)
        records, cursor = [], None
        while True:
            status, body, _ = self.get("/users/u1/export?limit=3" + ("&cursor=" + q(cursor) if cursor else ""))
            self.assertEqual(status, 200, body)
            records += body["data"]
            cursor = body["next_cursor"]
            if cursor is None:
                break
        self.assertEqual([r["request_id"] for r in records], ["r%d" % i for i in range(7)])
        other = self.open_memory("other.db")
        app = App(other, load({"db": self.db_path("other.db"), "api_key": "k"}, environ={}))
        payload = json.dumps({"records": [{k: v for k, v in r.items() if k != "user_id" or i % 2}
                                          for i, r in enumerate(records)]}).encode()
        for expected in ({"requests": 7, "stored": 7, "already_stored": 0, "messages": 14},
                         {"requests": 7, "stored": 0, "already_stored": 7, "messages": 0}):
            response = app.handle("POST", "/users/u1/import", self.auth, payload)
            self.assertEqual((response.status, json.loads(response.body)), (200, expected))
        search = {"query": "kayak trip paddles", "user_id": "u1", "top_k": 20}
        self.assertEqual(other.search(search), self.memory.search(search))

    def test_a_record_for_another_user_is_422_naming_it_and_nothing_is_stored(self):
        records = [add_body("u1", "s1", ["Alice: a"], "r1"), add_body("u2", "s1", ["Alice: b"], "r2")]
        status, body, _ = self.call("POST", "/users/u1/import", {"records": records}, self.auth)
        self.assert_error(status, 422, body, ["records[1].user_id"])
        for payload, field in (({"records": {}}, "records"), ({}, "records"), ({"records": [3]}, "records[0]"),
                               ({"records": [{"user_id": "u1"}]}, "records[0].request_id")):
            with self.subTest(payload=payload):
                status, body, _ = self.call("POST", "/users/u1/import", payload, self.auth)
                self.assert_error(status, 422, body, [field])
        self.assertEqual(self.get("/users")[1]["data"], [])

    def test_import_takes_json_only(self):
        status, body, _ = self.call("POST", "/users/u1/import", {"records": []},
                                    dict(self.auth, **{"Content-Type": "text/plain"}))
        self.assert_error(status, 415, body)


class KeyTest(ManageTestCase):
    def test_management_routes_need_the_key_and_the_pages_do_not(self):
        for route in ROUTES:
            path = route.template.replace("{user_id}", "u1").replace("{session_id}", "s1")
            path = path.replace("{message_id}", "m-0123456789abcdef-1")
            with self.subTest(method=route.method, path=path):
                status = self.call(route.method, path, {"records": []} if route.method == "POST" else None)[0]
                if route.needs_key:
                    self.assertEqual(status, 401)
                else:
                    self.assertEqual(status, 200)
        self.assertEqual([r.template for r in ROUTES if not r.needs_key],
                         ["/health", "/openapi.json", "/docs", "/", "/ui"])


class PublicMetricsTest(ManageTestCase):
    server_settings = {"metrics_public": True}

    def test_metrics_public_opens_metrics_and_nothing_else(self):
        self.assertEqual(self.call("GET", "/metrics")[0], 200)
        self.assertEqual(self.call("GET", "/users")[0], 401)


class BrowserManageTest(ManageTestCase):
    server_settings = {"allowed_origins": "https://app.example"}

    def test_the_browser_checks_apply_to_every_route(self):
        self.stored("u1", "s1", ["Alice: keep me"])
        for route in ROUTER.routes:
            path = route.template.replace("{user_id}", "u1").replace("{session_id}", "s1")
            path = path.replace("{message_id}", "m-0123456789abcdef-1")
            for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                            {"Host": "evil.example"}):
                with self.subTest(method=route.method, path=path, headers=headers):
                    status = self.call(route.method, path, headers=dict(self.auth, **headers))[0]
                    self.assertEqual(status, 421 if "Host" in headers else 403)
        self.assertEqual(len(self.get("/users/u1/messages")[1]["data"]), 1)

    def test_a_preflight_from_an_allowed_origin_allows_delete(self):
        status, _, headers = self.call("OPTIONS", "/users/u1/sessions/s1", headers={"Origin": "https://app.example"})
        self.assertEqual(status, 204)
        self.assertEqual(headers["Access-Control-Allow-Methods"], "DELETE")
        self.assertEqual(headers["Access-Control-Allow-Origin"], "https://app.example")
        status, _, headers = self.call("DELETE", "/users/u1", headers=dict(self.auth, Origin="https://app.example"))
        self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (200, "https://app.example"))


class SameOriginTest(ManageTestCase):
    """The inspector page calls the server that served it: its Origin is the server's own."""

    def test_a_page_of_this_server_may_call_it_and_a_page_of_another_port_may_not(self):
        self.stored("u1", "s1", ["Alice: the violet umbrella"])
        search = {"query": "umbrella", "user_id": "u1", "top_k": 3}
        for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
            with self.subTest(host=host):
                same = dict(self.auth, Host=host, Origin="http://" + host)
                self.assertEqual(self.call("POST", "/search", search, same)[0], 200)
                self.assertEqual(self.call("GET", "/users", headers=same)[0], 200)
        other_port = dict(self.auth, Host="127.0.0.1:8000", Origin="http://127.0.0.1:8001")
        self.assertEqual(self.call("DELETE", "/users/u1", headers=other_port)[0], 403)
        no_host = dict(self.auth, Origin="http://127.0.0.1:8000")
        self.assertEqual(self.call("DELETE", "/users/u1", headers=no_host)[0], 403)
        same = dict(self.auth, Host="127.0.0.1:8000", Origin="http://127.0.0.1:8000")
        self.assertEqual(self.call("DELETE", "/users/u1/sessions/s1", headers=same)[1]["deleted"], True)


class PublicSameOriginTest(ManageTestCase):
    server_settings = {"host": "0.0.0.0"}

    def test_on_a_public_address_answering_any_name_a_rebound_name_is_not_its_own_origin(self):
        rebound = dict(self.auth, Host="evil.example", Origin="http://evil.example")
        self.assertEqual(self.call("GET", "/users", headers=rebound)[0], 403)
        by_address = dict(self.auth, Host="10.0.0.5:8000", Origin="http://10.0.0.5:8000")
        self.assertEqual(self.call("GET", "/users", headers=by_address)[0], 200)


class NamedSameOriginTest(ManageTestCase):
    server_settings = {"host": "0.0.0.0", "allowed_hosts": "memory.example"}

    def test_a_configured_name_is_its_own_origin_behind_http_or_https(self):
        for origin in ("http://memory.example", "https://memory.example"):
            headers = dict(self.auth, Host="memory.example", Origin=origin)
            self.assertEqual(self.call("GET", "/users", headers=headers)[0], 200)


if __name__ == "__main__":
    import unittest
    unittest.main()
