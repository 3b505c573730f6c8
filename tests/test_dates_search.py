"""Days said by tense, end to end: a message's "on saturday" is found by a question naming that day."""
import datetime

from tests.helpers import DAY_MS, MemoryTestCase, add_body


def noon(day):
    """Unix ms of noon UTC on `day`."""
    return int(datetime.datetime(day.year, day.month, day.day, 12, tzinfo=datetime.timezone.utc).timestamp() * 1000)


MONDAY = noon(datetime.date(2025, 10, 27))


class DaysByTenseSearchTest(MemoryTestCase):
    settings = {"date_prefix": True, "time_annotations": True}

    def setUp(self):
        super().setUp()
        said = [
            (MONDAY - 9 * DAY_MS, "Dana: The garden is growing well, the roses are out."),
            (MONDAY - DAY_MS, "Dana: The bakery was closed all day."),  # said nearer 25 October
            (MONDAY, "Dana: we went to the cinema on friday"),
            (MONDAY, "Dana: tom proposed on saturday"),
            (MONDAY + 3 * DAY_MS, "Dana: I painted the fence blue."),
            (noon(datetime.date(2024, 12, 28)), "Dana: see you on 2 jan at the lake"),
            (noon(datetime.date(2025, 1, 6)), "Dana: My cousin Priya came over for tea."),
        ]
        for i, (timestamp, content) in enumerate(said):
            self.memory.add(add_body("u1", "s%d" % i, [content], request_id="r%d" % i, timestamp=timestamp))

    def test_a_question_naming_the_day_finds_a_past_weekday_said_two_days_later(self):
        first = self.search("What happened on 25 October 2025?", top_k=1)[0]
        self.assertEqual(first["content"], "[2025-10-27] Dana: tom proposed on saturday (saturday = 2025-10-25)")

    def test_a_planned_day_without_a_year_is_read_across_the_year_end(self):
        first = self.search("What happened on 2 January 2025?", top_k=1)[0]
        self.assertEqual(first["content"], "[2024-12-28] Dana: see you on 2 jan at the lake (2 jan = 2025-01-02)")
