"""The `flowmem` command, run as a user would: `python -m flowmem ...` in a child process."""
import json
import os
import tempfile
import unittest

from tests.helpers import CliMixin, add_body


class CliTest(CliMixin, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-")
        self.addCleanup(self.tmp.cleanup)
        self.cli_dir = self.tmp.name
        self.db = os.path.join(self.tmp.name, "cli.db")

    def test_every_command_has_help(self):
        for command in ("serve", "add", "search", "delete-user", "stats", "init", "reindex", "backup"):
            with self.subTest(command=command):
                result = self.run_cli(command, "--help")
                self.assertEqual(result.returncode, 0)
                self.assertIn("usage: flowmem " + command, result.stdout)
        self.assertIn("delete-user", self.run_cli("--help").stdout)

    def test_add_and_search_work_on_a_database_file_without_a_server(self):
        bodies = [add_body("u1", "s1", ["Alice: my cactus is named Spike", "Bob: cute"]),
                  add_body("u1", "s2", ["Alice: Spike got a new pot"])]
        result = self.run_cli("add", "--db", self.db, "-", stdin=json.dumps(bodies))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([json.loads(line)["success"] for line in result.stdout.splitlines()], [True, True])
        result = self.run_cli("add", "--db", self.db, "--user", "u1", "--session", "s3", "--content",
                              "Alice: Spike flowered today", "--timestamp", "1683554160000")
        self.assertEqual(result.returncode, 0, result.stderr)
        result = self.run_cli("search", "--db", self.db, "--user", "u1", "--top-k", "2", "--json",
                              "What is the cactus called?")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)["data"]
        self.assertEqual(len(data), 2)
        self.assertIn("cactus", data[0]["content"])
        human = self.run_cli("search", "--db", self.db, "--user", "u1", "Spike flowered")
        self.assertIn("Alice: Spike flowered today", human.stdout)
        self.assertIn("2023-05-08T13:56:00.000+00:00", human.stdout)

    def test_json_lines_input_and_environment_database(self):
        lines = "\n".join(json.dumps(add_body("u%d" % i, "s", ["A: line %d" % i])) for i in range(3))
        path = os.path.join(self.tmp.name, "bodies.jsonl")
        with open(path, "w") as f:
            f.write(lines)
        env = {"FLOWMEM_DB": self.db}
        self.assertEqual(self.run_cli("add", path, env=env).returncode, 0)
        stats = json.loads(self.run_cli("stats", env=env).stdout)
        self.assertEqual((stats["users"], stats["messages"]), (3, 3))

    def test_delete_user_and_stats(self):
        self.run_cli("add", "--db", self.db, "-", stdin=json.dumps(add_body("gone", "s", ["A: bye", "B: bye"])))
        self.assertEqual(json.loads(self.run_cli("stats", "--db", self.db, "--user", "gone").stdout)["messages"], 2)
        result = self.run_cli("delete-user", "--db", self.db, "--user", "gone")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(json.loads(self.run_cli("stats", "--db", self.db, "--user", "gone").stdout)["exists"])
        self.assert_one_line_error(self.run_cli("delete-user", "--db", self.db, "--user", "gone"), "no user")

    def test_errors_are_one_line_without_traceback(self):
        self.assert_one_line_error(self.run_cli("add", "--db", self.db, "-", stdin="{not json"), "JSON")
        self.assert_one_line_error(
            self.run_cli("add", "--db", self.db, "-", stdin=json.dumps({"user_id": "u"})), "request_id")
        self.assert_one_line_error(self.run_cli("add", "--db", self.db, "/no/such/file.json"), "No such file")
        self.assert_one_line_error(self.run_cli("add", "--db", self.db, "--user", "u"), "--session")
        self.assert_one_line_error(self.run_cli("search", "--db", self.db, "--user", "u", "--top-k", "-1", "x"), "top_k")
        self.assert_one_line_error(self.run_cli("stats", "--db", "/no/such/dir/x.db"), "x.db")
        self.assert_one_line_error(self.run_cli("stats", env={"FLOWMEM_PORT": "eighty"}), "FLOWMEM_PORT")
        junk = os.path.join(self.tmp.name, "junk.db")
        with open(junk, "wb") as f:
            f.write(b"garbage" * 1000)
        self.assert_one_line_error(self.run_cli("stats", "--db", junk), "junk.db")

    def test_serve_reports_a_busy_port_in_one_line(self):
        import socket
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        self.addCleanup(sock.close)
        result = self.run_cli("serve", "--db", self.db, "--port", str(sock.getsockname()[1]))
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("Traceback", result.stderr)
        self.assertIn("flowmem: error:", result.stderr)


if __name__ == "__main__":
    unittest.main()
