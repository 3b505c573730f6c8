"""A search's `evidence` grade ("strong", "weak" or "none", retrieval/strength.py) on every surface: the
HTTP answer and its OpenAPI schema, the typed Python results (Memory, Client, AsyncClient), the MCP
tool, the CLI and the framework adapters' shared calls. The items come back beside it, unchanged."""
from __future__ import annotations

import asyncio
import json
import os
import tempfile
import unittest
from typing import Any, Dict, Tuple

from flowmem.async_client import AsyncClient
from flowmem.client import Client
from flowmem.config import load
from flowmem.http.api import App
from flowmem.http.openapi import document
from flowmem.http.table import ROUTES
from flowmem.integrations import calls
from flowmem.mcp import arguments, tools
from flowmem.sdk import Hit, Hits
from tests.cli_inprocess import InProcessCli
from tests.helpers import MemoryTestCase, add_body

GRADES = ("strong", "weak", "none")
QUESTION = {"query": "What did Dana make at the pottery workshop?", "user_id": "u1", "top_k": 5}


def remember(memory: Any) -> None:
    memory.add(add_body("u1", "s1", ["Dana: I went to a pottery workshop yesterday", "Priya: What did you make?",
                                     "Dana: A small blue bowl", "Priya: I painted a sunrise over the lake"]))


class InProcessClient(Client):
    """A Client whose requests an App answers in this process (no socket), as its server would."""

    def __init__(self, app: App) -> None:
        super().__init__("http://127.0.0.1:8000")
        self.app = app

    def _exchange(self, method: str, path: str, data: Any, headers: Dict[str, str]) -> Tuple[int, str, Any, bytes]:
        response = self.app.handle(method, path, headers, data or b"")
        return response.status, "", dict(response.headers), response.body


class InProcessAsyncClient(AsyncClient):
    """An AsyncClient whose requests an App answers in this process."""

    def __init__(self, app: App) -> None:
        super().__init__("http://127.0.0.1:8000")
        self.app = app

    async def _exchange(self, method: str, path: str, data: bytes,
                        headers: Dict[str, str]) -> Tuple[int, str, Any, bytes]:
        response = self.app.handle(method, path, headers, data)
        return response.status, "", dict(response.headers), response.body


class EvidenceTestCase(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        remember(self.memory)
        self.app = App(self.memory, load({"db": self.db_path()}, environ={}))

    def post_search(self, body: Dict[str, Any], path: str = "/search") -> Dict[str, Any]:
        response = self.app.handle("POST", path, {}, json.dumps(body).encode())
        self.assertEqual(response.status, 200, response.body[:300])
        return json.loads(response.body)


class HttpEvidenceTest(EvidenceTestCase):
    def test_every_search_route_answers_its_items_with_a_grade_in_the_allowed_set(self):
        searches = [route for route in ROUTES if route.doc.answer == "SearchResult"]
        self.assertTrue(searches)
        for route in searches:
            with self.subTest(route=route.template):
                self.assertEqual(route.method, "POST")
                answer = self.post_search(QUESTION, route.template)
                self.assertIn(answer["evidence"], GRADES)
                self.assertIn("Dana: A small blue bowl", [item["content"] for item in answer["data"]])
                self.assertEqual(answer, self.memory.search(QUESTION))  # the memory's own answer, as it is

    def test_the_openapi_search_result_declares_evidence_required_with_its_three_values(self):
        schemas = document(ROUTES, keyed=False)["components"]["schemas"]
        result = schemas["SearchResult"]
        self.assertEqual(result["properties"]["evidence"]["enum"], list(GRADES))
        self.assertTrue(result["properties"]["evidence"]["description"])
        self.assertIn("evidence", result["required"])
        self.assertEqual(document(ROUTES, keyed=False)["paths"]["/search"]["post"]["responses"]["200"]["content"]
                         ["application/json"]["schema"], {"$ref": "#/components/schemas/SearchResult"})

    def test_an_unknown_user_and_a_question_nothing_matches_grade_none_and_keep_their_items(self):
        self.assertEqual(self.post_search({"query": "pottery", "user_id": "nobody", "top_k": 5}),
                         {"data": [], "evidence": "none"})
        for query in ("qwzx?", "zebra xylophone"):  # no word of either is in u1's memory: a fallback
            with self.subTest(query=query):
                answer = self.post_search({"query": query, "user_id": "u1", "top_k": 5})
                self.assertEqual(answer["evidence"], "none")
                self.assertTrue(answer["data"])  # the stand-ins still come back, marked as such
                self.assertTrue(all("fallback" in item["signals"] for item in answer["data"]))


class TypedEvidenceTest(EvidenceTestCase):
    def test_a_memorys_typed_search_is_a_list_of_hits_with_the_dicts_grade(self):
        for query in (QUESTION["query"], "qwzx?"):
            with self.subTest(query=query):
                found = self.memory.search(query, user_id="u1", limit=5)
                raw = self.memory.search({"query": query, "user_id": "u1", "top_k": 5})
                self.assertIsInstance(found, Hits)
                self.assertIsInstance(found, list)
                self.assertEqual(found.evidence, raw["evidence"])
                plain = [Hit.from_dict(item) for item in raw["data"]]
                self.assertEqual(found, plain)  # still equal to a plain list of the same Hits
                self.assertEqual(plain, found)
                self.assertEqual([hit.id for hit in found[:2]], [item["id"] for item in raw["data"][:2]])
                self.assertIn("evidence=%r" % raw["evidence"], repr(found))
        self.assertEqual(self.memory.search("pottery", user_id="nobody").evidence, "none")

    def test_a_clients_typed_search_carries_the_servers_grade(self):
        client = InProcessClient(self.app)
        raw = client.search(dict(QUESTION))
        self.assertEqual(raw, self.memory.search(QUESTION))
        found = client.search(QUESTION["query"], user_id="u1", limit=5)
        self.assertIsInstance(found, Hits)
        self.assertEqual(found.evidence, raw["evidence"])
        self.assertEqual(found, self.memory.search(QUESTION["query"], user_id="u1", limit=5))

    def test_an_async_clients_typed_search_carries_the_servers_grade(self):
        async def both() -> Tuple[Any, Any]:
            client = InProcessAsyncClient(self.app)
            return (await client.search(dict(QUESTION)),
                    await client.search(QUESTION["query"], user_id="u1", limit=5))

        raw, found = asyncio.run(both())
        self.assertIsInstance(found, Hits)
        self.assertEqual(found.evidence, raw["evidence"])
        self.assertEqual(raw, self.memory.search(QUESTION))

    def test_hits_from_an_answer_without_a_grade_say_none_of_it(self):
        self.assertIsNone(Hits([]).evidence)
        self.assertEqual(Hits([], "weak"), [])


class McpEvidenceTest(EvidenceTestCase):
    def test_search_memory_carries_the_grade_in_its_structured_content_and_its_text(self):
        result = tools.call(self.memory, "search_memory", {"user_id": "u1", "query": QUESTION["query"], "top_k": 5})
        assert result is not None
        self.assertFalse(result["isError"])
        structured = result["structuredContent"]
        self.assertEqual(structured, self.memory.search(QUESTION))
        self.assertIn(structured["evidence"], GRADES)
        self.assertEqual(json.loads(result["content"][0]["text"])["evidence"], structured["evidence"])
        schema = tools.BY_NAME["search_memory"].output_schema
        self.assertEqual(schema["properties"]["evidence"]["enum"], list(GRADES))
        self.assertIn("evidence", schema["required"])
        self.assertIsNone(arguments.problem(structured, schema))  # the result fits the schema it declares

    def test_search_memory_of_a_question_nothing_matches_says_none(self):
        result = tools.call(self.memory, "search_memory", {"user_id": "u1", "query": "qwzx?"})
        assert result is not None
        self.assertEqual(result["structuredContent"]["evidence"], "none")
        self.assertTrue(result["structuredContent"]["data"])


class CliEvidenceTest(InProcessCli, unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-evidence-")
        self.addCleanup(tmp.cleanup)
        self.cli_dir = tmp.name
        self.db = os.path.join(tmp.name, "cli.db")
        added = self.run_cli("add", "--db", self.db, "-", stdin=json.dumps(add_body("u1", "s1", [
            "Dana: I went to a pottery workshop yesterday", "Priya: What did you make?", "Dana: A small blue bowl"])))
        self.assertEqual(added.returncode, 0, added.stderr)

    def search(self, query: str, *flags: str) -> str:
        result = self.run_cli("search", "--db", self.db, "--user", "u1", *flags, query)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_plain_search_prints_the_grade_first_and_json_keeps_the_raw_answer(self):
        for query in ("What did Dana make at the pottery workshop?", "qwzx?"):
            with self.subTest(query=query):
                answer = json.loads(self.search(query, "--json"))
                self.assertEqual(list(answer), ["data", "evidence"])  # the raw dict, nothing added
                self.assertIn(answer["evidence"], GRADES)
                lines = self.search(query).splitlines()
                self.assertTrue(lines[0].startswith("evidence: %s" % answer["evidence"]), lines[0])
                self.assertTrue(any(line.startswith("1. ") for line in lines[1:]), lines)
        self.assertTrue(self.search("qwzx?").startswith("evidence: none"))


class AdapterEvidenceTest(EvidenceTestCase):
    def test_the_adapters_calls_return_the_grade_and_put_it_in_each_items_provenance(self):
        found = calls.found(self.memory, QUESTION["query"], "u1", 5)
        raw = self.memory.search(QUESTION)
        self.assertEqual((found.items, found.evidence), (raw["data"], raw["evidence"]))
        self.assertEqual(calls.search(self.memory, QUESTION["query"], "u1", 5), raw["data"])
        shown = calls.provenance(found.items[0], found.evidence)
        self.assertEqual(shown["evidence"], raw["evidence"])
        self.assertEqual(list(shown), list(calls.PROVENANCE) + ["evidence"])
        self.assertNotIn("evidence", calls.provenance(found.items[0]))


if __name__ == "__main__":
    unittest.main()
