"""The layers: a flowmem module imports only from its own layer or lower ones.

Lowest first: the foundation (flowmem.errors, and the package itself: its version);
text; storage; retrieval; the service (config, validation, memory, cli, __main__,
http, and any other top-level module). Every module under flowmem/ is parsed with
ast, each flowmem import in it (absolute or relative, at any depth of the code) is
resolved to the module it names, and one that reaches a higher layer fails the test,
naming the module, the line and the import.
"""
import ast
import os
import unittest
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tests.server import ROOT

LAYERS = ("foundation", "text", "storage", "retrieval", "service")
# The first name under flowmem/ of each module below the service; everything else is the service.
LAYER_OF_NAME = {"errors": 0, "text": 1, "storage": 2, "retrieval": 3}


def layer(module: str) -> int:
    """The layer of a module named `flowmem...` (its index in LAYERS)."""
    parts = module.split(".")
    if parts == ["flowmem"]:
        return 0  # flowmem/__init__.py: the version, and Memory and Client loaded by name at first use
        # (importlib, which this parse does not follow: the package stays importable by every layer)
    return LAYER_OF_NAME.get(parts[1], len(LAYERS) - 1)


def modules(root: str = ROOT) -> Dict[str, str]:
    """{module name: path} of every module under `root`/flowmem (the checkout's by default)."""
    out = {}
    for directory, _, files in os.walk(os.path.join(root, "flowmem")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported(module: str, is_package: bool, tree: ast.AST, known: Set[str]) -> Iterator[Tuple[ast.stmt, str]]:
    """(import statement, flowmem module it names) for every flowmem import in `module`'s code."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "flowmem" or alias.name.startswith("flowmem."):
                    yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node)
            if base is None:
                continue
            for alias in node.names:
                # `from flowmem.storage import store` names a module; `from flowmem import __version__` a value.
                candidate = base + "." + alias.name
                yield node, candidate if candidate in known else base


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> Optional[str]:
    """The flowmem module a `from ... import` statement imports from, or None if not flowmem."""
    if node.level == 0:
        name = node.module or ""
        return name if name == "flowmem" or name.startswith("flowmem.") else None
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = package[:len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def violations(module: str, is_package: bool, source: str, known: Set[str]) -> List[str]:
    """Every import in `source` (the code of `module`) of a layer above the module's own."""
    out = []
    for node, target in imported(module, is_package, ast.parse(source), known):
        if layer(target) > layer(module):
            out.append("%s (%s) imports %s (%s) at line %d: %s" % (
                module, LAYERS[layer(module)], target, LAYERS[layer(target)], node.lineno, ast.unparse(node)))
    return out


class LayersTest(unittest.TestCase):
    def test_no_module_imports_a_higher_layer(self):
        known = set(modules())
        found = []
        for module, path in sorted(modules().items()):
            with open(path, encoding="utf-8") as f:
                found += violations(module, path.endswith("__init__.py"), f.read(), known)
        if found:
            self.fail("a lower layer imports a higher one:\n" + "\n".join(found))

    def test_every_layer_has_modules(self):
        self.assertEqual({LAYERS[layer(m)] for m in modules()}, set(LAYERS))

    def test_an_import_of_a_higher_layer_is_found_however_it_is_written(self):
        known = set(modules())
        for source in ("from ..storage import store", "from ..storage.store import Store", "import flowmem.storage",
                       "from flowmem.storage.rows import ViewRow", "from flowmem import memory",
                       "def f():\n    from .. import config\n"):
            with self.subTest(source=source):
                self.assertEqual(len(violations("flowmem.text.tokenize", False, source, known)), 1)

    def test_imports_of_the_same_or_a_lower_layer_pass(self):
        known = set(modules())
        for module, source in (("flowmem.text.tokenize", "from .stem import stem"),
                               ("flowmem.text.tokenize", "from .. import errors"),
                               ("flowmem.text", "from . import stem"),
                               ("flowmem.storage.store", "from ..text.features import derive"),
                               ("flowmem.retrieval.pipeline", "from ..storage.store import Store"),
                               ("flowmem.http.server", "from .. import __version__"),
                               ("flowmem.memory", "from .retrieval.pipeline import search")):
            with self.subTest(module=module, source=source):
                self.assertEqual(violations(module, module == "flowmem.text", source, known), [])


if __name__ == "__main__":
    unittest.main()
