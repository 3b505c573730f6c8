"""docs/api.md names every kind of fallback a search marks its items with, so a caller knows what to drop.

It named only `"fallback": "latest_session"` while items found by meaning alone carry
`"fallback": "meaning"`. The kinds here are those real searches return, not a list kept
beside the code: a question that matches no word but is near in meaning, and one whose
words mean nothing to flowmem.
"""
import os
import re
import unittest

from tests.helpers import DAY_MS, T0, MemoryTestCase, add_body
from tests.server import ROOT


class FallbackDocumentedTest(MemoryTestCase):
    def test_docs_api_md_names_each_fallback_kind_a_search_returns(self):
        self.memory.add(add_body("u1", "s1", ["Priya: we adopted a puppy", "Dana: so cute"], "r1", T0))
        self.memory.add(add_body("u1", "s2", ["Dana: I started a new job"], "r2", T0 + DAY_MS))
        kinds = {item["signals"]["fallback"] for question in ("Did they get a dog?", "qwzx vbnq?")
                 for item in self.search(question, top_k=3) if "fallback" in item["signals"]}
        self.assertEqual(len(kinds), 2, kinds)  # one kind from each question
        with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
            text = " ".join(f.read().split())  # a mark may be wrapped across lines
        for kind in sorted(kinds):
            with self.subTest(kind=kind):
                self.assertTrue(re.search(r'"fallback": ?"%s"' % kind, text), "docs/api.md never names %r" % kind)


if __name__ == "__main__":
    unittest.main()
