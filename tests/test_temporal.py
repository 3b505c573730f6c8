"""Time-aware memory, end to end: dated evidence, resolved relative times, dates in questions."""
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body


class TemporalSearchTest(MemoryTestCase):
    settings = {"date_prefix": True, "time_annotations": True}

    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", ["Dana: I went to a pottery workshop yesterday.",
                                              "Priya: How was it?"], request_id="r1"))  # 2023-05-08
        self.memory.add(add_body("u1", "s2", ["Priya: I painted a lake sunrise last week."], request_id="r2",
                                 timestamp=T0 + 30 * DAY_MS))  # 2023-06-07

    def test_content_starts_with_the_evidence_day_and_shows_resolved_times(self):
        first = self.search("When did Dana go to the support group?", top_k=1)[0]
        self.assertEqual(first["content"], "[2023-05-08] Dana: I went to a pottery workshop yesterday."
                                           " (yesterday = 2023-05-07)")
        week = self.search("When did Priya paint the lake sunrise?", top_k=1)[0]
        self.assertIn("(last week = 2023-05-29..2023-06-04)", week["content"])

    def test_both_can_be_switched_off(self):
        memory = self.open_memory("plain.db", date_prefix=False, time_annotations=False)
        memory.add(add_body("u1", "s1", ["Dana: I went to a pottery workshop yesterday."]))
        content = self.search("pottery workshop", top_k=1, memory=memory)[0]["content"]
        self.assertEqual(content, "Dana: I went to a pottery workshop yesterday.")

    def test_a_window_dates_each_line_that_starts_a_new_day(self):
        memory = self.open_memory("days.db", message_share=0.0)
        body = add_body("u1", "s1", ["Ann: kite one", "Ben: kite two"])
        body["messages"][1]["timestamp"] = T0 + DAY_MS
        memory.add(body)
        window = [i for i in self.search("kite", top_k=3, memory=memory) if i["view"] == "window"][0]
        self.assertEqual(window["content"], "[2023-05-08] Ann: kite one\n[2023-05-09] Ben: kite two")

    def test_a_question_naming_a_month_meets_the_evidence_of_that_month(self):
        memory = self.open_memory("months.db")
        for month in range(1, 8):
            memory.add(add_body("u1", "s%d" % month, ["Priya: I did something fun", "Ann: what was it?",
                                                      "Priya: a trip number %d" % month, "Ann: nice"],
                                request_id="r%d" % month, timestamp=T0 + (month - 5) * 31 * DAY_MS))
        top = self.search("What did Priya do in June 2023?", top_k=3, memory=memory)
        self.assertTrue(all(i["content"].startswith("[2023-06-") for i in top), [i["content"] for i in top])

    def test_a_question_naming_a_day_meets_what_was_said_to_be_that_day(self):
        items = self.search("What happened on 7 May 2023?", top_k=1)
        self.assertIn("pottery workshop yesterday", items[0]["content"])  # yesterday, said on 8 May, is 7 May

    def test_messages_without_timestamps_still_work(self):
        self.memory.add(add_body("u2", "s", ["Zed: I fixed the bike yesterday"], timestamp=None))
        (item,) = self.search("bike", "u2")
        self.assertEqual(item["content"], "Zed: I fixed the bike yesterday")
        self.assertIsNone(item["created_at"])


class OwnTimeTest(MemoryTestCase):
    """A typed chat dates each message by its own time: one session spans midnight, and days."""

    settings = {"date_prefix": True, "time_annotations": True}
    EVENING = 1709941800000  # 2024-03-08 23:50 UTC

    def setUp(self):
        super().setUp()
        lines = [("Sam: dentist tomorrow, wish me luck", 0),
                 ("Ana: good luck!!", 5),
                 ("Sam: i went to the climbing gym yesterday btw", 30),  # 00:20 on the 9th
                 ("Sam: back from the coast, the ferry was yesterday", 2 * 24 * 60 + 600)]  # the 11th, 10:20
        self.memory.add({"request_id": "r1", "user_id": "u1", "session_id": "chat", "messages": [
            {"role": "user" if text.startswith("Sam") else "assistant", "content": text,
             "timestamp": self.EVENING + minutes * 60_000} for text, minutes in lines]})

    def first(self, question):
        return self.search(question, top_k=1)[0]["content"]

    def test_a_relative_day_said_after_midnight_is_read_from_that_message_s_day(self):
        self.assertEqual(self.first("When did Sam go to the climbing gym?"),
                         "[2024-03-09] Sam: i went to the climbing gym yesterday btw (yesterday = 2024-03-08)")

    def test_a_relative_day_said_before_midnight_is_read_from_the_evening_s_day(self):
        self.assertEqual(self.first("When is Sam's dentist appointment?"),
                         "[2024-03-08] Sam: dentist tomorrow, wish me luck (tomorrow = 2024-03-09)")

    def test_a_message_days_into_the_session_is_dated_by_its_own_day(self):
        self.assertEqual(self.first("When did Sam take the ferry?"),
                         "[2024-03-11] Sam: back from the coast, the ferry was yesterday (yesterday = 2024-03-10)")

    def test_a_question_naming_the_day_meets_what_was_said_to_be_that_day(self):
        self.assertIn("the ferry was yesterday", self.first("What did Sam do on 10 March 2024?"))
