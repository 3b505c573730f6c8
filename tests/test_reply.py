"""The reply signal: the answer to a question that matches the query, though it shares no word with it."""
import unittest

from flowmem.retrieval import signals
from tests.helpers import MemoryTestCase, add_body

# The question is asked in one session and answered in the next message, in words of its own;
# other sessions share the query's words without answering it.
ASKED = [
    "Dana: I finally bought the new tent.",
    "Priya: Where did you go camping with your brother in the summer?",
    "Dana: The Dolomites, three nights under the stars.",
    "Priya: Sounds lovely, I want pictures.",
]
DISTRACTIONS = [
    ["Dana: Camping in the summer is the best, my brother says so too.",
     "Priya: Your brother and summer camping, again!",
     "Dana: My brother packs far too much for camping."],
    ["Priya: Summer camping gear is on sale.",
     "Dana: Good to know, my brother needs summer camping boots.",
     "Priya: Tell your brother the camping shop closes at six."],
    ["Dana: My brother loves the summer.",
     "Priya: Camping with your brother again soon?",
     "Dana: Maybe next summer, with my brother, camping by a lake."],
]
QUESTION = "Where did Dana go camping with her brother in the summer?"
ANSWER = ASKED[2]


class ReplyTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "asked", ASKED))
        for i, session in enumerate(DISTRACTIONS):
            self.memory.add(add_body("u1", "other%d" % i, session))

    def contents(self, memory=None):
        return [item["content"] for item in self.search(QUESTION, memory=memory)]

    def test_the_reply_to_a_matching_question_with_no_shared_word_is_within_the_first_three(self):
        self.assertIn(ANSWER, self.contents()[:3])

    def test_without_the_reply_signal_the_answer_falls_below_messages_sharing_the_query_words(self):
        # What the default weight changes: with weight_reply 0 the answer is not in the first three.
        contents = self.contents(self.open_memory(weight_reply=0.0))
        self.assertNotIn(ANSWER, contents[:3])

    def test_the_reply_item_reports_the_reply_signal(self):
        item = next(i for i in self.search(QUESTION) if i["content"] == ANSWER)
        self.assertIn(signals.REPLY, item["signals"])

    def test_a_statement_among_the_best_messages_lifts_no_reply(self):
        self.memory.add(add_body("u1", "stated", ["Dana: We went camping with my brother in the summer.",
                                                  "Priya: Bring me a postcard next time."]))
        items = self.search(QUESTION, top_k=20)
        item = next(i for i in items if i["content"] == "Priya: Bring me a postcard next time.")
        self.assertNotIn(signals.REPLY, item["signals"])

    def test_a_question_that_shares_only_the_repliers_name_lifts_no_reply(self):
        # "Hi Priya, ...?" matches any question about Priya; Priya's answer to it is small talk.
        self.memory.add(add_body("u1", "greeting", ["Dana: Hi Priya, got a minute?",
                                                    "Priya: The bus broke down on the way."]))
        self.memory.add(add_body("u1", "job", ["Priya: I started at the library last week."]))
        items = self.search("Where does Priya work?", top_k=20)
        item = next(i for i in items if i["content"] == "Priya: The bus broke down on the way.")
        self.assertNotIn(signals.REPLY, item["signals"])

    def test_a_question_that_shares_more_than_the_repliers_name_lifts_its_reply(self):
        self.memory.add(add_body("u1", "work", ["Dana: Priya, where do you work these days?",
                                                "Priya: At the city library."]))
        items = self.search("Where does Priya work?", top_k=20)
        item = next(i for i in items if i["content"] == "Priya: At the city library.")
        self.assertIn(signals.REPLY, item["signals"])

    def test_a_next_message_that_asks_back_is_not_taken_for_the_reply(self):
        self.memory.add(add_body("u1", "asked back", ["Priya: Did you go camping with your brother in the summer?",
                                                      "Dana: Why do you ask, are you going too?"]))
        items = self.search(QUESTION, top_k=20)
        item = next(i for i in items if i["content"] == "Dana: Why do you ask, are you going too?")
        self.assertNotIn(signals.REPLY, item["signals"])


if __name__ == "__main__":
    unittest.main()
