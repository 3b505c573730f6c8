"""No import circle among flowmem's modules: a module never imports, however indirectly, one that imports it.

A circle is the sign of a type living in the module of its first algorithm (two modules that
each need the other's types); it also hides behind function-level imports and TYPE_CHECKING,
which this parse follows too: every flowmem import anywhere in a module's code counts (the
imports are read as tests/test_layers.py reads them).
"""
import ast
import os
import tempfile
import unittest
from typing import Dict, List, Set

from tests.server import ROOT
from tests.test_layers import imported, modules


def import_graph(root: str) -> Dict[str, Set[str]]:
    """{module: the flowmem modules it imports} for every module under `root`/flowmem."""
    found = modules(root)
    known = set(found)
    graph = {}
    for module, path in found.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        is_package = os.path.basename(path) == "__init__.py"
        graph[module] = {t for _, t in imported(module, is_package, tree, known) if t in known and t != module}
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The groups of two or more modules that import each other, each sorted (Tarjan's strongly connected
    components, iteratively)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


class ImportCycleTest(unittest.TestCase):
    def test_no_flowmem_module_imports_one_that_imports_it(self):
        self.assertEqual(cycles(import_graph(ROOT)), [])

    def test_a_circle_hidden_in_a_function_or_behind_type_checking_is_found(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "flowmem", "retrieval"))
            files = {
                "__init__.py": "",
                "retrieval/__init__.py": "",
                "retrieval/a.py": "from . import b\n",
                "retrieval/b.py": "def f():\n    from .c import X\n",
                "retrieval/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import Y\n",
                "retrieval/d.py": "from . import a\n",
            }
            for name, text in files.items():
                with open(os.path.join(root, "flowmem", name), "w", encoding="utf-8") as f:
                    f.write(text)
            self.assertEqual(cycles(import_graph(root)),
                             [["flowmem.retrieval.a", "flowmem.retrieval.b", "flowmem.retrieval.c"]])


if __name__ == "__main__":
    unittest.main()
