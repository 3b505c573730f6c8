"""Search filters (session, time range, role) and the role on every item: retrieval/filters.py."""
import datetime
import unittest
from typing import Any, Dict, List, Optional

from flowmem.errors import InvalidField
from flowmem.memory import Memory
from tests.helpers import T0, MemoryTestCase, message

MINUTE = 60_000
DAY = 86_400_000


def iso(timestamp_ms: int) -> str:
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=timestamp_ms)
    return moment.isoformat().replace("+00:00", "Z")


# session -> [(role, content, timestamp)]: every message names the trail, so every one can match.
SESSIONS = {
    "hike": [("user", "Dana: we hiked the canyon trail on Saturday", T0),
             ("assistant", "Priya: the canyon trail sounds lovely", T0 + MINUTE),
             ("user", "Dana: the trail was steep near the top", T0 + 2 * MINUTE),
             ("assistant", "Priya: did you see the waterfall on the trail?", T0 + 3 * MINUTE),
             ("user", "Dana: yes, the trail ends at the waterfall", T0 + 4 * MINUTE),
             ("assistant", "Priya: I want to walk that trail too", T0 + 5 * MINUTE)],
    "garden": [("user", "Dana: I planted tomatoes along the garden trail", T0 + 10 * DAY),
               ("assistant", "Priya: a garden trail with tomatoes, nice", T0 + 10 * DAY + MINUTE),
               ("user", "Dana: the trail gets muddy when it rains", T0 + 10 * DAY + 2 * MINUTE)],
    "run": [("user", "Dana: I ran the river trail this morning", T0 + 20 * DAY),
            ("assistant", "Priya: how long is the river trail?", T0 + 20 * DAY + MINUTE),
            ("user", "Dana: the river trail is ten kilometres", T0 + 20 * DAY + 2 * MINUTE)],
    "undated": [("user", "Dana: someday I will map every trail in town", None),
                ("assistant", "Priya: a trail map would help everyone", None)],
}
STORED = {content: (session, role, ts) for session, said in SESSIONS.items() for role, content, ts in said}


class SearchFiltersTest(MemoryTestCase):
    # Windows from the second slot on: a filter must keep out those reaching outside it.
    settings = dict(MemoryTestCase.settings, message_share=0.34)

    def setUp(self) -> None:
        super().setUp()
        self.memories = [self.memory, self.open_memory("uncached.db", cache_postings_bytes=0)]  # postings: the index's
        for memory in self.memories:
            for session, said in SESSIONS.items():
                memory.add({"request_id": session, "user_id": "u1", "session_id": session,
                            "messages": [message(content, role, ts) for role, content, ts in said]})
            memory.add({"request_id": "other", "user_id": "u2", "session_id": "hike",
                        "messages": [message("Kim: the trail is closed", "user", T0)]})

    def filtered(self, query: str, filters: Any, top_k: int = 20, memory: Optional[Memory] = None,
                 user: str = "u1") -> List[Dict[str, Any]]:
        """The items of a filtered search, the same from held postings and from the index."""
        results = [m.search({"query": query, "user_id": user, "top_k": top_k, "filters": filters})["data"]
                   for m in ([memory] if memory else self.memories)]
        for other in results[1:]:
            self.assertEqual(other, results[0])
        return results[0]

    def said(self, items: List[Dict[str, Any]]) -> List[tuple]:
        """(session, role, timestamp) of every message of every item, read back from its content."""
        return [STORED[line] for item in items for line in item["content"].split("\n")]

    def test_a_session_filter_keeps_every_item_inside_that_session(self):
        unfiltered = self.search("trail", top_k=20)
        self.assertEqual({i["session_id"] for i in unfiltered}, set(SESSIONS))
        items = self.filtered("trail", {"session_id": "garden"})
        self.assertEqual({s for s, _, _ in self.said(items)}, {"garden"})
        self.assertEqual(len(self.said(items)), 3)

    def test_a_role_filter_keeps_only_that_roles_messages_so_no_window_mixing_roles_is_used(self):
        items = self.filtered("trail", {"role": "assistant"})
        self.assertEqual({r for _, r, _ in self.said(items)}, {"assistant"})
        self.assertEqual(len(items), len([c for c, (_, r, _) in STORED.items() if r == "assistant"]))
        self.assertEqual({i["view"] for i in items}, {"message"})
        self.assertEqual(self.filtered("trail", {"role": "Assistant"}), [])  # roles compare exactly

    def test_since_is_inclusive_and_until_exclusive_in_iso_and_in_milliseconds(self):
        since, until = T0 + 2 * MINUTE, T0 + 10 * DAY + MINUTE
        expected = sorted(c for c, (_, _, ts) in STORED.items() if ts is not None and since <= ts < until)
        self.assertEqual(len(expected), 5)
        for filters in ({"since": since, "until": until}, {"since": iso(since), "until": iso(until)},
                        {"since": iso(since).replace("Z", "+00:00"), "until": until}):
            with self.subTest(filters=filters):
                items = self.filtered("trail", filters)
                self.assertEqual(sorted(line for i in items for line in i["content"].split("\n")), expected)

    def test_an_iso_time_without_an_offset_is_utc_and_a_date_alone_is_its_midnight(self):
        day = datetime.datetime.fromtimestamp((T0 + 20 * DAY) / 1000, datetime.timezone.utc).date()
        items = self.filtered("trail", {"since": day.isoformat()})
        self.assertEqual({s for s, _, _ in self.said(items)}, {"run"})
        naive = iso(T0 + 20 * DAY + MINUTE)[:-1]
        self.assertEqual(len(self.said(self.filtered("trail", {"since": naive}))), 2)

    def test_messages_without_a_timestamp_are_inside_no_time_range_but_pass_other_filters(self):
        self.assertNotIn("undated", {s for s, _, _ in self.said(self.filtered("trail", {"since": 10 ** 11}))})
        self.assertEqual(len(self.said(self.filtered("trail", {"session_id": "undated"}))), 2)

    def test_filters_combine_and_every_message_of_every_item_passes_all_of_them(self):
        filters = {"session_id": "hike", "role": "user", "since": T0 + MINUTE, "until": iso(T0 + 5 * MINUTE)}
        items = self.filtered("trail waterfall", filters)
        self.assertEqual(sorted(self.said(items)),
                         [("hike", "user", T0 + 2 * MINUTE), ("hike", "user", T0 + 4 * MINUTE)])

    def test_a_window_or_segment_reaching_outside_the_filter_is_never_used(self):
        # Filtered by time to the middle of a session, a window or segment must lie inside the
        # kept stretch, whatever the number of slots past the messages' share.
        since, until = T0 + MINUTE, T0 + 4 * MINUTE
        for top_k in (1, 2, 3, 5, 10):
            for query in ("trail waterfall", "canyon trail steep", "walk that trail"):
                items = self.filtered(query, {"since": since, "until": until}, top_k=top_k)
                for session, _, ts in self.said(items):
                    self.assertEqual(session, "hike")
                    self.assertTrue(since <= ts < until, (query, top_k, ts))

    def test_no_way_into_the_pool_lets_a_message_outside_the_filter_in(self):
        # The question's words, a near spelling, a related word, a period, a speaker, feedback, nothing.
        queries = ("trail", "watrefall", "the path", "What did we do in May 2023?", "What did Priya say?",
                   "canyon", "xylophone")
        for filters, passes in (({"session_id": "garden"}, lambda s, r, t: s == "garden"),
                                ({"role": "assistant"}, lambda s, r, t: r == "assistant"),
                                ({"since": T0 + 3 * MINUTE, "until": T0 + 15 * DAY},
                                 lambda s, r, t: t is not None and T0 + 3 * MINUTE <= t < T0 + 15 * DAY)):
            for query in queries:
                with self.subTest(filters=filters, query=query):
                    items = self.filtered(query, filters)
                    self.assertTrue(items)
                    for said in self.said(items):
                        self.assertTrue(passes(*said), said)

    def test_windows_inside_the_filter_are_still_used(self):
        items = self.filtered("trail waterfall", {"session_id": "hike"}, top_k=3)
        self.assertIn("window", {i["view"] for i in items})
        self.assertEqual({s for s, _, _ in self.said(items)}, {"hike"})

    def test_no_filters_an_empty_object_and_null_values_give_the_unfiltered_results(self):
        unfiltered = self.search("canyon trail", top_k=20)
        for filters in ({}, None, {"session_id": None, "since": None, "until": None, "role": None}):
            with self.subTest(filters=filters):
                self.assertEqual(self.filtered("canyon trail", filters), unfiltered)

    def test_every_item_carries_the_role_of_its_first_message(self):
        items = self.search("trail waterfall canyon", top_k=12)
        self.assertIn("window", {i["view"] for i in items})
        for item in items:
            self.assertEqual(item["role"], STORED[item["content"].split("\n")[0]][1])
        fallback = self.search("qwzx", top_k=2)
        self.assertEqual([(i["signals"], i["role"]) for i in fallback],
                         [({"fallback": "latest_session"}, "user"), ({"fallback": "latest_session"}, "assistant")])

    def test_the_fallback_gives_the_latest_messages_that_pass_the_filter(self):
        items = self.filtered("qwzx vbnq?", {"session_id": "hike", "role": "user"}, top_k=2)
        self.assertEqual([i["content"] for i in items], ["Dana: yes, the trail ends at the waterfall",
                                                         "Dana: the trail was steep near the top"])
        self.assertEqual({str(i["signals"]) for i in items}, {"{'fallback': 'latest_session'}"})
        items = self.filtered("What is it?", {"until": T0 + 10 * DAY + MINUTE}, top_k=3)  # stopwords alone
        self.assertEqual([STORED[i["content"]][2] for i in items], [T0 + 10 * DAY, T0 + 5 * MINUTE, T0 + 4 * MINUTE])

    def test_a_filter_that_no_message_passes_gives_an_empty_list_fallback_included(self):
        for filters in ({"session_id": "nowhere"}, {"until": T0}, {"role": "system"}, {"since": T0 + 30 * DAY},
                        {"session_id": "garden", "role": "user", "since": T0 + 20 * DAY}):
            with self.subTest(filters=filters):
                self.assertEqual(self.filtered("trail", filters), [])
                self.assertEqual(self.filtered("xylophone", filters), [])

    def test_a_filter_never_reaches_another_users_session_of_the_same_id(self):
        items = self.filtered("closed trail", {"session_id": "hike"})
        self.assertNotIn("Kim: the trail is closed", [i["content"] for i in items])
        self.assertEqual([i["content"] for i in self.filtered("closed", {"session_id": "hike"}, user="u2")],
                         ["Kim: the trail is closed"])

    def test_the_passing_positions_are_read_by_sql_without_reading_a_session_whole(self):
        bounds = [(None, None, None), (T0 + MINUTE, None, None), (None, T0 + 10 * DAY + MINUTE, None),
                  (None, None, "assistant"), (T0 + 2 * MINUTE, T0 + 20 * DAY + MINUTE, "user"), (None, None, "User")]
        with self.memory.store.reading() as reader:
            keys = {session_id: key for key, session_id in reader.conn.execute(
                "SELECT session_key, session_id FROM sessions s JOIN users u USING (user_key) WHERE u.user_id = 'u1'")}
            for since, until, role in bounds:
                with self.subTest(since=since, until=until, role=role):
                    expected = {keys[session]: frozenset(
                        seq for seq, (r, _, ts) in enumerate(said, 1) if (role is None or r == role)
                        and (since is None or (ts is not None and ts >= since))
                        and (until is None or (ts is not None and ts < until))) for session, said in SESSIONS.items()}
                    found = reader.passing_positions(sorted(keys.values()), since, until, role)
                    self.assertEqual(found, {key: seqs for key, seqs in expected.items() if seqs})
            self.assertEqual(reader.sessions_read(), [])


class SearchFilterValidationTest(MemoryTestCase):
    def refused(self, filters: Any) -> InvalidField:
        with self.assertRaises(InvalidField) as caught:
            self.memory.search({"query": "trail", "user_id": "u1", "top_k": 5, "filters": filters})
        self.assertEqual(caught.exception.status, 422)
        return caught.exception

    def test_an_unknown_filter_key_is_refused_naming_it(self):
        error = self.refused({"session_id": "hike", "sesion": "hike"})
        self.assertEqual(error.field, "filters.sesion")
        self.assertIn("session_id, since, until, role", str(error))

    def test_filters_that_are_not_an_object_are_refused(self):
        for filters in ([], "hike", 5, True):
            with self.subTest(filters=filters):
                self.assertEqual(self.refused(filters).field, "filters")

    def test_a_filter_of_the_wrong_type_is_refused_naming_it(self):
        for filters, field in (({"session_id": 7}, "filters.session_id"), ({"session_id": " "}, "filters.session_id"),
                               ({"session_id": "a\x00b"}, "filters.session_id"), ({"role": ["user"]}, "filters.role"),
                               ({"since": True}, "filters.since"), ({"until": {}}, "filters.until"),
                               ({"since": "last week"}, "filters.since"), ({"until": "2023-13-01"}, "filters.until"),
                               ({"since": 1.5e12 + 0.5}, "filters.since"), ({"since": 1683554160}, "filters.since")):
            with self.subTest(filters=filters):
                self.assertEqual(self.refused(filters).field, field)

    def test_seconds_given_for_milliseconds_are_named_as_such(self):
        self.assertIn("looks like Unix seconds", str(self.refused({"until": 1683554160})))

    def test_since_at_or_after_until_is_refused(self):
        for since, until in ((T0, T0), (iso(T0 + DAY), T0), ("2023-05-09", "2023-05-08T23:59:59Z")):
            with self.subTest(since=since, until=until):
                self.assertEqual(self.refused({"since": since, "until": until}).field, "filters.until")


if __name__ == "__main__":
    unittest.main()
