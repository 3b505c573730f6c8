"""Never empty: a question sharing no word with the memory gets the nearest in meaning, else the latest; marked."""
import unittest

from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body, message


class FallbackTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "older", ["Dana: the pottery class was fun", "Priya: glad to hear"],
                                 request_id="r1", timestamp=T0))
        self.memory.add(add_body("u1", "newest", ["Priya: we adopted a puppy", "Dana: so cute", "Priya: thanks"],
                                 request_id="r2", timestamp=T0 + 2 * DAY_MS))
        # Added last but said before "newest": time decides what is latest, not the order of Adds.
        self.memory.add(add_body("u1", "middle", ["Dana: I started a new job"], request_id="r3",
                                 timestamp=T0 + DAY_MS))

    def test_a_question_sharing_no_word_gets_the_nearest_in_meaning_marked_as_a_fallback_by_meaning(self):
        items = self.search("Did they get a dog?", top_k=2)
        self.assertEqual(items[0]["content"], "Priya: we adopted a puppy")
        for item in items:
            self.assertEqual(item["signals"]["fallback"], "meaning")
            self.assertIn("meaning", item["signals"])
            self.assertGreater(item["score"], 0.0)

    def test_a_question_whose_words_have_no_meaning_either_gets_the_latest_messages_newest_first(self):
        items = self.search("qwzx vbnq?", top_k=4)
        self.assertEqual([i["content"] for i in items], ["Priya: thanks", "Dana: so cute", "Priya: we adopted a puppy",
                                                         "Dana: I started a new job"])
        for item in items:
            self.assertEqual(item["signals"], {"fallback": "latest_session"})
            self.assertEqual(item["score"], 0.0)
            self.assertEqual(item["source_message_ids"], [item["id"]])
        self.assertEqual(items[0]["session_id"], "newest")

    def test_a_question_of_stopwords_alone_gets_the_fallback_too(self):
        items = self.search("What is it?", top_k=2)
        self.assertEqual([i["content"] for i in items], ["Priya: thanks", "Dana: so cute"])

    def test_a_question_that_matches_gets_no_fallback_items(self):
        items = self.search("pottery class", top_k=10)
        self.assertIn("pottery class", items[0]["content"])
        self.assertFalse([i for i in items if "fallback" in i["signals"]])

    def test_the_fallback_respects_top_k_and_repeats_no_content(self):
        self.memory.add(add_body("u2", "s", ["Kim: ok", "Lee: ok", "Kim: ok", "Lee: bye"], request_id="r4"))
        self.assertEqual([i["content"] for i in self.search("qwzx", "u2", top_k=10)],
                         ["Lee: bye", "Kim: ok", "Lee: ok"])
        self.assertEqual(len(self.search("qwzx", top_k=1)), 1)
        self.assertEqual(self.search("qwzx", top_k=0), [])

    def test_users_without_memories_still_get_an_empty_list(self):
        self.assertEqual(self.search("zebra", "nobody"), [])
        self.memory.delete_user("u1")
        self.assertEqual(self.search("zebra", "u1"), [])

    def test_questions_that_no_word_or_related_word_bridges_get_the_memory_they_ask_about_by_meaning(self):
        # As reported: each of these once returned {"data": []}, then the latest messages (WordNet links
        # none of their words); the word vectors (text/meaning.py) find the memory itself.
        for user, said, question in (("p1", "Caroline: I adopted a rescue greyhound", "What pet do I have?"),
                                     ("p2", "Jon: my manager is called Priya", "Who is my boss?"),
                                     ("p3", "Ana: I'm vegetarian", "Any food restrictions?")):
            with self.subTest(question=question):
                self.memory.add(add_body(user, "s", [said], request_id=user))
                self.memory.add(add_body(user, "t", ["The weather was lovely today", "Traffic was terrible"],
                                         request_id=user + "-other"))
                items = self.search(question, user, top_k=3)
                self.assertEqual(items[0]["content"], said)
                self.assertEqual(items[0]["signals"]["fallback"], "meaning")

    def test_messages_without_timestamps_come_after_dated_ones_newest_added_first(self):
        self.memory.add({"request_id": "r5", "user_id": "u3", "session_id": "undated",
                         "messages": [message("Kim: no date here", timestamp=None)]})
        self.memory.add(add_body("u3", "dated", ["Kim: a dated line"], request_id="r6", timestamp=T0))
        self.assertEqual([i["content"] for i in self.search("qwzx", "u3", top_k=5)],
                         ["Kim: a dated line", "Kim: no date here"])


if __name__ == "__main__":
    unittest.main()
