import datetime
import unittest

from flowmem.errors import InvalidField
from flowmem.storage.views import MESSAGE, WINDOW
from tests.helpers import T0, MemoryTestCase, add_body

SESSION = [
    "Dana: I went to a pottery workshop yesterday and it was so relaxing.",
    "Priya: Wow, that's great! What did you learn there?",
    "Dana: That acceptance matters. I want to study counseling next year.",
    "Priya: I painted a sunrise over the lake last week.",
    "Dana: Your sunrise painting sounds lovely, send me a photo!",
    "Priya: Sure. The kids loved the camping trip too.",
]


class SearchTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", SESSION, request_id="r1"))
        self.memory.add(add_body("u1", "s2", ["Priya: we adopted a puppy named Oscar", "Dana: Oscar is cute"],
                                 request_id="r2", timestamp=T0 + 86_400_000))

    def test_the_best_evidence_comes_first_with_provenance(self):
        items = self.search("When did Dana go to the pottery workshop?", top_k=5)
        first = items[0]
        self.assertIn("pottery workshop", first["content"])
        self.assertEqual(first["view"], MESSAGE)
        self.assertEqual(first["session_id"], "s1")
        self.assertEqual(first["source_message_ids"], [first["id"]])
        self.assertEqual(first["created_at"], "2023-05-08T13:56:00.000+00:00")
        datetime.datetime.fromisoformat(first["created_at"])

    def test_messages_come_first_then_windows_of_new_evidence(self):
        memory = self.open_memory("share.db", message_share=0.5)
        memory.add(add_body("u1", "kites",
                            ["P%d: kite number %d %s" % (i % 2, i, "kite " * (i % 4)) for i in range(16)]))
        items = self.search("kite", top_k=6, memory=memory)
        self.assertEqual([i["view"] for i in items[:3]], [MESSAGE] * 3)
        self.assertIn(WINDOW, [i["view"] for i in items[3:]])
        shown = set()
        for i in items:
            self.assertTrue(set(i["source_message_ids"]) - shown, "every item must bring new messages")
            shown.update(i["source_message_ids"])
            self.assertEqual(len(i["content"].split("\n")), len(i["source_message_ids"]))
        scores = [i["score"] for i in items]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_every_item_says_which_signals_put_it_there(self):
        items = self.search("When did Dana go to the pottery workshop?", top_k=3)
        self.assertIn("bm25", items[0]["signals"])
        self.assertEqual(items[0]["signals"]["bm25"], 1)

    def test_identical_contents_appear_once(self):
        self.memory.add(add_body("u2", "a", ["Rex: same words here"], request_id="x"))
        self.memory.add(add_body("u2", "b", ["Rex: same words here"], request_id="y"))
        self.assertEqual(len(self.search("same words", "u2")), 1)

    def test_scores_never_increase_and_ids_are_unique(self):
        items = self.search("Dana Priya sunrise puppy support", top_k=100)
        scores = [i["score"] for i in items]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(len({i["id"] for i in items}), len(items))

    def test_equal_scores_are_ordered_by_id(self):
        self.memory.add(add_body("u2", "a", ["Tie: same words"], request_id="x"))
        self.memory.add(add_body("u2", "b", ["Tie: same words!"], request_id="y"))
        items = self.search("same words", "u2")
        self.assertEqual(items[0]["score"], items[1]["score"])
        self.assertLess(items[0]["id"], items[1]["id"])

    def test_top_k_rules(self):
        self.assertEqual(self.search("Dana", top_k=0), [])
        self.assertEqual(len(self.search("Dana", top_k=2)), 2)
        many = self.memory.search({"query": "Dana", "user_id": "u1", "top_k": 10**9})["data"]
        self.assertLessEqual(len(many), 100)
        with self.assertRaises(InvalidField) as cm:
            self.memory.search({"query": "Dana", "user_id": "u1", "top_k": -1})
        self.assertEqual(cm.exception.field, "top_k")

    def test_top_k_cap_is_configurable(self):
        memory = self.open_memory(top_k_cap=3)
        memory.add(add_body("u1", "s1", SESSION, request_id="r1"))
        self.assertEqual(len(memory.search({"query": "Dana", "user_id": "u1", "top_k": 50})["data"]), 3)

    def test_search_fields_are_validated(self):
        for body, field in (({"user_id": "u1", "top_k": 5}, "query"),
                            ({"query": " ", "user_id": "u1", "top_k": 5}, "query"),
                            ({"query": "x", "top_k": 5}, "user_id"), ({"query": "x", "user_id": "u1"}, "top_k"),
                            ({"query": "x", "user_id": "u1", "top_k": "5"}, "top_k"),
                            ({"query": "x", "user_id": "u1", "top_k": True}, "top_k"),
                            ({"query": "x", "user_id": "u1", "top_k": 5, "options": "a"}, "options"),
                            ({"query": "x", "user_id": "u1", "top_k": 5, "options": ["a", 3]}, "options[1]")):
            with self.subTest(body=body):
                with self.assertRaises(InvalidField) as cm:
                    self.memory.search(body)
                self.assertEqual(cm.exception.field, field)

    def test_options_are_accepted(self):
        data = self.memory.search({"query": "What did Priya see over the lake?", "user_id": "u1", "top_k": 3,
                                   "options": ["a sunrise", "a dog"]})["data"]
        self.assertIn("sunrise over the lake", data[0]["content"])

    def test_an_unknown_user_gets_an_empty_list(self):
        self.assertEqual(self.search("Dana", "nobody"), [])

    def test_a_speaker_name_alone_finds_their_messages(self):
        items = self.search("dana", top_k=3)
        self.assertEqual(len(items), 3)
        self.assertTrue(all(i["content"].startswith("Dana:") for i in items))

    def test_question_words_do_not_drive_recall(self):
        # "What did you ... there" is a message of its own; only "lake" says what the question is about.
        items = self.search("What did you do there at the lake?", top_k=3)
        self.assertIn("lake", items[0]["content"])
        self.assertNotIn("What did you learn there?", [i["content"] for i in items[:1]])

    def test_no_query_can_break_the_full_text_engine(self):
        hostile = ['"', '""', "'", 'a" OR "b', "NEAR(Dana Priya, 2)", "NEAR", "*", "Carol*", "content:x",
                   "terms:Dana", "(", ")", "((Dana", "AND", "OR NOT", "Dana AND NOT Priya", "^start",
                   "-x +y ~z", "\x00\x01\x02\x1f\x7f", "\u200b\u202e", "😀👨‍👩‍👧", "卡罗琳去了哪里？",
                   "ماذا فعلت كارولين",
                   "Robert'); DROP TABLE messages;--", "%_\\", "{a} [b]", "1e400", "-- /* */",
                   "Dana " * 1400, "x" * 10_000]
        for q in hostile:
            with self.subTest(query=q[:40]):
                self.assertIsInstance(self.search(q, top_k=5), list)
        self.assertTrue(self.search("Dana's sunrise?!", top_k=5))

    def test_every_script_finds_itself(self):
        texts = {"zh": "我们昨天在北京吃了烤鸭", "ja": "東京でラーメンを食べました", "ko": "서울에서 친구를 만났어요",
                 "ru": "Мы ходили в театр в субботу", "el": "Πήγαμε στην παραλία", "ar": "ذهبنا إلى السوق",
                 "hi": "हम बाज़ार गए थे", "fr": "Nous sommes allés au café près de l'église"}
        for lang, text in texts.items():
            self.memory.add(add_body("poly", lang, [text], request_id=lang))
        queries = {"zh": "北京烤鸭", "ja": "東京", "ko": "서울", "ru": "театр", "el": "παραλία", "ar": "السوق",
                   "hi": "बाज़ार", "fr": "cafe eglise"}
        for lang, q in queries.items():
            with self.subTest(lang=lang):
                self.assertEqual(self.search(q, "poly", 1)[0]["content"], texts[lang])


if __name__ == "__main__":
    unittest.main()
