"""The synthetic suite (tools/evalkit/synthetic/): deterministic, and its labels are true.

Relative-time labels are recomputed here from the expression text, independently of
the generator's resolver, with the conventions of the generator's module docstring.
"""
from __future__ import annotations

import calendar
import datetime
import hashlib
import json
import os
import re
import tempfile
import unittest
from typing import Dict, List, Optional, Tuple

from tools.evalkit.dataset import Conversation, Dataset, load_json, to_json
from tools.evalkit.synthetic import HARD_FIRST, dumps, generate

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(REPO, "fixtures", "synthetic-small.json")
CLI = ["-m", "tools.synthetic"]  # run from anywhere with the clone on PYTHONPATH
CATEGORIES = ["single-hop", "multi-session", "knowledge-update", "temporal-relative", "temporal-absolute",
              "multiple-choice", "paraphrase", "unanswerable", "typo", "period", "update-cue"]

EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ZH_WEEKDAYS = "一二三四五六日"
EN_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
VAGUE = {"recently", "the other day", "a while ago", "not long ago", "some time ago",
         "最近", "前几天", "前阵子", "不久前"}

# Anything that looks like a relative time expression; a turn that has one must be labelled.
EN_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|\w+ days? ago|in \w+ days|\w+ weeks? ago|"
    r"(last|next|this) (week|weekend|month|year|%s)|recently|the other day|a while ago|not long ago|"
    r"some time ago)\b" % "|".join(EN_WEEKDAYS), re.IGNORECASE)
ZH_TIME_WORDS = ["昨天", "前天", "今天", "明天", "后天", "天前", "天后", "上周", "下周", "这周", "本周", "上个月",
                 "下个月", "去年", "明年", "今年", "最近", "前几天", "前阵子", "不久前"]


def session_day(conv: Conversation, turn_id: str) -> datetime.date:
    stamp = conv.turns()[turn_id].timestamp_ms
    return datetime.datetime.fromtimestamp(stamp / 1000, tz=datetime.timezone.utc).date()


def iso_week(day: datetime.date) -> Tuple[datetime.date, datetime.date]:
    year, week, _ = day.isocalendar()
    return datetime.date.fromisocalendar(year, week, 1), datetime.date.fromisocalendar(year, week, 7)


def whole_month(year: int, month: int) -> Tuple[datetime.date, datetime.date]:
    return datetime.date(year, month, 1), datetime.date(year, month, calendar.monthrange(year, month)[1])


def expected_span(expression: str, day: datetime.date) -> Optional[Tuple[datetime.date, datetime.date]]:
    """The span an expression said on `day` denotes, or None for an expression this test does not know."""
    one = datetime.timedelta(days=1)
    week = datetime.timedelta(days=7)
    e = expression.lower()
    offsets = {"yesterday": -1, "the day before yesterday": -2, "tomorrow": 1, "the day after tomorrow": 2,
               "昨天": -1, "前天": -2, "明天": 1, "后天": 2}
    if e in offsets:
        return day + offsets[e] * one, day + offsets[e] * one
    m = re.fullmatch(r"(\w+) days ago|(\d+)天前", e)
    if m:
        n = int(m.group(2) or EN_COUNTS.get(m.group(1)) or m.group(1))
        return day - n * one, day - n * one
    m = re.fullmatch(r"in (\d+) days|(\d+)天后", e)
    if m:
        n = int(m.group(1) or m.group(2))
        return day + n * one, day + n * one
    weeks = {"last week": -1, "next week": 1, "上周": -1, "下周": 1, "two weeks ago": -2, "three weeks ago": -3}
    if e in weeks:
        return iso_week(day + weeks[e] * week)
    if e in ("this weekend", "这周末"):
        monday, sunday = iso_week(day)
        return sunday - one, sunday
    if e in ("last month", "上个月"):
        first = day.replace(day=1) - one
        return whole_month(first.year, first.month)
    if e in ("next month", "下个月"):
        after = day.replace(day=28) + 4 * one
        return whole_month(after.year, after.month)
    if e in ("last year", "去年"):
        return datetime.date(day.year - 1, 1, 1), datetime.date(day.year - 1, 12, 31)
    m = re.fullmatch(r"(last|next) (%s)" % "|".join(EN_WEEKDAYS), e)
    if m:
        step = -one if m.group(1) == "last" else one
        d = day + step
        while d.weekday() != EN_WEEKDAYS.index(m.group(2)):
            d += step
        return d, d
    m = re.fullmatch(r"(上|下)周([%s])" % ZH_WEEKDAYS, e)
    if m:
        monday, _ = iso_week(day + (-week if m.group(1) == "上" else week))
        d = monday + ZH_WEEKDAYS.index(m.group(2)) * one
        return d, d
    return None


def content_words(conv: Conversation, text: str) -> List[str]:
    """Words (en) or character pairs (zh) of a turn, less its speaker label."""
    body = re.split(r"[:：]", text, maxsplit=1)[1]
    if conv.language == "zh":
        return [body[i:i + 2] for i in range(len(body) - 1) if re.fullmatch(r"[\u4e00-\u9fff]{2}", body[i:i + 2])]
    return [w for w in re.findall(r"[A-Za-z']+", body.lower()) if len(w) >= 4]


class SyntheticTestCase(unittest.TestCase):
    dataset: Dataset

    @classmethod
    def setUpClass(cls) -> None:
        cls.dataset = generate(1, "small")

    def questions(self, category: Optional[str] = None):
        for conv in self.dataset.conversations:
            for q in conv.questions:
                if category is None or q.category == category:
                    yield conv, q


class DeterminismTest(SyntheticTestCase):
    def test_two_generations_are_equal(self) -> None:
        again = generate(1, "small")
        self.assertEqual(self.dataset, again)
        self.assertEqual(dumps(self.dataset), dumps(again))

    def test_another_seed_gives_another_suite(self) -> None:
        self.assertNotEqual(dumps(self.dataset), dumps(generate(2, "small")))

    def test_committed_fixture_is_the_generator_output(self) -> None:
        with open(FIXTURE, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text == dumps(self.dataset),
                        "fixtures/synthetic-small.json is stale: regenerate it with "
                        "python -m tools.synthetic --seed 1 --size small --out fixtures/synthetic-small.json")
        self.assertEqual(load_json(FIXTURE).conversations, self.dataset.conversations)

    def test_json_round_trip(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "suite.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(dumps(self.dataset))
            self.assertEqual(to_json(load_json(path)), to_json(self.dataset))

    def test_medium_is_about_four_times_small(self) -> None:
        medium = generate(1, "medium")
        small_q = sum(len(c.questions) for c in self.dataset.conversations)
        medium_q = sum(len(c.questions) for c in medium.conversations)
        self.assertTrue(3 * small_q <= medium_q <= 5 * small_q, (small_q, medium_q))
        self.assertEqual(medium.conversations[:4], self.dataset.conversations[:4])  # small's en users lead medium


class ShapeTest(SyntheticTestCase):
    def test_size(self) -> None:
        users = self.dataset.conversations
        self.assertTrue(8 <= len(users) <= 10)
        self.assertTrue(150 <= sum(len(c.questions) for c in users) <= 300)
        self.assertLess(len(dumps(self.dataset).encode("utf-8")), 600_000)

    def test_english_and_chinese_users(self) -> None:
        languages = [c.language for c in self.dataset.conversations]
        self.assertGreaterEqual(languages.count("en"), 2)
        self.assertGreaterEqual(languages.count("zh"), 2)
        for conv in self.dataset.conversations:
            self.assertRegex(conv.user_id, r"^syn-%s-\d\d$" % conv.language)
        for conv in self.dataset.conversations:
            if conv.language != "zh":
                continue
            for session in conv.sessions:
                for turn in session.turns:
                    self.assertNotIn(" ", turn.content, turn.turn_id)
                    self.assertRegex(turn.content, r"[\u4e00-\u9fff]")
            for q in conv.questions:
                self.assertNotIn(" ", q.question)

    def test_ids(self) -> None:
        for conv in self.dataset.conversations:
            for s_no, session in enumerate(conv.sessions, 1):
                self.assertEqual(session.session_id, "%s/s%02d" % (conv.user_id, s_no))
                for t_no, turn in enumerate(session.turns, 1):
                    self.assertEqual(turn.turn_id, "S%d:%d" % (s_no, t_no))
            for q_no, q in enumerate(conv.questions, 1):
                self.assertEqual(q.qid, "%s/q%03d" % (conv.user_id, q_no))

    def test_sessions_turns_and_speakers(self) -> None:
        for conv in self.dataset.conversations:
            labels: Dict[str, set] = {"user": set(), "assistant": set()}
            stamps = []
            for session in conv.sessions:
                self.assertTrue(8 <= len(session.turns) <= 20, session.session_id)
                self.assertEqual(len({t.timestamp_ms for t in session.turns}), 1, session.session_id)
                stamps.append(session.turns[0].timestamp_ms)
                for i, turn in enumerate(session.turns):
                    self.assertEqual(turn.role, "user" if i % 2 == 0 else "assistant")
                    m = re.match(r"^([^\s:：]+)(: |：)", turn.content)
                    self.assertIsNotNone(m, turn.content)
                    labels[turn.role].add(m.group(1))
            self.assertEqual(len(labels["user"]), 1)
            self.assertEqual(len(labels["assistant"]), 1)
            self.assertNotEqual(labels["user"], labels["assistant"])
            self.assertEqual(stamps, sorted(stamps))
            days = [datetime.datetime.fromtimestamp(s / 1000, tz=datetime.timezone.utc).date() for s in stamps]
            self.assertTrue(all(d.year == 2023 for d in days))
            self.assertGreaterEqual((days[-1] - days[0]).days, 21, "sessions span several weeks")


class GoldTest(SyntheticTestCase):
    def test_every_category_present_in_both_languages(self) -> None:
        seen = {(c.language, q.category) for c, q in self.questions()}
        for language in ("en", "zh"):
            for category in CATEGORIES:
                self.assertIn((language, category), seen)
        self.assertEqual({q.category for _, q in self.questions()}, set(CATEGORIES))

    def test_gold_and_label_turns_exist(self) -> None:
        for conv, q in self.questions():
            turns = conv.turns()
            self.assertTrue(q.gold, q.qid)
            self.assertEqual(len(q.gold), len(set(q.gold)), q.qid)
            for turn_id in q.gold:
                self.assertIn(turn_id, turns, q.qid)
            for key in ("new", "old"):
                for turn_id in (q.labels or {}).get(key, []):
                    self.assertIn(turn_id, turns, q.qid)
            for r in conv.relative_times or []:
                self.assertIn(r["turn_id"], turns)

    def test_single_hop_and_temporal_have_one_gold_turn(self) -> None:
        for _, q in self.questions():
            if q.category in ("single-hop", "paraphrase", "temporal-relative", "temporal-absolute", "multiple-choice",
                              "typo", "period"):
                self.assertEqual(len(q.gold), 1, q.qid)

    def test_multi_session_gold_spans_two_sessions(self) -> None:
        for _, q in self.questions("multi-session"):
            self.assertEqual(len(q.gold), 2, q.qid)
            self.assertEqual(len({g.split(":")[0] for g in q.gold}), 2, q.qid)
            self.assertTrue(q.answer)

    def test_knowledge_update(self) -> None:
        for conv, q in self.questions("knowledge-update"):
            new, old = q.labels["new"], q.labels["old"]
            self.assertEqual(q.gold, new + old, q.qid)
            self.assertLess(int(old[0][1:].split(":")[0]), int(new[0][1:].split(":")[0]), "old comes first")
            turns = conv.turns()
            new_text, old_text = turns[new[0]].content, turns[old[0]].content
            shared = set(content_words(conv, new_text)) & set(content_words(conv, old_text))
            self.assertTrue(shared, "old and new turns share no words: %s / %s" % (old_text, new_text))
            cue = r"(changed to|moved to|no longer|postponed to|instead|switched)" if conv.language == "en" \
                else r"(改成|搬到|不再|推迟到|换成|其实)"
            self.assertRegex(new_text, cue)
            if q.answer[:4].isdigit():
                continue  # a wedding date: written as "17 June" / "6月17日"
            self.assertIn(q.answer, new_text)
            self.assertNotIn(q.answer, old_text)

    def test_single_hop_answer_is_in_its_turn(self) -> None:
        for conv, q in self.questions():
            if q.category in ("single-hop", "paraphrase", "multiple-choice", "typo", "period"):
                self.assertIn(q.answer, conv.turns()[q.gold[0]].content, q.qid)

    def test_paraphrase_points_at_its_plain_question(self) -> None:
        for conv, q in self.questions("paraphrase"):
            if "relation" in q.labels:  # the harder users' cases name the relation of their words instead
                self.assertEqual(list(q.labels), ["relation"], q.qid)
                continue
            plain = [p for p in conv.questions if p.qid == q.labels["plain_qid"]]
            self.assertEqual(len(plain), 1, q.qid)
            self.assertEqual(plain[0].category, "single-hop")
            self.assertEqual((plain[0].gold, plain[0].answer), (q.gold, q.answer))
            self.assertNotEqual(plain[0].question, q.question)

    def test_multiple_choice_options(self) -> None:
        for conv, q in self.questions("multiple-choice"):
            self.assertTrue(3 <= len(q.options) <= 5, q.qid)
            self.assertEqual(q.options.count(q.answer), 1, q.qid)
            self.assertEqual(len(set(q.options)), len(q.options), q.qid)
            others = [t.content for s in conv.sessions for t in s.turns if t.turn_id not in q.gold]
            for option in q.options:
                if option != q.answer:
                    self.assertTrue(any(option in text for text in others), "%s: %r never mentioned" % (q.qid, option))
        positions = [q.options.index(q.answer) for _, q in self.questions("multiple-choice")]
        self.assertGreater(len(set(positions)), 2, "the right option moves around")

    def test_unanswerable(self) -> None:
        for conv, q in self.questions("unanswerable"):
            self.assertEqual(q.labels, {"unanswerable": True})
            self.assertIn(q.answer, ("Not mentioned in the conversation.", "对话中没有提到。"))
            # gold is exactly the set of turns that name some entity of the question
            if conv.language == "en":
                names = re.findall(r"(?<=\s)[A-Z][a-z]+", q.question)
            else:
                names = [q.question[i:i + n] for n in (2, 3) for i in range(len(q.question) - n + 1)]
            turns = [t for s in conv.sessions for t in s.turns]
            matches = [[t.turn_id for t in turns if n in t.content] for n in names]
            self.assertIn(q.gold, matches, q.qid)

    def test_temporal_answers(self) -> None:
        iso = r"\d{4}-\d\d-\d\d"
        for conv, q in self.questions():
            if q.category == "temporal-relative":
                self.assertRegex(q.answer, r"^%s(/%s)?$" % (iso, iso))
                labelled = [r for r in conv.relative_times if r["turn_id"] == q.gold[0]]
                self.assertEqual(len(labelled), 1, q.qid)
                r = labelled[0]
                self.assertEqual(q.answer, r["start"] if r["start"] == r["end"] else "%s/%s" % (r["start"], r["end"]))
            if q.category == "temporal-absolute" and q.answer[:1].isdigit():
                self.assertRegex(q.answer, r"^%s(/%s)?$" % (iso, iso))


class RelativeTimeTest(SyntheticTestCase):
    def test_labels_match_an_independent_resolution(self) -> None:
        checked = 0
        for conv in self.dataset.conversations:
            for r in conv.relative_times:
                text = conv.turns()[r["turn_id"]].content
                self.assertIn(r["expression"], text)
                if r["start"] is None:
                    self.assertIsNone(r["end"])
                    self.assertIn(r["expression"], VAGUE)
                    continue
                span = expected_span(r["expression"], session_day(conv, r["turn_id"]))
                self.assertIsNotNone(span, "unknown expression %r" % r["expression"])
                self.assertEqual((r["start"], r["end"]), (span[0].isoformat(), span[1].isoformat()),
                                 "%s %s %r" % (conv.user_id, r["turn_id"], r["expression"]))
                checked += 1
        self.assertGreater(checked, 30)

    def test_simple_cases(self) -> None:
        day = datetime.date(2023, 5, 10)  # a Wednesday
        self.assertEqual(expected_span("yesterday", day), (datetime.date(2023, 5, 9),) * 2)
        self.assertEqual(expected_span("last week", day), (datetime.date(2023, 5, 1), datetime.date(2023, 5, 7)))
        self.assertEqual(expected_span("last Wednesday", day), (datetime.date(2023, 5, 3),) * 2)
        self.assertEqual(expected_span("next Wednesday", day), (datetime.date(2023, 5, 17),) * 2)
        self.assertEqual(expected_span("上周五", day), (datetime.date(2023, 5, 5),) * 2)
        self.assertEqual(expected_span("下周二", day), (datetime.date(2023, 5, 16),) * 2)
        self.assertEqual(expected_span("last month", day), (datetime.date(2023, 4, 1), datetime.date(2023, 4, 30)))
        self.assertEqual(expected_span("this weekend", day), (datetime.date(2023, 5, 13), datetime.date(2023, 5, 14)))

    def test_every_time_expression_is_labelled(self) -> None:
        for conv in self.dataset.conversations:
            labelled = {r["turn_id"] for r in conv.relative_times}
            for session in conv.sessions:
                for turn in session.turns:
                    if conv.language == "zh":
                        found = [w for w in ZH_TIME_WORDS if w in turn.content]
                    else:
                        found = [m.group(0) for m in EN_TIME_WORDS.finditer(turn.content)]
                    if found:
                        self.assertIn(turn.turn_id, labelled, "%s %s: %s" % (conv.user_id, turn.turn_id, turn.content))

    def test_filler_and_vague_expressions(self) -> None:
        evidence = {(c.user_id, g) for c, q in self.questions() for g in q.gold}
        resolved = [(c.user_id, r) for c in self.dataset.conversations for r in c.relative_times if r["start"]]
        in_filler = [r for user, r in resolved if (user, r["turn_id"]) not in evidence]
        share = len(in_filler) / len(resolved)
        self.assertTrue(0.2 <= share <= 0.45, share)
        for conv in self.dataset.conversations:
            self.assertTrue(any(r["start"] is None for r in conv.relative_times), conv.user_id)

# sha256 of the original users' JSON (sorted keys) as committed before the harder groups were appended.
ORIGINAL_USERS_SHA256 = "4b6cf26d4159e76a21ae0f46f6e45ed3cf2178ecbd21f5d7ef68a25616098380"


def edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


class HarderGroupsTest(SyntheticTestCase):
    """The groups of tools/evalkit/synthetic_hard.py: appended users, and labels that are true."""

    def test_the_original_users_are_unchanged_and_the_harder_users_come_after_them(self) -> None:
        users = to_json(self.dataset)["conversations"]
        original = [u for u in users if int(u["user_id"][-2:]) < HARD_FIRST]
        text = json.dumps(original, ensure_ascii=False, sort_keys=True).encode("utf-8")
        self.assertEqual(hashlib.sha256(text).hexdigest(), ORIGINAL_USERS_SHA256)
        self.assertEqual(users[:len(original)], original)
        self.assertEqual([u["user_id"] for u in users[len(original):]], ["syn-en-51", "syn-zh-51"])

    def test_a_period_question_has_its_evidence_inside_the_period_and_same_worded_distractors_outside(self):
        for conv, q in self.questions("period"):
            start, end = (datetime.date.fromisoformat(d) for d in q.labels["period"])
            self.assertTrue(start <= session_day(conv, q.gold[0]) <= end, q.qid)
            evidence = conv.turns()[q.gold[0]].content
            head, tail = evidence.split(q.answer)
            same = [t for s in conv.sessions for t in s.turns
                    if t.turn_id != q.gold[0] and t.content.startswith(head) and t.content.endswith(tail)]
            self.assertGreaterEqual(len(same), 2, q.qid)
            for turn in same:
                self.assertFalse(start <= session_day(conv, turn.turn_id) <= end, (q.qid, turn.turn_id))

    def test_an_update_cue_question_has_its_new_state_after_the_old_one(self) -> None:
        for conv, q in self.questions("update-cue"):
            new, old = q.labels["new"], q.labels["old"]
            self.assertEqual(q.gold, new + old, q.qid)
            self.assertLess(session_day(conv, old[0]), session_day(conv, new[0]), q.qid)
            self.assertIn(q.answer, conv.turns()[new[0]].content, q.qid)
            self.assertNotIn(q.answer, conv.turns()[old[0]].content, q.qid)

    def test_a_typo_question_misspells_a_word_of_its_evidence(self) -> None:
        for conv, q in self.questions("typo"):
            evidence = conv.turns()[q.gold[0]].content
            if conv.language == "zh":
                said = set(content_words(conv, evidence))
                asked = content_words(conv, "q：" + q.question)
                wrong = [w for w in asked if w not in said and any(
                    sum(a != b for a, b in zip(w, s)) == 1 for s in said)]
            else:
                said = set(re.findall(r"[a-z]+", evidence.lower()))
                wrong = [w for w in re.findall(r"[a-z]+", q.question.lower())
                         if w not in said and any(0 < edit_distance(w, s) <= 2 for s in said if len(s) > 4)]
            self.assertTrue(wrong, q.qid)


if __name__ == "__main__":
    unittest.main()
