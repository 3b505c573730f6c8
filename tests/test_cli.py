"""The `flowmem` command as a user runs it, in this process (tests/cli_inprocess.py): add, search, stats, delete-user,
one-line errors, the settings tables; a real process only where it is the point (tests/test_cli_process.py)."""
import ast
import difflib
import json
import os
import tempfile
import unittest

from flowmem import cli, config as config_module
from flowmem.commands.export_import import numbered_bodies
from flowmem.commands.parser import metavar
from flowmem.errors import BadRequest, FlowmemError
from tests.cli_inprocess import InProcessCli
from tests.helpers import add_body

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_START = "<!-- settings: the output of `python -m flowmem settings`; tests/test_cli.py checks they match -->"
README_END = "<!-- end of settings -->"


class CliTest(InProcessCli, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-")
        self.addCleanup(self.tmp.cleanup)
        self.cli_dir = self.tmp.name
        self.db = os.path.join(self.tmp.name, "cli.db")

    def test_every_command_has_help(self):
        for command in ("serve", "add", "search", "list", "export", "import", "delete-message", "delete-user", "stats",
                        "init", "reindex", "backup", "settings", "cluster"):
            with self.subTest(command=command):
                result = self.run_cli(command, "--help")
                self.assertEqual(result.returncode, 0)
                self.assertIn("usage: flowmem " + command, result.stdout)
        self.assertIn("delete-user", self.run_cli("--help").stdout)

    def test_plain_search_output_says_when_results_are_a_fallback_by_meaning_or_the_latest(self):
        result = self.run_cli("add", "--db", self.db, "--user", "u1", "--session", "s1", "--content",
                              "She's a retired racing greyhound")
        self.assertEqual(result.returncode, 0, result.stderr)
        by_meaning = self.run_cli("search", "--db", self.db, "--user", "u1", "Do I have a dog?").stdout
        self.assertIn("nearest it in meaning", by_meaning.splitlines()[1])  # under the evidence line
        latest = self.run_cli("search", "--db", self.db, "--user", "u1", "qwzx?").stdout
        self.assertIn("its latest messages", latest.splitlines()[1])
        matched = self.run_cli("search", "--db", self.db, "--user", "u1", "greyhound").stdout
        self.assertTrue(matched.splitlines()[1].startswith("1. "), matched)

    def test_add_and_search_work_on_a_database_file_without_a_server(self):
        bodies = [add_body("u1", "s1", ["Alice: my cactus is named Spike", "Bob: cute"]),
                  add_body("u1", "s2", ["Alice: Spike got a new pot"])]
        result = self.run_cli("add", "--db", self.db, "--json", "-", stdin=json.dumps(bodies))
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
        self.assert_one_line_error(self.run_cli("search", "--db", self.db, "--user", "u", "--top-k", "-1", "x"),
                                   "top_k")
        self.assert_one_line_error(self.run_cli("stats", "--db", "/no/such/dir/x.db"), "x.db")
        self.assert_one_line_error(self.run_cli("stats", env={"FLOWMEM_PORT": "eighty"}), "FLOWMEM_PORT")
        junk = os.path.join(self.tmp.name, "junk.db")
        with open(junk, "wb") as f:
            f.write(b"garbage" * 1000)
        self.assert_one_line_error(self.run_cli("stats", "--db", junk), "junk.db")

    def test_the_settings_tables_in_docs_are_what_flowmem_settings_prints(self):
        result = self.run_cli("settings")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(ROOT, "docs", "operations.md"), encoding="utf-8") as f:
            readme = f.read()
        self.assertIn(README_START, readme)
        block = readme.split(README_START, 1)[1].split(README_END, 1)[0]
        if block.strip() != result.stdout.strip():
            diff = difflib.unified_diff(block.strip().splitlines(), result.stdout.strip().splitlines(),
                                        "docs/operations.md", "python -m flowmem settings", n=0, lineterm="")
            self.fail("docs/operations.md's settings tables differ from the code; paste the command's output there:\n"
                      + "\n".join(diff))

    def test_the_settings_tables_list_every_setting_once_with_its_help(self):
        table = cli.settings_table()
        for setting in config_module.settings():
            with self.subTest(setting=setting.name):
                rows = [line for line in table.splitlines() if "`%s`" % setting.variable in line]
                self.assertEqual(len(rows), 1)
                self.assertIn(setting.help.replace("<", "&lt;"), rows[0])
        self.assertIn("| `--api-key` | `FLOWMEM_API_KEY` |", table)

    def test_settings_prints_the_defaults_whatever_the_environment_says(self):
        result = self.run_cli("settings", env={"FLOWMEM_PORT": "eighty", "FLOWMEM_WORKERS": "3"})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("| `--port` | `FLOWMEM_PORT` | `8000` |", result.stdout)
        self.assertIn("| `--workers` | `FLOWMEM_WORKERS` | `8` |", result.stdout)

    def test_every_flag_shows_its_help_text_and_its_default_under_help_all(self):
        text = " ".join(self.run_cli("serve", "--help-all").stdout.split())
        for setting in config_module.settings():
            with self.subTest(setting=setting.name):
                self.assertIn("%s %s" % (cli.flag_name(setting.name), metavar(setting.name)), text)
                self.assertIn(" ".join(setting.help.split()), text)
        self.assertIn("default: 8000", text)
        self.assertIn("default: as the database was built (a new one: 3)", text)

    def test_search_takes_every_setting_but_the_servers_and_shows_them_under_help_all(self):
        text = " ".join(self.run_cli("search", "--help-all").stdout.split())
        self.assertIn("--db PATH", text)
        self.assertIn("--weight-bm25 X", text)
        self.assertIn("--stem 1|0", text)
        self.assertNotIn("--port", text)
        self.assertNotIn("--workers", text)


class UsageErrorTest(unittest.TestCase):
    """A command used wrongly is the CLI's own error, not an HTTP status."""

    def test_a_single_message_without_its_session_is_a_usage_error(self):
        tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-")
        self.addCleanup(tmp.cleanup)
        with self.assertRaises(cli.UsageError) as cm:
            cli.run(["add", "--db", os.path.join(tmp.name, "cli.db"), "--user", "u", "--content", "hello"])
        self.assertNotIsInstance(cm.exception, BadRequest)
        self.assertIsInstance(cm.exception, FlowmemError)  # so main() prints it as one line
        self.assertIn("--session", cm.exception.reason)

    def test_unreadable_input_is_a_usage_error_naming_its_line_and_cause(self):
        with self.assertRaises(cli.UsageError) as cm:
            list(numbered_bodies(b'{"request_id": "r"}\n{not json}\n'))
        self.assertNotIsInstance(cm.exception, BadRequest)
        self.assertTrue(cm.exception.reason.startswith("line 2: request body is not valid JSON"))
        self.assertIsInstance(cm.exception.__cause__, BadRequest)
        with self.assertRaises(cli.UsageError) as cm:
            list(numbered_bodies(b"[1, 2"))
        self.assertIsInstance(cm.exception.__cause__, ValueError)
        with self.assertRaises(cli.UsageError):
            list(numbered_bodies(b"[1, 2]"))

    def test_the_cli_takes_nothing_from_the_http_api_module(self):
        modules = set()
        commands = os.path.join(ROOT, "flowmem", "commands")
        for path in [os.path.join(ROOT, "flowmem", "cli.py")] + [os.path.join(commands, name) for name in
                                                                 sorted(os.listdir(commands)) if name.endswith(".py")]:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        self.assertNotIn("http.api", modules)
        self.assertIn("validation", modules)  # where the body decoder lives, for HTTP and CLI alike


if __name__ == "__main__":
    unittest.main()
