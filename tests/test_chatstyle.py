"""The chat-style evaluation: LoCoMo's written turns recast as typed chat, and the bare FTS5 baseline beside it."""
import os
import unittest

from tests.server import ROOT
from tools.evalkit import dataset, metrics, runner
from tools.evalkit.bare import BareFts5Client
from tools.evalkit.chatstyle import chat_style

SAMPLE = os.path.join(ROOT, "fixtures", "locomo-format-sample.json")


def turns_of(conversation):
    return [t for s in conversation.sessions for t in s.turns]


class ChatStyleTest(unittest.TestCase):
    def setUp(self):
        self.written = dataset.load_locomo(SAMPLE)
        self.chat = chat_style(self.written)

    def test_a_turn_of_several_sentences_becomes_a_burst_of_messages_under_its_speaker(self):
        parts = self.chat.conversations[0].parts["D1:3"]
        self.assertEqual(parts, ["D1:3.1", "D1:3.2"])
        by_id = {t.turn_id: t for t in turns_of(self.chat.conversations[0])}
        self.assertTrue(all(by_id[p].content.startswith("Ada: ") for p in parts))
        self.assertIn("saturn", by_id["D1:3.1"].content.lower())

    def test_every_message_has_its_own_time_never_earlier_than_the_last(self):
        for conversation in self.chat.conversations:
            for session in conversation.sessions:
                times = [t.timestamp_ms for t in session.turns]
                self.assertTrue(all(t is not None for t in times))
                self.assertEqual(times, sorted(times))
                self.assertEqual(len(set(times)), len(times))

    def test_questions_keep_their_gold_turns_and_every_part_is_a_message(self):
        for before, after in zip(self.written.conversations, self.chat.conversations):
            self.assertEqual([q.gold for q in before.questions], [q.gold for q in after.questions])
            ids = {t.turn_id for t in turns_of(after)}
            for turn in turns_of(before):
                self.assertTrue(set(after.parts.get(turn.turn_id, [turn.turn_id])) <= ids, turn.turn_id)

    def test_the_same_seed_gives_the_same_chat_and_another_seed_another(self):
        again = chat_style(dataset.load_locomo(SAMPLE))
        self.assertEqual(dataset.to_json(again), dataset.to_json(self.chat))
        other = chat_style(self.written, seed=2)
        self.assertNotEqual(dataset.to_json(other)["conversations"], dataset.to_json(self.chat)["conversations"])

class PartsScoringTest(unittest.TestCase):
    TEXT = {"g.1": "A: one", "g.2": "A: two", "x": "B: other"}

    def outcome(self, item_turns):
        items = [{"id": str(i), "content": "\n".join(self.TEXT[t] for t in turns)}
                 for i, turns in enumerate(item_turns)]
        return metrics.outcome("q", "c", ["g"], items, item_turns, self.TEXT, 0.0, {"g": ["g.1", "g.2"]})

    def test_a_gold_turn_lands_where_the_first_of_its_parts_lands(self):
        found = self.outcome([["x"], ["g.2"], ["g.1"]])
        self.assertEqual(found.message_ranks, {"g": 2})
        self.assertEqual(found.item_ranks, {"g": 2})
        self.assertEqual(found.values()["recall@10"], 1.0)

    def test_each_part_spends_its_own_rank(self):
        found = self.outcome([["g.1", "g.2"], ["x"]])
        self.assertEqual(found.message_ranks, {"g": 1})
        self.assertEqual(self.outcome([["x"], ["g.1"]]).message_ranks, {"g": 2})


class BareBaselineTest(unittest.TestCase):
    def test_it_ranks_by_bm25_one_message_per_item_and_reads_one_user_only(self):
        client = BareFts5Client()
        self.addCleanup(client.close)
        client.add({"user_id": "u1", "session_id": "s", "messages": [
            {"role": "user", "content": "Ada: the telescope arrived"}, {"role": "user", "content": "Ben: nice"}]})
        client.add({"user_id": "u2", "session_id": "s", "messages": [{"role": "user", "content": "Cy: telescope"}]})
        data = client.search({"user_id": "u1", "query": "When did the telescope arrive?", "top_k": 5})["data"]
        self.assertEqual([d["content"] for d in data], ["Ada: the telescope arrived"])
        self.assertEqual(len(data[0]["source_message_ids"]), 1)

    def test_it_is_scored_by_the_same_runner_as_flowmem(self):
        run = runner.evaluate(chat_style(dataset.load_locomo(SAMPLE)), BareFts5Client(), 10)
        self.assertEqual(len(run.outcomes), 7)
        self.assertGreater(metrics.summarize(run.outcomes)["hit@10"], 0.0)


if __name__ == "__main__":
    unittest.main()
