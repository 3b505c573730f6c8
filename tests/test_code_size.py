"""Sizes a reader can hold in their head: no module of flowmem/ over 400 lines, no function over 60.

Past these a module is doing more than one job, or a function more than one step; split
it by job (the README's map says which module does what) rather than raise the limits.
"""
import ast
import os
import unittest

from tests.server import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def oversized(source: str, name: str):
    """What in `source` (the module called `name`) is over the limits, as readable lines."""
    found = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append("%s: %d lines" % (name, lines))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append("%s:%d: %s() is %d lines" % (name, node.lineno, node.name, length))
    return found


class CodeSizeTest(unittest.TestCase):
    def test_no_module_or_function_of_flowmem_is_over_the_limits(self):
        found = []
        for directory, _, files in sorted(os.walk(os.path.join(ROOT, "flowmem"))):
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as f:
                    found += oversized(f.read(), os.path.relpath(path, ROOT))
        self.assertEqual(found, [])

    def test_the_check_finds_a_long_module_and_a_long_function(self):
        body = "".join("    x = %d\n" % i for i in range(MAX_FUNCTION_LINES))
        source = "def long():\n" + body + "\n" * MAX_MODULE_LINES
        self.assertEqual(oversized(source, "m.py"),
                         ["m.py: %d lines" % (MAX_FUNCTION_LINES + 1 + MAX_MODULE_LINES),
                          "m.py:1: long() is %d lines" % (MAX_FUNCTION_LINES + 1)])
        self.assertEqual(oversized("def short():\n" + body[: -len("    x = 59\n")], "m.py"), [])


if __name__ == "__main__":
    unittest.main()
