"""`python -m flowmem mcp` with the official MCP Python SDK (mcp==2.3.0) as its client.

The SDK spawns the command over stdio, negotiates, lists the tools and calls each,
validating every structured result against the tool's outputSchema (jsonschema), and
every result against the negotiated revision's schema, as it goes. Three ways in, one
per way a client picks its revision: a ClientSession's initialize handshake (2025-11-25),
the SDK's default Client (mode "auto"), which probes `server/discover` and adopts
2026-07-28 from flowmem's answer, and a Client pinned to 2026-07-28 (mode "2026-07-28"),
which sends no probe and stamps every request. Where the SDK is not installed the
test is skipped with one line; under CI it fails instead (tests/components.py).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import unittest
from typing import Any, Dict, List

from tests.components import module
from tests.helpers import T0
from tests.server import ROOT


class McpSdkTest(unittest.TestCase):
    def setUp(self) -> None:
        module(self, "mcp", "mcp==2.3.0")
        from mcp.client.stdio import StdioServerParameters

        self.tmp = tempfile.mkdtemp(prefix="flowmem-mcp-sdk-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        environ.update(PYTHONPATH=ROOT, FLOWMEM_SYNCHRONOUS="NORMAL", FLOWMEM_LOG_LEVEL="WARNING")
        self.log = open(os.path.join(self.tmp, "stderr.log"), "w+")
        self.addCleanup(self.log.close)
        self.params = StdioServerParameters(command=sys.executable, cwd=ROOT, env=environ,
                                            args=["-m", "flowmem", "mcp", "--db", os.path.join(self.tmp, "m.db")])

    def run_async(self, scenario: Any) -> Any:
        return asyncio.run(asyncio.wait_for(scenario, timeout=120))

    def test_the_sdk_initializes_lists_the_tools_and_calls_each(self):
        from mcp.client.session import ClientSession
        from mcp.client.stdio import stdio_client
        from mcp_types.version import LATEST_HANDSHAKE_VERSION

        async def scenario() -> Dict[str, Any]:
            async with stdio_client(self.params, errlog=self.log) as (read, write):
                async with ClientSession(read, write) as session:
                    out: Dict[str, Any] = {"init": await session.initialize()}
                    await session.send_ping()
                    out["tools"] = (await session.list_tools()).tools
                    out["results"] = await self._call_each(session)
                    return out

        out = self.run_async(scenario())
        self.assertEqual(out["init"].protocol_version, LATEST_HANDSHAKE_VERSION)
        self.assertEqual(out["init"].server_info.name, "flowmem")
        self.assertIsNotNone(out["init"].capabilities.tools)
        self._check_tools(out["tools"])
        self._check_results(out["results"])

    def test_the_sdks_default_client_discovers_2026_07_28_and_calls_each_tool(self):
        from mcp.client.client import Client

        async def scenario() -> Dict[str, Any]:
            async with Client(self.params) as client:
                session = client.session
                return {"version": client.protocol_version, "server": client.server_info,
                        "discovered": session.discover_result, "initialized": session.initialize_result,
                        "results": await self._call_each(session)}

        out = self.run_async(scenario())
        self.assertEqual(out["version"], "2026-07-28")
        self.assertIsNone(out["initialized"])  # no handshake: the probe's answer was adopted
        self.assertEqual(out["discovered"].supported_versions, ["2026-07-28"])
        self.assertEqual(out["discovered"].cache_scope, "public")
        self.assertIsNotNone(out["discovered"].capabilities.tools)
        self.assertEqual(out["server"].name, "flowmem")  # from the serverInfo stamp in the result's _meta
        self._check_results(out["results"])

    def test_a_client_pinned_to_2026_07_28_lists_the_tools_and_calls_each(self):
        from mcp.client.client import Client

        async def scenario() -> Dict[str, Any]:
            async with Client(self.params, mode="2026-07-28") as client:
                return {"version": client.protocol_version, "tools": (await client.list_tools()).tools,
                        "results": await self._call_each(client.session)}

        out = self.run_async(scenario())
        self.assertEqual(out["version"], "2026-07-28")
        self._check_tools(out["tools"])
        self._check_results(out["results"])

    async def _call_each(self, session: Any) -> Dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        results: Dict[str, Any] = {
            "add": await session.call_tool("add_memory", {
                "user_id": "alice", "session_id": "2023-05-08", "messages": [
                    {"role": "user", "content": "Dana: I went to a pottery workshop yesterday", "timestamp": T0},
                    {"role": "assistant", "content": "Priya: What did you make?", "timestamp": T0}]}),
            "add_one": await session.call_tool("add_memory", {"user_id": "alice", "session_id": "later",
                                                              "content": "Dana: I bought a kiln"}),
            "search": await session.call_tool("search_memory", {"user_id": "alice", "query": "When was the pottery "
                                                                "workshop?", "top_k": 3}),
            "list": await session.call_tool("list_memories", {"user_id": "alice", "order": "desc", "limit": 2}),
            "bad": await session.call_tool("search_memory", {"user_id": "alice", "query": "x", "top_k": "ten"}),
            "delete": await session.call_tool("delete_memories", {"user_id": "alice", "session_id": "later"}),
            "delete_all": await session.call_tool("delete_memories", {"user_id": "alice", "all_sessions": True}),
        }
        try:
            await session.call_tool("no_such_tool", {})
            results["unknown"] = None
        except MCPError as e:
            results["unknown"] = e.code
        return results

    def _check_tools(self, tools: List[Any]) -> None:
        from jsonschema.validators import validator_for

        self.assertEqual(sorted(t.name for t in tools),
                         ["add_memory", "delete_memories", "list_memories", "search_memory"])
        for tool in tools:
            with self.subTest(tool=tool.name):
                for schema in (tool.input_schema, tool.output_schema):
                    validator_for(schema).check_schema(schema)  # a valid draft 2020-12 schema
                self.assertIn("user_id", tool.input_schema["properties"])

    def _check_results(self, results: Dict[str, Any]) -> None:
        for name in ("add", "add_one", "search", "list", "delete", "delete_all"):
            with self.subTest(call=name):
                result = results[name]
                self.assertFalse(result.is_error, result)
                self.assertEqual(json.loads(result.content[0].text), result.structured_content)
        self.assertTrue(results["add"].structured_content["success"])
        items = results["search"].structured_content["data"]
        self.assertIn("pottery workshop", items[0]["content"])
        listed = results["list"].structured_content
        self.assertEqual([m["content"] for m in listed["data"]], ["Dana: I bought a kiln", "Priya: What did you make?"])
        self.assertIsNotNone(listed["next_cursor"])
        self.assertTrue(results["bad"].is_error)
        self.assertIn("top_k must be an integer", results["bad"].content[0].text)
        self.assertEqual(results["delete"].structured_content["messages"], 1)
        self.assertTrue(results["delete_all"].structured_content["deleted"])
        self.assertEqual(results["unknown"], -32602)


if __name__ == "__main__":
    unittest.main()
