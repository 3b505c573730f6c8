import unicodedata
import unittest

from flowmem.text.tokenize import MAX_TOKEN_CHARS, query_terms, split_speaker, tokenize, words


class TokenizeTest(unittest.TestCase):
    def test_case_and_punctuation_do_not_matter(self):
        self.assertEqual(words("Hello, WORLD!"), ["hello", "world"])

    def test_possessive_and_contractions_meet_the_plain_word(self):
        self.assertEqual(words("Dana's dog"), ["dana", "dog"])
        self.assertEqual(words("Dana\u2019s"), ["dana"])
        self.assertEqual(words("don't"), ["dont"])

    def test_numbers_keep_decimals_and_drop_thousands_separators(self):
        self.assertEqual(words("1,000 people paid 3.5 dollars."), ["1000", "people", "paid", "3.5", "dollars"])

    def test_index_tokens_are_stemmed_so_word_forms_meet(self):
        self.assertEqual(tokenize("She painted paintings"), ["she", "paint", "paint"])
        self.assertEqual(tokenize("turtles"), tokenize("turtle"))

    def test_latin_greek_cyrillic_diacritics_fold(self):
        self.assertEqual(tokenize("Café naïve Ёлка"), tokenize("cafe naive елка"))

    def test_marks_that_carry_meaning_are_kept(self):
        # Devanagari vowel signs are combining marks; dropping them would change the word.
        self.assertEqual(tokenize("हिन्दी भाषा"), ["हिन्दी", "भाषा"])

    def test_cjk_becomes_characters_and_bigrams(self):
        self.assertEqual(words("北京烤鸭"), ["北", "北京", "京", "京烤", "烤", "烤鸭", "鸭"])
        self.assertIn("手机", words("iPhone手机"))
        self.assertIn("iphone", words("iPhone手机"))

    def test_kana_and_hangul_get_bigrams(self):
        self.assertIn("東京", tokenize("東京へ行く"))
        self.assertIn("서울", tokenize("서울에서"))

    def test_same_word_same_token_whatever_surrounds_it(self):
        self.assertEqual(tokenize("version 3.5 ok")[1:], tokenize("версия 3.5 ok")[1:])

    def test_tokens_never_carry_fts_syntax(self):
        nasty = 'a"b NEAR(x y) c* d:e (f) ^g -h +i \x00\x1f \u200b {j} [k] 😀 \ud7ff'
        tokens = tokenize(nasty)
        self.assertIn("near", tokens)
        for token in tokens:
            # Letters, digits, combining marks, and a decimal point: nothing FTS5 would parse.
            self.assertTrue(all(ch.isalnum() or ch == "." or unicodedata.category(ch)[0] == "M" for ch in token), token)

    def test_long_tokens_are_cut(self):
        (token,) = tokenize("x" * 10_000)
        self.assertEqual(len(token), MAX_TOKEN_CHARS)


class SpeakerTest(unittest.TestCase):
    def test_a_leading_label_is_the_speaker(self):
        self.assertEqual(split_speaker("Dana: I went to a group"), ("Dana", "I went to a group"))
        self.assertEqual(split_speaker("Dr. Mary-Jane O'Neil: hi"), ("Dr. Mary-Jane O'Neil", "hi"))
        self.assertEqual(split_speaker("李雷：今天去了公园"), ("李雷", "今天去了公园"))

    def test_text_without_a_label_is_left_whole(self):
        for text in ("no label here", "see http://example.com", "5:30 pm works", "one two three four five six: x"):
            with self.subTest(text=text):
                self.assertEqual(split_speaker(text), ("", text))


class QueryTermsTest(unittest.TestCase):
    def test_question_words_are_dropped(self):
        self.assertEqual(query_terms("When did Dana go to the pottery workshop?"),
                         ["dana", "go", "potteri", "workshop"])

    def test_repeats_are_dropped_in_order(self):
        self.assertEqual(query_terms("dog cat dog"), ["dog", "cat"])

    def test_a_question_of_stopwords_only_keeps_them(self):
        self.assertEqual(query_terms("What is it?"), ["what", "is", "it"])

    def test_empty_or_symbol_only_question_has_no_terms(self):
        self.assertEqual(query_terms("?!* ()"), [])


if __name__ == "__main__":
    unittest.main()
