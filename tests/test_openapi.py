"""/openapi.json and /docs: made from the route table, so every route is documented and every answer too.

Requests go through App.handle (no socket); each documented operation is driven with
a good request and with the bad ones the server refuses, and every status it answers
must be one the document lists for that operation, every 200 body must fit the
documented schema.
"""
import html
import json
import re
import unittest
import urllib.parse

from flowmem.http.table import ROUTES
from tests.helpers import add_body
from tests.test_http_manage import ManageTestCase


def resolve(spec, schema):
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def problems(spec, schema, value, where="body"):
    """Where `value` does not fit `schema` (the subset of JSON Schema the document uses)."""
    schema = resolve(spec, schema)
    if "oneOf" in schema:
        return [] if any(not problems(spec, s, value, where) for s in schema["oneOf"]) else [where + ": no oneOf fits"]
    if "const" in schema and value != schema["const"]:
        return ["%s: %r is not %r" % (where, value, schema["const"])]
    if "enum" in schema and value not in schema["enum"]:
        return ["%s: %r not in %r" % (where, value, schema["enum"])]
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    python = {"object": dict, "array": list, "string": str, "integer": int, "number": (int, float),
              "boolean": bool, "null": type(None)}
    if kinds and not any(isinstance(value, python[k]) and not (k in ("integer", "number") and value is True)
                         for k in kinds):
        return ["%s: %r is not %s" % (where, value, kinds)]
    out = []
    if isinstance(value, dict):
        out += ["%s: %s missing" % (where, name) for name in schema.get("required", ()) if name not in value]
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                out += problems(spec, sub, value[name], "%s.%s" % (where, name))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name, item in value.items():
                out += problems(spec, extra, item, "%s.%s" % (where, name))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += problems(spec, schema["items"], item, "%s[%d]" % (where, i))
    return out


class OpenApiTestCase(ManageTestCase):
    def setUp(self):
        super().setUp()
        self.stored("u1", "s1", ["Alice: the red kayak", "Bob: nice"], request_id="r1")
        self.message_id = self.memory.list_messages("u1")["data"][0]["id"]
        status, self.spec, headers = self.call("GET", "/openapi.json")
        self.assertEqual((status, headers["Content-Type"]), (200, "application/json"))

    def path_of(self, template, **values):
        values = dict({"user_id": "u1", "session_id": "s1", "message_id": self.message_id}, **values)
        return re.sub(r"\{(\w+)\}", lambda m: urllib.parse.quote(values[m.group(1)], safe=""), template)

    def good_body(self, action):
        return {"add": add_body("u1", "s2", ["Alice: more"], "r2"),
                "search": {"query": "kayak", "user_id": "u1", "top_k": 3,
                           "filters": {"session_id": "s1", "since": "2023-05-01", "until": 1893456000000}},
                "import_records": {"records": [add_body("u1", "s3", ["Alice: imported"], "r3")]}}.get(action)


class DocumentTest(OpenApiTestCase):
    def test_every_route_is_documented_and_every_documented_operation_is_routed(self):
        routed = {(r.method.lower(), r.template) for r in ROUTES}
        documented = {(method, path) for path, ops in self.spec["paths"].items() for method in ops}
        self.assertEqual(documented, routed)
        self.assertEqual(self.spec["openapi"], "3.1.0")

    def test_an_independent_validator_finds_the_document_valid(self):
        try:
            from openapi_spec_validator import validate
        except ImportError:
            raise unittest.SkipTest("openapi-spec-validator not installed (pip install it)") from None
        validate(self.spec)

    def test_every_path_parameter_and_query_parameter_is_declared(self):
        for route in ROUTES:
            op = self.spec["paths"][route.template][route.method.lower()]
            declared = {(p["in"], p["name"]) for p in op["parameters"]}
            expected = {("path", n) for n in route.path_parameters()} | {("query", n) for n in route.query}
            self.assertEqual(declared, expected, route.template)

    def test_the_schemas_and_security_schemes_are_there(self):
        schemas = self.spec["components"]["schemas"]
        for name in ("Item", "Message", "Session", "User", "MessagePage", "Error", "AddBody", "SearchBody"):
            self.assertIn(name, schemas)
        self.assertEqual(schemas["MessagePage"]["required"], ["data", "next_cursor"])
        self.assertEqual(schemas["Error"]["properties"]["detail"]["required"], ["reason"])
        schemes = self.spec["components"]["securitySchemes"]
        self.assertEqual(schemes["bearer"], {"type": "http", "scheme": "bearer"})
        self.assertEqual(schemes["apiKey"], {"type": "apiKey", "in": "header", "name": "X-Api-Key"})
        for route in ROUTES:
            security = self.spec["paths"][route.template][route.method.lower()]["security"]
            self.assertEqual(bool(security), route.needs_key, route.template)


class AnswersAreDocumentedTest(OpenApiTestCase):
    def documented(self, route):
        return {int(s) for s in self.spec["paths"][route.template][route.method.lower()]["responses"]}

    def answer(self, route, headers=None, payload=None, path=None, raw=None):
        headers = dict(self.auth, **(headers or {}))
        data = raw if raw is not None else json.dumps(payload).encode() if payload is not None else b""
        response = self.app.handle(route.method, path or self.path_of(route.template), headers, data)
        self.assertIn(response.status, self.documented(route), (route.method, route.template, response.body[:200]))
        return response

    def test_a_good_request_to_every_route_answers_a_documented_200_whose_body_fits_its_schema(self):
        for route in sorted(ROUTES, key=lambda r: r.method == "DELETE"):  # deletes last: the others read u1
            with self.subTest(method=route.method, path=route.template):
                response = self.answer(route, payload=self.good_body(route.action))
                self.assertEqual(response.status, 200, response.body[:300])
                op = self.spec["paths"][route.template][route.method.lower()]
                content = op["responses"]["200"]["content"]
                media = dict(response.headers)["Content-Type"]
                self.assertIn(media.split(";")[0], [m.split(";")[0] for m in content])
                if media == "application/json":
                    schema = content["application/json"]["schema"]
                    self.assertEqual(problems(self.spec, schema, json.loads(response.body)), [])

    def test_refused_requests_answer_documented_statuses_in_the_error_shape(self):
        for route in ROUTES:
            cases = [{"headers": {"Origin": "https://evil.example"}}, {"headers": {"Host": "evil.example"}}]
            if route.needs_key:
                cases += [{"headers": {"X-Api-Key": "wrong"}}]
            if route.method == "POST":
                cases += [{"raw": b"{"}, {"raw": b"[]"}, {"payload": {}},
                          {"payload": self.good_body(route.action), "headers": {"Content-Type": "text/plain"}}]
            if route.query:
                cases += [{"path": self.path_of(route.template) + "?nope=1"},
                          {"path": self.path_of(route.template) + "?limit=0"}]
            if route.path_parameters():
                cases += [{"path": self.path_of(route.template, user_id="u\x00")}]
            if route.action == "get_message":
                cases += [{"path": self.path_of(route.template, message_id="m-0000000000000000-9")}]
            for case in cases:
                with self.subTest(method=route.method, path=route.template, case=case):
                    response = self.answer(route, **case)
                    self.assertGreaterEqual(response.status, 400)
                    self.assertEqual(problems(self.spec, {"$ref": "#/components/schemas/Error"},
                                              json.loads(response.body)), [])

    def test_without_a_key_on_the_server_no_route_documents_401(self):
        from flowmem.config import load
        from flowmem.http.api import App
        app = App(self.memory, load({"db": self.db_path()}, environ={}))
        spec = json.loads(app.handle("GET", "/openapi.json", {}, b"").body)
        statuses = {s for ops in spec["paths"].values() for op in ops.values() for s in op["responses"]}
        self.assertNotIn("401", statuses)
        self.assertIn("401", {s for op in self.spec["paths"]["/users"].values() for s in op["responses"]})


class DocsPageTest(OpenApiTestCase):
    def test_docs_is_the_document_as_html_with_no_script_and_nothing_from_elsewhere(self):
        status, page, headers = self.call("GET", "/docs")
        self.assertEqual((status, headers["Content-Type"]), (200, "text/html; charset=utf-8"))
        text = page.decode("utf-8")
        for path in self.spec["paths"]:
            self.assertIn(html.escape(path), text)
        for name in self.spec["components"]["schemas"]:
            self.assertIn('id="schema-%s"' % name, text)
        self.assertNotIn("<script", text.lower())
        self.assertEqual(re.findall(r'(?:src|href)="(?!/|#)[^"]*"', text), [])
        self.assertIn("default-src 'none'", headers["Content-Security-Policy"])
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")

    def test_every_text_is_escaped(self):
        from flowmem.http.pages import render
        spec = json.loads(json.dumps(self.spec))
        spec["info"]["description"] = "<script>alert(1)</script> & \"quotes\""
        spec["paths"]["/users"]["get"]["summary"] = "<img src=x onerror=alert(1)>"
        text = render(spec)
        self.assertNotIn("<script>alert", text)
        self.assertNotIn("<img", text)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;", text)

    def test_the_documents_are_open_but_not_to_web_pages(self):
        for path in ("/openapi.json", "/docs"):
            self.assertEqual(self.app.handle("GET", path, {}, b"").status, 200)
            self.assertEqual(self.app.handle("GET", path, {"Origin": "https://evil.example"}, b"").status, 403)


class InspectorRouteTest(OpenApiTestCase):
    def test_the_inspector_is_served_open_with_a_strict_policy(self):
        for path in ("/", "/ui", "/ui/"):
            with self.subTest(path=path):
                response = self.app.handle("GET", path, {}, b"")
                headers = dict(response.headers)
                self.assertEqual(response.status, 200)
                self.assertEqual(headers["Content-Type"], "text/html; charset=utf-8")
                self.assertTrue(response.body.lstrip().lower().startswith(b"<!doctype html>"))
                policy = dict(p.strip().split(" ", 1) for p in headers["Content-Security-Policy"].split(";"))
                self.assertEqual(policy["default-src"], "'self'")
                self.assertEqual(policy["connect-src"], "'self'")
                self.assertEqual(policy["frame-ancestors"], "'none'")
                self.assertEqual(policy["img-src"], "'self' data:")
                self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
                self.assertEqual(headers["Referrer-Policy"], "no-referrer")
                self.assertEqual(headers["Cache-Control"], "no-store")

    def test_a_missing_inspector_file_gives_a_placeholder_page(self):
        from unittest import mock

        from flowmem.http import pages
        with mock.patch.object(pages, "INSPECTOR", self.db_path("absent.html")):
            response = self.app.handle("GET", "/ui", {}, b"")
        self.assertEqual(response.status, 200)
        self.assertIn(b"not installed", response.body)


if __name__ == "__main__":
    unittest.main()
