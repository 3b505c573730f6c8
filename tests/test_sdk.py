"""The Python API on Memory (flowmem/sdk.py), in-process: keyword calls, typed results, the dict form kept."""
import dataclasses
import datetime
import hashlib
import json
import unittest

from flowmem import sdk
from flowmem.errors import InvalidField, NotFound, StoreError
from flowmem.memory import Memory
from flowmem.sdk import AddResult, Hit, Session, StoredMessage, User
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body


class AddTest(MemoryTestCase):
    def test_plain_text_is_one_user_message_of_the_session_named(self):
        result = self.memory.add("I moved to Lisbon in May", user_id="alice", session_id="trip")
        self.assertIsInstance(result, AddResult)
        self.assertEqual((result.user_id, result.session_id, result.stored), ("alice", "trip", True))
        [message] = self.memory.list(user_id="alice")
        self.assertEqual((message.role, message.content, message.session_id), ("user", "I moved to Lisbon in May",
                                                                                "trip"))
        self.assertEqual(message.request_id, result.request_id)

    def test_the_session_is_default_and_role_names_the_plain_text_messages(self):
        self.memory.add("noted", user_id="alice", role="assistant")
        [message] = self.memory.list(user_id="alice")
        self.assertEqual((message.session_id, message.role), ("default", "assistant"))

    def test_a_list_holds_plain_text_and_message_dicts_in_order(self):
        self.memory.add(["do you like tea?", {"role": "assistant", "content": "green tea, yes", "timestamp": T0}],
                        user_id="alice", timestamp=T0 + DAY_MS)
        listed = self.memory.list(user_id="alice")
        self.assertEqual([(m.role, m.content, m.timestamp) for m in listed],
                         [("user", "do you like tea?", T0 + DAY_MS), ("assistant", "green tea, yes", T0)])

    def test_an_aware_datetime_is_a_timestamp_in_unix_milliseconds(self):
        moment = datetime.datetime(2023, 5, 8, 13, 56, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
        self.memory.add("hello", user_id="alice", timestamp=moment)
        self.assertEqual(self.memory.list(user_id="alice")[0].timestamp, T0 - 2 * 3600 * 1000)

    def test_metadata_of_the_add_is_stored_with_each_message_which_may_add_its_own(self):
        self.memory.add(["first", {"role": "user", "content": "second", "metadata": {"topic": "tea"}}],
                        user_id="alice", metadata={"source": "chat"})
        self.assertEqual([m.metadata for m in self.memory.list(user_id="alice")],
                         [{"source": "chat"}, {"source": "chat", "topic": "tea"}])
        self.assertEqual([m.content for m in self.memory.list(user_id="alice", metadata={"topic": "tea"})], ["second"])

    def test_a_dict_is_the_contract_call_answered_with_the_contract_dict(self):
        body = add_body("alice", "s1", ["Alice: kayak trip"], "r1")
        answer = self.memory.add(body)
        self.assertIsInstance(answer, dict)
        self.assertEqual(answer["request_id"], "r1")
        found = self.memory.search({"query": "kayak", "user_id": "alice", "top_k": 3})
        self.assertIsInstance(found, dict)
        self.assertEqual(found["data"][0]["content"], "Alice: kayak trip")

    def test_the_same_words_said_again_are_stored_again(self):
        # A chat: "ok", a reply, "ok"; and "lol" twice in a row in the default session.
        for text in ("ok", "sure?", "ok", "lol", "lol"):
            self.assertTrue(self.memory.add(text, user_id="alice", session_id="chat").stored)
        self.assertEqual([m.content for m in self.memory.list(user_id="alice")], ["ok", "sure?", "ok", "lol", "lol"])
        ids = {m.request_id for m in self.memory.list(user_id="alice")}
        self.assertEqual(len(ids), 5)

    def test_an_unnamed_add_has_the_same_request_id_in_every_run(self):
        first = self.memory.add("I moved to Lisbon", user_id="alice")
        other = self.open_memory("other.db")
        self.assertEqual(other.add("I moved to Lisbon", user_id="alice").request_id, first.request_id)
        self.assertTrue(first.request_id.startswith("sdk-"))

    def test_the_same_text_is_stored_twice_with_its_own_timestamp_or_request_id(self):
        self.memory.add("took my pills", user_id="alice", timestamp=T0)
        self.assertTrue(self.memory.add("took my pills", user_id="alice", timestamp=T0 + DAY_MS).stored)
        self.assertTrue(self.memory.add("took my pills", user_id="alice", request_id="day-3").stored)
        self.assertEqual(len(self.memory.list(user_id="alice")), 3)

    def test_the_body_digest_is_the_sha256_of_the_canonical_json_of_the_add(self):
        body = sdk.add_request([{"content": "hi", "role": "user"}], "alice", "s1")
        self.assertTrue(body["anchored"])  # none named: stored under an id anchored where it lands
        canonical = json.dumps({"messages": [{"content": "hi", "role": "user"}], "metadata": None,
                                "session_id": "s1", "user_id": "alice"}, separators=(",", ":"))
        digest = body["request_id"]
        self.assertEqual(digest, "sdk-" + hashlib.sha256(canonical.encode()).hexdigest()[:32])
        # The same Add written another way (key order, plain text) is the same body.
        self.assertEqual(sdk.add_request(["hi"], "alice", "s1")["request_id"], digest)
        others = [sdk.add_request(["hi"], "alice", "s2"), sdk.add_request(["hi"], "bob", "s1"),
                  sdk.add_request(["hi!"], "alice", "s1"), sdk.add_request(["hi"], "alice", "s1", metadata={"a": 1})]
        for other in others:
            self.assertNotEqual(other["request_id"], digest)


class SearchTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(["I went kayaking on the lake", "the lake was cold"], user_id="alice", session_id="s1",
                        timestamp=T0)
        self.memory.add("kayaking again, this time at sea", user_id="alice", session_id="s2", timestamp=T0 + DAY_MS)

    def test_search_returns_hits_with_their_provenance_and_their_dict(self):
        found = self.memory.search("kayaking", user_id="alice")
        self.assertTrue(found)
        self.assertTrue(all(isinstance(hit, Hit) for hit in found))
        raw = self.memory.search({"query": "kayaking", "user_id": "alice", "top_k": 10})["data"]
        self.assertEqual([hit.raw for hit in found], raw)
        hit = found[0]
        self.assertEqual((hit.id, hit.content, hit.score, hit.view, hit.session_id, hit.role, hit.signals),
                         (raw[0]["id"], raw[0]["content"], raw[0]["score"], raw[0]["view"], raw[0]["session_id"],
                          raw[0]["role"], raw[0]["signals"]))
        self.assertEqual(hit.source_message_ids, tuple(raw[0]["source_message_ids"]))
        self.assertEqual(self.memory.get(hit.source_message_ids[0], user_id="alice").session_id, hit.session_id)

    def test_limit_filters_and_options_reach_the_search(self):
        self.assertEqual(len(self.memory.search("kayaking", user_id="alice", limit=1)), 1)
        found = self.memory.search("kayaking", user_id="alice", filters={"session_id": "s2"}, options=["sea", "lake"])
        self.assertEqual({hit.session_id for hit in found}, {"s2"})

    def test_results_cannot_be_changed_under_their_holder(self):
        hit = self.memory.search("kayaking", user_id="alice")[0]
        with self.assertRaises(dataclasses.FrozenInstanceError):
            hit.content = "changed"  # type: ignore[misc]


class StoredTest(MemoryTestCase):
    def test_get_list_sessions_users_and_delete(self):
        for i in range(5):
            self.memory.add("message %d" % i, user_id="alice", session_id="s%d" % (i % 2), timestamp=T0 + i)
        self.memory.add("other", user_id="bob")
        listed = self.memory.list(user_id="alice")
        self.assertTrue(all(isinstance(m, StoredMessage) for m in listed))
        self.assertEqual([m.content for m in listed], ["message 0", "message 2", "message 4", "message 1",
                                                       "message 3"])
        self.assertEqual([m.content for m in self.memory.list(user_id="alice", session_id="s1", order="desc")],
                         ["message 3", "message 1"])
        self.assertEqual(len(self.memory.list(user_id="alice", limit=2)), 2)
        self.assertEqual(self.memory.get(listed[1].id, user_id="alice"), listed[1])
        self.assertEqual(self.memory.sessions("alice"), [
            Session("s0", 3, listed[0].created_at, listed[2].created_at, {}),
            Session("s1", 2, listed[3].created_at, listed[4].created_at, {})])
        self.assertEqual(self.memory.users(), [User("alice", 2, 5, {}), User("bob", 1, 1, {})])
        self.assertTrue(self.memory.delete(listed[1].id, user_id="alice"))
        self.assertFalse(self.memory.delete(listed[1].id, user_id="alice"))
        with self.assertRaises(NotFound):
            self.memory.get(listed[1].id, user_id="alice")
        self.assertEqual(len(self.memory.list(user_id="alice", limit=None)), 4)
        self.assertTrue(self.memory.delete_session(user_id="alice", session_id="s1")["deleted"])

    def test_list_follows_the_pages_up_to_its_limit(self):
        memory = self.open_memory("paged.db", page_max_bytes=1)  # a page of one message each
        for i in range(7):
            memory.add("message %d" % i, user_id="alice", timestamp=T0 + i)
        self.assertIsNotNone(memory.list_messages("alice", limit=50)["next_cursor"])
        self.assertEqual([m.content for m in memory.list(user_id="alice")], ["message %d" % i for i in range(7)])
        self.assertEqual([m.content for m in memory.list(user_id="alice", limit=3)], ["message 0", "message 1",
                                                                                      "message 2"])


class ContextManagerTest(MemoryTestCase):
    def test_with_memory_closes_it_at_the_end_of_the_block(self):
        with Memory(self.db_path("with.db")) as memory:
            memory.add("hello", user_id="alice")
        with self.assertRaises(StoreError) as caught:
            memory.list(user_id="alice")
        self.assertIn("closed", caught.exception.reason)
        with Memory(self.db_path("with.db")) as reopened:
            self.assertEqual([m.content for m in reopened.list(user_id="alice")], ["hello"])


class ErrorsTest(MemoryTestCase):
    def field(self, call):
        with self.assertRaises(InvalidField) as caught:
            call()
        return caught.exception.field

    def test_wrong_arguments_are_invalid_fields_naming_the_argument(self):
        m = self.memory
        cases = {
            "messages": lambda: m.add(42, user_id="alice"),
            "user_id": lambda: m.add("hello"),
            "messages[1]": lambda: m.add(["fine", 7], user_id="alice"),
            "messages[0].metdata": lambda: m.add([{"role": "user", "content": "x", "metdata": {}}], user_id="alice"),
            "timestamp": lambda: m.add("hello", user_id="alice", timestamp=1.5),
            "role": lambda: m.add("hello", user_id="alice", role=None),
            "metadata": lambda: m.add("hello", user_id="alice", metadata=["topic"]),
            "query": lambda: m.search(5, user_id="alice"),
            "limit": lambda: m.search("q", user_id="alice", limit="5"),
            "filters": lambda: m.search("q", user_id="alice", filters="s1"),
            "options": lambda: m.search("q", user_id="alice", options="a"),
            "filters.sesion_id": lambda: m.search("q", user_id="alice", filters={"sesion_id": "s1"}),
        }
        for name, call in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.field(call), name)
        self.assertEqual(self.field(lambda: m.get("m-0-1")), "user_id")
        self.assertEqual(self.field(lambda: m.list()), "user_id")
        self.assertEqual(self.field(lambda: m.list(user_id="alice", limit=0)), "limit")
        self.assertEqual(self.field(lambda: m.delete("m-0-1")), "user_id")
        self.assertEqual(self.memory.list(user_id="alice"), [])

    def test_a_naive_datetime_is_refused_rather_than_read_in_the_machines_zone(self):
        with self.assertRaises(InvalidField) as caught:
            self.memory.add("hello", user_id="alice", timestamp=datetime.datetime(2023, 5, 8))
        self.assertIn("timezone-aware", caught.exception.reason)

    def test_keyword_arguments_beside_a_body_are_refused(self):
        body = add_body("alice", "s1", ["Alice: hi"], "r1")
        self.assertEqual(self.field(lambda: self.memory.add(body, user_id="alice")), "user_id")
        self.assertEqual(self.field(lambda: self.memory.add(body, session_id="s2")), "session_id")
        self.assertEqual(self.field(lambda: self.memory.search({"query": "hi", "user_id": "alice", "top_k": 1},
                                                               limit=3)), "limit")


    def test_a_body_with_a_field_flowmem_does_not_know_is_refused_before_it_is_sent(self):
        # What Client sends too: a server would ignore the field (the contract says so) and answer 200.
        body = add_body("alice", "s1", ["Alice: hi"], "r1")
        body["messages"][0]["metdata"] = {"topic": "x"}
        for call, given, field in ((sdk.add_call, body, "messages[0].metdata"),
                                   (sdk.search_call, {"query": "hi", "user_id": "a", "top_k": 1, "filter": {}},
                                    "filter")):
            with self.assertRaises(InvalidField) as raised:
                call(given)
            self.assertEqual(raised.exception.field, field)


if __name__ == "__main__":
    unittest.main()
