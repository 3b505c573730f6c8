"""The tense of the clause around a date expression (flowmem/text/tense.py)."""
import unittest

from flowmem.text.tense import FUTURE, PAST, UNKNOWN, tense


def said(text, expression):
    """The tense of `expression` (its first occurrence) in `text`."""
    start = text.index(expression)
    return tense(text, start, start + len(expression))


class PastTest(unittest.TestCase):
    def test_a_regular_past_verb_makes_the_clause_past(self):
        self.assertEqual(said("tom proposed on saturday", "saturday"), PAST)
        self.assertEqual(said("We visited grandma on 2 feb", "2 feb"), PAST)

    def test_irregular_past_forms_and_be_in_the_past_do_too(self):
        for text, expression in (("we went on friday", "friday"), ("I saw her on monday", "monday"),
                                 ("we met the 5th", "the 5th"), ("it was on sunday", "sunday"),
                                 ("we got back on 30 dec", "30 dec"), ("she told me on tuesday", "tuesday"),
                                 ("I didn't sleep on friday", "friday")):
            with self.subTest(text=text):
                self.assertEqual(said(text, expression), PAST)

    def test_a_cue_after_the_expression_counts_too(self):
        self.assertEqual(said("On saturday we went to the park", "saturday"), PAST)

    def test_a_modal_with_have_is_past(self):
        self.assertEqual(said("we could have gone on friday", "friday"), PAST)
        self.assertEqual(said("I should've called on monday", "monday"), PAST)


class FutureTest(unittest.TestCase):
    def test_will_and_going_to_make_a_plan(self):
        for text, expression in (("I'll see him friday", "friday"), ("we will fly on 2 jan", "2 jan"),
                                 ("going to the zoo on monday", "monday"), ("we're gonna do it on sunday", "sunday"),
                                 ("see you on saturday", "saturday"), ("can't wait for friday", "friday"),
                                 ("we plan to go on tuesday", "tuesday"), ("let's meet on thursday", "thursday")):
            with self.subTest(text=text):
                self.assertEqual(said(text, expression), FUTURE)

    def test_a_present_progressive_or_off_is_a_plan(self):
        self.assertEqual(said("we're off to the farm park on sunday", "sunday"), FUTURE)
        self.assertEqual(said("I'm seeing him on friday", "friday"), FUTURE)
        self.assertEqual(said("Sunday we're off to the farm park", "Sunday"), FUTURE)

    def test_a_scheduled_event_in_the_present_is_ahead(self):
        self.assertEqual(said("the gig is 21 nov", "21 nov"), FUTURE)
        self.assertEqual(said("the party is on friday", "friday"), FUTURE)
        self.assertEqual(said("the vet is booked for the 5th", "the 5th"), FUTURE)

    def test_a_past_be_before_going_to_is_no_plan(self):
        self.assertEqual(said("we were going to meet on friday", "friday"), PAST)


class UnknownTest(unittest.TestCase):
    def test_no_cue_is_unknown(self):
        for text, expression in (("vet on the 5th", "the 5th"), ("saturday", "saturday"),
                                 ("so excited for saturday", "saturday"), ("I'm tired from friday", "friday")):
            with self.subTest(text=text):
                self.assertEqual(said(text, expression), UNKNOWN)

    def test_it_is_or_today_is_a_weekday_names_the_day_not_a_plan(self):
        self.assertEqual(said("it's friday!", "friday"), UNKNOWN)
        self.assertEqual(said("today is saturday", "saturday"), UNKNOWN)

    def test_a_habit_names_no_one_day(self):
        self.assertEqual(said("we always went on sunday", "sunday"), UNKNOWN)
        self.assertEqual(said("I usually swim on monday", "monday"), UNKNOWN)

    def test_cues_of_both_tenses_equally_near_are_unknown_and_the_nearer_decides_otherwise(self):
        self.assertEqual(said("went saturday will", "saturday"), UNKNOWN)
        self.assertEqual(said("I was thinking we could go on saturday", "saturday"), FUTURE)
        self.assertEqual(said("I'll tell you what happened on saturday", "saturday"), PAST)

    def test_another_sentence_says_nothing_of_this_one(self):
        self.assertEqual(said("We went to the zoo. Saturday!", "Saturday"), UNKNOWN)
        self.assertEqual(said("Saturday! We will see.", "Saturday"), UNKNOWN)
        self.assertEqual(said("We paid 3.5 pounds on saturday", "saturday"), PAST)  # a decimal point ends nothing


if __name__ == "__main__":
    unittest.main()
