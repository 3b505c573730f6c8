"""The framework adapters (flowmem/integrations/) against the real frameworks and a real memory.

LangChain's retriever and chat message history (langchain-core) and LlamaIndex's retriever
(llama-index-core), each over a Memory on a temporary database, and once over a Client of a
real server: what a search finds arrives as the framework's documents or nodes with their
provenance, filters reach the search, a chat history reads back what it wrote and clears.
Where a framework is not installed its tests are skipped with one line; under CI they fail
instead (tests/components.py; .ci/component-requirements.txt pins the versions).
"""
from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import unittest
from typing import Any, Dict, List

from flowmem.client import Client
from flowmem.errors import InvalidField
from tests.components import module
from tests.helpers import T0, MemoryTestCase
from tests.server import ServerProcess

PROVENANCE = {"id", "score", "created_at", "session_id", "source_message_ids", "view", "role"}


def remember(memory: Any) -> None:
    """Two users' sessions: alice's travel (tagged), her pets (untagged, an assistant reply), bob's travel."""
    memory.add({"request_id": "trip", "user_id": "alice", "session_id": "travel", "metadata": {"topic": "travel"},
                "messages": [{"role": "user", "content": "I flew to Lisbon in May to see the painted tiles.",
                              "timestamp": T0},
                             {"role": "assistant", "content": "Porto is a short train ride north of Lisbon.",
                              "timestamp": T0 + 60_000}]})
    memory.add({"request_id": "pets", "user_id": "alice", "session_id": "pets",
                "messages": [{"role": "user", "content": "My cat Pepper sleeps on the radiator.", "timestamp": T0},
                             {"role": "assistant", "content": "Pepper must like warm places in Lisbon winters.",
                              "timestamp": T0 + 60_000}]})
    memory.add({"request_id": "bob", "user_id": "bob", "session_id": "travel",
                "messages": [{"role": "user", "content": "I flew to Lisbon for a conference.", "timestamp": T0}]})


class LangChainTest(MemoryTestCase):
    def setUp(self) -> None:
        module(self, "langchain_core", "langchain-core")
        super().setUp()
        self.lc = importlib.import_module("flowmem.integrations.langchain")
        self.messages = importlib.import_module("langchain_core.messages")
        remember(self.memory)

    def stored(self, user: str, session: str) -> List[Dict[str, Any]]:
        return self.memory.list_messages(user, session_id=session, limit=100)["data"]

    def test_the_retriever_returns_the_evidence_as_documents_with_its_provenance(self):
        documents = self.lc.FlowmemRetriever(self.memory, user_id="alice", top_k=3).invoke("painted tiles")
        first = documents[0]
        self.assertEqual(first.page_content, "I flew to Lisbon in May to see the painted tiles.")
        self.assertEqual(set(first.metadata), PROVENANCE | {"evidence", "metadata"})
        self.assertIn(first.metadata["evidence"], ("strong", "weak", "none"))  # the search's grade, on each
        self.assertEqual({d.metadata["evidence"] for d in documents}, {first.metadata["evidence"]})
        self.assertEqual(first.metadata["metadata"], {"topic": "travel"})
        self.assertEqual(first.metadata["source_message_ids"], [self.stored("alice", "travel")[0]["id"]])
        self.assertEqual((first.id, first.metadata["session_id"], first.metadata["role"]),
                         (first.metadata["id"], "travel", "user"))
        self.assertEqual(first.metadata["created_at"], "2023-05-08T13:56:00.000+00:00")
        self.assertLessEqual(len(documents), 3)
        self.assertTrue(all(d.metadata["session_id"] in ("travel", "pets") for d in documents))  # never bob's

    def test_the_retriever_passes_its_filters_to_the_search_and_a_call_may_replace_them(self):
        pets = self.lc.FlowmemRetriever(self.memory, user_id="alice", filters={"session_id": "pets"})
        self.assertEqual({d.metadata["session_id"] for d in pets.invoke("Lisbon")}, {"pets"})
        tagged = pets.invoke("Lisbon", filters={"metadata": {"topic": "travel"}})
        self.assertEqual({d.metadata["session_id"] for d in tagged}, {"travel"})
        self.assertEqual(len(pets.invoke("Lisbon", top_k=1)), 1)
        with self.assertRaises(InvalidField) as caught:  # a misspelt filter is refused, never ignored
            self.lc.FlowmemRetriever(self.memory, user_id="alice", filters={"sesion_id": "pets"}).invoke("Lisbon")
        self.assertIn("sesion_id", str(caught.exception))

    def test_the_chat_history_reads_back_what_it_added_with_roles_in_order(self):
        m = self.messages
        history = self.lc.FlowmemChatMessageHistory(self.memory, "alice", "chat", metadata={"agent": "planner"})
        history.add_messages([m.SystemMessage("Answer briefly."), m.HumanMessage("Where is the tile museum?"),
                              m.AIMessage("In the east of Lisbon.")])
        history.add_message(m.ChatMessage(role="critic", content="Name the district."))
        read = history.messages
        self.assertEqual([(type(x).__name__, x.content) for x in read], [
            ("SystemMessage", "Answer briefly."), ("HumanMessage", "Where is the tile museum?"),
            ("AIMessage", "In the east of Lisbon."), ("ChatMessage", "Name the district.")])
        listed = self.stored("alice", "chat")
        self.assertEqual([x["role"] for x in listed], ["system", "user", "assistant", "critic"])
        self.assertEqual([x.id for x in read], [x["id"] for x in listed])
        self.assertEqual({x["metadata"]["agent"] for x in listed}, {"planner"})
        self.assertEqual(len({x["request_id"] for x in listed}), 2)  # one Add per add_messages call

    def test_the_same_words_said_again_are_new_messages_and_the_same_history_gets_the_same_request_ids(self):
        def chat(memory: Any) -> List[str]:
            history = self.lc.FlowmemChatMessageHistory(memory, "carol", "chat")
            for _ in range(2):
                history.add_user_message("ok")
            return [x["request_id"] for x in memory.list_messages("carol", session_id="chat")["data"]]

        first = chat(self.memory)
        self.assertEqual(len(set(first)), 2)
        self.assertEqual(chat(self.open_memory("other.db")), first)  # derived, not random

    def test_the_history_reads_every_page_and_stores_only_messages_with_text(self):
        m = self.messages
        history = self.lc.FlowmemChatMessageHistory(self.memory, "alice", "long", page_size=2)
        history.add_messages([m.HumanMessage("message %d" % i) for i in range(5)])
        history.add_messages([m.AIMessage(content=[{"type": "text", "text": "two "}, "parts"]),
                              m.AIMessage(content=[{"type": "image_url", "image_url": {"url": "x"}}]),
                              m.AIMessage(content="  ")])
        self.assertEqual([x.content for x in history.messages], ["message %d" % i for i in range(5)] + ["two parts"])
        history.add_messages([m.AIMessage(content="")])  # nothing to store: no Add at all
        self.assertEqual(len(self.stored("alice", "long")), 6)

    def test_clearing_the_history_deletes_its_session_only(self):
        history = self.lc.FlowmemChatMessageHistory(self.memory, "alice", "travel")
        self.assertEqual(len(history.messages), 2)
        history.clear()
        self.assertEqual(history.messages, [])
        self.assertEqual(self.stored("alice", "travel"), [])
        self.assertEqual(len(self.stored("alice", "pets")), 2)
        history.add_user_message("Back from Lisbon.")  # a cleared history is written again from the start
        self.assertEqual([x.content for x in history.messages], ["Back from Lisbon."])


class LlamaIndexTest(MemoryTestCase):
    def setUp(self) -> None:
        # find_spec of a submodule raises where its parent is absent: tests/components.py's module() asks the parent.
        module(self, "llama_index", "llama-index-core")
        module(self, "llama_index.core", "llama-index-core")
        super().setUp()
        self.li = importlib.import_module("flowmem.integrations.llamaindex")
        remember(self.memory)

    def test_the_retriever_returns_scored_nodes_with_the_evidence_and_its_provenance(self):
        found = self.li.FlowmemRetriever(self.memory, user_id="alice", top_k=3).retrieve("painted tiles")
        first = found[0]
        self.assertEqual(first.node.text, "I flew to Lisbon in May to see the painted tiles.")
        self.assertEqual(first.node.id_, first.node.metadata["id"])
        self.assertEqual(first.score, first.node.metadata["score"])
        self.assertEqual(set(first.node.metadata), PROVENANCE | {"evidence", "metadata"})
        self.assertEqual({n.node.metadata["evidence"] for n in found}, {first.node.metadata["evidence"]})
        self.assertIn(first.node.metadata["evidence"], ("strong", "weak", "none"))
        self.assertEqual(first.node.metadata["metadata"], {"topic": "travel"})
        self.assertEqual(first.node.metadata["source_message_ids"],
                         [self.memory.list_messages("alice", session_id="travel")["data"][0]["id"]])
        self.assertEqual([n.score for n in found], sorted((n.score for n in found), reverse=True))
        self.assertTrue(all(n.node.metadata["session_id"] in ("travel", "pets") for n in found))

    def test_an_llm_is_shown_the_text_with_its_time_and_role_but_no_ids(self):
        from llama_index.core.schema import MetadataMode

        node = self.li.FlowmemRetriever(self.memory, user_id="alice").retrieve("painted tiles")[0].node
        shown = node.get_content(metadata_mode=MetadataMode.LLM)
        self.assertIn("2023-05-08T13:56:00.000+00:00", shown)
        self.assertIn("I flew to Lisbon", shown)
        self.assertNotIn(node.id_, shown)
        self.assertEqual(node.get_content(metadata_mode=MetadataMode.EMBED), node.text)

    def test_the_retriever_passes_its_filters_to_the_search(self):
        replies = self.li.FlowmemRetriever(self.memory, user_id="alice", filters={"role": "assistant"})
        found = replies.retrieve("Lisbon")
        self.assertEqual({n.node.metadata["role"] for n in found}, {"assistant"})
        self.assertEqual({n.node.metadata["session_id"] for n in found}, {"travel", "pets"})
        tagged = self.li.FlowmemRetriever(self.memory, user_id="alice", filters={"metadata": {"topic": "travel"}})
        self.assertEqual({n.node.metadata["session_id"] for n in tagged.retrieve("Lisbon")}, {"travel"})


class OverAClientTest(unittest.TestCase):
    """The adapters take a Client as they take a Memory: the same calls reach a server."""

    def test_the_langchain_adapters_work_over_a_client_as_over_a_memory(self):
        module(self, "langchain_core", "langchain-core")
        lc = importlib.import_module("flowmem.integrations.langchain")
        tmp = tempfile.mkdtemp(prefix="flowmem-integrations-")
        self.addCleanup(shutil.rmtree, tmp, True)
        server = ServerProcess(os.path.join(tmp, "m.db"), env={
            "FLOWMEM_SYNCHRONOUS": "NORMAL", "FLOWMEM_DATE_PREFIX": "false", "FLOWMEM_TIME_ANNOTATIONS": "false"})
        self.addCleanup(server.stop)
        client = Client(server.endpoint)
        remember(client)
        found = lc.FlowmemRetriever(client, user_id="alice", top_k=3).invoke("painted tiles")
        self.assertEqual(found[0].page_content, "I flew to Lisbon in May to see the painted tiles.")
        self.assertEqual(found[0].metadata["metadata"], {"topic": "travel"})
        history = lc.FlowmemChatMessageHistory(client, "alice", "chat")
        history.add_user_message("Remind me about the tiles.")
        self.assertEqual([x.content for x in history.messages], ["Remind me about the tiles."])
        history.clear()
        self.assertEqual(history.messages, [])
