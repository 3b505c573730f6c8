"""Metadata on Adds and messages, Adds dated on receipt, and the unknown fields a body names."""
import json
import urllib.parse
from typing import Any, Dict

from flowmem.config import load
from flowmem.errors import InvalidField
from flowmem.http.api import App
from flowmem.mcp import tools
from flowmem.retrieval.items import shared_metadata
from flowmem.storage.rows import MessageRow
from tests.helpers import T0, MemoryTestCase

NOW = 1_790_000_000.0  # 2026-09-21, the clock of the receipt-dating tests


def body(request_id: str, contents, metadata=None, per_message=None, user="u", timestamp=T0) -> Dict[str, Any]:
    messages = [{"role": "user", "content": c} for c in contents]
    for i, m in enumerate(messages):
        if timestamp is not None:
            m["timestamp"] = timestamp + i
        if per_message and per_message[i] is not None:
            m["metadata"] = per_message[i]
    out: Dict[str, Any] = {"request_id": request_id, "user_id": user, "session_id": "s", "messages": messages}
    if metadata is not None:
        out["metadata"] = metadata
    return out


class MetadataTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(body("r1", ["Ana: the greyhound sleeps all day", "Ana: the greyhound eats carrots"],
                             {"source": "chat", "agent": "a1"}, [{"topic": "pets"}, {"agent": "a2", "n": 3}]))
        self.memory.add(body("r2", ["Ana: the greyhound show is in May"], {"source": "email", "n": 3.0}))
        self.memory.add(body("r3", ["Ana: the greyhound bit my tag"], {"source": "chat"}, user="other"))

    def search(self, query, metadata=None, user="u"):
        request: Dict[str, Any] = {"query": query, "user_id": user, "top_k": 10}
        if metadata is not None:
            request["filters"] = {"metadata": metadata}
        return self.memory.search(request)["data"]

    def test_a_message_stores_its_adds_metadata_under_its_own_and_listings_show_it(self):
        listed = [m.get("metadata") for m in self.memory.list_messages("u")["data"]]
        self.assertEqual(listed, [{"source": "chat", "agent": "a1", "topic": "pets"},
                                  {"source": "chat", "agent": "a2", "n": 3}, {"source": "email", "n": 3}])

    def test_a_search_keeps_to_every_key_and_value_of_its_metadata_filter(self):
        contents = {i["content"] for i in self.search("greyhound", {"source": "chat"})}
        self.assertEqual(contents, {"Ana: the greyhound sleeps all day", "Ana: the greyhound eats carrots"})
        self.assertEqual([i["content"] for i in self.search("greyhound", {"source": "chat", "agent": "a2"})],
                         ["Ana: the greyhound eats carrots"])
        self.assertEqual(self.search("greyhound", {"source": "fax"}), [])

    def test_numbers_equal_as_numbers_never_as_strings_or_booleans(self):
        self.assertEqual({i["content"] for i in self.search("greyhound", {"n": 3})},
                         {"Ana: the greyhound eats carrots", "Ana: the greyhound show is in May"})
        self.assertEqual(self.search("greyhound", {"n": "3"}), [])
        self.assertEqual(self.search("greyhound", {"n": True}), [])

    def test_items_carry_the_metadata_all_their_messages_share(self):
        for item in self.search("greyhound"):
            self.assertIn("metadata", item)
            if item["view"] == "message":
                self.assertEqual(item["metadata"], self.memory.get_message("u", item["id"])["metadata"])
        rows = [MessageRow(i, "user", "x", T0, "[]", metadata=text) for i, text in enumerate(
            ['{"agent":"a1","n":3,"source":"chat"}', '{"agent":"a2","n":3.0,"source":"chat"}'])]
        self.assertEqual(shared_metadata(rows), {"n": 3, "source": "chat"})  # a window's: what all its messages hold
        self.assertEqual(shared_metadata(rows[:1] + [rows[0]._replace(metadata=None)]), {})

    def test_a_metadata_filter_never_reaches_another_users_memory(self):
        self.assertEqual([i["content"] for i in self.search("greyhound", {"source": "chat"}, user="other")],
                         ["Ana: the greyhound bit my tag"])
        self.assertNotIn("Ana: the greyhound bit my tag",
                         [i["content"] for i in self.search("greyhound bit tag", {"source": "chat"})])

    def test_a_listing_keeps_to_metadata_given_as_a_dict_or_as_json_text(self):
        for given in ({"source": "email"}, json.dumps({"source": "email"})):
            self.assertEqual([m["content"] for m in self.memory.list_messages("u", metadata=given)["data"]],
                             ["Ana: the greyhound show is in May"])

    def test_malformed_metadata_is_a_422_naming_the_field_and_writes_nothing(self):
        cases = [({"tags": ["a"]}, None, "metadata.tags"), ("x", None, "metadata"),
                 (None, [{"": 1}], "messages[0].metadata"), (None, [{"k": "v" * 513}], "messages[0].metadata.k"),
                 ({"k%d" % i: i for i in range(33)}, None, "metadata"), ({"big": float("inf")}, None, "metadata.big")]
        for shared, own, field in cases:
            with self.subTest(field=field), self.assertRaises(InvalidField) as raised:
                self.memory.add(body("bad", ["Ana: nothing"], shared, own, user="fresh"))
            self.assertEqual(raised.exception.field, field)
        with self.assertRaises(InvalidField) as raised:
            self.search("greyhound", {"tags": ["a"]})
        self.assertEqual(raised.exception.field, "filters.metadata.tags")
        self.assertEqual(self.memory.stats("fresh"), {"user_id": "fresh", "exists": False})

    def test_a_null_filter_value_is_refused_never_read_as_no_filter(self):
        # {"source": null} kept every message, whatever its source: a filter must never keep more than it names.
        filters = ({"source": None}, {"source": "chat", "agent": None})
        app = App(self.memory, load({"db": self.db_path()}, environ={}))
        for metadata in filters:
            field = "filters.metadata." + next(k for k, v in metadata.items() if v is None)
            with self.subTest(metadata=metadata), self.assertRaises(InvalidField) as raised:
                self.search("greyhound", metadata)
            self.assertEqual(raised.exception.field, field)
            for given in (metadata, json.dumps(metadata)):
                with self.subTest(listing=given), self.assertRaises(InvalidField) as raised:
                    self.memory.list_messages("u", metadata=given)
                self.assertEqual(raised.exception.field, field[len("filters."):])
            search = json.dumps({"query": "greyhound", "user_id": "u", "top_k": 5, "filters": {"metadata": metadata}})
            response = app.handle("POST", "/search", {"Content-Type": "application/json"}, search.encode())
            self.assertEqual((response.status, json.loads(response.body)["detail"]["reason"].split()[0]), (422, field))
            response = app.handle("GET", "/users/u/messages?metadata=" + urllib.parse.quote(json.dumps(metadata)), {},
                                  b"")
            self.assertEqual(response.status, 422)
            for tool, arguments in (("search_memory", {"query": "greyhound", "filters": {"metadata": metadata}}),
                                    ("list_memories", {"metadata": metadata})):
                result = tools.call(self.memory, tool, dict(arguments, user_id="u"))
                self.assertIs(result["isError"], True, result)
                self.assertTrue(result["content"][0]["text"].startswith(field[len("filters."):] if tool ==
                                "list_memories" else field), result)

    def test_mcp_stores_and_filters_by_metadata(self):
        tools.call(self.memory, "add_memory", {"user_id": "m", "session_id": "s", "content": "Ana: mcp greyhound",
                                               "metadata": {"source": "mcp"}})
        found = tools.call(self.memory, "search_memory", {"user_id": "m", "query": "greyhound",
                                                          "filters": {"metadata": {"source": "mcp"}}})
        self.assertEqual([i["metadata"] for i in found["structuredContent"]["data"]], [{"source": "mcp"}])


class DatedOnReceiptTest(MemoryTestCase):
    settings: Dict[str, Any] = {}

    def test_an_add_without_timestamps_is_dated_when_it_arrives_and_says_so(self):
        memory = self.open_memory("clock.db", clock=lambda: NOW)
        answer = memory.add(body("r", ["Ana: I went hiking yesterday", "Ana: it rained"], timestamp=None))
        self.assertEqual((answer["stored"], answer["dated_on_receipt"]), (True, 2))
        listed = memory.list_messages("u")["data"]
        self.assertEqual([(m["timestamp"], m["dated_on_receipt"]) for m in listed], [(int(NOW * 1000), True)] * 2)
        item = memory.search({"query": "hiking", "user_id": "u", "top_k": 1})["data"][0]
        self.assertEqual(item["created_at"][:10], "2026-09-21")
        self.assertIn("2026-09-20", item["content"])  # "yesterday", resolved from the day it arrived
        since = memory.search({"query": "hiking", "user_id": "u", "top_k": 1, "filters": {"since": "2026-09-01"}})
        self.assertEqual(len(since["data"]), 1)

    def test_the_platforms_own_timestamps_win_and_a_partly_dated_add_keeps_its_gaps(self):
        memory = self.open_memory("clock.db", clock=lambda: NOW)
        self.assertEqual(memory.add(body("r1", ["Ana: dated"]))["dated_on_receipt"], 0)
        mixed = body("r2", ["Ana: dated too", "Ana: no date"])
        del mixed["messages"][1]["timestamp"]
        self.assertEqual(memory.add(mixed)["dated_on_receipt"], 0)
        self.assertEqual([m["timestamp"] for m in memory.list_messages("u")["data"]], [T0, T0, None])

    def test_a_replay_of_an_undated_add_is_the_same_add(self):
        memory = self.open_memory("clock.db", clock=lambda: NOW)
        first = memory.add(body("r", ["Ana: undated"], timestamp=None))
        later = self.open_memory("clock.db", clock=lambda: NOW + 3600)
        again = later.add(body("r", ["Ana: undated"], timestamp=None))
        self.assertEqual(again, dict(first, stored=False, dated_on_receipt=0))


class IgnoredFieldsTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.app = App(self.memory, load({"db": self.db_path()}, environ={}))

    def post(self, path: str, payload: Dict[str, Any]) -> Any:
        response = self.app.handle("POST", path, {}, json.dumps(payload).encode())
        return response.status, json.loads(response.body)

    def test_http_ignores_unknown_fields_as_the_contract_says_and_names_them(self):
        add = body("r", ["Ana: the greyhound"])
        add["messages"][0]["metdata"] = {"topic": "pets"}
        status, answer = self.post("/add", add)
        self.assertEqual((status, answer["ignored_fields"]), (200, ["messages[0].metdata"]))
        status, found = self.post("/search", {"query": "greyhound", "user_id": "u", "top_k": 5,
                                              "filter": {"session_id": "nope"}})
        self.assertEqual((status, found["ignored_fields"], len(found["data"])), (200, ["filter"], 1))
        status, clean = self.post("/search", {"query": "greyhound", "user_id": "u", "top_k": 5})
        self.assertNotIn("ignored_fields", clean)

    def test_the_python_api_and_mcp_refuse_unknown_fields(self):
        with self.assertRaises(InvalidField) as raised:
            self.memory.search({"query": "greyhound", "user_id": "u", "top_k": 5, "filter": {}})
        self.assertEqual(raised.exception.field, "filter")
        result = tools.call(self.memory, "add_memory", {"user_id": "u", "session_id": "s", "content": "x",
                                                        "metdata": {}})
        self.assertTrue(result["isError"])
        result = tools.call(self.memory, "add_memory", {"user_id": "u", "session_id": "s",
                                                        "messages": [{"role": "user", "content": "x", "metdata": {}}]})
        self.assertTrue(result["isError"])
