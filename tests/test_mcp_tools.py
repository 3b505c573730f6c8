"""The MCP tools in-process: arguments checked against their schemas, and what each tool hands Memory.

A stand-in Memory records the calls, so these tests pin the MCP layer alone: the
tools pass the contract's fields through unchanged (search filters as the Search
body's `filters`), refuse what their schemas refuse with a sentence naming the field,
and anchor an Add that names no request_id where it lands (`anchored`). tests/test_mcp_wire.py runs the
real command on a real database.
"""
from __future__ import annotations

import io
import json
import unittest
from typing import Any, Dict, List, Tuple
from unittest import mock

from flowmem.errors import InvalidField
from flowmem.mcp import arguments, stdio, tools
from flowmem.mcp.protocol import Server


class RecordingMemory:
    """Memory's calls the tools make, recorded; each answers an empty result of the right shape."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    def add_body(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self.calls.append(("add", body))
        return {"success": True, "request_id": body["request_id"], "user_id": body["user_id"],
                "session_id": body["session_id"]}


    def search(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self.calls.append(("search", body))
        return {"data": [], "evidence": "none"}

    def list_messages(self, user_id: str, **options: Any) -> Dict[str, Any]:
        self.calls.append(("list_messages", dict(options, user_id=user_id)))
        if options.get("cursor") == "bad":
            raise InvalidField("cursor", "is not a cursor this server gave")
        return {"data": [], "next_cursor": None}

    def delete_session(self, user_id: str, session_id: str) -> Dict[str, Any]:
        self.calls.append(("delete_session", (user_id, session_id)))
        return {"deleted": False, "user_id": user_id, "session_id": session_id, "messages": 0}

    def delete_user(self, user_id: str) -> Dict[str, Any]:
        self.calls.append(("delete_user", user_id))
        return {"deleted": False, "user_id": user_id}


class McpToolsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.memory = RecordingMemory()

    def call(self, name: str, **args: Any) -> Dict[str, Any]:
        result = tools.call(self.memory, name, args)  # type: ignore[arg-type]
        assert result is not None
        return result

    def test_search_passes_filters_as_the_search_bodys_filters(self):
        self.call("search_memory", user_id="u", query="where?", filters={
            "session_id": "s2", "since": "2023-05-08", "until": 1683554160000.0, "role": "user"})
        self.assertEqual(self.memory.calls, [("search", {
            "query": "where?", "user_id": "u", "top_k": 10,
            "filters": {"session_id": "s2", "since": "2023-05-08", "until": 1683554160000, "role": "user"}})])
        self.assertIsInstance(self.memory.calls[0][1]["filters"]["until"], int)

    def test_search_without_filters_sends_the_contracts_body(self):
        self.call("search_memory", user_id="u", query="q", top_k=3, filters=None)
        self.assertEqual(self.memory.calls, [("search", {"query": "q", "user_id": "u", "top_k": 3})])

    def test_list_passes_only_the_options_given(self):
        self.call("list_memories", user_id="u", session_id="s", limit=5.0, order="desc", since=None)
        self.assertEqual(self.memory.calls, [("list_messages", {"user_id": "u", "session_id": "s", "limit": 5,
                                                                 "order": "desc"})])

    def test_a_core_refusal_is_a_tool_error_with_its_reason(self):
        result = self.call("list_memories", user_id="u", cursor="bad")
        self.assertEqual(result, {"content": [{"type": "text", "text": "cursor is not a cursor this server gave"}],
                                  "isError": True})

    def test_delete_takes_a_session_or_the_whole_user_only_when_asked(self):
        self.assertFalse(self.call("delete_memories", user_id="u", session_id="s")["isError"])
        self.assertFalse(self.call("delete_memories", user_id="u", all_sessions=True)["isError"])
        for refused in ({}, {"all_sessions": False}, {"session_id": "s", "all_sessions": True}):
            with self.subTest(arguments=refused):
                self.assertTrue(self.call("delete_memories", user_id="u", **refused)["isError"])
        self.assertEqual(self.memory.calls, [("delete_session", ("u", "s")), ("delete_user", "u")])

    def test_one_message_given_as_content_is_added_with_its_role_and_timestamp(self):
        self.call("add_memory", user_id="u", session_id="s", content="hi", timestamp=1683554160000.0)
        self.call("add_memory", user_id="u", session_id="s", content="hi", role="assistant")
        bodies = [body for _, body in self.memory.calls]
        self.assertEqual(bodies[0]["messages"], [{"role": "user", "content": "hi", "timestamp": 1683554160000}])
        self.assertEqual(bodies[1]["messages"], [{"role": "assistant", "content": "hi"}])

    def test_a_request_id_given_is_used_as_it_is_even_blank(self):
        self.call("add_memory", user_id="u", session_id="s", content="hi", request_id="")
        self.assertEqual(self.memory.calls[0][1]["request_id"], "")

    def test_a_call_without_a_request_id_is_a_new_add_every_time(self):
        for _ in range(2):
            self.call("add_memory", user_id="u", session_id="s", content="ok")
        self.assertEqual([body["anchored"] for _, body in self.memory.calls], [True, True])
        self.assertTrue(self.memory.calls[0][1]["request_id"].startswith("sdk-"))

    def test_arguments_that_break_the_schema_are_named_like_the_contracts_fields(self):
        schema = tools.BY_NAME["add_memory"].input_schema
        cases = [
            ({"session_id": "s"}, "user_id is required"),
            ({"user_id": 1, "session_id": "s"}, "user_id must be a string, got an integer"),
            ({"user_id": "u", "session_id": "s", "messages": []}, "messages must hold at least 1 item(s)"),
            ({"user_id": "u", "session_id": "s", "messages": [{"role": "user"}]}, "messages[0].content is required"),
            ({"user_id": "u", "session_id": "s", "messages": [{"role": "user", "content": "x", "timestamp": 1.5}]},
             "messages[0].timestamp must be an integer, got a number"),
            ({"user_id": "u", "session_id": "s", "session": "s"}, "session is not an argument of this tool"),
        ]
        for args, reason in cases:
            with self.subTest(args=args):
                self.assertIn(reason, arguments.problem(args, schema) or "")
        search = tools.BY_NAME["search_memory"].input_schema
        self.assertIn("filters.colour is not an argument; filters takes session_id",
                      arguments.problem({"user_id": "u", "query": "q", "filters": {"colour": "red"}}, search) or "")
        self.assertIn("top_k must be at least 0", arguments.problem({"user_id": "u", "query": "q", "top_k": -1},
                                                                    search) or "")
        listing = tools.BY_NAME["list_memories"].input_schema
        self.assertIn("order must be one of 'asc', 'desc'",
                      arguments.problem({"user_id": "u", "order": "newest"}, listing) or "")
        self.assertIsNone(arguments.problem({"user_id": "u", "since": "2023-05-08", "until": 1683554160000,
                                             "limit": 5.0, "cursor": None}, listing))

    def test_a_line_over_the_limit_is_refused_whole_and_the_next_one_answered(self):
        ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
        stdin, stdout = io.BytesIO(b"x" * 500 + b"\n" + ping), io.BytesIO()
        with mock.patch.object(stdio, "MAX_MESSAGE_BYTES", 100):
            stdio.serve(Server(self.memory), stdin, stdout)  # type: ignore[arg-type]
        answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
        self.assertEqual([a.get("error", {}).get("code") for a in answers], [-32700, None])
        self.assertEqual(answers[1], {"jsonrpc": "2.0", "id": 1, "result": {}})

    def test_an_unknown_tool_is_no_result(self):
        self.assertIsNone(tools.call(self.memory, "forget", {}))  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
