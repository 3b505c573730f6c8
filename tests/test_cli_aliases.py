"""A flag is taken under the name the Python API, HTTP and MCP give its argument as well as its own.

`flowmem search --limit 3` was "unrecognized arguments": Python says `limit`, HTTP and MCP
`top_k`, the CLI `--top-k`. A user types the name they know, so each spelling works, gives
the same answer, and help names the other beside the flag (in this process: tests/cli_inprocess.py).
"""
import json
import unittest

from tests.helpers import T0, add_body
from tests.test_cli_help import CliTestCase

OTHER_NAME = {"--top-k": "--limit", "--user": "--user-id", "--session": "--session-id"}
WORDS = ["Dana: I adopted a beagle called Biscuit", "Dana: the beagle chews shoes", "Dana: a beagle at the beach",
         "Dana: my beagle sleeps all day"]


class FlagAliasTest(CliTestCase):
    def setUp(self):
        super().setUp()
        adds = [add_body("dana", "s1", WORDS, "r1"), add_body("dana", "s2", WORDS[:1], "r2", timestamp=T0 + 1000)]
        self.ok("add", "--db", self.db, "-", stdin=json.dumps(adds))

    def test_search_takes_limit_as_top_k(self):
        by_name = {flag: json.loads(self.ok("search", "--db", self.db, "--user", "dana", "--json", flag, "2", "beagle"))
                   for flag in ("--top-k", "--limit")}
        self.assertEqual(len(by_name["--top-k"]["data"]), 2)
        self.assertEqual(by_name["--limit"], by_name["--top-k"])

    def test_user_id_and_session_id_are_taken_as_user_and_session(self):
        for command in (["search", "beagle", "--json"], ["list", "--json"], ["stats"], ["export"]):
            with self.subTest(command=command[0]):
                short = self.ok(command[0], "--db", self.db, "--user", "dana", *command[1:])
                self.assertEqual(self.ok(command[0], "--db", self.db, "--user-id", "dana", *command[1:]), short)
        for command in (["search", "beagle", "--user", "dana", "--json"], ["list", "--user", "dana", "--json"]):
            with self.subTest(command=command[0], flag="--session-id"):
                short = self.ok(command[0], "--db", self.db, "--session", "s2", *command[1:])
                self.assertEqual(self.ok(command[0], "--db", self.db, "--session-id", "s2", *command[1:]), short)
                self.assertNotIn('"s1"', short)
        self.ok("add", "--db", self.db, "--user-id", "eve", "--session-id", "s9", "--content", "Eve: hello")
        self.assertIn("Eve: hello", self.ok("list", "--db", self.db, "--user", "eve", "--session", "s9"))

    def test_help_names_each_other_spelling_beside_its_flag_on_one_line(self):
        for command, flags in (("search", ("--top-k", "--user", "--session")), ("list", ("--user", "--session")),
                               ("add", ("--user", "--session")), ("delete-message", ("--user",))):
            text = self.ok(command, "--help")
            for flag in flags:
                with self.subTest(command=command, flag=flag):
                    [line] = [line for line in text.splitlines() if line.startswith("  " + flag + " ")]
                    self.assertTrue(line.endswith("also " + OTHER_NAME[flag]), line)

    def test_a_flag_given_under_both_names_keeps_the_last_as_argparse_does(self):
        out = json.loads(self.ok("search", "--db", self.db, "--user", "dana", "--json", "--top-k", "1", "--limit", "3",
                                 "beagle"))
        self.assertEqual(len(out["data"]), 3)


if __name__ == "__main__":
    unittest.main()
