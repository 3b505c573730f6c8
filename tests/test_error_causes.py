"""An error raised while handling another names it as its cause: `raise ... from e`.

Without `from`, Python reports the second error as having happened "during handling"
of the first, as if flowmem had failed twice; with `from e` the traceback says which
error became which, and `from None` leaves out a cause that would only confuse (the
thousands of frames of a RecursionError). Every module under flowmem/ is parsed and
each `raise X(...)` inside an `except` block must say `from`.
"""
import ast
import os
import sqlite3
import tempfile
import unittest

from flowmem.config import load
from flowmem.decoding import decode_json_object
from flowmem.errors import BadRequest, InvalidField, StoreError
from flowmem.memory import Memory, init
from flowmem.validation import parse_add
from tests.server import ROOT


def raises_without_cause(source: str):
    """(line, code) of every `raise X(...)` inside an except block of `source` that has no `from`."""
    out = []
    for handler in ast.walk(ast.parse(source)):
        if isinstance(handler, ast.ExceptHandler):
            for node in ast.walk(handler):
                if isinstance(node, ast.Raise) and node.exc is not None and node.cause is None:
                    out.append((node.lineno, ast.unparse(node)))
    return out


class RaiseFromTest(unittest.TestCase):
    def test_every_raise_inside_an_except_block_names_its_cause(self):
        found = []
        for directory, _, files in os.walk(os.path.join(ROOT, "flowmem")):
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, ROOT).replace(os.sep, "/")
                if not name.endswith(".py"):
                    continue
                with open(path, encoding="utf-8") as f:
                    found += ["%s:%d: %s" % (relative, line, code) for line, code in raises_without_cause(f.read())]
        if found:
            self.fail("raise inside an except block without `from e` (or `from None`):\n" + "\n".join(found))

    def test_the_check_finds_a_bare_raise_and_passes_raise_from(self):
        bare = "try:\n    pass\nexcept ValueError as e:\n    raise KeyError('x')\n"
        self.assertEqual(len(raises_without_cause(bare)), 1)
        for source in ("try:\n    pass\nexcept ValueError as e:\n    raise KeyError('x') from e\n",
                       "try:\n    pass\nexcept ValueError:\n    raise KeyError('x') from None\n",
                       "try:\n    pass\nexcept ValueError:\n    raise\n"):
            self.assertEqual(raises_without_cause(source), [])


class BodyErrorCauseTest(unittest.TestCase):
    """The body decoder (validation.py, shared by HTTP and CLI) says why, and from what."""

    def test_a_body_that_is_not_utf8_names_the_decode_error(self):
        with self.assertRaises(BadRequest) as cm:
            decode_json_object(b'{"query": "\xff"}')
        self.assertIsInstance(cm.exception.__cause__, UnicodeDecodeError)

    def test_a_body_that_is_not_json_names_the_parse_error(self):
        with self.assertRaises(BadRequest) as cm:
            decode_json_object(b'{"query": NaN}')
        self.assertIsInstance(cm.exception.__cause__, ValueError)

    def test_a_body_nested_too_deeply_hides_the_recursion(self):
        with self.assertRaises(BadRequest) as cm:
            decode_json_object(b"[" * 100000 + b"]" * 100000)
        self.assertTrue(cm.exception.reason.startswith("request body is nested too deeply"), cm.exception.reason)
        self.assertIsNone(cm.exception.__cause__)
        self.assertTrue(cm.exception.__suppress_context__)

    def test_an_id_that_is_not_unicode_names_the_encode_error(self):
        body = {"request_id": "r\udcff", "user_id": "u", "session_id": "s", "messages": [{"role": "user",
                                                                                         "content": "x"}]}
        with self.assertRaises(InvalidField) as cm:
            parse_add(body)
        self.assertIsInstance(cm.exception.__cause__, UnicodeEncodeError)


class StorageErrorCauseTest(unittest.TestCase):
    """The storage layer's errors name the SQLite or OS error they come from."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="flowmem-causes-")
        self.addCleanup(tmp.cleanup)
        self.path = os.path.join(tmp.name, "junk.db")
        with open(self.path, "wb") as f:
            f.write(b"this is not sqlite" * 100)

    def test_a_file_that_is_not_a_database_names_sqlites_error(self):
        with self.assertRaises(StoreError) as cm:
            Memory(load({"db": self.path}, environ={}))
        self.assertIsInstance(cm.exception.__cause__, sqlite3.DatabaseError)

    def test_init_over_an_existing_file_names_the_os_error(self):
        with self.assertRaises(StoreError) as cm:
            init(load({"db": self.path}, environ={}))
        self.assertIsInstance(cm.exception.__cause__, FileExistsError)


if __name__ == "__main__":
    unittest.main()
