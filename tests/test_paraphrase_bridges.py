"""Paraphrase bridges: definition words in the lexicon, and related words standing in for unsaid ones in BM25."""
import unittest

from flowmem.retrieval import bridges
from flowmem.retrieval.query import analyze
from flowmem.text import lexicon
from flowmem.text.stem import stem
from tests.helpers import MemoryTestCase, add_body
from tools.buildkit.wordnet import definition_words

# Where Keira grew up, among everyday filler and messages that share the question's other words.
FILLER = ["Sam: The %s was %s today, so I %s." % (a, b, c) for a in ("weather", "traffic", "train", "market")
          for b in ("awful", "great", "slow", "busy") for c in ("stayed in", "walked", "read")][:30]
GREW_UP = "Keira: I grew up in Porto, right by the harbour."
MEMORY = FILLER[:10] + ["Keira: My doctor, Tom, told me to cut down on salt."] + FILLER[10:20] + [
    GREW_UP, "Bob: Keira, what is the name of the new cafe on the corner?",
    "Keira: The name of my street is Elm Road, it is very quiet."] + FILLER[20:] + [
    "Bob: Keira told me the name of her new puppy is Max.", "Bob: I visited a town with a famous castle."]


class DefinitionWordsTest(unittest.TestCase):
    def test_the_lexicon_relates_a_word_to_the_rarer_words_of_its_definition(self):
        self.assertIn(stem("grew"), dict(lexicon.related(stem("hometown"))))

    def test_definition_words_leave_out_examples_brackets_and_function_words(self):
        gloss = 'the town (or city) where you grew up; "he never went back to his hometown"'
        self.assertEqual(definition_words(gloss), ["town", "grew"])

    def test_a_definition_word_is_weaker_than_a_synonym(self):
        related = dict(lexicon.related(stem("physician")))
        self.assertGreater(related[stem("doctor")], max(s for t, s in related.items() if t != stem("doctor")
                                                          and t not in (stem("doc"), stem("medico"))))


class StandInsTest(unittest.TestCase):
    def test_only_the_related_words_of_question_words_the_memory_never_holds_stand_in(self):
        query = analyze("What is the name of Keira's physician?")
        found = bridges.Bridge({stem("doctor"): 2.0, stem("title"): 1.0}, [])
        self.assertEqual(bridges.stand_ins(query, [stem("physician")], found, 1.0), {stem("doctor"): 1.0})
        self.assertEqual(bridges.stand_ins(query, [], found, 1.0), {})

    def test_a_share_of_zero_lends_nothing(self):
        query = analyze("Who is my physician?")
        found = bridges.Bridge({stem("doctor"): 2.0}, [])
        self.assertEqual(bridges.stand_ins(query, [stem("physician")], found, 0.0), {})


class ParaphraseSearchTest(MemoryTestCase):
    # Stand-ins are off by default (config.py: LoCoMo dev scores better without them); switched on here.
    settings = dict(MemoryTestCase.settings, related_share=1.0)

    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", MEMORY, request_id="r1"))

    def first(self, question, memory=None, top_k=1):
        return [item["content"].split("] ", 1)[-1] for item in self.search(question, top_k=top_k, memory=memory)]

    def test_a_question_about_a_hometown_ranks_where_someone_grew_up_first(self):
        # This mechanism alone: the meaning channel (tests/test_meaning.py) off.
        memory = self.open_memory(meaning_pool=0)
        self.assertEqual(self.first("What is Keira's hometown?", memory), [GREW_UP])

    def test_without_the_stand_ins_the_grew_up_message_is_not_first(self):
        # This mechanism alone: the meaning channel (tests/test_meaning.py) off.
        memory = self.open_memory(related_share=0.0, meaning_pool=0)
        self.assertNotEqual(self.first("What is Keira's hometown?", memory), [GREW_UP])

    def test_an_exact_word_still_ranks_above_its_stand_in(self):
        self.memory.add(add_body("u1", "s2", ["Keira: My hometown is Braga, up north."], request_id="r2"))
        self.assertEqual(self.first("What is Keira's hometown?", top_k=3)[0], "Keira: My hometown is Braga, up north.")


if __name__ == "__main__":
    unittest.main()
