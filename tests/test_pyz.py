"""`make pyz`: flowmem as one zip application that serves, adds and searches with nothing unpacked.

The archive is built once (tools/build_pyz.py) into a temporary directory and run with
`python -I` from that directory: isolated mode reads no PYTHONPATH and no user site, so
flowmem can only come from the archive, and the lexicons (which the wedding/married
search needs) from inside it.
"""
import http.client
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

from flowmem.client import Client
from tests.server import ROOT, start_server, stop_server
from tools import build_pyz


class PyzTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="flowmem-pyz-")
        cls.pyz = build_pyz.build(os.path.join(cls.tmp.name, "flowmem.pyz"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_pyz(self, *args):
        return subprocess.run([sys.executable, "-I", self.pyz] + list(args), capture_output=True, text=True,
                              cwd=self.tmp.name, timeout=120)

    def test_the_archive_holds_the_package_and_its_data_files_and_no_compiled_code(self):
        with zipfile.ZipFile(self.pyz) as archive:
            names = set(archive.namelist())
        with open(self.pyz, "rb") as f:
            self.assertEqual(f.readline(), b"#!/usr/bin/env python3\n")
        for name in ("__main__.py", "flowmem/cli.py", "flowmem/text/data/lexicon.tsv.gz",
                     "flowmem/text/data/lexicon-zh.tsv.gz", "flowmem/text/data/WORDNET-LICENSE"):
            self.assertIn(name, names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])

    def test_it_says_its_version(self):
        from flowmem import __version__
        result = self.run_pyz("--version")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "flowmem " + __version__)

    def test_it_serves_health_add_and_search_through_the_archive(self):
        db = os.path.join(self.tmp.name, "served.db")
        proc, port, log = start_server([sys.executable, "-I", self.pyz, "serve", "--port", "0", "--db", db],
                                       None, self.tmp.name)
        client = Client("http://127.0.0.1:%d" % port)
        try:
            health = client.request("GET", "/health")
            self.assertEqual(health["status"], "ok")
            added = client.request("POST", "/add", {
                "request_id": "r1", "user_id": "dana", "session_id": "s1",
                "messages": [{"role": "user", "content": "Dana: we got married on the beach last June"},
                             {"role": "assistant", "content": "Priya: congratulations!"}]})
            self.assertTrue(added["success"])
            # "wedding" is not said: the English lexicon, read from inside the archive, bridges it to "married".
            found = client.request("POST", "/search", {"query": "Where was the wedding?", "user_id": "dana",
                                                       "top_k": 1})["data"]
            self.assertIn("married on the beach", found[0]["content"])
            self.assertGreater(found[0]["score"], 0)
            # the page itself, read from the archive, not its placeholder
            with open(os.path.join(ROOT, "flowmem", "http", "inspector.html"), "rb") as f:
                self.assertEqual(self._get(port, "/ui"), f.read())
        finally:
            self.assertEqual(stop_server(proc), 0, "".join(log))

    def _get(self, port, path):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            payload = response.read()
            self.assertEqual(response.status, 200, payload)
            return payload
        finally:
            conn.close()


if __name__ == "__main__":
    unittest.main()
