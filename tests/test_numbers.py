"""Numbers meet in any form (text/numbers.py): the question's numbers, dates aside, and the numbers signal."""
import unittest

from flowmem.retrieval.query import analyze
from flowmem.text.numbers import number_values
from flowmem.text.tokenize import tokenize
from tests.helpers import MemoryTestCase, add_body


def values(text: str) -> list:
    return number_values(tokenize(text))


class NumberValuesTest(unittest.TestCase):
    def test_digits_words_and_ordinals_of_one_number_have_one_value(self):
        for text in ["3", "three", "3rd", "third", "003"]:
            with self.subTest(text=text):
                self.assertEqual(values(text), ["3"])

    def test_thousands_separators_decimals_and_dozens_are_read(self):
        self.assertEqual(values("1,400 steps"), ["1400"])
        self.assertEqual(values("1400 steps"), ["1400"])
        self.assertEqual(values("3.50 euros"), ["3.5"])
        self.assertEqual(values("a dozen eggs"), ["12"])

    def test_a_unit_written_with_or_apart_from_the_number_keeps_the_number(self):
        for text in ["5km", "5 km", "$20", "20 dollars"]:
            with self.subTest(text=text):
                self.assertEqual(values(text)[0], "5" if "5" in text else "20")

    def test_tens_and_units_written_apart_make_one_number(self):
        self.assertEqual(values("twenty-five people"), ["25"])
        self.assertEqual(values("twenty five people"), ["25"])

    def test_chinese_numerals_are_read_whole(self):
        self.assertEqual(values("我有十二只猫"), ["12"])
        self.assertEqual(values("两个孩子"), ["2"])
        self.assertEqual(values("三个人"), ["3"])

    def test_words_that_rarely_mean_a_number_are_not_numbers(self):
        self.assertEqual(values("one of them took a second look, first of all"), [])

    def test_unstemmed_tokens_read_the_same(self):
        self.assertEqual(number_values(tokenize("twelve thirty", stemmed=False)), number_values(tokenize("twelve 30")))


class QuestionNumbersTest(unittest.TestCase):
    def test_a_question_gives_the_values_of_its_numbers(self):
        self.assertEqual(analyze("When did Ana run her third 5K?").numbers, ["3", "5"])

    def test_the_numbers_of_a_question_s_dates_are_not_numbers_it_asks_about(self):
        for question in ["What did Ana do on 7 July, 2023?", "What did Ana win in November 2022?",
                         "What did Ana get on Aug 15th?"]:
            with self.subTest(question=question):
                self.assertEqual(analyze(question).numbers, [])


    def test_the_count_of_the_answers_asked_for_is_not_a_number_to_find(self):
        self.assertEqual(analyze("Which two novels does Ana like?").numbers, [])
        self.assertEqual(analyze("What did Ana name her two cats?").numbers, ["2"])


class NumbersSignalTest(MemoryTestCase):
    def test_a_question_s_number_in_words_meets_the_message_s_digits(self):
        said = "Ana: My 3rd marathon was in Bergen, along the fjord, with my cousin and two friends from work."
        # This mechanism alone: the meaning channel (tests/test_meaning.py) off.
        self.memory = self.open_memory(meaning_pool=0)
        self.memory.add(add_body("u1", "s1", [
            "Ana: I ran a marathon in Oslo, my favourite marathon city.",
            "Ben: Where do you run? Marathon training is hard.",
            said,
            "Ana: I run every marathon I can.",
        ]))
        first = self.search("Where did Ana run her third marathon?")[0]
        self.assertEqual(first["content"], said)
        self.assertIn("numbers", first["signals"])


if __name__ == "__main__":
    unittest.main()
