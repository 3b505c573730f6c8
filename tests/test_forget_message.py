"""Forgetting one message: the memory then answers as one that never had it, and every other id stays."""
import json
import re
from typing import Any, Dict, List

from flowmem.config import load
from flowmem.errors import NotFound
from flowmem.http.api import App
from flowmem.mcp import tools
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
        self.assertEqual(self.memory.search({"query": "just this", "user_id": "solo", "top_k": 5}), {"data": []})

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
