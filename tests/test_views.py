"""Which views a session has (storage/views.py), planned whole and built piece by piece."""
import unittest

from flowmem.storage.views import KINDS, MESSAGE, SEGMENT, WINDOW, Span, plan_tail
from tests.helpers import T0, MemoryTestCase, message, session_views

MINUTE_MS = 60_000


def plan_session(times, n, window_size, segment_max_messages, segment_max_gap_ms):
    """Every view of a whole `n`-message session, message views included, in session_views()' order.

    A whole session is the first piece of a new one: plan_tail() from position 1.
    """
    spans, _ = plan_tail(times, n, 1, window_size, segment_max_messages, segment_max_gap_ms)
    messages = [Span(MESSAGE, i, i) for i in range(1, n + 1)]
    return sorted(messages + spans, key=lambda s: (KINDS.index(s.kind), s.first))


class PlanTest(unittest.TestCase):
    def test_single_message_session_has_only_its_message(self):
        self.assertEqual(plan_session({}, 1, 3, 8, 1_800_000), [Span(MESSAGE, 1, 1)])

    def test_short_session_gets_one_window_of_everything(self):
        self.assertEqual(plan_session({}, 2, 3, 8, 1_800_000),
                         [Span(MESSAGE, 1, 1), Span(MESSAGE, 2, 2), Span(WINDOW, 1, 2)])

    def test_windows_slide_by_one_and_segments_cut_by_count(self):
        spans = plan_session({}, 10, 3, 8, 1_800_000)
        self.assertEqual([s for s in spans if s.kind == WINDOW], [Span(WINDOW, i, i + 2) for i in range(1, 9)])
        self.assertEqual([s for s in spans if s.kind == SEGMENT], [Span(SEGMENT, 1, 8), Span(SEGMENT, 9, 10)])

    def test_time_gap_starts_a_new_segment(self):
        times = {i: T0 + (0 if i <= 4 else 3 * 3_600_000) for i in range(1, 11)}
        spans = plan_session(times, 10, 3, 8, 1_800_000)
        self.assertEqual([s for s in spans if s.kind == SEGMENT], [Span(SEGMENT, 1, 4), Span(SEGMENT, 5, 10)])

    def test_no_view_repeats_another(self):
        # A 3-message segment would equal a window, a 1-message segment a message view.
        times = {1: 0, 2: 0, 3: 0, 4: 10**9, 5: 2 * 10**9}
        spans = plan_session(times, 5, 3, 8, 1_800_000)
        ranges = [(s.first, s.last) for s in spans]
        self.assertEqual(len(ranges), len(set(ranges)))
        self.assertNotIn(SEGMENT, [s.kind for s in spans])

    def test_views_never_exceed_the_session(self):
        for n in range(1, 30):
            for s in plan_session({}, n, 3, 8, 0):
                self.assertTrue(1 <= s.first <= s.last <= n)


class IncrementalViewsTest(MemoryTestCase):
    """A session sent in pieces must end with exactly the views of the whole session sent at once."""

    def session(self, n=53):
        # Varying gaps: some over the 30-minute segment gap, some not, some timestamps missing.
        out = []
        t = T0
        for i in range(n):
            t += (45 if i % 11 == 5 else 2) * MINUTE_MS
            ts = None if i % 17 == 9 else t
            out.append(message("Speaker%d: message number %d about topic%d and shared word" % (i % 2, i, i % 5),
                               "user" if i % 2 == 0 else "assistant", ts))
        return out

    def add_in_pieces(self, memory, user, msgs, sizes):
        start = 0
        piece = 0
        while start < len(msgs):
            size = sizes[piece % len(sizes)]
            memory.add({"request_id": "r%d" % piece, "user_id": user, "session_id": "s",
                        "messages": msgs[start:start + size]})
            start += size
            piece += 1

    def test_pieces_give_the_same_views_as_one_add(self):
        msgs = self.session()
        whole = self.open_memory("whole.db")
        whole.add({"request_id": "all", "user_id": "u", "session_id": "s", "messages": msgs})
        expected = session_views(whole, "u", "s")
        times = {i + 1: m.get("timestamp") for i, m in enumerate(msgs)}
        self.assertEqual(expected, plan_session(times, len(msgs), 3, 8, 1_800_000))
        queries = ["topic3 shared", "message number 40", "Speaker1 topic0", "word"]
        for sizes in ([20], [1], [7], [3, 20, 1, 9]):
            with self.subTest(sizes=sizes):
                pieces = self.open_memory("pieces-%s.db" % "-".join(map(str, sizes)))
                self.add_in_pieces(pieces, "u", msgs, sizes)
                self.assertEqual(session_views(pieces, "u", "s"), expected)
                self.assertEqual(pieces.stats("u")["indexed_tokens"], whole.stats("u")["indexed_tokens"])
                for q in queries:
                    self.assertEqual(self.search(q, "u", 100, pieces), self.search(q, "u", 100, whole))

    def test_window_content_is_the_messages_joined_by_newlines(self):
        msgs = self.session(12)
        memory = self.open_memory("windows.db", message_share=0.5)
        memory.add({"request_id": "r", "user_id": "u", "session_id": "s", "messages": msgs})
        items = self.search("shared word", "u", 6, memory)
        windows = [i for i in items if i["view"] == WINDOW]
        self.assertTrue(windows)
        for w in windows:
            first = int(w["id"].rsplit("-", 2)[1])
            self.assertEqual(w["content"], "\n".join(m["content"] for m in msgs[first - 1:first + 2]))
            self.assertEqual(len(w["source_message_ids"]), 3)


if __name__ == "__main__":
    unittest.main()
