"""The `flowmem` command as a user meets it: short help, --help-all, one-line usage errors, export and import."""
import http.client
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr

from flowmem import cli_portable, config as config_module
from tests.helpers import DAY_MS, T0, CliMixin, add_body
from tests.server import ROOT, ServerProcess

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")
COMMANDS = ("serve", "add", "search", "export", "import", "delete-user", "stats", "init", "reindex", "backup",
            "mcp")
RANKING = [s for s in config_module.settings() if s.group in ("ranking", "results")]


def options(help_text):
    """The lines of a help text's "options:" section."""
    return help_text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0].splitlines()


class CliTestCase(CliMixin, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="flowmem-cli-")
        self.addCleanup(self.tmp.cleanup)
        self.cli_dir = self.tmp.name
        self.db = os.path.join(self.tmp.name, "cli.db")

    def path(self, name, text=None):
        path = os.path.join(self.tmp.name, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return path


class ShortHelpTest(CliTestCase):
    def test_each_commands_help_fits_a_screen_one_line_per_option_without_ranking_weights(self):
        for command in COMMANDS:
            with self.subTest(command=command):
                result = self.run_cli(command, "--help")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertLess(len(result.stdout.splitlines()), 30, result.stdout)
                self.assertTrue(all(len(line) <= 100 for line in result.stdout.splitlines()), result.stdout)
                for line in options(result.stdout):
                    self.assertTrue(line.startswith("  -"), "an option's help runs onto a second line: %r" % line)
                self.assertNotIn("--weight", result.stdout)
                self.assertNotIn("--bm25", result.stdout)
                self.assertIn("--help-all", result.stdout)

    def test_stats_and_delete_user_take_no_ranking_weights(self):
        for command in (["stats"], ["delete-user", "--user", "u"]):
            with self.subTest(command=command[0]):
                self.assertNotIn("--weight", self.run_cli(command[0], "--help-all").stdout)
                result = self.run_cli(*command, "--db", self.db, "--weight-bm25", "1")
                self.assert_one_line_error(result, "flowmem %s: error: unrecognized arguments: --weight-bm25"
                                           % command[0], "--help")

    def test_ranking_settings_are_under_help_all_of_serve_and_search(self):
        for command in ("serve", "search", "mcp"):
            with self.subTest(command=command):
                text = self.run_cli(command, "--help-all").stdout
                for setting in RANKING:
                    self.assertIn("--" + setting.name.replace("_", "-"), text)

    def test_serve_shows_the_key_the_key_file_and_where_the_rest_is(self):
        text = self.run_cli("serve", "--help").stdout
        for flag in ("--db PATH", "--host HOST", "--port N", "--api-key KEY", "--api-key-file FILE"):
            self.assertIn(flag, text)
        self.assertRegex(text, r"--help-all +also the \d+ other settings it takes")


class UsageErrorTest(CliTestCase):
    def test_a_usage_error_is_one_line_naming_the_command_and_its_help(self):
        cases = ((("serve", "--port", "x"), "flowmem serve: error: argument --port: invalid int value: 'x'"),
                 (("search", "--db", "x.db"), "flowmem search: error: the following arguments are required"),
                 (("serve", "--prot", "9"), "did you mean --port?"),
                 ((), "flowmem: error: the following arguments are required: COMMAND"))
        for args, words in cases:
            with self.subTest(args=args):
                result = self.run_cli(*args)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertIn(words, result.stderr)
                self.assertRegex(result.stderr, r"see flowmem( \w+)? --help\)$")

    def test_no_flag_is_taken_for_a_longer_one_it_begins(self):
        # --api-key abc once meant --api-key-file abc (argparse's abbreviations): now each is itself.
        result = self.run_cli("serve", "--api-k", "abc", "--db", self.db)
        self.assert_one_line_error(result, "unrecognized arguments: --api-k")
        self.assertFalse(os.path.exists(self.db))

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

    def test_add_names_the_input_line_that_fails(self):
        lines = [json.dumps(add_body("u", "s", ["A: one"])), "",
                 json.dumps({"request_id": "r", "user_id": "u", "session_id": "s",
                             "messages": [{"role": "user", "content": "  "}]})]
        result = self.run_cli("add", "--db", self.db, self.path("in.jsonl", "\n".join(lines)))
        self.assert_one_line_error(result, "flowmem: error: line 3: messages[0].content must not be blank")
        result = self.run_cli("add", "--db", self.db, "-", stdin=json.dumps([add_body("u", "s", ["A: x"]), {}]))
        self.assert_one_line_error(result, "item 1: request_id")


class SearchFiltersTest(CliTestCase):
    def test_search_takes_the_filters_as_flags(self):
        bodies = [add_body("u", "s1", ["Alice: the red kite flew", "Bob: the kite again"], timestamp=T0),
                  add_body("u", "s2", ["Alice: a kite in June"], timestamp=T0 + 30 * DAY_MS)]
        self.assertEqual(self.run_cli("add", "--db", self.db, "-", stdin=json.dumps(bodies)).returncode, 0)

        def sessions(*flags):
            result = self.run_cli("search", "--db", self.db, "--user", "u", "--json", "kite", *flags)
            self.assertEqual(result.returncode, 0, result.stderr)
            return {item["session_id"] for item in json.loads(result.stdout)["data"]}

        self.assertEqual(sessions(), {"s1", "s2"})
        self.assertEqual(sessions("--session", "s2"), {"s2"})
        self.assertEqual(sessions("--since", str(T0 + DAY_MS)), {"s2"})  # Unix ms
        self.assertEqual(sessions("--until", "2023-05-09"), {"s1"})  # ISO-8601
        self.assertEqual(sessions("--role", "assistant"), {"s1"})
        result = self.run_cli("search", "--db", self.db, "--user", "u", "kite", "--since", "2023-06-01",
                              "--until", "2023-05-01")
        self.assert_one_line_error(result, "filters.until must be later than filters.since")


class ExportImportTest(CliTestCase):
    def test_an_export_imported_elsewhere_answers_searches_byte_for_byte(self):
        bodies = [add_body("alice", "s1", ["Alice: my cactus is named Spike", "Bob: cute"]),
                  add_body("bob", "s1", ["Bob: I adopted a beagle"]),
                  add_body("alice", "s2", ["Alice: Spike got a new pot", "Bob: nice"])]
        self.assertEqual(self.run_cli("add", "--db", self.db, "-", stdin=json.dumps(bodies)).returncode, 0)
        dump = self.run_cli("export", "--db", self.db)
        self.assertEqual(dump.returncode, 0, dump.stderr)
        self.assertEqual(sorted(json.loads(line)["request_id"] for line in dump.stdout.splitlines()),
                         sorted(b["request_id"] for b in bodies))
        copy = self.path("copy.db")
        result = self.run_cli("import", "--db", copy, self.path("dump.jsonl", dump.stdout))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip().count("\n"), 0)
        self.assertIn("3 Adds, 3 stored, 0 already stored, 5 messages stored", result.stdout)
        again = self.run_cli("import", "--db", copy, "-", stdin=dump.stdout)
        self.assertIn("3 Adds, 0 stored, 3 already stored, 0 messages stored", again.stdout)
        self.assertEqual(self.run_cli("export", "--db", copy).stdout, dump.stdout)
        original, copied = (self.run_cli("search", "--db", db, "--user", "alice", "--json", "cactus")
                            for db in (self.db, copy))
        for result in (original, copied):
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Spike", original.stdout)
        self.assertEqual(copied.stdout, original.stdout)
        one = self.run_cli("export", "--db", self.db, "--user", "bob").stdout.splitlines()
        self.assertEqual([json.loads(line)["user_id"] for line in one], ["bob"])
        self.assert_one_line_error(self.run_cli("export", "--db", self.db, "--user", "carol"), "no user 'carol'")

    def test_a_locomo_file_imports_as_one_user_per_conversation(self):
        with open(SAMPLE, encoding="utf-8") as f:
            samples = json.load(f)
        result = self.run_cli("import", "--db", self.db, SAMPLE)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"^imported .* \(LoCoMo\) into .*: \d+ Adds, \d+ stored")
        stats = json.loads(self.run_cli("stats", "--db", self.db).stdout)
        self.assertEqual(stats["users"], len(samples))

    def test_a_bad_record_is_named_by_its_line_and_nothing_is_imported(self):
        good = json.dumps(add_body("u", "s", ["A: fine"]))
        bad = json.dumps({"request_id": "r", "user_id": "u", "session_id": "s",
                          "messages": [{"role": "user", "content": ""}]})
        result = self.run_cli("import", "--db", self.db, self.path("bad.jsonl", "\n".join([good, "", bad])))
        self.assert_one_line_error(result, "line 3: messages[0].content must not be blank", "nothing was imported")
        self.assertFalse(os.path.exists(self.db))
        self.assert_one_line_error(self.run_cli("import", "--db", self.db, self.path("broken.jsonl", good + "\n{x")),
                                   "line 2: request body is not valid JSON")
        self.assertFalse(os.path.exists(self.db))

    def test_a_long_run_reports_progress_on_stderr_at_intervals(self):
        now = [0.0]
        progress = cli_portable.Progress("import f", clock=lambda: now[0])
        stderr = io.StringIO()
        with redirect_stderr(stderr):
            progress("1 of 9 Adds imported")  # too soon: nothing
            now[0] = cli_portable.PROGRESS_EVERY_S
            progress("5 of 9 Adds imported")
            progress("6 of 9 Adds imported")  # too soon again
            progress("9 of 9 Adds imported", final=True)  # the last word once anything was said
        self.assertEqual(stderr.getvalue().splitlines(),
                         ["flowmem: import f: 5 of 9 Adds imported", "flowmem: import f: 9 of 9 Adds imported"])
        quiet = cli_portable.Progress("export", clock=lambda: 0.0)
        with redirect_stderr(stderr):
            quiet("done", final=True)  # a short run says nothing
        self.assertEqual(len(stderr.getvalue().splitlines()), 2)


if __name__ == "__main__":
    unittest.main()
