"""The periods questions are scoped to (flowmem/text/period.py), in English and Chinese."""
import datetime
import unittest

from flowmem.text import period

D = datetime.date
MEMORY = period.Memory(D(2021, 3, 1), D(2023, 8, 20))  # a memory's first and last day: the anchor is the last


def spans(question, memory=MEMORY):
    return [(a.isoformat(), b.isoformat()) for a, b in period.periods(question, memory)]


class EnglishPeriodTest(unittest.TestCase):
    def test_a_month_and_year_is_that_month(self):
        self.assertEqual(spans("Where was he living in March 2021?"), [("2021-03-01", "2021-03-31")])
        self.assertEqual(spans("What did she do in May, 2022?"), [("2022-05-01", "2022-05-31")])

    def test_a_season_is_three_months_of_the_northern_hemisphere_and_winter_starts_in_its_december(self):
        self.assertEqual(spans("What did she bake in the spring of 2022?"), [("2022-03-01", "2022-05-31")])
        self.assertEqual(spans("Which state did she visit in summer 2021?"), [("2021-06-01", "2021-08-31")])
        self.assertEqual(spans("Where did they ski in winter 2022?"), [("2022-12-01", "2023-02-28")])
        self.assertEqual(spans("What did he read in the fall of 2022?"), [("2022-09-01", "2022-11-30")])

    def test_a_month_or_season_without_a_year_is_that_time_in_every_year_of_the_memory(self):
        self.assertEqual(spans("When did Melanie go camping in June?"),
                         [("2021-06-01", "2021-06-30"), ("2022-06-01", "2022-06-30"), ("2023-06-01", "2023-06-30")])
        self.assertEqual(len(spans("Who went to a parade during the summer?")), 3)

    def test_a_year_alone_is_the_year(self):
        self.assertEqual(spans("How often did she go to the beach in 2023?"), [("2023-01-01", "2023-12-31")])

    def test_early_mid_late_and_the_beginning_and_end_of_a_month_are_its_thirds(self):
        self.assertEqual(spans("What did he do in early May 2022?"), [("2022-05-01", "2022-05-10")])
        self.assertEqual(spans("What did he do in mid May 2022?"), [("2022-05-11", "2022-05-20")])
        self.assertEqual(spans("What did he do in late February 2023?"), [("2023-02-21", "2023-02-28")])
        self.assertEqual(spans("Which tournament did he win at the beginning of November 2022?"),
                         [("2022-11-01", "2022-11-10")])
        self.assertEqual(spans("What happened at the end of July 2022?"), [("2022-07-21", "2022-07-31")])
        self.assertEqual(spans("Was the first half of September 2022 good?"), [("2022-09-01", "2022-09-15")])

    def test_early_and_late_in_a_year_are_its_thirds(self):
        self.assertEqual(spans("Where did she move in late 2022?"), [("2022-09-01", "2022-12-31")])
        self.assertEqual(spans("Where did she move in early 2022?"), [("2022-01-01", "2022-04-30")])

    def test_weeks_and_weekends_of_a_month_count_from_its_first_day_and_saturday(self):
        self.assertEqual(spans("Which course did she start during the first week of January 2023?"),
                         [("2023-01-01", "2023-01-07")])
        self.assertEqual(spans("Where was he in the second week of November 2023?"), [("2023-11-08", "2023-11-14")])
        self.assertEqual(spans("What did they do the last weekend of June 2023?"), [("2023-06-24", "2023-06-25")])
        self.assertEqual(spans("What did they do the first weekend of July 2023?"), [("2023-07-01", "2023-07-02")])

    def test_relative_periods_are_read_against_the_memorys_last_day(self):
        self.assertEqual(spans("What happened last summer?"), [("2022-06-01", "2022-08-31")])
        self.assertEqual(spans("What happened this summer?"), [("2023-06-01", "2023-08-31")])
        self.assertEqual(spans("What did he cook last month?"), [("2023-07-01", "2023-07-31")])
        self.assertEqual(spans("What did he cook two weeks ago?"), [("2023-07-31", "2023-08-06")])

    def test_ranges_and_counts_back_from_a_date_are_one_period(self):
        self.assertEqual(spans("Where was John between August 11 and August 15 2023?"), [("2023-08-11", "2023-08-15")])
        self.assertEqual(spans("What did she read between May and July 2022?"), [("2022-05-01", "2022-07-31")])
        self.assertEqual(spans("What did he do the week before August 3, 2023?"), [("2023-07-24", "2023-07-30")])
        self.assertEqual(spans("Which puppy did she get two weeks before August 11, 2023?"),
                         [("2023-07-24", "2023-07-30")])
        self.assertEqual(spans("What did Maria do last weekend before April 10, 2023?"), [("2023-04-08", "2023-04-09")])
        self.assertEqual(spans("What did she see on the Sunday before October 25, 2022?"),
                         [("2022-10-23", "2022-10-23")])

    def test_before_and_after_a_date_run_to_the_ends_of_the_memory(self):
        self.assertEqual(spans("What did he buy after June 2023?"), [("2023-07-01", "2023-08-20")])
        self.assertEqual(spans("What did he buy before 5 March 2021?"), [("2021-03-01", "2021-03-04")])

    def test_a_written_day_is_the_narrowest_period(self):
        self.assertEqual(spans("What painting did she show on October 13, 2023?"), [("2023-10-13", "2023-10-13")])

    def test_a_day_and_month_without_a_year_is_the_latest_on_or_before_the_memorys_last_day(self):
        self.assertEqual(spans("What happened on 3 June?"), [("2023-06-03", "2023-06-03")])
        self.assertEqual(spans("What did she do on 21 nov?"), [("2022-11-21", "2022-11-21")])  # not yet in 2023
        self.assertEqual(spans("Where was she on Sept 14th?"), [("2022-09-14", "2022-09-14")])
        self.assertEqual(spans("And the 3rd of june?"), [("2023-06-03", "2023-06-03")])  # no tense: the past
        self.assertEqual(spans("What will she do on 21 nov?"), [("2023-11-21", "2023-11-21")])  # a stated plan

    def test_a_weekday_or_a_day_of_the_month_alone_is_read_in_the_past_too(self):
        self.assertEqual(spans("What did Tom do on saturday?"), [("2023-08-19", "2023-08-19")])  # last day: a Sunday
        self.assertEqual(spans("What happened on the 25th?"), [("2023-07-25", "2023-07-25")])
        self.assertEqual(spans("What did they do this friday?"), [("2023-08-18", "2023-08-18")])
        self.assertTrue(period.may_name_period("What did Tom do on saturday?"))

    def test_a_weekday_beside_a_date_is_the_date_s(self):
        self.assertEqual(spans("What happened on Saturday, 25 October 2025?"), [("2025-10-25", "2025-10-25")])
        self.assertEqual(spans("What did she see on the Sunday before October 25?"), [("2022-10-23", "2022-10-23")])

    def test_words_that_only_look_like_periods_name_none(self):
        self.assertEqual(spans("What are Caroline's plans for the summer?"), [])
        self.assertEqual(spans("May I ask what she baked?"), [])
        self.assertEqual(spans("What did she bake?"), [])
        self.assertEqual(spans("Did they march 5 miles on the 5th floor?"), [])

    def test_periods_past_the_calendars_ends_are_left_out_without_an_error(self):
        edge = period.Memory(D(1, 1, 1), D(9999, 12, 31))
        for question in ("What happens next summer?", "明年三月呢？", "What did he do 999 weeks before 2 January 1?",
                         "前年夏天呢？", "What about winter 9999?"):
            with self.subTest(question=question):
                self.assertIsInstance(period.periods(question, edge), list)
        self.assertEqual(spans("What happens next summer?", edge), [])

    def test_without_a_memory_only_what_is_written_out_is_read(self):
        self.assertEqual(spans("What happened last summer in June?", None), [])
        self.assertEqual(spans("What happened in June 2023?", None), [("2023-06-01", "2023-06-30")])


class ChinesePeriodTest(unittest.TestCase):
    def test_seasons_with_a_year_or_a_relative_year(self):
        self.assertEqual(spans("她2022年春天做了什么蛋糕？"), [("2022-03-01", "2022-05-31")])
        self.assertEqual(spans("他去年夏天去了哪里？"), [("2022-06-01", "2022-08-31")])

    def test_relative_months_and_weeks(self):
        self.assertEqual(spans("他上个月做了什么？"), [("2023-07-01", "2023-07-31")])
        self.assertEqual(spans("他两周前做了什么？"), [("2023-07-31", "2023-08-06")])

    def test_parts_and_weeks_of_a_month(self):
        self.assertEqual(spans("她2022年三月初去了哪里？"), [("2022-03-01", "2022-03-10")])
        self.assertEqual(spans("她2022年3月下旬去了哪里？"), [("2022-03-21", "2022-03-31")])
        self.assertEqual(spans("2022年3月的第一周他在做什么？"), [("2022-03-01", "2022-03-07")])
        self.assertEqual(len(spans("她三月初去了哪里？")), 3)  # no year: every year of the memory

    def test_the_end_of_a_year(self):
        self.assertEqual(spans("他去年年底搬到了哪里？"), [("2022-09-01", "2022-12-31")])


class IndexTokensTest(unittest.TestCase):
    def test_whole_years_and_months_are_one_token_and_other_days_one_each(self):
        self.assertEqual(period.index_tokens([(D(2022, 1, 1), D(2022, 12, 31))]), ["y2022"])
        self.assertEqual(period.index_tokens([(D(2022, 3, 1), D(2022, 5, 31))]), ["m202203", "m202204", "m202205"])
        self.assertEqual(period.index_tokens([(D(2023, 7, 30), D(2023, 8, 1))]),
                         ["d20230730", "d20230731", "d20230801"])

    def test_tokens_and_periods_are_bounded(self):
        days = [(D(year, 1, 2), D(year, 1, 30)) for year in (2000, 2001, 2002)]  # 87 single days
        self.assertEqual(len(period.index_tokens(days)), period.MAX_PERIOD_TOKENS)
        many = period.Memory(D(1990, 1, 1), D(2023, 8, 20))
        self.assertEqual(len(period.periods("Where did he go in June?", many)), period.MAX_YEARS)
        ranges = " and ".join("on %d May 2023" % day for day in range(1, 30))
        self.assertEqual(len(period.periods("What did he do %s?" % ranges, MEMORY)), period.MAX_PERIODS)


if __name__ == "__main__":
    unittest.main()
