"""A participant's name spelt another way in the question still finds them; a name spelt alike is not invented."""
import unittest

from flowmem.retrieval.bridges import name_key
from tests.helpers import MemoryTestCase, add_body


class NameKeyTest(unittest.TestCase):
    def test_spellings_of_one_name_share_a_key(self):
        for a, b in (("Mohammed", "Muhamad"), ("Katherine", "Kathryn"), ("Jon", "John"), ("Sean", "Shaun"),
                     ("Aisha", "Ayesha"), ("Philippa", "Filipa")):
            self.assertEqual(name_key(a), name_key(b), (a, b))

    def test_different_names_keep_different_keys(self):
        for a, b in (("Mohammed", "Mark"), ("Sean", "Sara"), ("Kathryn", "Karen")):
            self.assertNotEqual(name_key(a), name_key(b), (a, b))


class RespeltSearchTest(MemoryTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Lina: I play tennis on fridays", "Muhamad: I play chess on fridays",
                                              "Lina: nice"]))

    def test_a_name_the_memory_never_holds_is_read_as_the_one_speaker_spelt_alike(self):
        items = self.search("What does Mohammed play?")
        self.assertEqual(items[0]["content"], "Muhamad: I play chess on fridays")

    def test_a_name_the_memory_holds_is_left_as_asked(self):
        self.memory.add(add_body("u1", "s2", ["Lina: Mohammed from work says hi", "Muhamad: ha"]))
        items = self.search("What did Mohammed say?")
        self.assertEqual(items[0]["content"], "Lina: Mohammed from work says hi")


if __name__ == "__main__":
    unittest.main()
