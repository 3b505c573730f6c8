import datetime
import unittest

from flowmem.text.timeexpr import annotation, day_of, resolve, tokens

D = datetime.date
MONDAY = D(2023, 5, 8)  # a Monday


def dates(text, anchor=MONDAY):
    return [(r.expression, r.start.isoformat(), r.end.isoformat()) for r in resolve(text, anchor)]


class RelativeTest(unittest.TestCase):
    def test_days(self):
        self.assertEqual(dates("I went yesterday"), [("yesterday", "2023-05-07", "2023-05-07")])
        self.assertEqual(dates("the day before yesterday"), [("the day before yesterday", "2023-05-06", "2023-05-06")])
        self.assertEqual(dates("last night and tomorrow")[1], ("tomorrow", "2023-05-09", "2023-05-09"))
        self.assertEqual(dates("three days ago")[0][1], "2023-05-05")
        self.assertEqual(dates("a couple of days ago")[0][1], "2023-05-06")
        self.assertEqual(dates("in 2 days")[0][1], "2023-05-10")

    def test_weeks_are_iso_weeks_and_weekends_their_saturday_and_sunday(self):
        self.assertEqual(dates("last week"), [("last week", "2023-05-01", "2023-05-07")])
        self.assertEqual(dates("next week")[0][1:], ("2023-05-15", "2023-05-21"))
        self.assertEqual(dates("two weeks ago")[0][1:], ("2023-04-24", "2023-04-30"))
        self.assertEqual(dates("this weekend")[0][1:], ("2023-05-13", "2023-05-14"))
        self.assertEqual(dates("two weekends ago")[0][1:], ("2023-04-29", "2023-04-30"))
        self.assertEqual(dates("last weekend")[0][1:], ("2023-05-06", "2023-05-07"))

    def test_weekdays(self):
        self.assertEqual(dates("last Friday")[0][1], "2023-05-05")
        self.assertEqual(dates("last Monday")[0][1], "2023-05-01")  # strictly before the anchor
        self.assertEqual(dates("next Tuesday")[0][1], "2023-05-09")
        self.assertEqual(dates("this Friday")[0][1], "2023-05-12")  # this ISO week's, not yet past
        self.assertEqual(dates("we went on Friday")[0][1], "2023-05-05")  # by tense: tests/test_dates_forms.py
        self.assertEqual(dates("see you on Friday")[0][1], "2023-05-12")

    def test_months_and_years(self):
        self.assertEqual(dates("last month")[0][1:], ("2023-04-01", "2023-04-30"))
        self.assertEqual(dates("earlier this month")[0][1:], ("2023-05-01", "2023-05-08"))
        self.assertEqual(dates("last year")[0][1:], ("2022-01-01", "2022-12-31"))
        self.assertEqual(dates("five years ago")[0][1:], ("2018-01-01", "2018-12-31"))
        self.assertEqual(dates("last month", D(2023, 1, 15))[0][1:], ("2022-12-01", "2022-12-31"))

    def test_chinese(self):
        self.assertEqual([d[1:] for d in dates("我昨天去了，上周五也去了，3天前，上个月，去年，这周末")],
                         [("2023-05-07", "2023-05-07"), ("2023-05-05", "2023-05-05"), ("2023-05-05", "2023-05-05"),
                          ("2023-04-01", "2023-04-30"), ("2022-01-01", "2022-12-31"), ("2023-05-13", "2023-05-14")])
        self.assertEqual(dates("三天前")[0][1], "2023-05-05")

    def test_ambiguous_expressions_resolve_to_nothing(self):
        for text in ("a few days ago", "recently", "the other day", "on Friday", "5/6/2023",
                     "I may go", "march on", "I may 2", "we march 5 miles", "the 5th floor"):
            with self.subTest(text=text):
                self.assertEqual(dates(text), [])

    def test_without_an_anchor_only_written_dates_resolve(self):
        self.assertEqual(dates("yesterday, on 8 May 2023", None), [("8 May 2023", "2023-05-08", "2023-05-08")])


class AbsoluteTest(unittest.TestCase):
    def test_common_forms_give_the_same_day(self):
        for text in ("on 8 May 2023", "on 8th May, 2023", "May 8th, 2023", "2023-05-08", "May 8", "2023年5月8日",
                     "5月8日"):
            with self.subTest(text=text):
                self.assertEqual(dates(text)[0][1], "2023-05-08")
        self.assertEqual(dates("on 5/18/2023")[0][1], "2023-05-18")

    def test_a_day_and_month_without_a_year_is_the_nearest_in_the_direction_of_the_tense(self):
        self.assertEqual(dates("see you on 2 jan", D(2024, 12, 28)), [("2 jan", "2025-01-02", "2025-01-02")])
        self.assertEqual(dates("we got back on 30 dec", D(2025, 1, 3))[0][1], "2024-12-30")
        self.assertEqual(dates("May 8", None), [])  # no anchor, no year

    def test_a_numeric_date_between_chinese_characters_is_read_but_not_inside_latin_text(self):
        self.assertEqual(dates("我2022-10-04那天见到了作家")[0][1], "2022-10-04")
        self.assertEqual(dates("在5/18/2023那天")[0][1], "2023-05-18")
        self.assertEqual(dates("build v2023-05-08x"), [])

    def test_months_and_years(self):
        self.assertEqual(dates("in May 2023")[0][1:], ("2023-05-01", "2023-05-31"))
        self.assertEqual(dates("in March")[0][1:], ("2023-03-01", "2023-03-31"))
        self.assertEqual(dates("back in 2022")[0][1:], ("2022-01-01", "2022-12-31"))
        self.assertEqual(dates("3月份")[0][1:], ("2023-03-01", "2023-03-31"))


class OutputTest(unittest.TestCase):
    def test_tokens_name_the_day_month_and_year(self):
        self.assertEqual(tokens(MONDAY, MONDAY), ["d20230508", "m202305", "y2023"])
        self.assertEqual(tokens(D(2023, 4, 24), D(2023, 5, 7)), ["m202304", "m202305", "y2023"])

    def test_annotation_shows_relative_times_only(self):
        self.assertEqual(annotation(resolve("yesterday, last week, on 8 May 2023", MONDAY)),
                         "(yesterday = 2023-05-07; last week = 2023-05-01..2023-05-07)")

    def test_day_of_a_timestamp(self):
        self.assertEqual(day_of(1683554160000), MONDAY)
        self.assertIsNone(day_of(None))


class BoundsTest(unittest.TestCase):
    def test_a_text_repeating_an_expression_resolves_a_bounded_number_quickly(self):
        import time
        started = time.monotonic()
        found = resolve("3 days ago " * 60_000, datetime.date(2023, 5, 8))
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(len(found), 32)

    def test_dates_at_the_end_of_year_9999_resolve_or_are_left_without_an_error(self):
        last = datetime.date(9999, 12, 31)
        self.assertEqual([(r.start, r.end) for r in resolve("see you on 9999-12-31", None)], [(last, last)])
        self.assertEqual(tokens(datetime.date(9999, 12, 1), last), ["m999912", "y9999"])
        self.assertEqual(resolve("next year, next month, tomorrow", last), [])


if __name__ == "__main__":
    unittest.main()
