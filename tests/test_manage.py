"""Listing, reading and deleting what a memory holds: Memory's management calls (api13.md)."""
import re
import unittest
from typing import Any, Dict, List

from flowmem.errors import InvalidField, NotFound
from flowmem.storage import fts, listing
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body, index_terms, message

HOSTILE_USER = "a b/%2F%é 用户"
HOSTILE_SESSION = "s/1 %20 ü"


def every_page(call: Any, **kwargs: Any) -> List[List[Dict[str, Any]]]:
    """The pages of a listing call, following next_cursor to the end."""
    pages, cursor = [], None
    while True:
        page = call(cursor=cursor, **kwargs)
        pages.append(page["data"])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


class ListingTest(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Ann: one", "Bo: two", "Ann: three"], request_id="r1"))
        self.memory.add(add_body("u1", "s2", ["Ann: four", "Bo: five"], request_id="r2",
                                 timestamp=T0 + DAY_MS))
        self.memory.add(add_body("u1", "s1", ["Ann: six"], request_id="r3", timestamp=T0 + 2 * DAY_MS))
        self.memory.add(add_body("other", "s1", ["Zed: secret of another user"], request_id="r1"))

    def contents(self, messages: List[Dict[str, Any]]) -> List[str]:
        return [m["content"] for m in messages]

    def test_messages_come_oldest_first_by_session_creation_then_position(self):
        listed = self.memory.list_messages("u1")
        self.assertEqual(self.contents(listed["data"]),
                         ["Ann: one", "Bo: two", "Ann: three", "Ann: six", "Ann: four", "Bo: five"])
        self.assertIsNone(listed["next_cursor"])

    def test_a_message_holds_its_id_position_role_times_and_request(self):
        first = self.memory.list_messages("u1", limit=1)["data"][0]
        self.assertEqual(set(first), {"id", "user_id", "session_id", "position", "role", "content", "timestamp",
                                      "created_at", "dated_on_receipt", "request_id"})
        self.assertRegex(first["id"], r"^m-[0-9a-f]{16}-1$")
        self.assertEqual((first["user_id"], first["session_id"], first["position"], first["role"]),
                         ("u1", "s1", 1, "user"))
        self.assertEqual((first["timestamp"], first["created_at"], first["request_id"]),
                         (T0, "2023-05-08T13:56:00.000+00:00", "r1"))
        self.assertEqual(self.memory.get_message("u1", first["id"]), first)

    def test_message_ids_are_those_search_returns(self):
        item = self.search("five", "u1", top_k=1)[0]
        self.assertEqual(self.memory.get_message("u1", item["id"])["content"], "Bo: five")

    def test_desc_order_is_the_reverse_of_asc(self):
        asc = self.memory.list_messages("u1")["data"]
        self.assertEqual(self.memory.list_messages("u1", order="desc")["data"], asc[::-1])
        pages = every_page(self.memory.list_messages, user_id="u1", order="desc", limit=4)
        self.assertEqual([m for page in pages for m in page], asc[::-1])

    def test_pages_join_up_to_the_whole_list_for_every_page_size(self):
        whole = self.memory.list_messages("u1")["data"]
        for limit in (1, 2, 3, 5, 6, 7):
            pages = every_page(self.memory.list_messages, user_id="u1", limit=limit)
            self.assertEqual([m for page in pages for m in page], whole, limit)
            self.assertTrue(all(pages), limit)  # no empty last page

    def test_a_page_continues_after_its_last_row_when_rows_are_added_meanwhile(self):
        first = self.memory.list_messages("u1", limit=2)
        self.memory.add(add_body("u1", "s1", ["Ann: seven"], request_id="r4"))  # after the cursor's row
        self.memory.add(add_body("u1", "s0", ["Ann: new session"], request_id="r5"))
        rest = every_page(self.memory.list_messages, user_id="u1", limit=2)
        self.assertEqual(self.contents(self.memory.list_messages("u1", limit=2, cursor=first["next_cursor"])["data"]),
                         ["Ann: three", "Ann: six"])
        ids = [m["id"] for m in first["data"]] + [m["id"] for page in rest for m in page][2:]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(self.contents([m for page in rest for m in page])[-3:],
                         ["Ann: four", "Bo: five", "Ann: new session"])

    def test_since_is_inclusive_and_until_exclusive_in_ms_or_iso(self):
        day2 = T0 + DAY_MS
        by_ms = self.memory.list_messages("u1", since=day2, until=day2 + DAY_MS)["data"]
        self.assertEqual(self.contents(by_ms), ["Ann: four", "Bo: five"])
        by_iso = self.memory.list_messages("u1", since="2023-05-09T13:56:00Z", until="2023-05-10T13:56:00+00:00")
        self.assertEqual(by_iso["data"], by_ms)
        self.assertEqual(self.contents(self.memory.list_messages("u1", since=str(day2 + DAY_MS))["data"]),
                         ["Ann: six"])
        self.assertEqual(self.contents(self.memory.list_messages("u1", until=day2)["data"]),
                         ["Ann: one", "Bo: two", "Ann: three"])

    def test_a_bounded_listing_leaves_out_messages_without_a_time(self):
        self.memory.add(add_body("u1", "s3", ["Ann: undated"], request_id="r9", timestamp=None))
        self.assertIn("Ann: undated", self.contents(self.memory.list_messages("u1")["data"]))
        self.assertNotIn("Ann: undated", self.contents(self.memory.list_messages("u1", since=0 + 10 ** 11)["data"]))

    def test_one_sessions_messages(self):
        self.assertEqual(self.contents(self.memory.list_messages("u1", session_id="s2")["data"]),
                         ["Ann: four", "Bo: five"])
        self.assertEqual(self.memory.list_messages("u1", session_id="nope"), {"data": [], "next_cursor": None})

    def test_sessions_in_creation_order_with_counts_and_times(self):
        self.assertEqual(self.memory.list_sessions("u1")["data"], [
            {"session_id": "s1", "messages": 4, "first_at": "2023-05-08T13:56:00.000+00:00",
             "last_at": "2023-05-10T13:56:00.000+00:00"},
            {"session_id": "s2", "messages": 2, "first_at": "2023-05-09T13:56:00.000+00:00",
             "last_at": "2023-05-09T13:56:00.000+00:00"}])
        pages = every_page(self.memory.list_sessions, user_id="u1", limit=1)
        self.assertEqual([[s["session_id"] for s in page] for page in pages], [["s1"], ["s2"]])

    def test_users_with_their_counts_page_by_page(self):
        self.assertEqual(self.memory.list_users()["data"], [{"user_id": "u1", "sessions": 2, "messages": 6},
                                                           {"user_id": "other", "sessions": 1, "messages": 1}])
        pages = every_page(self.memory.list_users, limit=1)
        self.assertEqual([[u["user_id"] for u in page] for page in pages], [["u1"], ["other"]])

    def test_another_users_data_is_never_listed_nor_read(self):
        self.assertNotIn("Zed: secret of another user", self.contents(self.memory.list_messages("u1")["data"]))
        secret = self.memory.list_messages("other")["data"][0]
        with self.assertRaises(NotFound):
            self.memory.get_message("u1", secret["id"])
        # A cursor made on another user's listing only says where to continue: never whose rows.
        self.memory.add(add_body("other", "s1", ["Zed: more"], request_id="r2"))
        cursor = self.memory.list_messages("other", limit=1)["next_cursor"]
        self.assertNotIn("Zed", str(self.memory.list_messages("u1", cursor=cursor)))

    def test_an_unknown_user_looks_like_one_with_no_memories(self):
        empty = {"data": [], "next_cursor": None}
        self.assertEqual(self.memory.list_messages("nobody"), empty)
        self.assertEqual(self.memory.list_sessions("nobody"), empty)
        self.assertEqual(self.memory.export_page("nobody"), empty)
        with self.assertRaises(NotFound):
            self.memory.get_message("nobody", "m-0000000000000000-1")

    def test_an_unknown_or_malformed_message_id_is_not_found(self):
        real = self.memory.list_messages("u1", limit=1)["data"][0]["id"]
        for bad in (real[:-1] + "99", "m-zz-1", "x", "", real + "/"):
            with self.assertRaises(NotFound, msg=bad):
                self.memory.get_message("u1", bad)

    def test_bad_parameters_are_422_naming_them(self):
        cases = [({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"limit": "ten"}, "limit"),
                 ({"order": "up"}, "order"), ({"since": "yesterday"}, "since"), ({"until": 12}, "until"),
                 ({"cursor": "not a cursor"}, "cursor"), ({"session_id": ""}, "session_id"),
                 ({"cursor": self.memory.list_users(limit=1)["next_cursor"]}, "cursor")]
        for kwargs, field in cases:
            with self.assertRaises(InvalidField, msg=kwargs) as caught:
                self.memory.list_messages("u1", **kwargs)
            self.assertEqual(caught.exception.field, field)
        self.assertEqual(len(self.memory.list_messages("u1", limit="1000")["data"]), 6)
        with self.assertRaises(InvalidField):
            self.memory.list_users(limit=-1)

    def test_a_users_listing_reads_only_that_users_rows(self):
        statements: List[str] = []
        self.memory.add(add_body("u1", "s3", ["Ann: more"], request_id="r7"))
        with self.memory.store.reading() as reader:
            reader.conn.set_trace_callback(statements.append)
            try:
                listing.sessions(reader.conn, 1, 0, 10, 2 ** 20)
                listing.messages(reader.conn, 1, None, T0, T0 + DAY_MS, (1, 1), 10, 2 ** 20, True)
                listing.message(reader.conn, 1, "abc", 1)
                listing.adds(reader.conn, 1, 0, 10, 2 ** 20)
            finally:
                reader.conn.set_trace_callback(None)
            plans = [row[3] for sql in statements
                     for row in reader.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
        self.assertTrue(plans)
        self.assertEqual([p for p in plans if re.match(r"SCAN", p)], [])


class HostileIdsTest(MemoryTestCase):
    def test_ids_with_spaces_slashes_percents_and_unicode_are_listed_read_and_deleted(self):
        self.memory.add(add_body(HOSTILE_USER, HOSTILE_SESSION, ["Ann: hostile one", "Bo: two"]))
        self.memory.add(add_body(HOSTILE_USER, "plain", ["Ann: kept"]))
        self.assertIn(HOSTILE_USER, [u["user_id"] for u in self.memory.list_users()["data"]])
        self.assertEqual([s["session_id"] for s in self.memory.list_sessions(HOSTILE_USER)["data"]],
                         [HOSTILE_SESSION, "plain"])
        listed = self.memory.list_messages(HOSTILE_USER, session_id=HOSTILE_SESSION)["data"]
        self.assertEqual([m["content"] for m in listed], ["Ann: hostile one", "Bo: two"])
        self.assertEqual(self.memory.get_message(HOSTILE_USER, listed[0]["id"])["session_id"], HOSTILE_SESSION)
        self.assertEqual(self.memory.delete_session(HOSTILE_USER, HOSTILE_SESSION),
                         {"deleted": True, "user_id": HOSTILE_USER, "session_id": HOSTILE_SESSION, "messages": 2})
        self.assertEqual(self.memory.delete_user(HOSTILE_USER), {"deleted": True, "user_id": HOSTILE_USER})
        self.assertEqual(self.memory.list_users()["data"], [])


class DeleteSessionTest(MemoryTestCase):
    A = [["Ann: my zebra finch sings", "Bo: lovely", "Ann: we went hiking"], ["Ann: the finch again"]]
    B = [["Ann: my quokka named Kazimierz", "Bo: wow", "Ann: quokka photos"], ["Bo: zebra too"]]
    QUERIES = ["zebra finch", "quokka Kazimierz", "hiking", "what is lovely", "photos of the finch"]

    def add_sessions(self, memory: Any, with_b: bool) -> None:
        for i in range(2):  # A's and B's Adds interleaved: B's views sit between A's
            memory.add(add_body("u1", "A", self.A[i], request_id="a%d" % i, timestamp=T0 + i * 60_000))
            if with_b:
                memory.add(add_body("u1", "B", self.B[i], request_id="b%d" % i, timestamp=T0 + i * 60_000))

    def state(self, memory: Any) -> Dict[str, Any]:
        with memory.store.reading() as reader:
            c = reader.conn
            return {"stats": c.execute("SELECT kind, n_docs, total_length FROM user_stats ORDER BY kind").fetchall(),
                    "requests": c.execute("SELECT request_id FROM requests ORDER BY request_id").fetchall(),
                    "views": c.execute("SELECT count(*) FROM views").fetchone()[0],
                    "messages": c.execute("SELECT count(*) FROM messages").fetchone()[0]}

    def test_after_deleting_a_session_the_memory_is_as_if_it_was_never_added(self):
        only_a = self.open_memory("only_a.db")
        self.add_sessions(only_a, with_b=False)
        self.add_sessions(self.memory, with_b=True)
        for query in self.QUERIES:  # the caches hold B's sessions and postings now
            self.search(query, top_k=20)
        self.assertEqual(self.memory.delete_session("u1", "B"),
                         {"deleted": True, "user_id": "u1", "session_id": "B", "messages": 4})
        self.assertEqual(index_terms(self.memory, 1), index_terms(only_a, 1))
        self.assertEqual(self.state(self.memory), self.state(only_a))
        for query in self.QUERIES:
            self.assertEqual(self.search(query, top_k=20), self.search(query, top_k=20, memory=only_a), query)
        self.assertEqual(self.memory.stats("u1"), only_a.stats("u1"))

    def test_many_deletions_between_adds_leave_a_sound_index_equal_to_one_never_holding_them(self):
        never = self.open_memory("never.db")
        for n in range(40):  # enough index segments for FTS5's own merges to run among the deletions
            for memory in (self.memory, never) if n % 3 else (self.memory,):
                memory.add(add_body("u1", "s%d" % n, ["Ann: word%d shared" % n, "Bo: more%d text" % n, "Ann: end"],
                                    request_id="r%d" % n))
            if n % 3 == 0:
                self.assertTrue(self.memory.delete_session("u1", "s%d" % n)["deleted"])
        with self.memory.store.reading() as reader:
            reader.conn.execute(fts.integrity_check_sql())  # raises if the index is corrupt
        # s0 was u1's only session: deleting it removed the user, who came back with a new key.
        key = self.memory.store.writer.execute("SELECT user_key FROM users WHERE user_id = 'u1'").fetchone()[0]
        self.assertEqual([t.split("_", 1)[1] for t in index_terms(self.memory, key)],
                         [t.split("_", 1)[1] for t in index_terms(never, 1)])
        self.assertEqual(self.state(self.memory), self.state(never))
        # The same scores; which of the items tied at a score come first is the session tags' to say,
        # and a session sent after a deletion takes a later attempt of its tag (storage/session_rows.py).
        for query in ("word7 shared", "more12", "end", "word9"):
            found, never_found = self.search(query, top_k=20), self.search(query, top_k=20, memory=never)
            self.assertEqual([i["score"] for i in found], [i["score"] for i in never_found], query)

    def test_deleting_again_or_an_unknown_session_deletes_nothing(self):
        self.add_sessions(self.memory, with_b=True)
        self.memory.delete_session("u1", "B")
        gone = {"deleted": False, "user_id": "u1", "session_id": "B", "messages": 0}
        self.assertEqual(self.memory.delete_session("u1", "B"), gone)
        self.assertEqual(self.memory.delete_session("nobody", "B")["deleted"], False)

    def test_a_deleted_sessions_adds_can_be_sent_again_and_are_stored(self):
        self.add_sessions(self.memory, with_b=True)
        self.memory.delete_session("u1", "B")
        self.memory.add(add_body("u1", "B", self.B[0], request_id="b0", timestamp=T0))
        self.assertEqual([m["content"] for m in self.memory.list_messages("u1", session_id="B")["data"]], self.B[0])
        self.assertEqual(self.search("quokka Kazimierz")[0]["content"], "Ann: my quokka named Kazimierz")

    def test_a_deletion_by_another_store_empties_this_ones_caches(self):
        self.add_sessions(self.memory, with_b=True)
        self.assertEqual(self.search("quokka")[0]["session_id"], "B")
        self.open_memory().delete_session("u1", "B")  # `flowmem` beside a server
        self.assertNotIn("B", {item["session_id"] for item in self.search("quokka", top_k=20)})

    def test_deleting_a_users_last_session_leaves_no_user(self):
        self.memory.add(add_body("solo", "only", ["Ann: alone"]))
        self.memory.delete_session("solo", "only")
        self.assertEqual(self.memory.list_users()["data"], [])
        self.assertEqual(self.memory.stats("solo"), {"user_id": "solo", "exists": False})
        self.assertEqual(self.memory.delete_user("solo"), {"deleted": False, "user_id": "solo"})
        self.assertEqual(self.search("alone", "solo"), [])

    def test_other_users_and_sessions_are_untouched(self):
        self.add_sessions(self.memory, with_b=True)
        self.memory.add(add_body("u2", "B", ["Cy: quokka of u2"], request_id="b0"))
        before = self.memory.list_messages("u2")
        self.memory.delete_session("u1", "B")
        self.assertEqual(self.memory.list_messages("u2"), before)
        self.assertEqual(self.search("quokka", "u2")[0]["content"], "Cy: quokka of u2")
        self.assertEqual([m["content"] for m in self.memory.list_messages("u1")["data"]], self.A[0] + self.A[1])


class MemoryFromPathTest(MemoryTestCase):
    def test_a_memory_opens_on_a_database_path_with_every_default(self):
        from flowmem.memory import Memory
        memory = Memory(self.db_path("by_path.db"))
        self.addCleanup(memory.close)
        memory.add({"request_id": "r", "user_id": "u", "session_id": "s", "messages": [message("Ann: hi")]})
        self.assertEqual(memory.list_users()["data"], [{"user_id": "u", "sessions": 1, "messages": 1}])


if __name__ == "__main__":
    unittest.main()
