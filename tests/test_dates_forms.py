"""Days said without a year or a week, resolved by the tense they are said in (flowmem/text/dayforms.py)."""
import datetime
import unittest

from flowmem.text.timeexpr import annotation, resolve

D = datetime.date
MONDAY = D(2023, 5, 8)


def days(text, anchor=MONDAY):
    return [(r.expression, r.start.isoformat()) for r in resolve(text, anchor) if r.start == r.end]


class WeekdayTest(unittest.TestCase):
    def test_a_weekday_said_in_the_past_is_the_latest_one_strictly_before_the_day_it_was_said(self):
        self.assertEqual(days("tom proposed on saturday", D(2025, 10, 27)), [("saturday", "2025-10-25")])
        self.assertEqual(days("We went on Friday", MONDAY), [("Friday", "2023-05-05")])
        self.assertEqual(days("we went on saturday", D(2023, 5, 13)), [("saturday", "2023-05-06")])  # a Saturday

    def test_a_weekday_said_in_a_plan_is_the_earliest_one_strictly_after(self):
        self.assertEqual(days("we're off to the farm park on sunday"), [("sunday", "2023-05-14")])
        self.assertEqual(days("I'll see him Friday"), [("Friday", "2023-05-12")])
        self.assertEqual(days("going to the lake on monday"), [("monday", "2023-05-15")])  # said on a Monday

    def test_a_planned_weekday_crosses_a_month_end_and_a_year_end(self):
        self.assertEqual(days("sunday we're off to the farm park", D(2022, 12, 31)), [("sunday", "2023-01-01")])
        self.assertEqual(days("I'll see you friday", D(2023, 1, 31)), [("friday", "2023-02-03")])
        self.assertEqual(days("we met on thursday", D(2024, 1, 1)), [("thursday", "2023-12-28")])

    def test_a_weekday_without_a_tense_resolves_to_nothing(self):
        for text in ("saturday", "on Friday", "Sunday!", "it's friday"):
            with self.subTest(text=text):
                self.assertEqual(days(text), [])
        self.assertEqual(days("today is saturday", D(2023, 5, 13)), [("today", "2023-05-13")])  # the day it is

    def test_plurals_habits_named_days_and_weekdays_beside_a_date_or_a_week_are_not_read(self):
        for text in ("we went on saturdays", "we always went on sunday", "we went every saturday",
                     "we went the saturday before", "we went on Good Friday", "we went that monday",
                     "we went on saturday of last week"):
            with self.subTest(text=text):
                self.assertEqual(days(text), [])
        self.assertEqual(days("we met on Saturday 25 October 2025", D(2025, 10, 27)),
                         [("25 October 2025", "2025-10-25")])
        self.assertEqual(days("we'll go tuesday the 16th"), [("the 16th", "2023-05-16")])

    def test_last_and_next_weekday_are_as_before(self):
        self.assertEqual(days("we'll go next tuesday"), [("next tuesday", "2023-05-09")])
        self.assertEqual(days("we'll go last tuesday"), [("last tuesday", "2023-05-02")])


class ThisWeekdayTest(unittest.TestCase):
    def test_this_weekday_is_that_day_of_the_week_it_was_said_in_when_not_yet_past(self):
        self.assertEqual(days("this friday"), [("this friday", "2023-05-12")])
        self.assertEqual(days("This Sunday", D(2023, 5, 14)), [("This Sunday", "2023-05-14")])

    def test_a_past_this_weekday_is_that_day_in_the_past_tense_and_nothing_otherwise(self):
        wednesday = D(2023, 5, 10)
        self.assertEqual(days("this monday I went to the gym", wednesday), [("this monday", "2023-05-08")])
        self.assertEqual(days("see you this monday", wednesday), [])

    def test_this_past_and_this_coming_weekday_count_strictly_back_and_ahead(self):
        self.assertEqual(days("this past monday"), [("this past monday", "2023-05-01")])
        self.assertEqual(days("this coming monday"), [("this coming monday", "2023-05-15")])


class DayAndMonthTest(unittest.TestCase):
    def test_every_common_form_and_case_of_a_day_and_month_is_read(self):
        for text, day in (("the gig is 21 nov", "2023-11-21"), ("we'll go march 9th", "2024-03-09"),
                          ("we'll go on 2 feb", "2024-02-02"), ("we'll go on the 3rd of june", "2023-06-03"),
                          ("we'll go June 3", "2023-06-03"), ("we'll go 3 June", "2023-06-03"),
                          ("we'll go Sept 14th", "2023-09-14"), ("we'll go sept. 14th", "2023-09-14"),
                          ("we'll go on may 9th", "2023-05-09"), ("we'll go on MARCH 9", "2024-03-09")):
            with self.subTest(text=text):
                self.assertEqual([d for _, d in days(text)], [day])

    def test_a_day_and_month_said_in_the_past_is_the_latest_on_or_before_the_day_it_was_said(self):
        self.assertEqual(days("we went on 21 nov"), [("21 nov", "2022-11-21")])
        self.assertEqual(days("we went on 8 May"), [("8 May", "2023-05-08")])  # the day itself
        self.assertEqual(days("we got back on 30 dec", D(2025, 1, 3)), [("30 dec", "2024-12-30")])
        self.assertEqual(days("we went on 29 feb"), [("29 feb", "2020-02-29")])

    def test_a_day_and_month_in_a_plan_is_the_earliest_on_or_after_across_a_year_end(self):
        self.assertEqual(days("see you on 2 jan", D(2024, 12, 28)), [("2 jan", "2025-01-02")])
        self.assertEqual(days("the gig is 8 May"), [("8 May", "2023-05-08")])  # the day itself

    def test_without_a_tense_it_is_the_nearest_either_way_and_a_tie_goes_to_the_past(self):
        self.assertEqual(days("2 jan", D(2024, 12, 28)), [("2 jan", "2025-01-02")])
        self.assertEqual(days("30 dec", D(2025, 1, 3)), [("30 dec", "2024-12-30")])
        self.assertEqual(days("march 9th"), [("march 9th", "2023-03-09")])
        self.assertEqual(days("7 jan", D(2023, 7, 8)), [("7 jan", "2023-01-07")])  # 182 days back, 183 ahead
        self.assertEqual(days("8 jan", D(2023, 7, 9)), [("8 jan", "2023-01-08")])  # 182 days each way

    def test_may_and_march_in_lowercase_are_verbs_unless_a_suffix_or_a_preposition_makes_them_dates(self):
        for text in ("we march 5 miles", "I may 2 of them", "we march 12 km a day", "you may 1 day see"):
            with self.subTest(text=text):
                self.assertEqual(days(text), [])
        self.assertEqual(days("on march 5 we went"), [("march 5", "2023-03-05")])
        self.assertEqual(days("we went 5th march"), [("5th march", "2023-03-05")])

    def test_a_written_year_is_kept_in_any_case_and_not_annotated(self):
        found = resolve("the gig is 21 nov 2024", MONDAY)
        self.assertEqual([(r.start.isoformat(), r.relative) for r in found], [("2024-11-21", False)])
        self.assertEqual(annotation(resolve("the gig is 21 nov", MONDAY)), "(21 nov = 2023-11-21)")

    def test_numbers_that_are_not_days_are_not_read(self):
        for text in ("at 5:30 june", "v2.3 nov", "ran 45 nov", "$5 june"):
            with self.subTest(text=text):
                self.assertEqual(days(text), [])


class DayOfMonthTest(unittest.TestCase):
    def test_a_day_of_the_month_is_the_next_one_on_or_after_in_a_plan_or_without_a_tense(self):
        self.assertEqual(days("see you on the 2nd", D(2023, 1, 30)), [("the 2nd", "2023-02-02")])
        self.assertEqual(days("vet on the 5th"), [("the 5th", "2023-06-05")])
        self.assertEqual(days("vet on the 5th", D(2023, 5, 5)), [("the 5th", "2023-05-05")])
        self.assertEqual(days("the party is the 31st.", D(2023, 4, 10)), [("the 31st", "2023-05-31")])
        self.assertEqual(days("see you on the 2nd", D(2024, 12, 30)), [("the 2nd", "2025-01-02")])

    def test_a_day_of_the_month_said_in_the_past_is_the_latest_on_or_before(self):
        self.assertEqual(days("we met on the 21st"), [("the 21st", "2023-04-21")])
        self.assertEqual(days("we got back on the 30th", D(2025, 1, 3)), [("the 30th", "2024-12-30")])
        self.assertEqual(days("it was on the 8th, lovely"), [("the 8th", "2023-05-08")])

    def test_it_is_read_only_before_an_end_a_mark_or_a_time_word(self):
        self.assertEqual(days("vet on the 5th for a checkup"), [("the 5th", "2023-06-05")])
        self.assertEqual(days("vet the 5th at noon"), [("the 5th", "2023-06-05")])
        self.assertEqual(days("vet the 5th in the morning"), [("the 5th", "2023-06-05")])

    def test_ranks_floors_and_birthdays_are_no_days(self):
        for text in ("the 5th time", "the 5th floor", "on the 5th floor", "his 40th birthday", "the 3rd one",
                     "she came 2nd", "she came in the 2nd.", "the 21st century", "he finished the 3rd.",
                     "the 5th of them", "on 5th"):
            with self.subTest(text=text):
                self.assertEqual(days(text), [])


class BoundsTest(unittest.TestCase):
    def test_nothing_is_read_without_an_anchor_and_the_ends_of_the_calendar_raise_nothing(self):
        self.assertEqual(days("we went on saturday, on 21 nov and on the 5th", None), [])
        last = D(9999, 12, 31)
        self.assertEqual(days("see you saturday, on 2 jan and on the 2nd", last), [])
        self.assertEqual(days("we went on saturday", D(1, 1, 1)), [])

    def test_a_text_repeating_a_weekday_without_a_tense_resolves_nothing_quickly(self):
        import time
        started = time.monotonic()
        self.assertEqual(resolve("saturday " * 3_500, MONDAY), [])  # 31,500 characters: an indexed message's most
        self.assertLess(time.monotonic() - started, 2)


if __name__ == "__main__":
    unittest.main()
