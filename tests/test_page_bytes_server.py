"""Pages bounded in bytes through a real server and the CLI as a process: the bound given as
FLOWMEM_PAGE_MAX_BYTES reaches both, and flowmem.Client and `flowmem export` still walk every row once, in
order. End-to-end tier; the pages themselves are tested in process in tests/test_page_bytes.py.
"""
from __future__ import annotations

import json
import unittest

from flowmem.client import Client
from tests.helpers import CliMixin
from tests.server import ServerProcess
from tests.test_page_bytes import BIG, BOUND, HUGE, BoundedPagesTestCase, contents, walked


class ServerTest(BoundedPagesTestCase, CliMixin):
    """A real server and the CLI, with the bound given as FLOWMEM_PAGE_MAX_BYTES."""

    def test_the_client_and_the_cli_walk_every_message_and_add_through_short_pages(self):
        stored = self.store([BIG] * 7 + [HUGE] + [BIG] * 3)
        self.memory.close()
        env = {"FLOWMEM_PAGE_MAX_BYTES": str(BOUND)}
        server = ServerProcess(self.db_path(), env=env)
        try:
            client = Client(server.endpoint)
            first = client.list_messages("u", limit=1000)
            self.assertEqual(contents(first), stored[:3])
            listed = walked(lambda c: client.list_messages("u", limit=1000, cursor=c))
            self.assertEqual([m["content"] for m in listed], stored)
            self.assertEqual([r["messages"][0]["content"] for r in client.export("u")], stored)
        finally:
            server.stop()
        self.cli_dir = self.tmp
        result = self.run_cli("export", "--db", self.db_path(), env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual([r["messages"][0]["content"] for r in lines], stored)



if __name__ == "__main__":
    unittest.main()
