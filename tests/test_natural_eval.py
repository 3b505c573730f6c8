"""The natural-question evaluation's data and kit: the frozen split, the lives, the paraphrase check, the filler."""
import unittest

from tools.evalkit import filler, natural


class SplitTest(unittest.TestCase):
    def test_the_split_halves_are_disjoint_and_every_life_of_them_is_there(self):
        halves = natural.split()
        self.assertFalse(set(halves["tune"]) & set(halves["report"]))
        self.assertEqual(natural.lives("all"), halves["tune"] + halves["report"])
        self.assertGreaterEqual(len(natural.lives("all")), 10)


class LivesTest(unittest.TestCase):
    def test_every_question_names_messages_its_life_holds_and_answerable_ones_name_some(self):
        questions = 0
        for name in natural.lives("all"):
            conversation, absent = natural.conversation(name)
            turns = conversation.turns()
            for q in conversation.questions:
                self.assertTrue(q.gold, q.qid)
                self.assertTrue(set(q.gold) | set((q.labels or {}).get("old", [])) <= set(turns), q.qid)
                self.assertIn(q.category, natural.KINDS)
            self.assertTrue(all(not a["evidence"] for a in absent))
            questions += len(conversation.questions) + len(absent)
        self.assertGreaterEqual(questions, 250)

    def test_at_least_three_in_five_questions_are_asked_in_other_words(self):
        asked = [q.labels["paraphrased"] for name in natural.lives("all")
                 for q in natural.conversation(name)[0].questions]
        self.assertGreaterEqual(sum(asked) / len(asked), 0.6)


class ParaphraseCheckTest(unittest.TestCase):
    def test_an_inflection_of_a_question_word_is_shared(self):
        self.assertFalse(natural.paraphrased("When did she paint the fence?", ["Jo: painting the fence today"]))

    def test_a_speaker_label_is_no_shared_word(self):
        self.assertTrue(natural.paraphrased("What pet does Jo have?", ["Jo: we adopted a greyhound"]))

    def test_question_words_and_fillers_are_not_content(self):
        self.assertTrue(natural.paraphrased("What did she do now?", ["she did it now"]))


class FillerTest(unittest.TestCase):
    def test_filler_is_the_same_for_a_seed_and_as_long_as_asked(self):
        a = filler.sessions(500, 0, 10**10, [("user", "Jo"), ("assistant", "Ana")], seed=5)
        b = filler.sessions(500, 0, 10**10, [("user", "Jo"), ("assistant", "Ana")], seed=5)
        self.assertEqual(a, b)
        self.assertEqual(sum(len(turns) for _, turns in a), 500)
        self.assertTrue(all(c.startswith(("Jo: ", "Ana: ")) for _, turns in a for _, c, _ in turns))

    def test_a_life_among_filler_holds_the_asked_number_of_messages_in_time_order(self):
        base, _ = natural.load("tune")
        one = base._replace(conversations=base.conversations[:1])
        heavy = natural.with_filler(one, 3000).conversations[0]
        self.assertEqual(sum(len(s.turns) for s in heavy.sessions), 3000)
        starts = [s.turns[0].timestamp_ms for s in heavy.sessions]
        self.assertEqual(starts, sorted(starts))
        self.assertEqual(heavy.questions, one.conversations[0].questions)


if __name__ == "__main__":
    unittest.main()
