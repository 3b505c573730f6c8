"""A Memory's clock: a reading that is not Unix seconds a date can show is refused at the Add, naming the clock.

A clock returning milliseconds (time.time() * 1000) once dated an undated Add in the year
55,000: stored as it came, and then every list and search of that user raised
OverflowError. Each wrong reading here must refuse the Add (InvalidField, field `clock`),
write nothing, and leave the user's listings and searches answering.
"""
import datetime
import math
import time
import unittest

from flowmem.errors import InvalidField
from tests.helpers import MemoryTestCase

NOW = 1_790_000_000.0  # 2026-09-21: a reading in seconds


class ClockTest(MemoryTestCase):
    settings = {}

    def test_a_clock_that_returns_no_time_a_date_can_show_refuses_the_add_and_stores_nothing(self):
        readings = {"milliseconds": NOW * 1000, "microseconds": NOW * 1e6, "NaN": math.nan, "infinity": math.inf,
                    "negative": -NOW, "before 1973": 1000.0, "None": None, "text": "1790000000",
                    "a datetime": datetime.datetime(2026, 9, 21), "a boolean": True, "past any float": 10 ** 400}
        for name, reading in readings.items():
            with self.subTest(reading=name):
                memory = self.open_memory("%s.db" % name, clock=lambda reading=reading: reading)
                with self.assertRaises(InvalidField) as refused:
                    memory.add("Ana: I went hiking yesterday", user_id="u")
                self.assertEqual(refused.exception.field, "clock")
                self.assertIn("Unix seconds", refused.exception.reason)
                self.assertLess(len(refused.exception.reason), 300)
                self.assertEqual(memory.list(user_id="u"), [])
                self.assertEqual(memory.users(), [])
                self.assertEqual(memory.search("hiking", user_id="u"), [])

    def test_a_clock_in_milliseconds_is_named_as_such(self):
        memory = self.open_memory("ms.db", clock=lambda: NOW * 1000)
        with self.assertRaises(InvalidField) as refused:
            memory.add_body({"request_id": "r", "user_id": "u", "session_id": "s",
                             "messages": [{"role": "user", "content": "Ana: hi"}]})
        self.assertIn("milliseconds", refused.exception.reason)
        self.assertIn("time.time()", refused.exception.reason)

    def test_a_clock_in_seconds_dates_the_add_and_its_dates_are_read_back(self):
        for clock in (lambda: NOW, time.time, lambda: int(NOW)):
            with self.subTest(clock=clock):
                memory = self.open_memory("ok.db", clock=clock)
                memory.delete_user("u")
                before = int(clock() * 1000)
                memory.add("Ana: I went hiking yesterday", user_id="u")
                [stored] = memory.list(user_id="u")
                self.assertGreaterEqual(stored.timestamp, before)
                self.assertTrue(stored.dated_on_receipt)
                self.assertTrue(memory.search("hiking", user_id="u"))


if __name__ == "__main__":
    unittest.main()
