"""The module map (docs/design.md) is the package's tree: every module listed, none that is not there."""
import os
import re
import unittest

from tests.server import ROOT


def readme_modules():
    """Module paths (relative to flowmem/) named in docs/design.md's module map."""
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("## The module map", 1)[1].split("```", 2)[1]
    paths, package = set(), ""
    for line in block.splitlines():
        match = re.match(r"^(\s*)(\S+)", line)
        if not match or match.group(2) == "flowmem/":
            continue
        indent, name = len(match.group(1)), match.group(2)
        if name.endswith("/"):
            package = name
        elif name.endswith(".py"):
            paths.add((package if indent > 2 else "") + name)
    return paths


def package_modules():
    """Every module of flowmem/ but __init__.py and __main__.py, relative to flowmem/."""
    base = os.path.join(ROOT, "flowmem")
    out = set()
    for directory, _, files in os.walk(base):
        for name in files:
            if name.endswith(".py") and name not in ("__init__.py", "__main__.py"):
                out.add(os.path.relpath(os.path.join(directory, name), base).replace(os.sep, "/"))
    return out


class ReadmeMapTest(unittest.TestCase):
    def test_the_readme_map_lists_exactly_the_modules_of_the_package(self):
        listed, present = readme_modules(), package_modules()
        self.assertEqual(sorted(present - listed), [], "modules missing from the map in docs/design.md")
        self.assertEqual(sorted(listed - present), [], "modules in the map in docs/design.md that do not exist")


if __name__ == "__main__":
    unittest.main()
