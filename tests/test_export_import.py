"""Export and import: a memory's Adds out as Add bodies and back in, and LoCoMo files in (flowmem/portable.py)."""
import json
import os
import unittest
from typing import Any, Dict, List
from unittest import mock

from flowmem import importing, portable
from flowmem.errors import Conflict, InvalidField
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body, index_terms, message
from tools.evalkit import dataset
from tools.evalkit.replay import add_bodies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCOMO_SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")

QUERIES = {"u1": ["When did Ann adopt the kitten?", "pottery class", "what did Bo cook", "marathon training"],
           "u 2/%": ["violin lessons", "what is the capital", "Ann"]}


def without_ids(bodies: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Exported bodies as they were sent: each message without the id the export adds."""
    return [dict(b, messages=[{k: v for k, v in m.items() if k != "id"} for m in b["messages"]]) for b in bodies]


class RoundTripTest(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.bodies = [  # Adds of two users interleaved, a session sent in pieces, one Add without times
            add_body("u1", "s1", ["Ann: I adopted a kitten yesterday", "Bo: what is its name?"], "r1"),
            add_body("u 2/%", "s1", ["Cy: my violin lessons start next week", "Di: good luck"], "r1"),
            add_body("u1", "s2", ["Ann: the pottery class was fun", "Bo: I cooked a curry"], "r2",
                     timestamp=T0 + DAY_MS),
            add_body("u1", "s1", ["Ann: her name is Miso", "Bo: cute"], "r3"),
            add_body("u1", "s3", ["Ann: marathon training starts", "Bo: run well"], "r4", timestamp=None),
            add_body("u 2/%", "s2", ["Cy: what is the capital of Peru?", "Di: Lima"], "r2",
                     timestamp=T0 + 3 * DAY_MS),
        ]
        for body in self.bodies:
            self.memory.add(body)

    def snapshot(self, memory: Any) -> Dict[str, Any]:
        """What a client can see of a memory: every search, every listing."""
        out: Dict[str, Any] = {}
        for user, queries in QUERIES.items():
            out[user] = {"searches": [self.search(q, user, top_k=20, memory=memory) for q in queries],
                         "messages": memory.list_messages(user), "sessions": memory.list_sessions(user)}
        out["users"] = memory.list_users()
        return out

    def test_the_export_is_the_adds_in_the_order_they_were_stored(self):
        exported = list(self.memory.export())
        by_user = {user: [b for b in self.bodies if b["user_id"] == user] for user in QUERIES}
        self.assertEqual(without_ids(exported), by_user["u1"] + by_user["u 2/%"])  # one user after another
        self.assertEqual(without_ids(list(self.memory.export("u1"))), by_user["u1"])
        self.assertEqual([m["id"] for m in exported[0]["messages"]],
                         [m["id"] for m in self.memory.list_messages("u1", session_id="s1")["data"][:2]])
        self.assertEqual(json.loads(json.dumps(exported)), exported)  # plain JSON

    def test_a_round_trip_gives_byte_identical_searches_and_listings(self):
        dump = json.loads(json.dumps(list(self.memory.export())))
        copy = self.open_memory("copy.db")
        counts = copy.import_records(dump)
        self.assertEqual(counts, {"requests": 6, "stored": 6, "already_stored": 0, "messages": 12})
        self.assertEqual(json.dumps(self.snapshot(copy)), json.dumps(self.snapshot(self.memory)))
        self.assertEqual(index_terms(copy, 1), index_terms(self.memory, 1))

    def test_importing_the_same_dump_twice_changes_nothing(self):
        dump = list(self.memory.export())
        copy = self.open_memory("copy.db")
        copy.import_records(dump)
        before = self.snapshot(copy)
        self.assertEqual(copy.import_records(iter(dump)),
                         {"requests": 6, "stored": 0, "already_stored": 6, "messages": 0})
        self.assertEqual(self.snapshot(copy), before)
        self.assertEqual(self.memory.import_records(dump)["already_stored"], 6)  # into its own source too

    def test_export_pages_join_up_and_continue_after_adds_meanwhile(self):
        whole = list(self.memory.export("u1"))
        first = self.memory.export_page("u1", limit=2)
        self.assertEqual(first["data"], whole[:2])
        self.memory.add(add_body("u1", "s1", ["Ann: Miso sleeps a lot"], "r5"))
        rest: List[Dict[str, Any]] = []
        cursor = first["next_cursor"]
        while cursor:
            page = self.memory.export_page("u1", limit=1, cursor=cursor)
            rest += page["data"]
            cursor = page["next_cursor"]
        self.assertEqual([b["request_id"] for b in rest], ["r3", "r4", "r5"])

    def test_export_pages_of_every_size_join_up_over_interleaved_sessions(self):
        stored = []
        for n in range(30):  # Adds landing in sessions in a shuffled but fixed order
            body = add_body("u3", "s%d" % (n * 7 % 5), ["Ann: line %d" % n, "Bo: reply %d" % n], "x%d" % n)
            self.memory.add(body)
            stored.append(body)
        for limit in (1, 2, 3, 7, 29, 30, 31):
            bodies, cursor = [], None
            while True:
                page = self.memory.export_page("u3", limit=limit, cursor=cursor)
                self.assertLessEqual(len(page["data"]), limit)
                bodies += page["data"]
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            self.assertEqual(without_ids(bodies), stored, limit)

    def test_a_deleted_session_is_not_exported_and_an_old_dump_brings_it_back(self):
        dump = list(self.memory.export("u1"))
        self.memory.delete_session("u1", "s1")
        self.assertEqual([b["request_id"] for b in self.memory.export("u1")], ["r2", "r4"])
        self.assertEqual(self.memory.import_records(dump)["stored"], 2)  # its idempotency records went with it
        self.assertEqual(len(self.memory.list_messages("u1", session_id="s1")["data"]), 4)

    def test_messages_without_a_time_export_without_one(self):
        exported = {b["request_id"]: b for b in self.memory.export("u1")}
        self.assertEqual(without_ids([exported["r4"]])[0]["messages"][0],
                         {"role": "user", "content": "Ann: marathon training starts"})

    def test_a_round_trip_after_forgotten_messages_keeps_every_id(self):
        forgotten = [m["id"] for m in self.memory.list_messages("u1", session_id="s1")["data"]]
        self.memory.delete_message("u1", forgotten[1])
        self.memory.delete_message("u1", forgotten[3])
        self.memory.delete_session("u1", "s2")
        self.memory.add(add_body("u1", "s2", ["Ann: the pottery class again"], "r5"))  # a session come back
        copy = self.open_memory("copy.db")
        copy.import_records(json.loads(json.dumps(list(self.memory.export()))))
        self.assertEqual(json.dumps(self.snapshot(copy)), json.dumps(self.snapshot(self.memory)))
        # Each memory gives the next message of a session the same new id, and neither gives a forgotten one.
        for memory in (self.memory, copy):
            memory.add(add_body("u1", "s1", ["Ann: Miso is two now"], "r6"))
        self.assertEqual(self.memory.list_messages("u1", session_id="s1"), copy.list_messages("u1", session_id="s1"))
        self.assertFalse({forgotten[1], forgotten[3]} & {m["id"] for m in copy.list_messages("u1")["data"]})

    def test_ids_an_import_cannot_keep_are_refused_naming_the_record(self):
        dump = list(self.memory.export("u1"))
        copy = self.open_memory("copy.db")
        copy.add(add_body("u1", "s1", ["Ann: already here"], "other"))  # s1 here has given number 1 already
        with self.assertRaises(InvalidField) as caught:
            copy.import_records(dump)
        self.assertEqual(caught.exception.field, "records[0].messages[0].id")
        self.assertEqual(caught.exception.detail, {"records_stored": 0})
        forged = [dict(dump[1], messages=[dict(m, id="m-0123456789abcdef-%d" % (i + 1))
                                          for i, m in enumerate(dump[1]["messages"])])]
        with self.assertRaises(InvalidField) as caught:  # a tag that is not this user and session's
            self.open_memory("forged.db").import_records(forged)
        self.assertIn("not a tag of user", caught.exception.reason)


class ImportRecordsTest(MemoryTestCase):
    def test_a_malformed_record_in_a_list_is_named_and_nothing_is_written(self):
        records = [add_body("u1", "s1", ["Ann: fine"], "r1"),
                   {"request_id": "r2", "user_id": "u1", "session_id": "s1", "messages": [{"role": "user"}]}]
        with self.assertRaises(InvalidField) as caught:
            self.memory.import_records(records)
        self.assertEqual(caught.exception.field, "records[1].messages[0].content")
        self.assertEqual(self.memory.list_users()["data"], [])
        with self.assertRaises(InvalidField) as caught:
            self.memory.import_records(["not an object"])
        self.assertEqual(caught.exception.field, "records[0]")

    def test_a_stream_is_stored_as_it_is_read_and_can_be_resumed(self):
        good = [add_body("u1", "s1", ["Ann: one"], "r1"), add_body("u1", "s1", ["Ann: two"], "r2")]
        with self.assertRaises(InvalidField) as caught:
            self.memory.import_records(iter([good[0], {"user_id": "u1"}]))
        self.assertEqual(caught.exception.field, "records[1].request_id")
        self.assertEqual(self.memory.import_records(iter(good)),
                         {"requests": 2, "stored": 1, "already_stored": 1, "messages": 1})

    def test_a_user_deleted_while_its_import_runs_stays_deleted(self):
        records = [add_body("u1", "s%d" % (i % 3), ["Ann: line %d" % i], "r%d" % i) for i in range(6)]

        def delete_after_the_first(done, total):
            if done == 1:
                self.memory.delete_user("u1")

        with mock.patch.object(importing, "IMPORT_CHUNK_MESSAGES", 1), self.assertRaises(Conflict) as caught:
            self.memory.import_records(records, progress=delete_after_the_first)
        self.assertEqual(caught.exception.status, 409)
        self.assertEqual(caught.exception.detail, {"records_stored": 1})
        self.assertIn("deleted", caught.exception.reason)
        self.assertEqual(self.memory.list_users()["data"], [])

    def test_an_unknown_field_of_a_record_is_refused_or_named_as_ignored(self):
        record = add_body("u1", "s1", ["Ann: one"], "r1")
        record["messages"][0]["metdata"] = {"topic": "pets"}
        with self.assertRaises(InvalidField) as caught:
            self.memory.import_records([record])
        self.assertEqual(caught.exception.field, "records[0].messages[0].metdata")
        lenient = self.memory.import_records([record], strict=False)
        self.assertEqual(lenient["ignored_fields"], ["records[0].messages[0].metdata"])

    def test_a_replayed_import_with_another_body_says_so(self):
        dump = list(self.memory.export("u1")) if self.memory.add(add_body("u1", "s1", ["Ann: one"], "r1")) else []
        changed = [dict(dump[0], messages=[dict(dump[0]["messages"][0], content="Ann: something else")])]
        self.assertEqual(self.memory.import_records(changed),
                         {"requests": 1, "stored": 0, "already_stored": 1, "messages": 0, "body_differs": 1})
        self.assertNotIn("body_differs", self.memory.import_records(dump))

    def test_messages_dated_on_receipt_keep_the_mark_and_their_replay_is_the_same_body(self):
        memory = self.open_memory("dated.db", clock=lambda: 1_700_000_000.0)
        memory.add({"request_id": "r1", "user_id": "u1", "session_id": "s1",
                    "messages": [{"role": "user", "content": "Ann: no time given"}]})
        dump = list(memory.export("u1"))
        self.assertTrue(dump[0]["messages"][0]["dated_on_receipt"])
        self.assertNotIn("body_differs", memory.import_records(dump))
        copy = self.open_memory("copy.db")
        copy.import_records(dump)
        self.assertEqual(copy.list_messages("u1"), memory.list_messages("u1"))

    def test_progress_is_told_each_record_and_the_total_when_known(self):
        seen: List[Any] = []
        records = [add_body("u1", "s1", ["Ann: one"], "r1"), add_body("u1", "s1", ["Ann: two"], "r2")]
        self.memory.import_records(records, progress=lambda done, total: seen.append((done, total)))
        self.assertEqual(seen, [(1, 2), (2, 2)])
        seen.clear()
        self.memory.import_records(iter(records), progress=lambda done, total: seen.append((done, total)))
        self.assertEqual(seen, [(1, None), (2, None)])


class LocomoTest(MemoryTestCase):
    def test_a_locomo_file_imports_as_the_evaluation_replays_it(self):
        bodies = list(portable.read_locomo(LOCOMO_SAMPLE))
        replayed = [b for c in dataset.load_locomo(LOCOMO_SAMPLE).conversations for b in add_bodies(c)]
        self.assertEqual(bodies, replayed)  # one conversion, used by both
        counts = self.memory.import_records(bodies)
        self.assertEqual(counts["stored"], len(bodies))
        self.assertEqual(counts["messages"], sum(len(b["messages"]) for b in bodies))
        users = {u["user_id"] for u in self.memory.list_users()["data"]}
        self.assertEqual(users, {b["user_id"] for b in bodies})
        self.assertEqual(self.memory.import_records(bodies)["already_stored"], len(bodies))

    def test_locomo_turns_become_dated_speaker_labelled_messages_twenty_an_add(self):
        sample = {"sample_id": "conv-x", "qa": [], "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann" if i % 2 == 0 else "Bo", "dia_id": "D1:%d" % (i + 1),
                           "text": "turn %d" % i} for i in range(25)],
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "look", "blip_caption": "a cat"}]}}
        bodies = list(portable.locomo_records([sample]))
        self.assertEqual([(b["request_id"], len(b["messages"])) for b in bodies],
                         [("conv-x/session_1/0", 20), ("conv-x/session_1/20", 5), ("conv-x/session_2/0", 1)])
        self.assertEqual(bodies[0]["messages"][1], message("Bo: turn 1", "assistant", T0))
        self.assertEqual(bodies[2]["messages"][0]["content"], "Bo: look [shares a photo: a cat]")

    def test_a_file_that_is_not_locomo_is_named(self):
        path = self.db_path("not-locomo.json")
        for text in ("{not json", '{"a": 1}', '[{"sample_id": "x"}]'):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            with self.assertRaises(InvalidField, msg=text) as caught:
                portable.read_locomo(path)
            self.assertEqual(caught.exception.field, "locomo")


if __name__ == "__main__":
    unittest.main()
