import unittest

from flowmem.text.stem import stem

# The worked examples of Porter's paper ("An algorithm for suffix stripping", 1980), step by step.
PAPER_EXAMPLES = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",
    "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
    "happy": "happi", "sky": "sky",
    "relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc",
    "hesitanci": "hesit", "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
    "differentli": "differ", "vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
    "predication": "predic", "operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
    "hopefulness": "hope", "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
    "sensibiliti": "sensibl",
    "triplicate": "triplic", "formative": "form", "formalize": "formal", "electriciti": "electr",
    "electrical": "electr", "hopeful": "hope", "goodness": "good",
    "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
    "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
    "replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
    "homologou": "homolog", "communism": "commun", "activate": "activ", "angulariti": "angular",
    "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
    "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
}


class PorterTest(unittest.TestCase):
    def test_the_papers_examples(self):
        for word, expected in PAPER_EXAMPLES.items():
            with self.subTest(word=word):
                self.assertEqual(stem(word), expected)

    def test_inflections_meet(self):
        self.assertEqual({stem(w) for w in ("paint", "painted", "painting", "paints")}, {"paint"})
        self.assertEqual(stem("turtles"), stem("turtle"))

    def test_what_is_not_a_lower_case_english_word_is_left_alone(self):
        for word in ("2023", "3.5", "北京", "héllo", "ab", "Running", "x1y"):
            self.assertEqual(stem(word), word)


if __name__ == "__main__":
    unittest.main()
