"""The meaning probes (tools/evalkit/probes.py): honest data, and a runner that finds what the words find."""
import io
import json
import unittest
import unittest.mock
from contextlib import redirect_stdout

from flowmem.text.tokenize import STEMMED_STOPWORDS, query_terms, tokenize
from tools import probe_meaning
from tools.evalkit import probe_data, probes


def content_words(text):
    """The stemmed words of a stored message that are not stopwords."""
    return set(tokenize(text)) - STEMMED_STOPWORDS


def life_message(session, position):
    return probe_data.LIFE[session]["messages"][position - 1]


class ProbeDataTest(unittest.TestCase):
    def test_every_life_question_points_at_messages_that_exist(self):
        for q in probe_data.LIFE_QUESTIONS:
            with self.subTest(question=q.question):
                self.assertTrue(q.evidence)
                for session, position in q.evidence:
                    self.assertTrue(0 <= session < len(probe_data.LIFE))
                    self.assertTrue(1 <= position <= len(probe_data.LIFE[session]["messages"]))

    def test_paraphrased_questions_share_no_stemmed_content_word_with_their_evidence_and_the_others_do(self):
        for q in probe_data.LIFE_QUESTIONS:
            terms = set(query_terms(q.question))
            shared = set()
            for session, position in q.evidence:
                shared |= terms & content_words(life_message(session, position)["content"])
            with self.subTest(question=q.question):
                self.assertEqual(q.paraphrased, not shared, "shared: %s" % sorted(shared))

    def test_a_paraphrased_questions_words_are_not_beside_its_evidence_either_so_no_window_brings_it(self):
        for q in (q for q in probe_data.LIFE_QUESTIONS if q.paraphrased):
            terms = set(query_terms(q.question))
            for session, position in q.evidence:
                messages = probe_data.LIFE[session]["messages"]
                for near in range(max(1, position - 2), min(len(messages), position + 2) + 1):
                    with self.subTest(question=q.question, near=(session, near)):
                        self.assertEqual(terms & content_words(messages[near - 1]["content"]), set())

    def test_six_questions_use_the_memorys_words_and_ten_ask_in_others(self):
        self.assertEqual(sum(1 for q in probe_data.LIFE_QUESTIONS if not q.paraphrased), 6)
        self.assertEqual(sum(1 for q in probe_data.LIFE_QUESTIONS if q.paraphrased), 10)

    def test_no_pair_memory_shares_a_content_word_with_its_question(self):
        self.assertEqual(len(probe_data.PAIRS), 12)
        for pair in probe_data.PAIRS:
            with self.subTest(question=pair.question):
                self.assertEqual(set(query_terms(pair.question)) & content_words(pair.memory), set())

    def test_each_pair_probe_holds_the_filler_and_its_memory_where_it_says(self):
        self.assertEqual(len(probe_data.FILLER), 40)
        for index, pair in enumerate(probe_data.PAIRS):
            sessions, (session, position) = probe_data.pair_probe(index)
            contents = [m["content"] for s in sessions for m in s["messages"]]
            with self.subTest(question=pair.question):
                self.assertEqual(sorted(contents), sorted(probe_data.FILLER + [pair.memory]))
                self.assertEqual(sessions[session]["messages"][position - 1]["content"], pair.memory)

    def test_messages_are_timed_in_2026_and_in_order(self):
        stamps = [m["timestamp"] for s in probe_data.LIFE for m in s["messages"]]
        self.assertEqual(stamps, sorted(stamps))
        self.assertTrue(all(1767225600000 <= t < 1798761600000 for t in stamps))  # 2026, UTC


class ProbeRunnerTest(unittest.TestCase):
    def test_a_question_in_the_memorys_own_words_finds_its_evidence_in_the_first_three(self):
        question = next(q for q in probe_data.LIFE_QUESTIONS if q.question == "When is my Japan trip?")
        result = probes.run(life_questions=[question], pairs=[])
        row, = result["life"]["questions"]
        self.assertIsNotNone(row["rank"])
        self.assertLessEqual(row["rank"], 3)
        self.assertFalse(row["fallback"])
        self.assertEqual(result["life"]["own_words"]["in_first_3"], 1)

    def test_a_memory_factory_makes_each_probes_memory(self):
        made = []

        def factory(config):
            made.append(config.db)
            return probes.Memory(config)

        probes.run(memory_factory=factory, life_questions=probe_data.LIFE_QUESTIONS[:1], pairs=[0, 1])
        self.assertEqual(len(made), 3)
        self.assertEqual(len(set(made)), 3)

    def test_an_unknown_setting_is_refused_by_name(self):
        with self.assertRaises(probes.UnknownSetting) as caught:
            probes.run({"weight_no_such_thing": "0"}, life_questions=[], pairs=[])
        self.assertIn("weight_no_such_thing", str(caught.exception))
        with self.assertRaises(probes.UnknownSetting):
            probes.parse_settings(["weight_no_such_thing=0"])
        self.assertEqual(probes.parse_settings(["weight_bm25=0.2"]), {"weight_bm25": "0.2"})

    def test_the_tool_refuses_an_unknown_setting_with_exit_status_2(self):
        with redirect_stdout(io.StringIO()), unittest.mock.patch("sys.stderr", io.StringIO()) as err:
            self.assertEqual(probe_meaning.main(["--set", "weight_no_such_thing=0"]), 2)
        self.assertIn("weight_no_such_thing", err.getvalue())

    def test_the_result_is_plain_json_and_the_table_names_every_question(self):
        question = probe_data.LIFE_QUESTIONS[0]
        result = probes.run(life_questions=[question], pairs=[0])
        back = json.loads(json.dumps(result))
        self.assertEqual([r["question"] for r in back["life"]["questions"]], [question.question])
        self.assertEqual([r["question"] for r in back["pairs"]["questions"]], [probe_data.PAIRS[0].question])
        text = probe_meaning.render(result)
        self.assertIn(question.question, text)
        self.assertIn(probe_data.PAIRS[0].question, text)

if __name__ == "__main__":
    unittest.main()
