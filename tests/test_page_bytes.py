"""Listing and export pages bounded in bytes as well as rows (storage/listing.py take(), page_max_bytes).

A page of big rows ends early with its next_cursor, the next page continues right after its
last row, a row larger than the bound is a page alone, and every consumer that follows
next_cursor (paging.walk, Memory.export, flowmem.Client, `flowmem export`, the MCP tool)
still gets every row once, in order. The rows of a page are read one at a time: what a
listing holds is the page and one row past it, not `limit` rows.
"""
from __future__ import annotations

import tracemalloc
import unittest
from typing import Any, Callable, Dict, List, Optional

from flowmem import paging
from flowmem.mcp import tools
from flowmem.storage import listing
from tests.helpers import MemoryTestCase, add_body

BOUND = 10_000  # page_max_bytes in these tests
BIG = 3_000  # characters of a big message: three fit a page, four do not
HUGE = 25_000  # characters of a message larger than a page


def text(n: int, mark: int) -> str:
    """`n` characters that say which message they are."""
    head = "message %d " % mark
    return head + "x" * (n - len(head))


def contents(page: Dict[str, Any]) -> List[str]:
    return [m["content"] for m in page["data"]]


def walked(fetch: Callable[[Optional[str]], Dict[str, Any]]) -> List[Any]:
    return list(paging.walk(fetch))


def traced_peak(call):
    """What `call()` returns, and the most memory Python held for it at once (tracemalloc)."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

class BoundedPagesTestCase(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.close()
        self.memory = self.open_memory(page_max_bytes=BOUND)
        self.stored = 0

    def store(self, sizes: List[int], session: str = "s", user: str = "u") -> List[str]:
        """One Add of one message per size, each numbered in its text; their contents, in order."""
        stored = []
        for size in sizes:
            self.stored += 1
            content = text(size, self.stored)
            self.memory.add(add_body(user, session, [content], request_id="r%d" % self.stored))
            stored.append(content)
        return stored


class MessagesTest(BoundedPagesTestCase):
    def test_a_page_of_big_messages_ends_at_the_byte_bound_and_the_next_continues_after_its_last_row(self):
        stored = self.store([BIG] * 10)
        first = self.memory.list_messages("u", limit=1000)
        self.assertEqual(contents(first), stored[:3])
        self.assertIsNotNone(first["next_cursor"])
        self.assertLessEqual(sum(len(c) for c in contents(first)), BOUND)
        second = self.memory.list_messages("u", limit=1000, cursor=first["next_cursor"])
        self.assertEqual(contents(second), stored[3:6])
        self.assertEqual(second["data"][0]["position"], first["data"][-1]["position"] + 1)

    def test_the_walk_returns_every_message_once_in_order_either_way(self):
        stored = self.store([BIG, 10, BIG, BIG, 500, BIG, BIG, BIG, 20, BIG, BIG])
        for order, expected in (("asc", stored), ("desc", stored[::-1])):
            listed = walked(lambda cursor, order=order: self.memory.list_messages("u", limit=1000, cursor=cursor,
                                                                                  order=order))
            self.assertEqual([m["content"] for m in listed], expected, order)

    def test_the_row_limit_still_holds_under_the_byte_bound(self):
        stored = self.store([10] * 7)
        first = self.memory.list_messages("u", limit=3)
        self.assertEqual(contents(first), stored[:3])
        self.assertEqual([m["content"] for m in walked(lambda c: self.memory.list_messages("u", limit=3, cursor=c))],
                         stored)

    def test_a_message_larger_than_the_bound_is_listed_alone(self):
        stored = self.store([10, HUGE, 10, HUGE, HUGE])
        pages = []
        cursor = None
        while True:
            page = self.memory.list_messages("u", limit=1000, cursor=cursor)
            pages.append(contents(page))
            cursor = page["next_cursor"]
            if cursor is None:
                break
        self.assertEqual(pages, [stored[:1], stored[1:2], stored[2:3], stored[3:4], stored[4:5]])

    def test_a_sessions_messages_and_a_time_range_are_bounded_too(self):
        stored = self.store([BIG] * 4, session="a") + self.store([BIG] * 4, session="b")
        one = self.memory.list_messages("u", session_id="b", limit=1000)
        self.assertEqual(len(one["data"]), 3)
        listed = walked(lambda c: self.memory.list_messages("u", session_id="b", since="2023-01-01", limit=1000,
                                                            cursor=c))
        self.assertEqual([m["content"] for m in listed], stored[4:])

    def test_messages_across_sessions_are_walked_once_in_order(self):
        stored = []
        for i in range(4):  # sessions a, b, c, d, two big messages each
            stored += self.store([BIG, BIG], session="abcd"[i])
        listed = walked(lambda c: self.memory.list_messages("u", limit=1000, cursor=c))
        self.assertEqual([m["content"] for m in listed], stored)

    def test_a_page_is_read_a_row_at_a_time_not_limit_rows_at_once(self):
        self.store([50_000] * 20)
        page, peak = traced_peak(lambda: self.memory.list_messages("u", limit=1000))
        # The page, the row past it, and what reading them costs: not the 20 rows (1 MB) a whole read holds.
        self.assertLess(peak, 400_000, peak)
        self.assertEqual(len(page["data"]), 1)  # 50,000 bytes: a page alone


class ExportTest(BoundedPagesTestCase):
    def test_an_export_page_of_big_adds_ends_at_the_byte_bound_and_continues_after_its_last_add(self):
        stored = self.store([BIG] * 10)
        first = self.memory.export_page("u", limit=1000)
        self.assertEqual([r["messages"][0]["content"] for r in first["data"]], stored[:3])
        second = self.memory.export_page("u", limit=1000, cursor=first["next_cursor"])
        self.assertEqual([r["messages"][0]["content"] for r in second["data"]], stored[3:6])

    def test_the_export_returns_every_add_once_in_the_order_stored(self):
        expected = []
        for i in range(12):  # two sessions' Adds interleaved, big and small, so that pages merge sessions
            session = "ab"[i % 2]
            content = text([BIG, 40, HUGE, BIG][i % 4], i)
            self.memory.add(add_body("u", session, [content, "reply %d" % i], request_id="r%d" % i))
            expected.append(("r%d" % i, session, [content, "reply %d" % i]))
        for export in (list(self.memory.export("u")), list(self.memory.export())):
            self.assertEqual([(r["request_id"], r["session_id"], [m["content"] for m in r["messages"]])
                              for r in export], expected)

    def test_an_add_larger_than_the_bound_is_exported_alone(self):
        stored = self.store([10, HUGE, 10])
        first = self.memory.export_page("u", limit=100)
        self.assertEqual([r["messages"][0]["content"] for r in first["data"]], stored[:1])
        second = self.memory.export_page("u", limit=100, cursor=first["next_cursor"])
        self.assertEqual([r["messages"][0]["content"] for r in second["data"]], stored[1:2])
        self.assertIsNotNone(second["next_cursor"])
        third = self.memory.export_page("u", limit=100, cursor=second["next_cursor"])
        self.assertEqual(([r["messages"][0]["content"] for r in third["data"]], third["next_cursor"]),
                         (stored[2:], None))

    def test_an_export_is_imported_whole_into_another_memory(self):
        self.store([BIG] * 5 + [HUGE] + [BIG] * 5)
        other = self.open_memory("other.db", page_max_bytes=BOUND)
        self.assertEqual(other.import_records(list(self.memory.export("u")))["stored"], 11)
        self.assertEqual(list(other.export("u")), list(self.memory.export("u")))

    def test_an_export_page_is_read_an_add_at_a_time(self):
        self.store([50_000] * 20)
        page, peak = traced_peak(lambda: self.memory.export_page("u", limit=1000))
        self.assertLess(peak, 400_000, peak)
        self.assertEqual(len(page["data"]), 1)


class UsersAndSessionsTest(BoundedPagesTestCase):
    def test_users_and_sessions_with_long_ids_are_paged_by_bytes_too(self):
        users = ["%d-%s" % (i, "u" * 4_000) for i in range(5)]
        sessions = ["%d-%s" % (i, "s" * 4_000) for i in range(5)]
        for user in users:
            self.memory.add(add_body(user, "s", ["hello"]))
        for session in sessions:
            self.memory.add(add_body("u", session, ["hello"]))
        first = self.memory.list_users(limit=1000)
        self.assertEqual(len(first["data"]), 2)
        self.assertEqual([u["user_id"] for u in walked(lambda c: self.memory.list_users(1000, c))], users + ["u"])
        self.assertEqual(len(self.memory.list_sessions("u", limit=1000)["data"]), 2)
        self.assertEqual([s["session_id"] for s in walked(lambda c: self.memory.list_sessions("u", 1000, c))],
                         sessions)


class TakeTest(unittest.TestCase):
    def test_take_stops_at_the_first_row_past_either_bound_and_keeps_a_first_row_of_any_size(self):
        size = len
        self.assertEqual(listing.take(iter(["aaaa", "bb", "c"]), 10, 6, size), (["aaaa", "bb"], True))
        self.assertEqual(listing.take(iter(["aaaaaaaaaa", "b"]), 10, 6, size), (["aaaaaaaaaa"], True))
        self.assertEqual(listing.take(iter(["a", "b", "c"]), 2, 100, size), (["a", "b"], True))
        self.assertEqual(listing.take(iter(["a", "b"]), 2, 100, size), (["a", "b"], False))
        self.assertEqual(listing.take(iter([]), 2, 100, size), ([], False))

    def test_text_is_measured_in_utf8_bytes(self):
        self.assertEqual(listing.text_bytes("abc", None, "é", "\u4e2d", "\U0001f600"), 3 + 2 + 3 + 4)


class McpTest(BoundedPagesTestCase):
    def test_the_list_tool_gives_a_short_page_with_its_cursor_and_follows_it(self):
        stored = self.store([BIG] * 5)
        listed: List[str] = []
        cursor: Optional[str] = None
        while True:
            args: Dict[str, Any] = {"user_id": "u", "limit": 1000}
            if cursor:
                args["cursor"] = cursor
            result = tools.call(self.memory, "list_memories", args)
            assert result is not None
            self.assertFalse(result["isError"], result)
            page = result["structuredContent"]
            self.assertLessEqual(len(page["data"]), 3)
            listed += contents(page)
            cursor = page["next_cursor"]
            if cursor is None:
                break
        self.assertEqual(listed, stored)


if __name__ == "__main__":
    unittest.main()
