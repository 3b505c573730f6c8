"""Sizes a reader can hold in their head: no module of flowmem/ or tools/ over 400 lines, no function over 60.

Past these a module is doing more than one job, or a function more than one step; split
it by job (the README's map says which module does what) rather than raise the limits.
tools/ is under the rule too (issue 26), but for tools/contract_check.py: one file on purpose,
independent of the clone, to be copied anywhere.
"""
import ast
import os
import unittest

from tests.server import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

OUTSIDE = ("tools/contract_check.py",)


def findings(top: str):
    """{path under the root: what is over the limits there} for the modules under `top`."""
    found = {}
    for directory, _, files in sorted(os.walk(os.path.join(ROOT, top))):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as f:
                over = oversized(f.read(), os.path.relpath(path, ROOT))
            if over:
                found[os.path.relpath(path, ROOT).replace(os.sep, "/")] = over
    return found


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
        self.assertEqual([line for over in findings("flowmem").values() for line in over], [])

    def test_no_module_or_function_of_tools_is_over_the_limits(self):
        self.assertEqual([line for path, over in findings("tools").items() if path not in OUTSIDE for line in over], [])

    def test_the_check_finds_a_long_module_and_a_long_function(self):
        body = "".join("    x = %d\n" % i for i in range(MAX_FUNCTION_LINES))
        source = "def long():\n" + body + "\n" * MAX_MODULE_LINES
        self.assertEqual(oversized(source, "m.py"),
                         ["m.py: %d lines" % (MAX_FUNCTION_LINES + 1 + MAX_MODULE_LINES),
                          "m.py:1: long() is %d lines" % (MAX_FUNCTION_LINES + 1)])
        self.assertEqual(oversized("def short():\n" + body[: -len("    x = 59\n")], "m.py"), [])


if __name__ == "__main__":
    unittest.main()
