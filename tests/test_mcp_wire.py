"""`python -m flowmem mcp` spoken to on the wire: JSON-RPC 2.0, one message a line, over a child's stdin and stdout.

Standard library only: each test starts the real command on a fresh database and
writes the bytes an MCP client would (tests/test_mcp_sdk.py does the same with the
official SDK as the client). Every line the server writes must be a JSON-RPC message.
Both eras: the handshake revisions (initialize first), and 2026-07-28, where every
request carries its version stamp in `_meta` and results carry `resultType`.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
from typing import Any, Dict, List, Optional, Union

from tests.server import ROOT

LATEST = "2025-11-25"
MODERN = "2026-07-28"
EVERY_REVISION = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
TIMEOUT_S = 60


def stamp(version: Any = MODERN) -> Dict[str, Any]:
    """The `_meta` a 2026-07-28 request carries: its version, the client's capabilities and name."""
    return {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"}}


class McpProcess:
    """`python -m flowmem mcp --db PATH` as a child process, with a line reader on its stdout."""

    def __init__(self, db: str, log: str):
        environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        environ.update(PYTHONPATH=ROOT, FLOWMEM_SYNCHRONOUS="NORMAL")
        self.stderr = open(log, "w+b")
        self.process = subprocess.Popen([sys.executable, "-m", "flowmem", "mcp", "--db", db], cwd=ROOT, env=environ,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.lines: "queue.Queue[bytes]" = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # EOF

    def send(self, message: Union[bytes, Dict[str, Any], List[Any]]) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8") + b"\n"
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def receive(self) -> Any:
        line = self.lines.get(timeout=TIMEOUT_S)
        if not line:
            raise AssertionError("the server closed its stdout; stderr:\n" + self.log())
        return json.loads(line)

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self.next_id += 1
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = self.receive()
        assert answer.get("id") == self.next_id, answer
        return answer

    def call(self, tool: str, **arguments: Any) -> Dict[str, Any]:
        """The result of tools/call (failing the test if it is a JSON-RPC error)."""
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in answer, answer
        return answer["result"]

    def modern(self, method: str, params: Optional[Dict[str, Any]] = None, version: Any = MODERN) -> Dict[str, Any]:
        """A 2026-07-28 request: `params` with the version stamp in `_meta`."""
        return self.request(method, dict(params or {}, _meta=stamp(version)))

    def modern_call(self, tool: str, **arguments: Any) -> Dict[str, Any]:
        """The result of a stamped tools/call (failing the test if it is a JSON-RPC error)."""
        answer = self.modern("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in answer, answer
        return answer["result"]

    def initialize(self, version: str = LATEST) -> Dict[str, Any]:
        answer = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                             "clientInfo": {"name": "wire-test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> int:
        """Close stdin (how an MCP client stops a stdio server) and return the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=TIMEOUT_S)

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")


class McpWireTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="flowmem-mcp-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.server = McpProcess(os.path.join(self.tmp, "memory.db"), os.path.join(self.tmp, "stderr.log"))
        self.addCleanup(self._stop)

    def _stop(self) -> None:
        if self.server.process.poll() is None:
            self.server.process.kill()
            self.server.process.wait()
        for stream in (self.server.process.stdin, self.server.process.stdout, self.server.stderr):
            if stream is not None:
                stream.close()

    def assert_error(self, answer: Dict[str, Any], code: int, ident: Any) -> None:
        self.assertEqual(answer["jsonrpc"], "2.0")
        self.assertEqual(answer["id"], ident)
        self.assertEqual(answer["error"]["code"], code, answer)
        self.assertIsInstance(answer["error"]["message"], str)

    def test_initialize_answers_the_revision_asked_for_and_names_flowmem(self):
        result = self.server.initialize("2025-06-18")["result"]
        self.assertEqual(result["protocolVersion"], "2025-06-18")
        self.assertEqual(result["serverInfo"]["name"], "flowmem")
        self.assertTrue(result["serverInfo"]["version"])
        self.assertIn("tools", result["capabilities"])

    def test_a_revision_flowmem_does_not_speak_is_answered_with_its_latest(self):
        for asked in ("2099-01-01", "2026-07-28"):
            with self.subTest(asked=asked):
                self.assertEqual(self.server.initialize(asked)["result"]["protocolVersion"], LATEST)

    def test_every_tool_is_listed_with_an_input_and_an_output_schema(self):
        self.server.initialize()
        tools = {t["name"]: t for t in self.server.request("tools/list")["result"]["tools"]}
        self.assertEqual(sorted(tools), ["add_memory", "delete_memories", "list_memories", "search_memory"])
        for name, tool in tools.items():
            with self.subTest(tool=name):
                self.assertTrue(tool["description"])
                for schema in (tool["inputSchema"], tool["outputSchema"]):
                    self.assertEqual(schema["type"], "object")
                    self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
                self.assertIn("user_id", tool["inputSchema"]["required"])

    def test_a_memory_added_is_found_listed_and_deleted(self):
        self.server.initialize()
        added = self.server.call("add_memory", user_id="alice", session_id="s1", messages=[
            {"role": "user", "content": "Dana: I adopted a beagle named Max", "timestamp": 1683554160000},
            {"role": "assistant", "content": "Priya: What a lovely dog!", "timestamp": 1683554160000}])
        self.assertFalse(added["isError"])
        self.assertEqual(added["structuredContent"]["success"], True)
        self.assertEqual(json.loads(added["content"][0]["text"]), added["structuredContent"])
        self.server.call("add_memory", user_id="alice", session_id="s2", content="I moved to Lisbon", role="user")

        found = self.server.call("search_memory", user_id="alice", query="What is the name of Dana's beagle?")
        items = found["structuredContent"]["data"]
        self.assertIn("beagle named Max", items[0]["content"])

        listed = self.server.call("list_memories", user_id="alice", limit=2)["structuredContent"]
        self.assertEqual([m["content"] for m in listed["data"]],
                         ["Dana: I adopted a beagle named Max", "Priya: What a lovely dog!"])
        rest = self.server.call("list_memories", user_id="alice", cursor=listed["next_cursor"])["structuredContent"]
        self.assertEqual([m["content"] for m in rest["data"]], ["I moved to Lisbon"])

        deleted = self.server.call("delete_memories", user_id="alice", session_id="s1")["structuredContent"]
        self.assertEqual((deleted["deleted"], deleted["messages"]), (True, 2))
        left = self.server.call("list_memories", user_id="alice")["structuredContent"]["data"]
        self.assertEqual([m["session_id"] for m in left], ["s2"])
        refused = self.server.call("delete_memories", user_id="alice")
        self.assertTrue(refused["isError"])
        self.assertIn("all_sessions", refused["content"][0]["text"])
        gone = self.server.call("delete_memories", user_id="alice", all_sessions=True)["structuredContent"]
        self.assertTrue(gone["deleted"])
        self.assertEqual(self.server.call("list_memories", user_id="alice")["structuredContent"]["data"], [])

    def test_search_filters_keep_to_a_session_a_role_and_a_time(self):
        self.server.initialize()
        self.server.call("add_memory", user_id="ann", session_id="s1", messages=[
            {"role": "user", "content": "I adopted a beagle", "timestamp": 1683554160000},
            {"role": "assistant", "content": "A beagle is a lovely dog", "timestamp": 1683554160000}])
        self.server.call("add_memory", user_id="ann", session_id="s2", content="The beagle chewed my shoes",
                         timestamp=1686232560000)

        def sessions_and_roles(**filters: Any) -> List[Any]:
            result = self.server.call("search_memory", user_id="ann", query="beagle", top_k=10, filters=filters)
            self.assertFalse(result["isError"], result)
            return sorted({(item["session_id"], item["role"]) for item in result["structuredContent"]["data"]})

        self.assertEqual(sessions_and_roles(session_id="s2"), [("s2", "user")])
        self.assertEqual(sessions_and_roles(role="assistant"), [("s1", "assistant")])
        self.assertEqual(sessions_and_roles(since="2023-06-01"), [("s2", "user")])
        self.assertEqual(sessions_and_roles(until=1686232560000, role="user"), [("s1", "user")])
        refused = self.server.call("search_memory", user_id="ann", query="beagle", filters={"speaker": "x"})
        self.assertTrue(refused["isError"])
        self.assertIn("filters.speaker", refused["content"][0]["text"])

    def test_the_same_words_said_again_are_stored_again_and_a_named_retry_once(self):
        self.server.initialize()
        first = self.server.call("add_memory", user_id="bob", session_id="s", content="ok")
        again = self.server.call("add_memory", user_id="bob", session_id="s", content="ok")
        self.assertNotEqual(first["structuredContent"]["request_id"], again["structuredContent"]["request_id"])
        self.assertTrue(again["structuredContent"]["stored"])
        for _ in range(2):
            named = self.server.call("add_memory", user_id="bob", session_id="s", content="I like green tea",
                                     request_id="said-once")
        self.assertEqual((named["structuredContent"]["request_id"], named["structuredContent"]["stored"]),
                         ("said-once", False))
        listed = self.server.call("list_memories", user_id="bob")["structuredContent"]["data"]
        self.assertEqual([m["content"] for m in listed], ["ok", "ok", "I like green tea"])

    def test_a_bad_argument_is_a_tool_error_the_model_can_read(self):
        self.server.initialize()
        cases = [
            ({"user_id": "a", "session_id": "s", "messages": [{"role": "user", "content": 5}]},
             "messages[0].content must be a string"),
            ({"user_id": "a", "session_id": "s", "content": "x", "messages": [{"role": "user", "content": "y"}]},
             "content"),
            ({"user_id": "a", "session_id": "s"}, "messages or content"),
            ({"userId": "a", "session_id": "s", "content": "x"}, "userId"),
            ({"user_id": "a", "session_id": "s", "content": "x", "timestamp": 1717236000}, "looks like Unix seconds"),
            ({"user_id": "a\u0000", "session_id": "s", "content": "x"}, "control characters"),
        ]
        for arguments, words in cases:
            with self.subTest(arguments=arguments):
                result = self.server.request("tools/call", {"name": "add_memory", "arguments": arguments})["result"]
                self.assertTrue(result["isError"])
                self.assertNotIn("structuredContent", result)
                self.assertIn(words, result["content"][0]["text"])
        result = self.server.call("search_memory", user_id="a", query="x", top_k=-1)
        self.assertTrue(result["isError"])
        self.assertIn("top_k", result["content"][0]["text"])

    def test_an_unknown_tool_or_malformed_call_is_invalid_params(self):
        self.server.initialize()
        self.assert_error(self.server.request("tools/call", {"name": "forget_everything", "arguments": {}}),
                          -32602, 2)
        self.assert_error(self.server.request("tools/call", {"arguments": {}}), -32602, 3)
        self.assert_error(self.server.request("tools/call", {"name": "add_memory", "arguments": [1]}), -32602, 4)
        self.assert_error(self.server.request("initialize", {"capabilities": {}}), -32602, 5)

    def assert_complete(self, result: Dict[str, Any]) -> None:
        """A 2026-07-28 result: resultType complete, and flowmem's name and version in _meta."""
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["_meta"][SERVER_INFO]["name"], "flowmem")
        self.assertTrue(result["_meta"][SERVER_INFO]["version"])

    def test_discover_answers_a_2026_07_28_client_without_initialize(self):
        result = self.server.modern("server/discover")["result"]
        self.assert_complete(result)
        self.assertEqual(result["supportedVersions"], [MODERN])
        self.assertEqual(result["capabilities"], {"tools": {"listChanged": False}})
        self.assertIn("add_memory", result["instructions"])
        self.assertEqual(result["cacheScope"], "public")
        self.assertGreater(result["ttlMs"], 0)
        self.assertNotIn("protocolVersion", result)

    def test_a_2026_07_28_client_adds_searches_lists_and_deletes_with_every_request_stamped(self):
        listed_tools = self.server.modern("tools/list")["result"]
        self.assert_complete(listed_tools)
        self.assertEqual((listed_tools["cacheScope"], type(listed_tools["ttlMs"])), ("public", int))
        self.assertEqual(sorted(t["name"] for t in listed_tools["tools"]),
                         ["add_memory", "delete_memories", "list_memories", "search_memory"])
        results = {
            "add": self.server.modern_call("add_memory", user_id="ann", session_id="s1", messages=[
                {"role": "user", "content": "Dana: I adopted a beagle named Max", "timestamp": 1683554160000}]),
            "add_one": self.server.modern_call("add_memory", user_id="ann", session_id="s2",
                                               content="I moved to Lisbon"),
            "search": self.server.modern_call("search_memory", user_id="ann", query="What is the beagle called?"),
            "list": self.server.modern_call("list_memories", user_id="ann", order="desc"),
            "delete": self.server.modern_call("delete_memories", user_id="ann", session_id="s1"),
            "left": self.server.modern_call("list_memories", user_id="ann"),
            "bad": self.server.modern_call("search_memory", user_id="ann", query="x", top_k="ten"),
        }
        for name, result in results.items():
            with self.subTest(call=name):
                self.assert_complete(result)
                self.assertEqual(result["isError"], name == "bad")
                self.assertNotIn("ttlMs", result)  # a tool's result is no cacheable result
        self.assertTrue(results["add"]["structuredContent"]["success"])
        self.assertIn("beagle named Max", results["search"]["structuredContent"]["data"][0]["content"])
        self.assertEqual([m["content"] for m in results["list"]["structuredContent"]["data"]],
                         ["I moved to Lisbon", "Dana: I adopted a beagle named Max"])
        self.assertEqual(results["delete"]["structuredContent"]["messages"], 1)
        self.assertEqual([m["session_id"] for m in results["left"]["structuredContent"]["data"]], ["s2"])
        self.assertIn("top_k", results["bad"]["content"][0]["text"])
        self.assert_error(self.server.modern("tools/call", {"name": "forget_everything", "arguments": {}}), -32602,
                          self.server.next_id)

    def test_an_unsupported_version_stamp_is_refused_naming_the_revisions_flowmem_speaks(self):
        for asked, words in (("2099-01-01", "2026-07-28 per request"), (LATEST, "initialize")):
            with self.subTest(asked=asked):
                answer = self.server.modern("server/discover", version=asked)
                self.assert_error(answer, -32022, self.server.next_id)
                self.assertEqual(answer["error"]["data"], {"supported": EVERY_REVISION, "requested": asked})
                self.assertIn(words, answer["error"]["message"])
        # A refused stamp decides nothing: the client can still fall back to the handshake.
        self.assertEqual(self.server.initialize()["result"]["protocolVersion"], LATEST)

    def test_once_a_connection_speaks_2026_07_28_a_refusal_names_that_revision_alone(self):
        self.server.modern("tools/list")
        answer = self.server.modern("tools/list", version="2099-01-01")
        self.assert_error(answer, -32022, self.server.next_id)
        self.assertEqual(answer["error"]["data"]["supported"], [MODERN])

    def test_a_stamp_without_capabilities_or_with_a_version_that_is_no_string_is_invalid_params(self):
        version = "io.modelcontextprotocol/protocolVersion"
        for meta in ({version: MODERN}, dict(stamp(), **{version: 20260728}),
                     dict(stamp(), **{"io.modelcontextprotocol/clientCapabilities": []})):
            with self.subTest(meta=meta):
                self.assert_error(self.server.request("tools/list", {"_meta": meta}), -32602, self.server.next_id)
        self.assertEqual(self.server.initialize()["result"]["protocolVersion"], LATEST)

    def test_a_2026_07_28_connection_refuses_initialize_bare_requests_and_ping(self):
        self.server.modern("server/discover")
        answer = self.server.request("initialize", {"protocolVersion": LATEST, "capabilities": {},
                                                    "clientInfo": {"name": "wire-test", "version": "1"}})
        self.assert_error(answer, -32022, self.server.next_id)
        self.assertEqual(answer["error"]["data"], {"supported": [MODERN], "requested": LATEST})
        self.assert_error(self.server.request("tools/list"), -32602, self.server.next_id)
        self.assert_error(self.server.modern("ping"), -32601, self.server.next_id)
        self.assert_complete(self.server.modern("tools/list")["result"])

    def test_a_connection_opened_with_initialize_refuses_stamped_requests(self):
        self.server.initialize()
        self.assert_error(self.server.modern("tools/list"), -32600, self.server.next_id)
        self.assert_error(self.server.modern("server/discover"), -32600, self.server.next_id)
        listed = self.server.request("tools/list")["result"]
        self.assertNotIn("resultType", listed)
        self.assertNotIn("ttlMs", listed)

    def test_malformed_json_gets_a_parse_error_and_the_server_carries_on(self):
        for line in (b"{not json\n", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"\n', b"\xff\xfe\n", b"NaN\n"):
            with self.subTest(line=line):
                self.server.send(line)
                self.assert_error(self.server.receive(), -32700, None)
        self.assertEqual(self.server.request("ping")["result"], {})

    def test_a_message_that_is_no_request_gets_invalid_request(self):
        cases = [([1, 2], None), ({"id": 7, "method": "ping"}, 7),
                 ({"jsonrpc": "1.0", "id": 8, "method": "ping"}, 8), ({"jsonrpc": "2.0", "id": 9, "method": 5}, 9),
                 ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
                 ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None), ([], None)]
        for message, ident in cases:
            with self.subTest(message=message):
                self.server.send(message)
                answer = self.server.receive()
                if isinstance(message, list) and message:
                    self.assertEqual(len(answer), len(message))  # a batch: one answer per member
                    answer = answer[0]
                self.assert_error(answer, -32600, ident)

    def test_an_unknown_method_gets_method_not_found(self):
        self.server.initialize()
        for method in ("resources/list", "server/discover", "tools/delete"):
            with self.subTest(method=method):
                self.assert_error(self.server.request(method, {}), -32601, self.server.next_id)

    def test_a_notification_gets_no_answer_known_or_not(self):
        for method in ("notifications/initialized", "notifications/cancelled", "no/such/method"):
            self.server.send({"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}})
        self.server.send({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "nope"}})
        self.server.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # a response: this server asked nothing
        self.assertEqual(self.server.request("ping"), {"jsonrpc": "2.0", "id": 1, "result": {}})

    def test_a_batch_is_answered_member_by_member_without_its_notifications(self):
        self.server.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                          {"jsonrpc": "2.0", "method": "notifications/initialized"},
                          {"jsonrpc": "2.0", "id": "b", "method": "nope"}])
        answer = self.server.receive()
        self.assertEqual([a["id"] for a in answer], ["a", "b"])
        self.assertEqual(answer[1]["error"]["code"], -32601)

    def test_end_of_input_ends_the_process_cleanly_with_nothing_but_messages_on_stdout(self):
        self.server.initialize()
        self.server.call("add_memory", user_id="u", session_id="s", content="text with a\nnewline and \u2028 in it")
        self.server.send(b"\n   \n")  # blank lines are no messages
        self.assertEqual(self.server.close(), 0)
        self.assertEqual(self.server.lines.get(timeout=TIMEOUT_S), b"")  # nothing more was written
        self.assertNotIn("Traceback", self.server.log())

    @unittest.skipIf(sys.platform == "win32", "no SIGTERM on Windows")
    def test_sigterm_ends_the_process_cleanly(self):
        self.server.initialize()
        self.server.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.process.wait(timeout=TIMEOUT_S), 0)
        self.assertNotIn("Traceback", self.server.log())


if __name__ == "__main__":
    unittest.main()
