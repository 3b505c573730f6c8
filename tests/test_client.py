"""flowmem.Client against a real server (tests/server.py): Memory's calls, answers and errors over HTTP."""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, List

import flowmem
from flowmem.client import Client
from flowmem.config import load
from flowmem.errors import InvalidField, MethodNotAllowed, NotFound, Unauthorized, Unavailable
from flowmem.memory import Memory
from tests.helpers import DAY_MS, T0, add_body
from tests.server import ROOT, ServerProcess

ODD_USER = "team/a 100% é\u4e2d"


class ClientTestCase(unittest.TestCase):
    """One server (with a key) for the class, and a Memory on another file given the same Adds."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="flowmem-client-")
        cls.server = ServerProcess(cls.tmp + "/served.db", env={"FLOWMEM_API_KEY": "k"})
        cls.client = Client(cls.server.endpoint, api_key="k", timeout=30)
        cls.memory = Memory(load({"db": cls.tmp + "/local.db", "synchronous": "NORMAL"}, environ={}))

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.memory.close()
        shutil.rmtree(cls.tmp, True)

    def both(self, body):
        """Store an Add on the server (through the client) and in the local Memory: the same answer."""
        self.assertEqual(self.client.add(body), self.memory.add(body))


class SameAnswersTest(ClientTestCase):
    def test_every_call_answers_what_memory_answers(self):
        for i in range(4):
            self.both(add_body(ODD_USER, "s/%d" % (i % 2), ["Alice: kayak trip %d" % i, "Bob: nice %d" % i],
                               "r%d" % i, timestamp=T0 + i * DAY_MS))
        search = {"query": "kayak trip", "user_id": ODD_USER, "top_k": 5}
        self.assertEqual(self.client.search(search), self.memory.search(search))
        filtered = dict(search, filters={"session_id": "s/1", "since": T0 + DAY_MS, "role": "user"})
        self.assertEqual(self.client.search(filtered), self.memory.search(filtered))
        self.assertEqual({i["session_id"] for i in self.client.search(filtered)["data"]}, {"s/1"})
        with self.assertRaises(InvalidField) as caught:
            self.client.search(dict(search, filters={"sesion_id": "s/1"}))
        self.assertEqual(caught.exception.field, "filters.sesion_id")
        self.assertEqual(self.client.list_sessions(ODD_USER), self.memory.list_sessions(ODD_USER))
        for kwargs in ({}, {"order": "desc", "limit": 3}, {"session_id": "s/1"}, {"since": T0 + DAY_MS},
                       {"until": "2023-05-10"}):
            with self.subTest(kwargs=kwargs):
                self.assertEqual(self.client.list_messages(ODD_USER, **kwargs),
                                 self.memory.list_messages(ODD_USER, **kwargs))
        first = self.memory.list_messages(ODD_USER, limit=2)
        self.assertEqual(self.client.list_messages(ODD_USER, limit=2, cursor=first["next_cursor"]),
                         self.memory.list_messages(ODD_USER, limit=2, cursor=first["next_cursor"]))
        message_id = first["data"][1]["id"]
        self.assertEqual(self.client.get_message(ODD_USER, message_id), self.memory.get_message(ODD_USER, message_id))
        self.assertIn(ODD_USER, [u["user_id"] for u in self.client.list_users(limit=1000)["data"]])
        self.assertEqual(list(self.client.user_ids()), list(self.memory.user_ids()))
        self.assertEqual(list(self.client.export(ODD_USER)), list(self.memory.export(ODD_USER)))
        self.assertEqual(self.client.health()["status"], "ok")

    def test_deletes_answer_as_memory_does(self):
        body = add_body("deleted-user", "s1", ["Alice: soon gone"], "d1")
        self.both(body)
        self.both(dict(body, session_id="s2", request_id="d2"))
        self.assertEqual(self.client.delete_session("deleted-user", "s1"),
                         self.memory.delete_session("deleted-user", "s1"))
        self.assertEqual(self.client.delete_session("deleted-user", "s1")["deleted"], False)
        self.assertEqual(self.client.delete_user("deleted-user"), self.memory.delete_user("deleted-user"))
        self.assertEqual(self.client.list_messages("deleted-user")["data"], [])


class ErrorsTest(ClientTestCase):
    def test_the_servers_errors_are_raised_as_their_flowmem_errors_with_its_reason(self):
        with self.assertRaises(InvalidField) as caught:
            self.client.add({"request_id": "x", "user_id": "u", "session_id": "s", "messages": []})
        self.assertEqual((caught.exception.field, caught.exception.status), ("messages", 422))
        self.assertEqual(caught.exception.reason, "messages must not be empty")
        with self.assertRaises(InvalidField) as caught:
            self.client.list_messages("u", limit=0)
        self.assertEqual(caught.exception.field, "limit")
        with self.assertRaises(NotFound):
            self.client.get_message("nobody", "m-0123456789abcdef-1")
        with self.assertRaises(Unauthorized):
            Client(self.server.endpoint, api_key="wrong").list_users()
        with self.assertRaises(MethodNotAllowed) as caught:
            self.client.request("PUT", "/users")
        self.assertEqual(caught.exception.allow, "GET, HEAD")

    def test_a_server_that_cannot_be_reached_is_unavailable(self):
        with self.assertRaises(Unavailable) as caught:
            Client("http://127.0.0.1:9", timeout=5).health()
        self.assertEqual(caught.exception.status, 503)
        self.assertIn("cannot reach", caught.exception.reason)


class ExportImportTest(ClientTestCase):
    def test_an_export_of_many_pages_imported_in_small_batches_gives_the_same_search_results(self):
        for user in ("ex-a", "ex-b"):
            for i in range(7):
                self.client.add(add_body(user, "s%d" % (i // 3), ["Alice: canoe %d %s" % (i, user), "Bob: ok"],
                                         "%s-%d" % (user, i)))
        exporter = Client(self.server.endpoint, api_key="k")
        exporter.export_page_size = 2
        records = [r for r in exporter.export() if r["user_id"] in ("ex-a", "ex-b")]
        self.assertEqual([r["request_id"] for r in records], ["ex-a-%d" % i for i in range(7)] +
                         ["ex-b-%d" % i for i in range(7)])
        other = ServerProcess(self.tmp + "/other.db", env={"FLOWMEM_API_KEY": "k"})
        self.addCleanup(other.stop)
        importer = Client(other.endpoint, api_key="k", max_body_bytes=600)
        seen = []
        result = importer.import_records(records, progress=lambda done, total: seen.append((done, total)))
        self.assertEqual(result, {"requests": 14, "stored": 14, "already_stored": 0, "messages": 28})
        self.assertGreater(len(seen), 2)  # several batches
        self.assertEqual(seen[-1], (14, 14))
        self.assertEqual(importer.import_records(iter(records))["already_stored"], 14)
        for user in ("ex-a", "ex-b"):
            search = {"query": "canoe", "user_id": user, "top_k": 10}
            self.assertEqual(importer.search(search), self.client.search(search))

    def test_every_import_batch_is_within_the_body_limit_however_many_records_it_holds(self):
        sizes: List[int] = []

        class Measured(Client):
            def request(self, method: str, path: str, body: Any = None, query: Any = None) -> Any:
                sizes.append(len(json.dumps(body, ensure_ascii=False).encode("utf-8")))
                return {"requests": len(body["records"])}

        records = [add_body("many", "s1", ["é %d" % i], "m%d" % i) for i in range(3000)]
        self.assertEqual(Measured("http://127.0.0.1:9", max_body_bytes=20000).import_records(records)["requests"], 3000)
        self.assertGreater(len(sizes), 10)
        self.assertLessEqual(max(sizes), 20000)

    def test_a_bad_record_is_named_by_its_index_in_the_whole_import(self):
        records = [add_body("bad-import", "s1", ["Alice: %d" % i], "b%d" % i) for i in range(9)]
        records[7]["messages"][0]["timestamp"] = 1717236000
        importer = Client(self.server.endpoint, api_key="k", max_body_bytes=400)
        with self.assertRaises(InvalidField) as caught:
            importer.import_records(records)
        self.assertTrue(caught.exception.reason.startswith("records[7].messages[0].timestamp"),
                        caught.exception.reason)
        with self.assertRaises(InvalidField) as caught:
            importer.import_records([{"request_id": "x"}])
        self.assertEqual(caught.exception.field, "records[0].user_id")


class PackageTest(unittest.TestCase):
    def test_memory_and_client_are_named_by_the_package_and_loaded_only_when_used(self):
        self.assertIs(flowmem.Client, Client)
        self.assertIs(flowmem.Memory, Memory)
        code = "import sys, flowmem; print('flowmem.memory' in sys.modules, 'flowmem.client' in sys.modules)"
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.split(), ["False", "False"])
        with self.assertRaises(AttributeError):
            flowmem.Nothing  # noqa: B018


if __name__ == "__main__":
    unittest.main()
