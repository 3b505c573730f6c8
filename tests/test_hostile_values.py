"""Hostile numbers, times, ids, cursors and JSON in every field a client can fill: a 4xx naming it, never a 500.

Each table below is sent into every field of its kind, over every HTTP route (App.handle,
no socket) and every MCP tool (the protocol's own line handling, so its JSON decoding
counts too), and the `flowmem` command's file and flag input. Every answer must be a
4xx whose reason names the field (400 naming the request body, for JSON itself), and
nothing may be logged at ERROR (a 500's traceback, or MCP's -32603). The values are
those of a hostile test that found 54 tracebacks in one run: digits that str.isdigit()
and int() accept but a client never means (`²`, `①`, `１２`), thousands of digits,
integers past 2^63, dates an offset carries past year 9999, and deep nesting.
"""
from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import os
import urllib.parse
from typing import Any, Dict, Iterator, List, Tuple

from flowmem import cli
from flowmem.config import load
from flowmem.http.api import App
from flowmem.mcp.protocol import Server
from tests.helpers import T0, MemoryTestCase

# As text (query strings, string times, flags): none is a number a client means.
TEXT_NUMBERS = ["²", "①", "１２", "٣٤", "1_000", "9" * 5000, "-" + "9" * 5000, "1e400", "NaN", "-Infinity",
                "0x10", "+5", " ", "\u00a05", "5\n"]
TEXT_TIMES = TEXT_NUMBERS[:-1] + ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "99999-01-01",
                                  "2023-13-45", "9" * 20]
# As JSON literals (bodies, MCP arguments): each wrong for an integer field.
JSON_NUMBERS = ["1e400", "-1e400", "9" * 4000, "-" + "9" * 4000, str(2 ** 63), str(-2 ** 63 - 1), "1e300", "1.5",
                "true", '"²"', '"①"', '"１２"', '"%s"' % ("9" * 5000), "[]", "{}", "[" * 50 + "]" * 50]
JSON_TIMES = JSON_NUMBERS + ['"9999-12-31T23:59:59-23:59"', '"0001-01-01T00:00:00+23:59"', '"2023-13-45"']
JSON_TOP_K = [v for v in JSON_NUMBERS if v not in ("9" * 4000, str(2 ** 63), "1e300")]  # huge ones are clamped
JSON_IDS = ['"\\u0000"', '""', '"  "', "1e400", "9" * 4000, "true", "{}", "[" * 50 + "]" * 50]


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


CURSORS = [_cursor('["m", %d, 1]' % 2 ** 63), _cursor('["u", %d]' % 2 ** 64), _cursor("[" * 3000 + "]" * 3000),
           _cursor('["u", 1e400]'), _cursor('["u", -1]'), _cursor('["u", 1.0]'), _cursor('["u", 1' + "0" * 5000 + "]"),
           _cursor('{"u": 1}'), "W" * 5000, "%%%", "☃", "²"]
# Path ids, percent-encoded as sent: a NUL, bytes that are not UTF-8 once decoded.
PATH_IDS = ["%00", "%FF", "%C0%AF", "a%0Ab"]
PATH_FIELDS = [("DELETE", "/users/%s", "user_id"), ("GET", "/users/%s/sessions", "user_id"),
               ("GET", "/users/%s/messages", "user_id"), ("GET", "/users/%s/export", "user_id"),
               ("DELETE", "/users/u/sessions/%s", "session_id")]

# (route, its query string's parameter, the values): the listing routes' parameters.
QUERY_FIELDS: List[Tuple[str, str, List[str]]] = []
for _path in ("/users", "/users/u/sessions", "/users/u/messages", "/users/u/export"):
    QUERY_FIELDS += [(_path, "limit", TEXT_NUMBERS), (_path, "cursor", CURSORS)]
QUERY_FIELDS += [("/users/u/messages", "since", TEXT_TIMES), ("/users/u/messages", "until", TEXT_TIMES),
                 ("/users/u/messages", "order", TEXT_NUMBERS), ("/users/u/messages", "session_id", ["\x00", "a\x1fb"])]
# Keys no Unicode text holds: lone surrogates, as JSON escapes send them (a pair, an emoji, is fine).
JSON_KEYS = ['{"\\ud800": 1}', '{"a\\udfff": "x"}', '{"\\udc00\\ud800": true}', '{"\\ud800": null}']
# The listing's `?metadata=`: text that is no JSON object of metadata, and objects with such keys.
TEXT_METADATA = ["", " ", "{", "[", "NaN", '{"a": NaN}', "null", "9" * 5000, "[" * 100 + "]" * 100,
                 '{"a": ' * 100 + "1" + "}" * 100, "{}}", "\x00"] + JSON_KEYS
QUERY_FIELDS += [("/users/u/messages", "metadata", TEXT_METADATA)]

ADD = {"request_id": "r-hostile", "user_id": "u", "session_id": "s",
       "messages": [{"role": "user", "content": "hello", "timestamp": T0}]}
SEARCH = {"query": "hello", "user_id": "u", "top_k": 5, "filters": {"since": T0}}
# (route, body, the field's path in it, the name the reason gives it, the values).
BODY_FIELDS: List[Tuple[str, Dict[str, Any], Tuple[Any, ...], str, List[str]]] = [
    ("/add", ADD, ("messages", 0, "timestamp"), "messages[0].timestamp", JSON_NUMBERS),
    ("/add", ADD, ("request_id",), "request_id", JSON_IDS),
    ("/add", ADD, ("user_id",), "user_id", JSON_IDS),
    ("/add", ADD, ("session_id",), "session_id", JSON_IDS),
    ("/add", ADD, ("messages", 0, "content"), "messages[0].content", JSON_IDS[2:]),
    ("/add", ADD, ("messages", 0, "role"), "messages[0].role", JSON_IDS[2:]),
    ("/add", ADD, ("messages",), "messages", JSON_NUMBERS[:6] + ["[]"]),
    ("/search", SEARCH, ("top_k",), "top_k", JSON_TOP_K),
    ("/search", SEARCH, ("filters", "since"), "filters.since", JSON_TIMES),
    ("/search", SEARCH, ("filters", "until"), "filters.until", JSON_TIMES),
    ("/search", SEARCH, ("filters", "session_id"), "filters.session_id", JSON_IDS),
    ("/search", SEARCH, ("user_id",), "user_id", JSON_IDS),
    ("/search", SEARCH, ("query",), "query", JSON_IDS[1:]),
    ("/search", SEARCH, ("filters",), "filters", JSON_NUMBERS[:6]),
    ("/search", SEARCH, ("filters",), "filters", JSON_KEYS),
    ("/search", SEARCH, ("filters", "metadata"), "filters.metadata", JSON_KEYS),
    ("/add", ADD, ("metadata",), "metadata", JSON_KEYS),
    ("/add", ADD, ("messages", 0, "metadata"), "messages[0].metadata", JSON_KEYS),
    ("/add", ADD, ("messages", 0), "messages[0]", ['{"role": "user", "content": "x", "\\ud800": 1}']),
    ("/users/u/import", {"records": [ADD]}, ("records", 0, "messages", 0, "timestamp"),
     "records[0].messages[0].timestamp", JSON_NUMBERS),
    ("/users/u/import", {"records": [ADD]}, ("records", 0, "session_id"), "records[0].session_id", JSON_IDS),
    ("/users/u/import", {"records": [ADD]}, ("records",), "records", JSON_NUMBERS[:6]),
    ("/users/u/import", {"records": [ADD]}, ("records", 0, "messages", 0, "metadata"),
     "records[0].messages[0].metadata", JSON_KEYS),
    ("/users/u/import", {"records": [ADD]}, ("records", 0, "metadata"), "records[0].metadata", JSON_KEYS),
]
# JSON itself, as a whole body or MCP message: each is 400 (MCP: -32700) naming the request body.
BAD_JSON = [b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": ' + b"9" * 5000 + b"}",
            b'{"a": ' + b"[" * 65 + b"]" * 65 + b"}", b"[" * 5000 + b"]" * 5000, b'{"a": ' * 3000 + b"1" + b"}" * 3000,
            b"\xff\xfe{}"]


def with_raw(body: Dict[str, Any], where: Tuple[Any, ...], literal: str) -> bytes:
    """`body` as JSON with the value at `where` replaced by the JSON text `literal` (which json.dumps
    could not write: 1e400, 4,000 digits)."""
    copy = json.loads(json.dumps(body))
    place = copy
    for key in where[:-1]:
        place = place[key]
    place[where[-1]] = "@@HOSTILE@@"
    return json.dumps(copy).replace('"@@HOSTILE@@"', literal).encode()


class ErrorLog(logging.Handler):
    """The records logged at ERROR or above anywhere under `flowmem` while installed."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def errors_logged() -> Iterator[ErrorLog]:
    handler = ErrorLog()
    logger = logging.getLogger("flowmem")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


class HostileTestCase(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.add(ADD)
        self.log = self.enterContext_(errors_logged())

    def enterContext_(self, manager: Any) -> Any:  # unittest's enterContext is Python 3.11+
        value = manager.__enter__()
        self.addCleanup(manager.__exit__, None, None, None)
        return value

    def assert_nothing_logged(self) -> None:
        self.assertEqual([r.getMessage() for r in self.log.records], [])


class HttpRoutesTest(HostileTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.app = App(self.memory, load({"db": self.db_path()}, environ={}))

    def answer(self, method: str, path: str, body: bytes = b"") -> Tuple[int, str]:
        headers = {"Content-Type": "application/json"} if method == "POST" else {}
        response = self.app.handle(method, path, headers, body)
        return response.status, json.loads(response.body)["detail"]["reason"] if response.status >= 400 else ""

    def assert_refused(self, status: int, reason: str, field: str) -> None:
        self.assertTrue(400 <= status < 500, (status, reason))
        self.assertTrue(reason.startswith(field + " "), "%r does not name %s" % (reason[:200], field))
        self.assertLess(len(reason), 400, "the reason echoes the whole value")

    def test_every_listing_parameter_refuses_hostile_values_naming_itself(self):
        for path, name, values in QUERY_FIELDS:
            for value in values:
                with self.subTest(path=path, name=name, value=value[:20]):
                    status, reason = self.answer("GET", "%s?%s=%s" % (path, name, urllib.parse.quote(value)))
                    self.assert_refused(status, reason, name)
        self.assert_nothing_logged()

    def test_every_body_field_refuses_hostile_values_naming_itself(self):
        for path, body, where, field, values in BODY_FIELDS:
            for literal in values:
                with self.subTest(path=path, field=field, value=literal[:20]):
                    status, reason = self.answer("POST", path, with_raw(body, where, literal))
                    self.assert_refused(status, reason, field)
        self.assert_nothing_logged()

    def test_hostile_ids_in_paths_are_refused_naming_the_id(self):
        for value in PATH_IDS:
            for method, path, field in PATH_FIELDS:
                with self.subTest(method=method, path=path, value=value):
                    status, reason = self.answer(method, path % value)
                    self.assert_refused(status, reason, field)
        self.assertEqual(self.answer("GET", "/users/u/messages/m-00-" + "9" * 5000)[0], 404)
        self.assertEqual(self.memory.stats("u")["messages"], 1)  # nothing was deleted
        self.assert_nothing_logged()

    def test_json_that_is_no_request_is_400_naming_the_body_on_every_route_that_reads_one(self):
        for path in ("/add", "/search", "/users/u/import"):
            for raw in BAD_JSON:
                with self.subTest(path=path, raw=raw[:20]):
                    status, reason = self.answer("POST", path, raw)
                    self.assertEqual(status, 400, reason)
                    self.assertTrue(reason.startswith("request body "), reason)
                    self.assertNotIn("set_int_max_str_digits", reason)  # Python's advice, not a client's
        self.assert_nothing_logged()

    def test_a_huge_top_k_is_clamped_as_the_contract_says(self):
        for literal in ("9" * 4000, str(2 ** 63), "1e300"):
            with self.subTest(top_k=literal[:20]):
                self.assertEqual(self.answer("POST", "/search", with_raw(SEARCH, ("top_k",), literal))[0], 200)

    def test_times_near_the_ends_of_the_range_are_still_accepted(self):
        for since in ("0001-01-01T00:00:00Z", "1970-01-01", "9999-12-31T23:59:59+23:59"):
            with self.subTest(since=since):
                self.assertEqual(self.answer("GET", "/users/u/messages?since=" + urllib.parse.quote(since))[0], 200)
        self.assertEqual(self.answer("GET", "/users/u/messages?limit=%2012%20")[0], 200)  # spaces around digits


    def test_a_question_naming_the_last_days_a_date_can_hold_is_answered(self):
        # The question's periods stepped a day past 9999-12-31 and raised OverflowError (500).
        for query in ("what did we do on 9999-12-31?", "Dec 31 9999", "after 12/31/9999",
                      "the day after December 31, 9999", "before January 1, 0001"):
            with self.subTest(query=query):
                status, reason = self.answer("POST", "/search", json.dumps(dict(SEARCH, query=query)).encode())
                self.assertEqual(status, 200, reason)
        self.assert_nothing_logged()

    def test_a_relative_question_of_a_memory_ending_at_the_last_moment_a_time_can_hold_is_answered(self):
        last = {"request_id": "r-last", "user_id": "u", "session_id": "s-last",
                "messages": [{"role": "user", "content": "a note at the end of time", "timestamp": 253402300799999}]}
        self.memory.add(last)
        for query in ("what happened this year?", "since last year", "what happened in December 9999"):
            with self.subTest(query=query):
                status, reason = self.answer("POST", "/search", json.dumps(dict(SEARCH, query=query)).encode())
                self.assertEqual(status, 200, reason)
        self.assert_nothing_logged()

    def test_a_field_name_holding_a_lone_surrogate_is_refused_showing_it_escaped(self):
        for path, body in (("/add", ADD), ("/search", SEARCH), ("/users/u/import", {"records": [ADD]})):
            with self.subTest(path=path):
                raw = with_raw(dict(body, extra=0), ("extra",), "1").replace(b'"extra"', b'"\\ud800"')
                self.assert_refused(*self.answer("POST", path, raw), field="\\ud800")
        self.assertEqual(self.memory.stats("u")["messages"], 1)
        self.assert_nothing_logged()

    def test_a_key_of_an_escaped_surrogate_pair_is_text_stored_and_filtered_by(self):
        tagged = dict(ADD, request_id="r-pair", messages=[dict(ADD["messages"][0], metadata={"\U0001f600": "yes"})])
        raw = json.dumps(tagged).encode()  # the emoji escaped as the pair \ud83d\ude00
        self.assertIn(b"\\ud83d\\ude00", raw)
        self.assertEqual(self.answer("POST", "/add", raw)[0], 200)
        status, body = self.app.handle("GET", "/users/u/messages?metadata=" + urllib.parse.quote(
            '{"\\ud83d\\ude00": "yes"}'), {}, b"")[:3:2]
        self.assertEqual(status, 200)
        self.assertEqual([m["metadata"] for m in json.loads(body)["data"]], [{"\U0001f600": "yes"}])

    def test_a_raw_byte_that_is_not_ascii_in_the_target_is_400_and_names_no_other_id(self):
        # http.server reads a target's bytes as Latin-1: raw UTF-8 "ü" arrives as "Ã¼", another user.
        self.memory.add(dict(ADD, request_id="r-mojibake", user_id="\u00c3\u00bc"))
        for method, path in (("DELETE", "/users/\u00c3\u00bc"), ("GET", "/users/\u00c3\u00bc/sessions"),
                             ("GET", "/users//sessions?user_id=\u00c3\u00a9"), ("DELETE", "/users/\u00e9")):
            with self.subTest(method=method, path=path):
                status, reason = self.answer(method, path)
                self.assertEqual(status, 400, reason)
                self.assertIn("not ASCII", reason)
        self.assertEqual(self.memory.stats("\u00c3\u00bc")["messages"], 1)


class McpToolsTest(HostileTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.server = Server(self.memory)
        self.rpc('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                 '"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}')

    def rpc(self, line: str) -> Dict[str, Any]:
        answer = self.server.handle_line(line.encode())
        assert answer is not None
        return json.loads(answer)

    def call(self, tool: str, arguments: Dict[str, Any], where: Tuple[Any, ...], literal: str) -> Dict[str, Any]:
        params = {"name": tool, "arguments": arguments}
        raw = with_raw(params, ("arguments",) + where, literal).decode()
        return self.rpc('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}' % raw)

    def test_every_tool_argument_refuses_hostile_values_with_an_error_result_naming_it(self):
        add = {"user_id": "u", "session_id": "s", "content": "hello", "timestamp": T0}
        messages = {"user_id": "u", "session_id": "s", "messages": [{"role": "user", "content": "x", "timestamp": T0}]}
        search = {"user_id": "u", "query": "hello", "filters": {"since": T0}}
        listing = {"user_id": "u", "since": T0, "until": T0 + 1, "limit": 5, "cursor": "x"}
        table = [
            ("add_memory", add, ("timestamp",), "timestamp", JSON_NUMBERS),
            ("add_memory", messages, ("messages", 0, "timestamp"), "messages[0].timestamp", JSON_NUMBERS),
            ("add_memory", add, ("user_id",), "user_id", JSON_IDS),
            ("add_memory", add, ("session_id",), "session_id", JSON_IDS),
            ("search_memory", search, ("top_k",), "top_k", JSON_TOP_K),
            ("search_memory", search, ("filters", "since"), "filters.since", JSON_TIMES),
            ("search_memory", search, ("filters", "until"), "filters.until", JSON_TIMES),
            ("search_memory", search, ("user_id",), "user_id", JSON_IDS),
            ("list_memories", listing, ("since",), "since", JSON_TIMES),
            ("list_memories", listing, ("until",), "until", JSON_TIMES),
            ("list_memories", listing, ("limit",), "limit", JSON_NUMBERS),
            ("list_memories", listing, ("cursor",), "cursor", ['"%s"' % c for c in CURSORS] + JSON_NUMBERS[:4]),
            ("delete_memories", {"user_id": "u", "session_id": "s"}, ("session_id",), "session_id", JSON_IDS),
            ("delete_memories", {"user_id": "u", "session_id": "s"}, ("user_id",), "user_id", JSON_IDS),
            ("add_memory", add, ("metadata",), "metadata", JSON_KEYS),
            ("add_memory", messages, ("messages", 0, "metadata"), "messages[0].metadata", JSON_KEYS),
            ("search_memory", search, ("filters", "metadata"), "filters.metadata", JSON_KEYS),
            ("list_memories", listing, ("metadata",), "metadata", JSON_KEYS),
        ]
        for tool, arguments, where, field, values in table:
            for literal in values:
                with self.subTest(tool=tool, field=field, value=literal[:20]):
                    answer = self.call(tool, arguments, where, literal)
                    self.assertNotIn("error", answer)
                    result = answer["result"]
                    self.assertIs(result["isError"], True, result)
                    text = result["content"][0]["text"]
                    self.assertTrue(text.startswith(field + " "), "%r does not name %s" % (text[:200], field))
        self.assertEqual(self.memory.stats("u")["messages"], 1)  # nothing added, nothing deleted
        self.assert_nothing_logged()

    def test_an_add_holding_json_deep_enough_to_fail_encoding_is_a_parse_error_not_a_bug(self):
        # 980 levels decoded, then failed json.dumps deriving the request_id: -32603 and a traceback.
        for depth in (65, 980, 5000):
            with self.subTest(depth=depth):
                extra = "[" * depth + "]" * depth
                answer = self.rpc('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory",'
                                  '"arguments":{"user_id":"u","session_id":"s","messages":[{"role":"user",'
                                  '"content":"x","extra":%s}]}}}' % extra)
                self.assertEqual(answer["error"]["code"], -32700, answer)
                self.assertIn("nested too deeply", answer["error"]["message"])
        self.assert_nothing_logged()


class CommandLineTest(HostileTestCase):
    def run_cli(self, *argv: str) -> Tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = cli.main(list(argv))
            except SystemExit as e:  # argparse's usage errors
                status = e.code if isinstance(e.code, int) else 2
        return status, err.getvalue()

    def assert_one_line(self, status: int, err: str) -> None:
        self.assertNotEqual(status, 0, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err[:2000])
        self.assertLess(len(err), 600, "the error echoes the whole input")

    def test_every_command_reading_a_file_answers_deep_or_huge_json_in_one_line(self):
        files = {"deep-array": b"[" * 5000 + b"]" * 5000, "deep-object": b'{"a": ' * 5000 + b"1" + b"}" * 5000,
                 "deep-line": b'{"request_id": "r"}\n' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"\n",
                 "locomo-deep": b'[{"conversation": ' + b"[" * 900 + b"]" * 900 + b"}]",
                 "long-number": b'{"request_id": "r", "a": ' + b"9" * 5000 + b"}", "nan": b'[{"a": NaN}]'}
        for name, data in files.items():
            path = os.path.join(self.tmp, name + ".json")
            with open(path, "wb") as f:
                f.write(data)
            for command in ("import", "add"):
                with self.subTest(command=command, file=name):
                    self.assert_one_line(*self.run_cli(command, path, "--db", self.db_path(command + ".db")))
        for command in ("import", "add"):
            self.assertFalse(os.path.exists(self.db_path(command + ".db")),
                             "a refused %s created the database" % command)

    def test_metadata_holding_a_lone_surrogate_is_refused_in_one_line_from_a_flag_or_a_file(self):
        db = self.db_path()
        self.memory.close()
        # A flag's bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape), escapes as themselves.
        for metadata in ('{"\\ud800": 1}', '{"\udcff": 1}', '{"k": "\udcff"}', '{"\\ud800": null}', "{", ""):
            for filters in (metadata, '{"tenant": null}'):  # a filter's null is refused, never no condition
                with self.subTest(command="list", metadata=filters):
                    self.assert_one_line(*self.run_cli("list", "messages", "--user", "u", "--metadata", filters,
                                                       "--db", db))
            with self.subTest(command="add", metadata=metadata):
                self.assert_one_line(*self.run_cli("add", "--user", "u", "--session", "s", "--content", "x",
                                                   "--request-id", "r-flag", "--metadata", metadata, "--db", db))
        path = os.path.join(self.tmp, "unpaired.json")
        with open(path, "w") as f:
            f.write(json.dumps(dict(ADD, request_id="r-file", messages=[dict(ADD["messages"][0],
                                                                        metadata={"\ud800": 1})])))
        for command in ("import", "add"):
            with self.subTest(command=command, file=path):
                self.assert_one_line(*self.run_cli(command, path, "--db", db))
        self.memory = self.open_memory()
        self.assertEqual(self.memory.stats("u")["messages"], 1)

    def test_numbers_and_times_given_as_flags_are_read_strictly_in_one_line(self):
        db = self.db_path()
        self.memory.close()
        for value in TEXT_NUMBERS[:-1]:
            with self.subTest(flag="--top-k", value=value[:20]):
                self.assert_one_line(*self.run_cli("search", "hello", "--user", "u", "--top-k", value, "--db", db))
            with self.subTest(flag="--timestamp", value=value[:20]):
                self.assert_one_line(*self.run_cli("add", "--user", "u", "--session", "s", "--content", "x",
                                                   "--timestamp", value, "--db", db))
        for value in TEXT_TIMES:
            for flag in ("--since", "--until"):
                with self.subTest(flag=flag, value=value[:20]):
                    self.assert_one_line(*self.run_cli("search", "hello", "--user", "u", flag, value, "--db", db))
        self.memory = self.open_memory()
        self.assertEqual(self.memory.stats("u")["messages"], 1)
