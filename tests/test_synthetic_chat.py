"""The synthetic typed-chat set (tools/evalkit/synthetic_chat/): deterministic, chat-shaped, and its labels true."""
from __future__ import annotations

import datetime
import os
import re
import unittest
from typing import Dict, List

from tools.evalkit.dataset import Conversation, Turn, load_json
from tools.evalkit.synthetic_chat import CATEGORIES, RELATIVE, WEEKDAYS, dumps, generate

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(REPO, "fixtures", "synthetic-chat.json")
CLI = ["-m", "tools.synthetic"]  # run from anywhere with the clone on PYTHONPATH
UTC = datetime.timezone.utc
ONE = datetime.timedelta(days=1)

DATASET = generate(1)
TEXT = dumps(DATASET)


def moment(turn: Turn) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(turn.timestamp_ms / 1000, UTC)


def order(conv: Conversation) -> Dict[str, int]:
    return {t.turn_id: i for i, t in enumerate(t for s in conv.sessions for t in s.turns)}


def speaker(turn: Turn) -> str:
    return turn.content.split(": ", 1)[0]


def expected_span(expression: str, day: datetime.date) -> List[datetime.date]:
    """The days an expression said on `day` denotes, recomputed here from the module docstring's conventions."""
    e = expression.lower()
    offsets = {"yesterday": -1, "yday": -1, "last night": -1, "the day before yesterday": -2, "today": 0,
               "tonight": 0, "tonite": 0, "tomorrow": 1, "tmrw": 1, "the day after tomorrow": 2}
    if e in offsets:
        return [day + offsets[e] * ONE] * 2
    if e.startswith("this ") and e != "this weekend":
        return [day, day]
    if e == "this weekend":
        monday = day - day.weekday() * ONE
        return [monday + 5 * ONE, monday + 6 * ONE]
    target = WEEKDAYS.index(e.split()[1])
    ahead = next(n for n in range(1, 8) if (day + n * ONE).weekday() == target)
    return [day + ahead * ONE] * 2


class DeterminismTest(unittest.TestCase):
    def test_the_committed_fixture_is_what_the_generator_writes(self) -> None:
        with open(FIXTURE, encoding="utf-8") as f:
            self.assertEqual(f.read(), TEXT, "regenerate: python -m tools.synthetic --chat --seed 1 --out %s" % FIXTURE)

    def test_two_runs_give_the_same_bytes(self) -> None:
        self.assertEqual(dumps(generate(1)), TEXT)

    def test_another_seed_gives_another_set(self) -> None:
        self.assertNotEqual(dumps(generate(2)), TEXT)

    def test_the_json_form_reads_back_as_the_same_dataset(self) -> None:
        self.assertEqual(load_json(FIXTURE).conversations, DATASET.conversations)


class ShapeTest(unittest.TestCase):
    def test_users_sessions_and_messages_are_in_the_planned_ranges(self) -> None:
        self.assertTrue(4 <= len(DATASET.conversations) <= 6)
        for conv in DATASET.conversations:
            self.assertRegex(conv.user_id, r"^chat-en-\d+$")
            self.assertEqual(conv.language, "en")
            self.assertTrue(6 <= len(conv.sessions) <= 10, conv.user_id)
            for s in conv.sessions:
                self.assertTrue(40 <= len(s.turns) <= 120, (s.session_id, len(s.turns)))

    def test_each_group_has_its_share_of_questions(self) -> None:
        counts = {c: 0 for c in CATEGORIES}
        for q in (q for c in DATASET.conversations for q in c.questions):
            counts[q.category] += 1
        self.assertTrue(150 <= sum(counts.values()) <= 250, counts)
        for category, n in counts.items():
            low, high = (10, 15) if category == "unanswerable" else (25, 40)
            self.assertTrue(low <= n <= high, (category, n))

    def test_turn_ids_are_unique_and_name_their_session(self) -> None:
        for conv in DATASET.conversations:
            ids = [t.turn_id for s in conv.sessions for t in s.turns]
            self.assertEqual(len(ids), len(set(ids)))
            for n, s in enumerate(conv.sessions, 1):
                self.assertEqual([t.turn_id for t in s.turns], ["S%d:%d" % (n, i) for i in range(1, len(s.turns) + 1)])

    def test_every_message_is_a_speaker_label_and_text_and_roles_follow_the_speaker(self) -> None:
        for conv in DATASET.conversations:
            roles: Dict[str, str] = {}
            for t in (t for s in conv.sessions for t in s.turns):
                self.assertRegex(t.content, r"^[A-Z][a-z]+: \S")
                self.assertEqual(roles.setdefault(speaker(t), t.role), t.role)
            self.assertEqual(sorted(roles.values()), ["assistant", "user"])

    def test_every_gold_id_is_a_turn_of_its_conversation(self) -> None:
        for conv in DATASET.conversations:
            turns = conv.turns()
            for q in conv.questions:
                self.assertTrue(q.gold, q.qid)
                for turn_id in q.gold:
                    self.assertIn(turn_id, turns, q.qid)

    def test_updates_label_a_new_turn_in_a_later_session_than_the_old(self) -> None:
        for conv in DATASET.conversations:
            for q in (q for q in conv.questions if q.category == "update"):
                self.assertEqual(q.gold, q.labels["new"] + q.labels["old"])
                new, old = (int(ids[0].split(":")[0][1:]) for ids in (q.labels["new"], q.labels["old"]))
                self.assertGreaterEqual(new - old, 2, q.qid)

    def test_unanswerable_gold_is_every_message_naming_the_entity(self) -> None:
        for conv in DATASET.conversations:
            for q in (q for q in conv.questions if q.category == "unanswerable"):
                self.assertEqual(q.labels, {"unanswerable": True})
                self.assertGreaterEqual(len(q.gold), 1)
                contents = [conv.turns()[t].content.lower() for t in q.gold]
                shared = [w for w in re.findall(r"[a-z]+", q.question.lower()) if all(w in c for c in contents)]
                self.assertTrue(shared, q.qid)


class ChatTest(unittest.TestCase):
    def test_every_message_has_its_own_timestamp_never_going_backwards_in_a_session(self) -> None:
        for conv in DATASET.conversations:
            previous_end = 0
            for s in conv.sessions:
                stamps = [t.timestamp_ms for t in s.turns]
                self.assertTrue(all(isinstance(x, int) for x in stamps))
                self.assertEqual(stamps, sorted(stamps), s.session_id)
                self.assertEqual(len(set(stamps)), len(stamps), s.session_id)
                self.assertGreater(stamps[0], previous_end, "sessions overlap: %s" % s.session_id)
                previous_end = stamps[-1]
                self.assertEqual(moment(s.turns[0]).year, 2024)

    def test_some_sessions_span_midnight_and_some_span_days(self) -> None:
        spans = [(moment(s.turns[-1]).date() - moment(s.turns[0]).date()).days
                 for c in DATASET.conversations for s in c.sessions]
        self.assertGreaterEqual(sum(1 for d in spans if d >= 1), len(DATASET.conversations) * 2)
        self.assertGreaterEqual(sum(1 for d in spans if d >= 2), 1)

    def test_a_speaker_sends_bursts(self) -> None:
        for conv in DATASET.conversations:
            runs = [0]
            previous = None
            for t in (t for s in conv.sessions for t in s.turns):
                if t.role == previous:
                    runs[-1] += 1
                else:
                    runs.append(1)
                previous = t.role
            self.assertGreater(sum(1 for r in runs if r >= 2), 50, conv.user_id)
            self.assertGreater(sum(1 for r in runs if r >= 3), 10, conv.user_id)

    def test_noise_is_there_lower_case_no_final_stop_typos_and_emoji(self) -> None:
        texts = [t.content.split(": ", 1)[1] for c in DATASET.conversations for s in c.sessions for t in s.turns]
        lower = sum(1 for x in texts if x == x.lower() and re.search("[a-z]", x)) / len(texts)
        self.assertTrue(0.4 < lower < 0.8, lower)
        self.assertGreater(sum(1 for x in texts if re.search(r"\b(u|ur|bc|tho|gonna|tmrw|definately)\b", x)), 30)
        self.assertGreater(sum(1 for x in texts if re.search("[\U0001F300-\U0001FAFF]", x)), 100)

    def test_burst_reply_gold_comes_after_more_messages_of_the_asker(self) -> None:
        stop = {"what", "which", "where", "who", "how", "did", "the", "for", "are", "is", "does", "his", "her", "their"}
        for conv in DATASET.conversations:
            turns = list(t for s in conv.sessions for t in s.turns)
            at = order(conv)
            for q in (q for q in conv.questions if q.category == "burst-reply"):
                first = at[q.gold[0]]
                answerer = speaker(turns[first])
                asked_words = set(re.findall(r"[a-z]+", q.question.lower())) - stop

                def overlap(t: Turn, asked_words: set = asked_words) -> int:
                    return len(asked_words & set(re.findall(r"[a-z]+", t.content.lower())))

                window = [i for i in range(max(0, first - 12), first) if speaker(turns[i]) != answerer]
                asking = max(window, key=lambda i: (overlap(turns[i]), i))  # the asking message
                self.assertGreaterEqual(overlap(turns[asking]), 1, q.qid)
                followups = [i for i in window if i > asking]
                self.assertGreaterEqual(len(followups), 1, q.qid)
                self.assertTrue(all(speaker(turns[at[g]]) == answerer for g in q.gold), q.qid)
                self.assertIn(q.answer.lower(), " ".join(turns[at[g]].content.lower() for g in q.gold), q.qid)

    def test_burst_fact_gold_is_one_or_two_messages_of_one_burst(self) -> None:
        for conv in DATASET.conversations:
            turns = conv.turns()
            at = order(conv)
            for q in (q for q in conv.questions if q.category == "burst-fact"):
                self.assertIn(len(q.gold), (1, 2))
                self.assertEqual(len({speaker(turns[g]) for g in q.gold}), 1, q.qid)
                self.assertLessEqual(at[q.gold[-1]] - at[q.gold[0]], 2, q.qid)  # at most one interruption

    def test_own_time_messages_are_said_late_at_night_and_answered_by_their_own_day(self) -> None:
        for conv in DATASET.conversations:
            turns = conv.turns()
            labels = {r["turn_id"]: r for r in conv.relative_times or []}
            for q in (q for q in conv.questions if q.category == "own-time"):
                turn = turns[q.gold[0]]
                self.assertTrue(moment(turn).hour >= 22 or moment(turn).hour < 5, q.qid)
                label = labels[q.gold[0]]
                self.assertEqual(q.answer, label["start"], q.qid)
                self.assertEqual(label["start"], label["end"])

    def test_relative_time_labels_are_complete_and_resolved_against_the_message_day(self) -> None:
        for conv in DATASET.conversations:
            turns = conv.turns()
            found = [(t.turn_id, m.group(1)) for s in conv.sessions for t in s.turns
                     for m in RELATIVE.finditer(t.content)]
            self.assertEqual([(r["turn_id"], r["expression"]) for r in conv.relative_times or []], found)
            for r in conv.relative_times or []:
                day = moment(turns[r["turn_id"]]).date()
                self.assertEqual([r["start"], r["end"]], [d.isoformat() for d in expected_span(r["expression"], day)])


if __name__ == "__main__":
    unittest.main()
