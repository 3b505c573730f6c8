"""The shortcuts search takes for speed give exactly what the long way gives.

Each case compares a shortcut with the computation it replaced, written out here the
long way, on inputs where a wrong shortcut would differ: ties, pre-1970 dates, words one
edit apart and words sharing only a first letter, windows overlapping a message.
"""
import datetime
import random
import unittest
from typing import List

from flowmem.retrieval import bridges
from flowmem.retrieval.pipeline import _best_first
from flowmem.retrieval.pool import Message, Pool
from flowmem.storage.views import MESSAGE
from flowmem.text import timeexpr
from tests.helpers import MemoryTestCase, add_body


def full_edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap of neighbours) from `a` to `b`, the whole table."""
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[-1][-1]


def pool_of(scores_and_tags: List[tuple]) -> Pool:
    messages = {key: Message(key, "s", tag, (), None, (), (), "") for key, _, tag in scores_and_tags}
    return Pool(messages, {}, {}, [], {}, {}, [], {}, {}, {}, {})


class ShortcutTest(unittest.TestCase):
    def test_the_letter_set_bound_leaves_every_edit_distance_within_the_limit_as_the_full_table_gives_it(self):
        rng = random.Random(7)
        words = ["bicycle", "bicylce", "bycicle", "bicycles", "cyclebi", "bacon", "beacon", "abcdefgh", "badge",
                 "kitten", "sitting", "kitchen", "mitten", "smitten", "listen", "silent", "enlist", "tinsel"]
        words += ["".join(rng.choice("abcde") for _ in range(rng.randint(5, 9))) for _ in range(60)]
        for a in words:
            for b in words:
                for limit in (1, 2):
                    full = full_edit_distance(a, b)
                    got = bridges.edit_distance(a, b, limit)
                    self.assertEqual(min(got, limit + 1), min(full, limit + 1), (a, b, limit))

    def test_day_of_gives_the_utc_date_a_datetime_gives_before_and_after_1970(self):
        epoch = datetime.datetime(1970, 1, 1)
        for ms in (0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, 1_683_554_160_000, -2_208_988_800_001):
            self.assertEqual(timeexpr.day_of(ms), (epoch + datetime.timedelta(milliseconds=ms)).date(), ms)
        self.assertIsNone(timeexpr.day_of(10 ** 18))

    def test_the_best_few_are_the_start_of_the_full_order_even_among_tied_scores(self):
        rng = random.Random(3)
        entries = [((rng.randint(1, 4), seq), float(rng.randint(1, 5)), "tag%d" % rng.randint(1, 3))
                   for seq in range(40)]
        entries = list({key: (key, score, tag) for key, score, tag in entries}.values())
        fused = {key: score for key, score, _ in entries}
        pool = pool_of(entries)
        everything = _best_first(fused, pool)
        self.assertEqual(everything, sorted(fused, key=lambda k: (-fused[k], pool.messages[k].tag, k[1])))
        for first in (0, 1, 3, 10, len(fused), len(fused) + 5):
            self.assertEqual(_best_first(fused, pool, first), everything[:first], first)


class ViewsAtTest(MemoryTestCase):
    def test_a_session_lists_the_windows_and_segments_holding_each_of_its_messages_in_its_views_order(self):
        lines = ["Dana: line %d about kayaks" % i for i in range(1, 13)]
        self.memory.add(add_body("u1", "s1", lines))
        with self.memory.store.reading() as reader:
            key = reader.user_key("u1")
            view = next(v for v in reader.views(sorted(
                doc for _, doc in reader.postings(key, MESSAGE, ["kayak"]))).values())
            session = reader.session(view)
            self.assertTrue(session.views)
            for seq in range(1, len(lines) + 1):
                holding = tuple(v for v in session.views if v.first <= seq <= v.last)
                self.assertEqual(session.views_at.get(seq, ()), holding, seq)
            self.assertTrue(any(len(held) > 1 for held in session.views_at.values()))


if __name__ == "__main__":
    unittest.main()
