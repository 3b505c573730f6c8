"""The `flowmem` command as a user meets it: short help, --help-all, one-line usage errors, export and import;
list, delete-message, an idempotent add, fallback results marked line by line, a mistyped command and a --db
that cannot be one; in this process (tests/cli_inprocess.py)."""
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr

from flowmem import config as config_module
from flowmem.commands import export_import
from tests.cli_inprocess import InProcessCli
from tests.helpers import DAY_MS, T0, add_body
from tests.server import ROOT

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")
COMMANDS = ("serve", "add", "search", "list", "export", "import", "delete-message", "delete-user", "stats", "init",
            "reindex", "backup", "mcp")  # settings and cluster read no settings: no --help-all
RANKING = [s for s in config_module.settings() if s.group in ("ranking", "results")]


def options(help_text):
    """The lines of a help text's "options:" section."""
    return help_text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0].splitlines()


class CliTestCase(InProcessCli, unittest.TestCase):
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

    def ok(self, *args, stdin=None):
        """The stdout of a command that must succeed."""
        result = self.run_cli(*args, stdin=stdin)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def add(self, *bodies):
        self.ok("add", "--db", self.db, "--json", "-", stdin=json.dumps(list(bodies)))


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

    def test_an_import_with_a_misspelt_field_is_refused_naming_its_line_and_nothing_is_written(self):
        good = add_body("alice", "s1", ["Alice: one"])
        bad = add_body("alice", "s1", ["Alice: two"], "r2")
        bad["messages"][0]["metdata"] = {"topic": "pets"}
        lines = "\n".join(json.dumps(b) for b in (good, bad)) + "\n"
        copy = self.path("copy.db")
        self.assert_one_line_error(self.run_cli("import", "--db", copy, "-", stdin=lines), "line 2",
                                   "messages[0].metdata")
        self.assertFalse(os.path.exists(copy))

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
        progress = export_import.Progress("import f", clock=lambda: now[0])
        stderr = io.StringIO()
        with redirect_stderr(stderr):
            progress("1 of 9 Adds imported")  # too soon: nothing
            now[0] = export_import.PROGRESS_EVERY_S
            progress("5 of 9 Adds imported")
            progress("6 of 9 Adds imported")  # too soon again
            progress("9 of 9 Adds imported", final=True)  # the last word once anything was said
        self.assertEqual(stderr.getvalue().splitlines(),
                         ["flowmem: import f: 5 of 9 Adds imported", "flowmem: import f: 9 of 9 Adds imported"])
        quiet = export_import.Progress("export", clock=lambda: 0.0)
        with redirect_stderr(stderr):
            quiet("done", final=True)  # a short run says nothing
        self.assertEqual(len(stderr.getvalue().splitlines()), 2)



class ListTest(CliTestCase):
    def setUp(self):
        super().setUp()
        self.add(add_body("alice", "s1", ["Alice: my cactus is named Spike", "Bob: cute"], timestamp=T0),
                 add_body("alice", "s2", ["Alice: " + "a very long story " * 20], timestamp=T0 + DAY_MS),
                 add_body("bob", "s1", ["Bob: I adopted a beagle"], timestamp=T0))

    def test_list_shows_a_users_messages_one_line_each_oldest_first_following_every_page(self):
        # --page-max-bytes 1: each page holds one message, so all three come only by following the cursors
        lines = self.ok("list", "--db", self.db, "--user", "alice", "--page-max-bytes", "1").splitlines()
        self.assertEqual(len(lines), 3, lines)
        first = lines[0].split("  ")
        self.assertRegex(first[0], r"^m-[0-9a-f]{16}-1$")
        self.assertEqual(first[1:], ["2023-05-08 13:56", "s1", "user", "Alice: my cactus is named Spike"])
        self.assertIn("  assistant  Bob: cute", lines[1])
        self.assertTrue(lines[2].endswith("  Alice: a very long story a very long story a very long story a very l..."),
                        lines[2])  # clipped to one line

    def test_list_takes_the_message_filters_and_a_limit(self):
        def contents(*flags):
            listed = self.ok("list", "--db", self.db, "--user", "alice", "--json", *flags)
            return [json.loads(line)["content"][:12] for line in listed.splitlines()]

        self.assertEqual(contents("--session", "s1"), ["Alice: my ca", "Bob: cute"])
        self.assertEqual(contents("--since", str(T0 + DAY_MS)), ["Alice: a ver"])
        self.assertEqual(contents("--until", "2023-05-09"), ["Alice: my ca", "Bob: cute"])
        self.assertEqual(contents("--order", "desc", "--limit", "2"), ["Alice: a ver", "Bob: cute"])
        cut = self.run_cli("list", "--db", self.db, "--user", "alice", "--limit", "1")
        self.assertEqual(len(cut.stdout.splitlines()), 1)
        self.assertIn("only the first 1 shown (--limit 1); more follow", cut.stderr)
        self.assertEqual(self.run_cli("list", "--db", self.db, "--user", "alice", "--limit", "3").stderr, "")

    def test_list_filters_by_metadata(self):
        self.ok("add", "--db", self.db, "--user", "alice", "--session", "s3", "--content", "tagged",
                "--metadata", '{"topic": "plants"}')
        listed = self.ok("list", "--db", self.db, "--user", "alice", "--json", "--metadata", '{"topic": "plants"}')
        rows = [json.loads(line) for line in listed.splitlines()]
        self.assertEqual([(r["content"], r["metadata"]) for r in rows], [("tagged", {"topic": "plants"})])
        self.assertEqual(self.ok("list", "--db", self.db, "--user", "alice", "--metadata", '{"topic": "x"}'),
                         "no messages\n")
        self.assert_one_line_error(self.run_cli("list", "--db", self.db, "--user", "alice", "--metadata", "[1]"),
                                   "--metadata must be a JSON object")

    def test_list_sessions_and_list_users(self):
        self.assertEqual(self.ok("list", "sessions", "--db", self.db, "--user", "alice").splitlines(),
                         ["s1  2 messages  2023-05-08 13:56 .. 2023-05-08 13:56",
                          "s2  1 message  2023-05-09 13:56 .. 2023-05-09 13:56"])
        self.assertEqual(self.ok("list", "users", "--db", self.db).splitlines(),
                         ["alice  2 sessions  3 messages", "bob  1 session  1 message"])
        users = self.ok("list", "users", "--db", self.db, "--json").splitlines()
        self.assertEqual(json.loads(users[1]), {"user_id": "bob", "sessions": 1, "messages": 1})

    def test_list_refuses_what_does_not_go_with_what_it_lists(self):
        cases = ((("list", "sessions", "--user", "alice", "--since", "2023-01-01"),
                  "--since filters only messages, not sessions"),
                 (("list", "users", "--user", "alice"), "--user goes with"),
                 (("list",), "give --user"),
                 (("list", "sessons", "--user", "alice"), "unknown choice 'sessons'; did you mean 'sessions'?"))
        for args, words in cases:
            with self.subTest(args=args):
                self.assert_one_line_error(self.run_cli(*args, "--db", self.db), words)


class AddTest(CliTestCase):
    def test_the_same_words_added_again_are_stored_again_unless_the_request_id_is_given(self):
        base = ("add", "--db", self.db, "--user", "u", "--session", "s", "--content")
        for word in ("yes", "no", "yes"):
            self.assertRegex(self.ok(*base, word), r"^stored 1 message \(user u, session s, request_id \S+\); 1 dated")
        listed = self.ok("list", "--db", self.db, "--user", "u", "--json").splitlines()
        self.assertEqual([json.loads(line)["content"] for line in listed], ["yes", "no", "yes"])
        named = base[:-1] + ("--request-id", "retry-1", "--content", "maybe")
        self.ok(*named)
        self.assertEqual(self.ok(*named).split(":")[0], "already stored")  # a rerun with its id stores once
        response = json.loads(self.ok(*named, "--json"))
        self.assertEqual((response["success"], response["stored"]), (True, False))
        self.assertEqual(json.loads(self.ok("stats", "--db", self.db, "--user", "u"))["messages"], 4)

    def test_a_request_id_used_before_for_other_messages_stores_nothing_and_says_it_differs(self):
        base = ("add", "--db", self.db, "--user", "u", "--session", "s", "--request-id", "r1", "--content")
        self.assertTrue(self.ok(*base, "first").startswith("stored 1 message"))
        said = self.ok(*base, "second")
        self.assertIn("nothing written: request_id r1 was stored before with other messages", said)
        listed = self.ok("list", "--db", self.db, "--user", "u", "--json").splitlines()
        self.assertEqual([json.loads(line)["content"] for line in listed], ["first"])

    def test_add_stores_metadata_and_names_each_body_of_a_file_by_its_line(self):
        self.ok("add", "--db", self.db, "--user", "u", "--session", "s", "--content", "x", "--timestamp", str(T0),
                "--metadata", '{"source": "notes"}')
        row = json.loads(self.ok("list", "--db", self.db, "--user", "u", "--json"))
        self.assertEqual((row["metadata"], row["dated_on_receipt"]), ({"source": "notes"}, False))
        lines = "\n".join(json.dumps(add_body("u", "s%d" % i, ["A: one", "B: two"])) for i in range(2))
        said = self.ok("add", "--db", self.db, "-", stdin=lines).splitlines()
        self.assertEqual([line.split(" (")[0] for line in said], ["line 1: stored 2 messages",
                                                                  "line 2: stored 2 messages"])
        again = self.ok("add", "--db", self.db, "-", stdin=lines).splitlines()
        self.assertTrue(all(" already stored: nothing written" in line for line in again), again)

    def test_single_message_flags_beside_a_file_are_refused_not_ignored(self):
        result = self.run_cli("add", "--db", self.db, "--request-id", "r", "-", stdin=json.dumps(add_body("u", "s",
                                                                                                          ["A: x"])))
        self.assert_one_line_error(result, "--request-id describes a single message")
        self.assertFalse(os.path.exists(self.db))
        self.assert_one_line_error(self.run_cli("add", "--db", self.db, "--user", "u", "--session", "s",
                                                "--content", "x", "--metadata", "{"), "--metadata is not valid JSON")


class DeleteMessageTest(CliTestCase):
    def test_delete_message_forgets_one_message_and_says_when_there_is_none(self):
        self.add(add_body("u", "s", ["A: keep this", "B: forget this"]))
        ids = [line.split("  ")[0] for line in self.ok("list", "--db", self.db, "--user", "u").splitlines()]
        said = self.ok("delete-message", "--db", self.db, "--user", "u", ids[1])
        self.assertEqual(said, "deleted message %s (user 'u', session 's')\n" % ids[1])
        self.assertEqual([line.split("  ")[0] for line in self.ok("list", "--db", self.db, "--user", "u").splitlines()],
                         ids[:1])
        self.assert_one_line_error(self.run_cli("delete-message", "--db", self.db, "--user", "u", ids[1]),
                                   "no message %s of user 'u'" % ids[1])


class PlainOutputTest(CliTestCase):
    def test_every_line_of_a_fallback_result_says_it_is_not_a_match(self):
        self.add(add_body("u", "s", ["A: my cactus is named Spike", "B: cute"]))
        lines = [line for line in self.ok("search", "--db", self.db, "--user", "u", "qwzx").splitlines()
                 if line[:1].isdigit()]
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertTrue(line.endswith("(no match: a latest message)"), line)
        matched = [line for line in self.ok("search", "--db", self.db, "--user", "u", "cactus").splitlines()
                   if line[:1].isdigit()]
        self.assertNotIn("(no match", matched[0])

    def test_a_mistyped_command_gets_the_nearest_and_status_2(self):
        result = self.run_cli("serch", "--db", self.db, "--user", "u", "x")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr, "flowmem: error: unknown command 'serch'; did you mean 'search'? "
                                        "(see flowmem --help)\n")
        self.assert_one_line_error(self.run_cli("qqqq"), "unknown command 'qqqq'; choose from serve, add,")


class ClearErrorsTest(CliTestCase):
    def test_a_db_that_cannot_be_a_database_file_is_named_and_nothing_is_created(self):
        missing = os.path.join(self.tmp.name, "no", "such")
        a_file = os.path.join(self.tmp.name, "a-file")
        with open(a_file, "w") as f:
            f.write("x")
        cases = ((self.tmp.name, "--db names a directory, %s; give a file path such as %s"
                  % (self.tmp.name, os.path.join(self.tmp.name, "flowmem.db"))),
                 (os.path.join(missing, "m.db"), "directory %s does not exist (for --db %s)"
                  % (missing, os.path.join(missing, "m.db"))),
                 (os.path.join(a_file, "m.db"), "%s is not a directory (for --db %s/m.db)" % (a_file, a_file)))
        for db, words in cases:
            for command in (("stats",), ("add", "--user", "u", "--session", "s", "--content", "x"), ("init",),
                            ("list", "users")):
                with self.subTest(db=db, command=command[0]):
                    self.assert_one_line_error(self.run_cli(*command, "--db", db), "flowmem: error: " + words)
        self.assertEqual(sorted(os.listdir(self.tmp.name)), ["a-file"])


class ClusterCommandTest(CliTestCase):
    """`flowmem cluster ACTION ...` hands the rest of its arguments to the action (flowmem/cluster/)."""

    def test_each_action_takes_its_own_arguments_and_help(self):
        text = self.ok("cluster", "haproxy-config", "--node", "127.0.0.1:8401", "--node", "127.0.0.1:8402",
                       "--map", self.path("shards.map", ""), "--slots", self.path("slots.map"),
                       "--socket", self.path("admin.sock"), "--state-map", self.path("state.map"))
        self.assertIn("server node2 127.0.0.1:8402", text)
        self.assertTrue(os.path.exists(self.path("slots.map")))  # written for a new cluster
        yaml = self.ok("cluster", "replication", "config", "--db", self.db, "--replica", self.path("replica"))
        self.assertIn('"%s"' % self.db, yaml)
        self.assertIn("usage: flowmem cluster move-user", self.ok("cluster", "move-user", "--help"))
        self.assertIn("usage: flowmem cluster up", self.ok("cluster", "up", "--help"))

    def test_a_mistyped_action_or_a_cluster_that_is_not_there_is_one_line(self):
        self.assert_one_line_error(self.run_cli("cluster", "mvoe-user"), "unknown choice 'mvoe-user'; did you mean "
                                   "'move-user'?")
        result = self.run_cli("cluster", "status", "--dir", self.path("nowhere"))
        self.assertEqual(result.returncode, 1)
        self.assert_one_line_error(result, "flowmem cluster: error:", "cluster.json")


if __name__ == "__main__":
    unittest.main()
