"""Forgetting one message: the memory then answers as one that never had it, and every other id stays;
only the views that held it are made again."""
import json
import random
import re
from typing import Any, Dict, List, Tuple

from flowmem.config import load
from flowmem.errors import NotFound
from flowmem.http.api import App
from flowmem.mcp import tools
from flowmem.memory import Memory
from flowmem.storage import fts
from tests.helpers import T0, MemoryTestCase, index_terms

MINUTE = 60_000
# Invented conversations: three sessions, one added whole, one in three pieces, one short.
TOPICS = ["the greyhound I adopted", "my sister's wedding in June", "the bakery on Elm Street",
          "learning the cello", "a flat tyre on the bridge", "the cello teacher moved away",
          "the greyhound hates thunder", "planning the June trip", "sourdough starter again"]


def conversation(session: int, n: int) -> List[Dict[str, Any]]:
    out = []
    for i in range(n):
        topic = TOPICS[(session * 7 + i) % len(TOPICS)]
        speaker = "Ana" if i % 2 == 0 else "Ben"
        # Every fifth message an hour after the one before it: segments are cut there.
        ts = T0 + session * 86_400_000 + i * MINUTE + (i // 5) * 60 * MINUTE
        # The same words in every session: ties that only the views' order in the index breaks.
        content = "Ben: sounds good to me" if i == 1 else "%s: about %s, part %d" % (speaker, topic, i + 1)
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": content, "timestamp": ts,
                    **({"metadata": {"topic": topic[:12]}} if i % 3 == 0 else {})})
    return out


SESSIONS = {"s1": (conversation(1, 12), [12]), "s2": (conversation(2, 25), [10, 10, 5]),
            "s3": (conversation(3, 5), [5])}
QUERIES = ["What pet did I adopt?", "When is the wedding?", "cello teacher", "Elm Street bakery part 4",
           "thunder", "flat tyre", "What did Ben say about the trip?", "sounds good"]


class ForgetMessageTest(MemoryTestCase):
    settings: Dict[str, Any] = {}  # results as users get them: dated, annotated

    def fill(self, memory, skip=None):
        """Every session added in its pieces; `skip` (session, position) left out, as if never said."""
        for session, (messages, pieces) in SESSIONS.items():
            start = 0
            for piece, size in enumerate(pieces):
                chunk = [m for i, m in enumerate(messages[start:start + size], start + 1) if (session, i) != skip]
                memory.add({"request_id": "%s-%d" % (session, piece), "user_id": "u", "session_id": session,
                            "messages": chunk})
                start += size

    def answers(self, memory) -> str:
        out = [memory.search({"query": q, "user_id": "u", "top_k": 20}) for q in QUERIES]
        out.append(memory.search({"query": "part", "user_id": "u", "top_k": 20,
                                  "filters": {"metadata": {"topic": TOPICS[3][:12]}}}))
        out.append(memory.list_messages("u", limit=100)["data"])
        return json.dumps(out, sort_keys=True)

    def renumbered(self, text: str, tag: str, deleted: int) -> str:
        """`text` with the ids the memory that never had message `deleted` of session `tag` gives."""
        def shift(match):
            numbers = [int(n) for n in match.group(2).split("-")]
            return match.group(1) + "-".join(str(n - 1 if n > deleted else n) for n in numbers)
        return re.sub(r"(\b[mws]-%s-)([0-9]+(?:-[0-9]+)?)" % tag, shift, text)

    def test_a_deleted_message_leaves_the_memory_answering_as_one_that_never_had_it(self):
        self.fill(self.memory)
        other = self.open_memory()  # a second Store on the same file: its caches must forget too
        other.search({"query": QUERIES[0], "user_id": "u", "top_k": 20})
        never = self.open_memory("never.db")
        self.fill(never, skip=("s2", 4))
        tag = self.memory.list_messages("u", session_id="s2", limit=1)["data"][0]["id"].split("-")[1]
        gone = "m-%s-4" % tag
        self.assertEqual(self.memory.delete_message("u", gone),
                         {"deleted": True, "user_id": "u", "message_id": gone, "session_id": "s2"})
        expected = self.answers(never)
        self.assertEqual(self.renumbered(self.answers(self.memory), tag, 4), expected)
        self.assertEqual(self.renumbered(self.answers(other), tag, 4), expected)
        self.assertEqual(self.memory.stats("u"), never.stats("u"))
        self.assertEqual(sorted(index_terms(self.memory, 1)), sorted(index_terms(never, 1)))
        self.assertNotIn(gone, self.answers(self.memory))

    def test_the_other_messages_keep_their_ids_and_a_new_one_never_takes_a_deleted_id(self):
        self.fill(self.memory)
        listed = self.memory.list_messages("u", session_id="s3")["data"]
        self.memory.delete_message("u", listed[1]["id"])
        for before in listed[2:]:
            after = self.memory.get_message("u", before["id"])
            self.assertEqual((after["content"], after["position"]), (before["content"], before["position"] - 1))
        with self.assertRaises(NotFound):
            self.memory.get_message("u", listed[1]["id"])
        self.memory.delete_message("u", listed[-1]["id"])
        self.memory.add({"request_id": "late", "user_id": "u", "session_id": "s3",
                         "messages": [{"role": "user", "content": "Ana: one more", "timestamp": T0 + 10 ** 9}]})
        ids = [m["id"] for m in self.memory.list_messages("u", session_id="s3")["data"]]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertTrue(set(ids).isdisjoint({listed[1]["id"], listed[-1]["id"]}))
        self.assertEqual(self.memory.get_message("u", ids[-1])["content"], "Ana: one more")

    def test_deleting_again_or_another_users_message_deletes_nothing(self):
        self.fill(self.memory)
        first = self.memory.list_messages("u", limit=1)["data"][0]["id"]
        self.assertFalse(self.memory.delete_message("stranger", first)["deleted"])
        self.assertFalse(self.memory.delete_message("u", "m-nothing-1")["deleted"])
        self.assertTrue(self.memory.delete_message("u", first)["deleted"])
        self.assertEqual(self.memory.delete_message("u", first),
                         {"deleted": False, "user_id": "u", "message_id": first})

    def test_a_sessions_last_message_takes_the_session_and_a_users_last_the_user(self):
        self.memory.add({"request_id": "r", "user_id": "solo", "session_id": "only",
                         "messages": [{"role": "user", "content": "Ana: just this", "timestamp": T0}]})
        only = self.memory.list_messages("solo")["data"][0]["id"]
        self.assertTrue(self.memory.delete_message("solo", only)["deleted"])
        self.assertEqual(self.memory.stats("solo"), {"user_id": "solo", "exists": False})
        self.assertEqual(self.memory.search({"query": "just this", "user_id": "solo", "top_k": 5}),
                         {"data": [], "evidence": "none"})

    def test_http_and_mcp_delete_one_message(self):
        self.fill(self.memory)
        first, second = [m["id"] for m in self.memory.list_messages("u", limit=2)["data"]]
        app = App(self.memory, load({"db": self.db_path()}, environ={}))
        response = app.handle("DELETE", "/users/u/messages/%s" % first, {}, b"")
        self.assertEqual((response.status, json.loads(response.body)["deleted"]), (200, True))
        result = tools.call(self.memory, "delete_memories", {"user_id": "u", "message_id": second})
        self.assertEqual(result["structuredContent"]["deleted"], True)
        both = tools.call(self.memory, "delete_memories", {"user_id": "u", "message_id": second, "session_id": "s1"})
        self.assertTrue(both["isError"])


def views_by_doc(memory: Memory) -> Dict[int, Tuple[Tuple[str, int, int, int, int], Tuple[str, ...]]]:
    """Every view, by doc id: (kind, session key, first, last, length) and its index terms, sorted."""
    with memory.store.reading() as reader:
        terms: Dict[int, List[str]] = {}
        for term, doc in reader.conn.execute("SELECT term, doc FROM %s" % fts.INSTANCES_TABLE):
            terms.setdefault(doc, []).append(term)
        rows = reader.conn.execute("SELECT doc_id, kind, session_key, first_seq, last_seq, length FROM views")
        found = {doc: ((kind, session, first, last, length), tuple(sorted(terms.pop(doc, []))))
                 for doc, kind, session, first, last, length in rows}
    assert not terms, "index entries of no view: %s" % sorted(terms)
    return found


def index_state(memory: Memory) -> Tuple[Any, ...]:
    """The views with their index terms (doc ids aside), the statistics and the sessions' view marks."""
    with memory.store.reading() as reader:
        stats = reader.conn.execute("SELECT user_key, kind, n_docs, total_length FROM user_stats ORDER BY 1, 2")
        sessions = reader.conn.execute("SELECT session_key, n_messages, segment_start FROM sessions ORDER BY 1")
        marks = (stats.fetchall(), sessions.fetchall())
    return sorted(views_by_doc(memory).values()), marks


def random_session(rng: random.Random, n: int) -> List[Dict[str, Any]]:
    """`n` invented messages: pauses short and long (and back in time), some undated, some annotated."""
    out, ts = [], T0
    for _ in range(n):
        ts += rng.choice([0, 1000, MINUTE, 60 * MINUTE, 120 * MINUTE, -50 * MINUTE])
        message: Dict[str, Any] = {"role": rng.choice(["user", "assistant"]), "content": "%s: %s, part %d of %s" % (
            rng.choice(["Ana", "Ben"]), rng.choice(TOPICS), rng.randint(1, 9), rng.choice(["May 8", "yesterday"]))}
        if rng.random() > 0.15:
            message["timestamp"] = ts
        if rng.random() < 0.3:
            message["metadata"] = {"topic": rng.choice(["pets", "music"])}
        out.append(message)
    return out


class ForgetOnlyWhatChangesTest(MemoryTestCase):
    def test_forgetting_leaves_the_views_index_and_statistics_that_rebuilding_what_is_left_makes(self):
        rng = random.Random(31)
        for case in range(60):
            settings = {"window_size": rng.choice([2, 3, 4, 5]), "segment_max_messages": rng.choice([1, 2, 3, 5, 8]),
                        "segment_max_gap_s": rng.choice([60, 1800])}
            memory = self.open_memory("case%d.db" % case, **settings)
            messages = random_session(rng, rng.randint(2, 40))
            start = 0
            while start < len(messages):  # in pieces, as sessions arrive
                size = rng.randint(1, 12)
                memory.add({"request_id": "r%d" % start, "user_id": "u", "session_id": "s",
                            "messages": messages[start:start + size]})
                start += size
            memory.add({"request_id": "other", "user_id": "u", "session_id": "t", "messages": messages[:3]})
            for _ in range(rng.randint(1, 3)):
                ids = [m["id"] for m in memory.list_messages("u", session_id="s", limit=100)["data"]]
                if ids:  # a session's last message takes the session
                    memory.delete_message("u", rng.choice(ids))
            forgotten = index_state(memory)
            memory.store.reindex()
            with self.subTest(case=case, settings=settings, messages=len(messages)):
                self.assertEqual(forgotten, index_state(memory))

    def test_forgetting_a_message_rewrites_only_the_views_that_held_it(self):
        # A pause of an hour before every fifth message: segments end there, whatever is forgotten.
        messages = [{"role": "user", "content": "Ana: %s, part %d" % (TOPICS[i % len(TOPICS)], i + 1),
                     "timestamp": T0 + i * MINUTE + (i // 5) * 60 * MINUTE} for i in range(60)]
        for start in range(0, 60, 20):
            self.memory.add({"request_id": "r%d" % start, "user_id": "u", "session_id": "s",
                             "messages": messages[start:start + 20]})
        before = views_by_doc(self.memory)
        gone = self.memory.list_messages("u", limit=100)["data"][22]
        self.memory.delete_message("u", gone["id"])
        after = views_by_doc(self.memory)
        held = {doc for doc, ((_, _, first, last, _), _) in before.items() if first <= 23 <= last}
        self.assertEqual(len(held), 1 + 3 + 1)  # its message view, three windows, its segment
        for doc, ((kind, session, first, last, length), terms) in before.items():
            if doc not in held:  # the same row, moved up if it came later, and the same index entry
                moved = (kind, session, first - (first > 23), last - (last > 23), length)
                self.assertEqual(after.get(doc), (moved, terms), "view %s %d-%d" % (kind, first, last))

    def test_a_gap_sqlite_cannot_close_in_one_pass_is_closed_in_two(self):
        def fill(memory):
            memory.add({"request_id": "r", "user_id": "u", "session_id": "s",
                        "messages": conversation(1, 12) + conversation(2, 12)})
            return [m["id"] for m in memory.list_messages("u")["data"]]

        ids = fill(self.memory)
        for table in ("messages", "metadata_index"):  # as if SQLite moved a later row before an earlier one
            self.memory.store.writer.execute(  # type: ignore[union-attr]
                "CREATE TEMP TRIGGER out_of_order_%s BEFORE UPDATE OF seq ON %s WHEN NEW.seq = OLD.seq - 1"
                " AND OLD.seq > 0 BEGIN SELECT RAISE(ABORT, 'a row visited out of order'); END" % (table, table))
        self.memory.delete_message("u", ids[3])
        never = self.open_memory("never.db")
        never.add({"request_id": "r", "user_id": "u", "session_id": "s",
                   "messages": [m for i, m in enumerate(conversation(1, 12) + conversation(2, 12)) if i != 3]})
        listed = self.memory.list_messages("u")["data"]
        self.assertEqual([m["id"] for m in listed], ids[:3] + ids[4:])
        self.assertEqual([(m["position"], m["content"], m.get("metadata")) for m in listed],
                         [(m["position"], m["content"], m.get("metadata")) for m in never.list_messages("u")["data"]])
        self.assertEqual(index_state(self.memory)[0], index_state(never)[0])
        filtered = self.memory.list_messages("u", metadata={"topic": TOPICS[1][:12]})["data"]
        self.assertEqual([m["content"] for m in filtered],
                         [m["content"] for m in never.list_messages("u", metadata={"topic": TOPICS[1][:12]})["data"]])
