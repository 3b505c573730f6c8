"""What the framework adapters share (flowmem/integrations/calls.py), with no framework: the Search
they send through a memory's dict-level call, and the provenance their documents and nodes carry."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping

from flowmem.integrations import calls
from tests.helpers import T0, MemoryTestCase


class Recorder:
    """A memory that answers every Search with one item and keeps the bodies it was sent."""

    def __init__(self) -> None:
        self.bodies: List[Dict[str, Any]] = []

    def search(self, body: Mapping[str, Any]) -> Dict[str, Any]:
        self.bodies.append(dict(body))
        return {"data": [{"id": "m-1", "content": "x"}]}


class CallsTest(MemoryTestCase):
    def test_the_search_is_the_contract_body_with_filters_and_options_only_when_given(self):
        memory = Recorder()
        self.assertEqual(calls.search(memory, "q", "alice", 5), [{"id": "m-1", "content": "x"}])
        calls.search(memory, "q", "alice", 5, filters={}, options=[])
        calls.search(memory, "q", "alice", 3, filters={"role": "user"}, options=["a", "b"])
        self.assertEqual(memory.bodies, [
            {"query": "q", "user_id": "alice", "top_k": 5}, {"query": "q", "user_id": "alice", "top_k": 5},
            {"query": "q", "user_id": "alice", "top_k": 3, "filters": {"role": "user"}, "options": ["a", "b"]}])

    def test_provenance_keeps_flowmem_fields_apart_from_the_item_s_own_metadata(self):
        self.memory.add({"request_id": "r", "user_id": "alice", "session_id": "s",
                         "metadata": {"role": "guide", "id": 7},
                         "messages": [{"role": "user", "content": "The ferry leaves at noon.", "timestamp": T0}]})
        item = calls.search(self.memory, "ferry", "alice", 1)[0]
        shown = calls.provenance(item)
        self.assertEqual(list(shown), list(calls.PROVENANCE) + ["metadata"])
        self.assertEqual((shown["role"], shown["id"]), ("user", item["id"]))  # the caller's keys hide neither
        self.assertEqual(shown["metadata"], {"role": "guide", "id": 7})
        self.assertEqual(shown["source_message_ids"], [self.memory.list_messages("alice")["data"][0]["id"]])
        self.assertNotIn("metadata", calls.provenance({"id": "m-1", "metadata": {}}))

    def test_a_missing_framework_is_an_import_error_naming_the_package(self):
        error = calls.missing("flowmem.integrations.x", "some_framework", "some-framework")
        self.assertIsInstance(error, ImportError)
        self.assertEqual(error.name, "some_framework")
        self.assertEqual(str(error), "flowmem.integrations.x needs some_framework, which is not installed: "
                                     "pip install some-framework")
