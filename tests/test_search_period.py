"""Questions scoped to a period: the `period` signal and the candidates it lets in (end to end)."""
import datetime

from flowmem.retrieval import signals
from flowmem.retrieval.pool import Message, Pool
from flowmem.retrieval.query import analyze
from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body

SPRING = T0 - 60 * DAY_MS  # 2023-03-09, spring
WINTER = T0 - 100 * DAY_MS  # 2023-01-28: the same year, outside the spring
LATEST = T0 + 10 * DAY_MS  # 2023-05-18: the memory's last day


class PeriodSearchTest(MemoryTestCase):
    def remember(self, memory, user, dated):
        for i, (timestamp, contents) in enumerate(dated):
            memory.add(add_body(user, "s%d" % i, contents, request_id="%s-r%d" % (user, i), timestamp=timestamp))

    def top(self, question, user="u1", **settings):
        memory = self.open_memory("%s-%s.db" % (user, "-".join("%s%s" % kv for kv in sorted(settings.items()))),
                                  **settings)
        self.remember(memory, user, self.dated)
        return [i["content"] for i in self.search(question, user, top_k=10, memory=memory)]

    dated = [
        (WINTER, ["Dana: I bake bread, I bake cakes, I bake all the time, baking is my life.", "Ann: Wow."]),
        (SPRING, ["Dana: Last Friday I went to a show and then I baked a lemon tart.", "Ann: Lovely."]),
        (LATEST, ["Dana: The garden is growing well.", "Ann: Good to hear."]),
    ]
    inside = "Dana: Last Friday I went to a show and then I baked a lemon tart."
    outside = "Dana: I bake bread, I bake cakes, I bake all the time, baking is my life."

    def test_a_question_naming_a_season_ranks_a_generic_message_dated_inside_above_a_word_sharing_one_outside(self):
        question = "What did Dana bake in the spring of 2023?"
        self.assertLess(self.top(question).index(self.inside), self.top(question).index(self.outside))
        without = self.top(question, weight_period=0.0)
        self.assertLess(without.index(self.outside), without.index(self.inside))  # what the words alone say

    def test_a_question_naming_a_month_and_a_relative_season_does_the_same(self):
        for question in ("What did Dana bake in March?", "What did Dana bake this spring?",
                         "What did Dana bake during the second week of March 2023?"):
            top = self.top(question)
            self.assertLess(top.index(self.inside), top.index(self.outside), question)

    def test_a_question_naming_no_period_ranks_exactly_as_without_the_signal(self):
        question = "What did Dana bake?"
        self.assertEqual(self.top(question), self.top(question, weight_period=0.0, period_pool=0))


class ChinesePeriodSearchTest(PeriodSearchTest):
    dated = [
        (WINTER, ["大伟：我最爱做蛋糕，蛋糕蛋糕天天做蛋糕。", "小林：厉害。"]),
        (SPRING, ["大伟：上周五我去看了演出，还做了一个柠檬蛋糕。", "小林：真好。"]),
        (LATEST, ["大伟：花园长得很好。", "小林：太好了。"]),
    ]
    inside = "大伟：上周五我去看了演出，还做了一个柠檬蛋糕。"
    outside = "大伟：我最爱做蛋糕，蛋糕蛋糕天天做蛋糕。"

    def test_a_question_naming_a_season_ranks_a_generic_message_dated_inside_above_a_word_sharing_one_outside(self):
        question = "大伟2023年春天做了什么蛋糕？"
        self.assertLess(self.top(question).index(self.inside), self.top(question).index(self.outside))
        without = self.top(question, weight_period=0.0)
        self.assertLess(without.index(self.outside), without.index(self.inside))

    def test_a_question_naming_a_month_and_a_relative_season_does_the_same(self):
        for question in ("大伟三月做了什么蛋糕？", "大伟今年春天做了什么蛋糕？", "大伟2023年3月初做了什么蛋糕？"):
            top = self.top(question)
            self.assertLess(top.index(self.inside), top.index(self.outside), question)

    def test_a_question_naming_no_period_ranks_exactly_as_without_the_signal(self):
        question = "大伟做了什么蛋糕？"
        self.assertEqual(self.top(question), self.top(question, weight_period=0.0, period_pool=0))


class PeriodCandidatesTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        for day in range(6):  # six messages said in early March 2023, none with the question's words
            self.memory.add(add_body("u1", "march%d" % day, ["Dana: We swam in the lake number %d." % day],
                                     request_id="m%d" % day, timestamp=SPRING - (8 - day) * DAY_MS))
        self.memory.add(add_body("u1", "later", ["Dana: My holiday plans are still open."],
                                 request_id="later", timestamp=LATEST))

    def found(self, memory):
        items = self.search("What did Dana do on holiday in early March 2023?", top_k=20, memory=memory)
        return [i["content"] for i in items if "lake" in i["content"]]

    def test_messages_said_inside_the_period_join_the_pool_without_sharing_its_words(self):
        self.assertEqual(len(self.found(self.memory)), 6)

    def test_at_most_period_pool_of_them_join(self):
        # This mechanism alone: the meaning channel (tests/test_meaning.py) off.
        memory = self.open_memory(period_pool=2, meaning_pool=0)
        self.assertEqual(len(self.found(memory)), 2)
        self.assertEqual(len(self.found(self.open_memory(period_pool=0, meaning_pool=0))), 0)


class PeriodSignalTest(MemoryTestCase):
    def message(self, key, day, spans=()):
        return Message(key, "s", "t", (), None if day is None else day * DAY_MS, (), spans, "")

    def test_said_inside_outranks_naming_a_day_inside_and_the_boundaries_count(self):
        first, last = 19417, 19423  # 2023-03-01 .. 2023-03-07, days since 1970-01-01
        epoch = datetime.date(1970, 1, 1).toordinal()
        query = analyze("What did Dana do?")._replace(periods=((first + epoch, last + epoch),))
        named = first + epoch + 2  # 2023-03-03 as a day ordinal, as messages' spans are
        messages = {
            (1, 1): self.message((1, 1), first),  # said on the first day
            (1, 2): self.message((1, 2), last),  # said on the last day
            (1, 3): self.message((1, 3), last + 1, ((named, named),)),  # names a day inside
            (1, 4): self.message((1, 4), last + 1),  # said the day after
            (1, 5): self.message((1, 5), None),  # no day at all
        }
        pool = Pool(messages, {}, {}, [], {}, {}, [], {}, {}, {}, {})
        self.assertEqual(signals.period(query, pool), {(1, 1): 2.0, (1, 2): 2.0, (1, 3): 1.0})
        self.assertEqual(signals.period(query._replace(periods=()), pool), {})


class MemoryDaysTest(MemoryTestCase):
    def test_the_memorys_first_and_last_timestamps_are_read_and_none_without_any(self):
        self.memory.add(add_body("u1", "a", ["Dana: one", "Ann: two"], request_id="a", timestamp=SPRING))
        self.memory.add(add_body("u1", "b", ["Dana: three"], request_id="b", timestamp=LATEST))
        self.memory.add(add_body("u2", "c", ["Zed: undated"], request_id="c", timestamp=None))
        self.memory.add(add_body("u3", "d", ["Other: much later"], request_id="d", timestamp=LATEST + 99 * DAY_MS))
        with self.memory.store.reading() as reader:
            self.assertEqual(reader.memory_days(reader.user_key("u1")), (SPRING, LATEST))  # one user's only
            self.assertIsNone(reader.memory_days(reader.user_key("u2")))
