"""The `flowmem` command in a child process, where a real process is the point: `python -m flowmem` as the
entry point, standard input from a real pipe and settings from the real environment, a server's port and its
key warning. Every other check of the CLI runs in-process (tests/test_cli.py, tests/test_cli_help.py)."""
import http.client
import json
import os
import socket
import tempfile
import unittest

from flowmem import __version__
from tests.helpers import CliMixin, add_body
from tests.server import ServerProcess


class ProcessTest(CliMixin, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-")
        self.addCleanup(self.tmp.cleanup)
        self.cli_dir = self.tmp.name
        self.db = os.path.join(self.tmp.name, "cli.db")

    def test_python_dash_m_flowmem_runs_the_command_and_says_its_version(self):
        result = self.run_cli("--version")
        self.assertEqual((result.returncode, result.stdout), (0, "flowmem %s\n" % __version__), result.stderr)
        self.assertIn("usage: flowmem search", self.run_cli("search", "--help").stdout)
        self.assert_one_line_error(self.run_cli("serch"), "did you mean 'search'?")

    def test_add_reads_a_pipe_and_the_database_named_in_the_environment(self):
        env = {"FLOWMEM_DB": "from-env.db"}  # relative: the process's own working directory
        bodies = "\n".join(json.dumps(add_body("u", "s%d" % i, ["A: my cactus is named Spike"])) for i in range(2))
        result = self.run_cli("add", "-", stdin=bodies, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.splitlines()), 2)
        self.assertTrue(os.path.exists(os.path.join(self.tmp.name, "from-env.db")))
        found = json.loads(self.run_cli("search", "--user", "u", "--json", "cactus", env=env).stdout)
        self.assertIn("Spike", found["data"][0]["content"])

    def test_a_port_in_use_is_named_with_the_flag_that_chooses_another(self):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        self.addCleanup(sock.close)
        port = sock.getsockname()[1]
        result = self.run_cli("serve", "--db", self.db, "--host", "127.0.0.1", "--port", str(port))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.strip().splitlines()[-1],
                         "flowmem: error: port %d is in use on 127.0.0.1; choose another with --port" % port)
        self.assertNotIn("Traceback", result.stderr)

    def test_a_key_given_as_a_flag_is_the_key_and_a_warning_says_it_shows_in_ps(self):
        server = ServerProcess(self.db, ["--api-key", "abc"])
        try:
            for key, status in ((None, 401), ("abc", 200)):
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
                conn.request("POST", "/search", json.dumps({"query": "x", "user_id": "u", "top_k": 1}),
                             dict({"Content-Type": "application/json"}, **({"X-Api-Key": key} if key else {})))
                self.assertEqual(conn.getresponse().status, status)
                conn.close()
        finally:
            server.stop()
        self.assertIn("flowmem: warning: a key given on the command line shows in `ps`", server.log())


if __name__ == "__main__":
    unittest.main()
