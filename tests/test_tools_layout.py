"""tools/ has a shape: commands run as modules of the clone, and share code only through its kits.

A tool is run from the clone's root as `python3 -m tools.NAME` (or from anywhere with the
clone on PYTHONPATH), so no tool puts anything on sys.path. A command (a module of tools/
that runs as a program) imports flowmem, the kits (tools/benchkit/ for the benches,
tools/evalkit/ for evaluation and tuning, tools/buildkit/ for the data builders) and
tools/data_paths.py, never another command:
what two commands share moves into a kit. The docs and the Makefile run tools as they run.
"""
import ast
import os
import re
import unittest

from tests.server import ROOT

TOOLS = os.path.join(ROOT, "tools")

# The libraries a command may import; every other module of tools/ is a command.
KITS = ("benchkit", "evalkit", "buildkit", "data_paths")

# Still run by their path, each for its reason.
BY_PATH = {
    # independent of the clone on purpose: it checks any server against the contract alone
    "contract_check": "independent",
}



def modules():
    """(dotted name under tools, path) of every module of tools/ and its kits."""
    for directory, _, files in sorted(os.walk(TOOLS)):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, TOOLS)[:-len(".py")].split(os.sep)
            yield ".".join(p for p in parts if p != "__init__"), path


def changes_sys_path(tree: ast.AST) -> bool:
    """Whether the module calls sys.path.insert/append/extend or assigns to sys.path."""
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value if node.func.attr in ("insert", "append", "extend") else None
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if (isinstance(target, ast.Attribute) and target.attr == "path" and isinstance(target.value, ast.Name)
                and target.value.id == "sys"):
            return True
    return False


def imported_tools(tree: ast.AST):
    """The modules of tools/ a module imports, as their first name under tools (`bench`, `evalkit`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "tools":
                yield from (alias.name for alias in node.names)
            elif node.module.startswith("tools."):
                yield node.module.split(".")[1]
        elif isinstance(node, ast.Import):
            yield from (a.name.split(".")[1] for a in node.names if a.name.startswith("tools."))


def parsed(path: str) -> ast.AST:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


class ToolsLayoutTest(unittest.TestCase):
    def test_no_tool_puts_anything_on_sys_path(self):
        patching = [name for name, path in modules()
                    if name.split(".")[0] not in BY_PATH and changes_sys_path(parsed(path))]
        self.assertEqual(patching, [])

    def test_a_command_imports_only_flowmem_and_the_kits(self):
        found = []
        for name, path in modules():
            top = name.split(".")[0]
            if top in KITS or top in BY_PATH or not top:
                continue
            found += ["%s imports tools.%s" % (name, other) for other in imported_tools(parsed(path))
                      if other not in KITS and other != top]  # a command's package imports its own modules
        self.assertEqual(found, [])

    def test_a_kit_imports_no_command(self):
        found = []
        for name, path in modules():
            if name.split(".")[0] in KITS:
                found += ["%s imports tools.%s" % (name, other) for other in imported_tools(parsed(path))
                          if other not in KITS]
        self.assertEqual(found, [])

    def test_the_docs_and_the_makefile_run_each_tool_as_it_runs(self):
        paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "Makefile")] + sorted(
            os.path.join(ROOT, "docs", n) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
        known = {name for name, _ in modules()}
        wrong = []
        for path in paths:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            where = os.path.relpath(path, ROOT)
            for name in re.findall(r"(?:python3?|\$\(PYTHON\))\s+(?:-\w+\s+)*tools/(\w+)\.py", text):
                if name not in BY_PATH:
                    wrong.append("%s: tools/%s.py by path (it runs as python3 -m tools.%s)" % (where, name, name))
            for name in re.findall(r"-m\s+tools\.([\w.]+)", text):
                if name.rstrip(".") not in known:
                    wrong.append("%s: -m tools.%s is no module of tools/" % (where, name))
        self.assertEqual(wrong, [])

    def test_the_checks_see_a_patch_and_an_import_of_a_command(self):
        tree = ast.parse("import sys\nsys.path.insert(0, 'x')\nfrom tools import bench\nfrom tools.soak import X\n")
        self.assertTrue(changes_sys_path(tree))
        self.assertEqual(list(imported_tools(tree)), ["bench", "soak"])
        self.assertFalse(changes_sys_path(ast.parse("import sys\nprint(sys.path)\n")))


if __name__ == "__main__":
    unittest.main()
