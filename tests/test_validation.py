"""Field rules beyond JSON types: control characters in ids, timestamps in seconds,
and the bounds on what a search reads of its query and options."""
import time
import unittest

from flowmem.errors import InvalidField
from flowmem.retrieval import query
from flowmem.validation import MAX_OPTION_CHARS, MAX_OPTIONS, MAX_QUERY_CHARS, parse_search
from tests.helpers import MemoryTestCase, add_body, matches

FILLER = ["zq%dx" % i for i in range(90_000)]  # distinct made-up words no message holds


class ControlCharacterTest(MemoryTestCase):
    def rejected(self, body):
        stored = self.memory.stats()["messages"]
        with self.assertRaises(InvalidField) as cm:
            self.memory.add(body)
        self.assertEqual(self.memory.stats()["messages"], stored, "a rejected Add must write nothing")
        return cm.exception

    def test_an_id_holding_a_control_character_is_refused_naming_the_field_and_the_character(self):
        for field in ("request_id", "user_id", "session_id"):
            for char in ("\x00", "\t", "\n", "\r", "\x1b", "\x1f", "\x7f", "\x85", "\x9f"):
                body = add_body("alice", "s1", ["Alice: hello"])
                body[field] = "alice" + char
                with self.subTest(field=field, char=char):
                    error = self.rejected(body)
                    self.assertEqual(error.field, field)
                    self.assertIn("%s must not contain control characters (U+%04X at position 5)"
                                  % (field, ord(char)), error.reason)

    def test_the_user_alice_with_a_nul_is_not_the_user_alice(self):
        self.memory.add(add_body("alice", "s1", ["Alice: my own walrus"], request_id="r1"))
        with self.assertRaises(InvalidField) as cm:
            self.memory.add(add_body("alice\x00", "s1", ["Mallory: not alice's walrus"], request_id="r2"))
        self.assertEqual(cm.exception.field, "user_id")
        self.assertEqual(self.memory.stats("alice")["messages"], 1)
        with self.assertRaises(InvalidField) as cm:
            self.memory.search({"query": "walrus", "user_id": "alice\x00", "top_k": 5})
        self.assertEqual(cm.exception.field, "user_id")

    def test_content_keeps_control_characters_that_ids_may_not_have(self):
        body = add_body("u1", "s1", ["Alice: line one\nline two\twith a tab \x00 and a NUL"], request_id="r1")
        self.memory.add(body)
        self.assertEqual([i["content"] for i in self.search("line")], [body["messages"][0]["content"]])
        body = add_body("u1\x01", "s1", ["Alice: same content"], request_id="r2")
        self.assertEqual(self.rejected(body).field, "user_id")


class TimestampTest(MemoryTestCase):
    def rejected(self, timestamp):
        body = add_body("u1", "s1", ["Alice: when was this?"], timestamp=timestamp)
        with self.assertRaises(InvalidField) as cm:
            self.memory.add(body)
        self.assertEqual(cm.exception.field, "messages[0].timestamp")
        self.assertEqual(self.memory.stats()["messages"], 0)
        return cm.exception.reason

    def test_a_timestamp_in_seconds_is_refused_with_the_milliseconds_to_send(self):
        reason = self.rejected(1717236000)  # 2024-06-01T10:00:00Z in seconds
        self.assertIn("looks like Unix seconds", reason)
        self.assertIn("1717236000000", reason)
        self.assertIn("2024-06-01T10:00:00Z", reason)
        self.assertIn("1970-01-20", reason)

    def test_timestamps_before_1973_are_refused_and_from_1973_accepted(self):
        for timestamp in (0, -1, 99_999_999, -10 ** 15):
            with self.subTest(timestamp=timestamp):
                reason = self.rejected(timestamp)
                self.assertIn("from 100000000000 (1973-03-03T09:46:40Z)", reason)
                self.assertNotIn("looks like Unix seconds", reason, "in milliseconds it would be refused too")
        self.assertIn("send 99999999999000", self.rejected(10 ** 11 - 1))
        self.memory.add(add_body("u1", "s1", ["Alice: an early message"], timestamp=10 ** 11))
        self.assertEqual(self.search("early")[0]["created_at"], "1973-03-03T09:46:40.000+00:00")


class QueryBoundsTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Dana: I saw a walrus at the harbour", "Priya: The ferry was late again"],
                                 request_id="r1"))
        # In a session of its own, so that no window or neighbour of the walrus brings it in.
        self.memory.add(add_body("u1", "s2", ["Priya: A narwhal swam by"], request_id="r2"))

    def body(self, text, **extra):
        return dict({"query": text, "user_id": "u1", "top_k": 10}, **extra)

    def test_a_query_of_90000_distinct_words_gets_results_quickly(self):
        started = time.perf_counter()
        data = self.memory.search(self.body("walrus " + " ".join(FILLER)))["data"]
        self.assertLess(time.perf_counter() - started, 5.0)
        self.assertIn("walrus", data[0]["content"])

    def test_a_long_query_finds_evidence_for_its_first_words_and_ignores_the_rest(self):
        text = "Where did Dana see the walrus? " + " ".join(FILLER[:5000]) + " narwhal"
        contents = [i["content"] for i in self.memory.search(self.body(text))["data"]]
        self.assertIn("walrus", contents[0])
        self.assertFalse(any("narwhal" in c for c in contents), "words past the cap are ignored")

    def test_options_beyond_the_cap_are_ignored(self):
        fillers = ["option %s" % w for w in FILLER[:MAX_OPTIONS]]
        kept = self.memory.search(self.body("Which one?", options=fillers[:-1] + ["narwhal"]))["data"]
        self.assertTrue(any("narwhal" in i["content"] for i in kept))
        ignored = self.memory.search(self.body("Which one?", options=fillers + ["narwhal"]))["data"]
        self.assertFalse(any("narwhal" in i["content"] for i in matches(ignored)))

    def test_every_option_is_still_type_checked_though_only_the_first_are_read(self):
        with self.assertRaises(InvalidField) as cm:
            parse_search(self.body("x", options=["a"] * (MAX_OPTIONS + 3) + [7]), 100)
        self.assertEqual(cm.exception.field, "options[%d]" % (MAX_OPTIONS + 3))
        request = parse_search(self.body("x", options=["long " * MAX_OPTION_CHARS] * (MAX_OPTIONS + 3)), 100)
        self.assertEqual(len(request.options), MAX_OPTIONS)
        self.assertTrue(all(len(o) <= MAX_OPTION_CHARS for o in request.options))

    def test_the_query_is_cut_at_a_word_boundary_or_exactly_where_there_is_none(self):
        words = parse_search(self.body("walrus " * MAX_QUERY_CHARS), 100).query
        self.assertLessEqual(len(words), MAX_QUERY_CHARS)
        self.assertGreater(len(words), MAX_QUERY_CHARS - len("walrus "))
        self.assertTrue(words.endswith("walrus"))
        spaceless = parse_search(self.body("海象" * MAX_QUERY_CHARS), 100).query
        self.assertEqual(len(spaceless), MAX_QUERY_CHARS)

    def test_analyze_keeps_the_first_terms_names_pairs_and_numbers_in_question_order(self):
        words = ["Name%dx" % i for i in range(2000)] + [str(n) for n in range(1000)]
        q = query.analyze(" ".join(words), stemmed=False, dates=False)
        self.assertEqual(q.terms, [w.lower() for w in words[: query.MAX_QUERY_TERMS]])
        self.assertEqual(len(q.names), query.MAX_QUERY_NAMES)
        self.assertEqual(q.names[0], "name0x")
        self.assertEqual(q.pairs[0], ("name0x", "name1x"))
        self.assertEqual(len(q.pairs), query.MAX_QUERY_PAIRS)
        numbers = query.analyze(" ".join(str(n) for n in range(1000)), stemmed=False, dates=False).numbers
        self.assertEqual(numbers, [str(n) for n in range(query.MAX_QUERY_NUMBERS)])
        options = query.analyze("x", [" ".join("w%dx" % i for i in range(100))], stemmed=False, dates=False).options
        self.assertEqual(options, [["w%dx" % i for i in range(query.MAX_OPTION_TERMS)]])


if __name__ == "__main__":
    unittest.main()
