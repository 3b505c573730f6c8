"""Vocabulary bridges: a question finds evidence through related words and through near spellings."""
import gzip
import unittest

from flowmem.retrieval import bridges
from flowmem.retrieval.query import analyze
from flowmem.storage.views import MESSAGE
from flowmem.text import lexicon
from flowmem.text.stem import stem
from tests.helpers import MemoryTestCase, add_body, matches

MEMORY = [
    "Caroline: My sister Mei is getting married in Kyoto next spring.",
    "Dana: We adopted a rescue greyhound last month, she sleeps all day.",
    "Omar: My manager is called Priya and she is strict about deadlines.",
    "Tom: I ride my bike to the office every morning.",
    "Ana: I am allergic to peanuts, so I check every label.",
    "Sam: I have been vegetarian for ten years now.",
    "Leo: I ate at a great Italian restaurant downtown.",
    "Max: The weather was rainy all weekend so we stayed in.",
    "Ivy: I finished reading a novel about space travel.",
    "Zoe: My car needs new tyres before winter.",
    "Kim: I bought a second-hand bicycle for my daughter.",
    "Raj: The concert tickets sold out in minutes.",
]


class RelatedWordsTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", MEMORY, request_id="r1"))

    def assert_in_first_three(self, question, evidence):
        contents = [item["content"] for item in self.search(question, top_k=3)]
        self.assertTrue(any(evidence in c for c in contents), "%r not in %r" % (evidence, contents))

    def test_a_question_about_a_wedding_finds_the_message_about_getting_married(self):
        self.assert_in_first_three("Where is the wedding taking place?", "getting married")

    def test_a_question_about_a_bicycle_finds_the_message_about_a_bike(self):
        self.memory.add(add_body("u2", "s1", [m for m in MEMORY if "bicycle" not in m], request_id="r2"))
        contents = [item["content"] for item in self.search("How far does Tom cycle?", user="u2", top_k=3)]
        self.assertTrue(any("bike" in c for c in contents), contents)

    def test_a_message_found_only_by_a_related_word_ranks_above_its_neighbours(self):
        self.memory.add(add_body("u2", "s1", [m for m in MEMORY if "bicycle" not in m], request_id="r2"))
        self.assertEqual(self.search("Do I own a bicycle?", user="u2", top_k=3)[0]["content"], MEMORY[3])

    def test_a_question_about_a_nut_allergy_finds_the_message_about_being_allergic(self):
        self.assert_in_first_three("Who has a nut allergy?", "allergic to peanuts")

    def test_a_question_with_no_word_of_the_memory_still_gets_related_candidates(self):
        # This mechanism alone: the meaning channel (tests/test_meaning.py) off.
        items = self.search("wedding ceremony", top_k=3, memory=self.open_memory(meaning_pool=0))
        self.assertIn("getting married", items[0]["content"])
        self.assertIn("related", items[0]["signals"])

    def test_an_exact_word_match_ranks_above_a_related_word_match(self):
        self.memory.add(add_body("u1", "s2", ["Eve: I sold my old bicycle last week."], request_id="r3"))
        contents = [item["content"] for item in self.search("Who has a bicycle?", top_k=10)]
        exact = min(i for i, c in enumerate(contents) if "bicycle" in c)
        self.assertLess(exact, contents.index(MEMORY[3]))

    def test_related_words_are_reported_as_the_related_signal(self):
        items = self.search("Where is the wedding taking place?", top_k=1)
        self.assertIn("related", items[0]["signals"])

    def test_with_the_bridge_weights_at_zero_a_question_sharing_no_word_finds_nothing(self):
        memory = self.open_memory(weight_related=0.0, weight_typo=0.0, related_share=0.0, meaning_pool=0)
        self.assertEqual(matches(self.search("wedding ceremony", memory=memory, top_k=3)), [])


class TypoTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", MEMORY, request_id="r1"))

    def test_a_misspelt_word_finds_the_message_spelt_right(self):
        for question, evidence in (("Who bought a bicylce?", "second-hand bicycle"),
                                   ("Which restuarant was great?", "Italian restaurant")):
            items = self.search(question, top_k=3)
            self.assertIn(evidence, items[0]["content"], question)
            self.assertIn("typo", items[0]["signals"])

    def test_near_spellings_are_looked_for_only_in_the_asking_users_memory(self):
        self.memory.add(add_body("u2", "s1", ["Bo: The weather is fine."], request_id="r2"))
        self.assertEqual(matches(self.search("Which restuarant was great?", user="u2")), [])

    def test_the_vocabulary_read_is_the_users_own_words_of_one_kind_and_first_letter(self):
        self.memory.add(add_body("u2", "s1", ["Bo: A restful retreat by the river."], request_id="r2"))
        with self.memory.store.reading() as reader:
            words = dict(reader.vocabulary(reader.user_key("u1"), MESSAGE, "r", 100))
            self.assertIn("restaur", words)
            self.assertTrue(all(w.startswith("r") for w in words))
            self.assertFalse({"rest", "retreat", "river"} & set(words))
            self.assertEqual(len(reader.vocabulary(reader.user_key("u1"), MESSAGE, "r", 2)), 2)

    def test_a_word_the_memory_holds_is_not_respelt(self):
        self.memory.add(add_body("u1", "s2", ["Ada: I love my bicycles and my bicycle."], request_id="r3"))
        with self.memory.store.reading() as reader:
            key = reader.user_key("u1")
            query = analyze("bicycle")
            self.assertEqual(bridges.misspelt(reader, key, query, {"bicycl": 2}), [])


class EditDistanceTest(unittest.TestCase):
    def test_a_swap_of_neighbours_is_one_edit(self):
        self.assertEqual(bridges.edit_distance("bicylc", "bicycl", 2), 1)

    def test_insertions_deletions_and_replacements_count_one_each(self):
        self.assertEqual(bridges.edit_distance("kitten", "sitting", 3), 3)

    def test_past_the_limit_it_stops_at_limit_plus_one(self):
        self.assertEqual(bridges.edit_distance("abcdefgh", "zyxwvuts", 2), 3)


class LexiconTest(unittest.TestCase):
    def test_the_lexicon_relates_words_in_index_term_space(self):
        related = dict(lexicon.related(stem("wedding")))
        self.assertIn(stem("married"), related)
        self.assertIn(stem("bike"), dict(lexicon.related(stem("bicycle"))))
        self.assertTrue(all(0.0 < s <= 1.0 for s in related.values()))

    def test_related_terms_come_strongest_first(self):
        strengths = [s for _, s in lexicon.related(stem("child"))]
        self.assertEqual(strengths, sorted(strengths, reverse=True))

    def test_unknown_terms_have_no_relatives(self):
        self.assertEqual(lexicon.related("zzqx"), ())

    def test_the_file_is_sorted_and_names_its_source_and_licence(self):
        with gzip.open(lexicon.PATH, "rt", encoding="utf-8") as f:
            header = f.readline()
            terms = [line.split("\t")[0] for line in f]
        self.assertIn("WordNet 3.0", header)
        self.assertIn("WORDNET-LICENSE", header)
        self.assertEqual(terms, sorted(terms))
        self.assertGreater(len(terms), 10000)
        self.assertEqual(len(terms), len(set(terms)))
        self.assertEqual(lexicon.size(), len(terms))

    def test_related_terms_skip_names_and_the_questions_own_terms(self):
        query = analyze("Where did Rose buy a bicycle bike?")
        related = bridges.related_terms(query)
        self.assertNotIn("bike", related)
        self.assertFalse(set(dict(lexicon.related("rose"))) & set(related) - set(
            t for term in ("bicycl", "bui") for t, _ in lexicon.related(term)))
        self.assertLessEqual(len(related), bridges.MAX_RELATED_TERMS)


if __name__ == "__main__":
    unittest.main()
