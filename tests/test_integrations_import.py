"""flowmem never imports a framework: only its adapter modules do, and only when they are imported.

Each check runs in a child Python whose import system hides LangChain and LlamaIndex (a finder
first on sys.meta_path that refuses them and records every attempt), so that it holds whether
or not the frameworks are installed here: importing flowmem and every one of its modules but
the adapters asks for neither, and importing an adapter without its framework raises an
ImportError that names the pip package to install.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from typing import Any, Dict, List

from tests.server import ROOT

ADAPTERS = {"flowmem.integrations.langchain": "langchain-core", "flowmem.integrations.llamaindex": "llama-index-core"}
FRAMEWORKS = ("langchain", "langchain_core", "llama_index")

# The child: hide the frameworks, import what argv[1] names (a JSON list), report as JSON.
CHILD = r'''
import importlib, json, sys

FRAMEWORKS = %r

class Hidden:
    """Refuses every framework module, as an environment without them does, and notes each attempt."""
    attempts = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in FRAMEWORKS:
            self.attempts.append(name)
            raise ModuleNotFoundError("No module named %%r" %% name, name=name)
        return None

sys.meta_path.insert(0, Hidden())
errors = {}
for module in json.loads(sys.argv[1]):
    try:
        importlib.import_module(module)
    except ImportError as e:
        errors[module] = [str(e), e.name, repr(e.__cause__)]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORKS)
print(json.dumps({"attempts": Hidden.attempts, "loaded": loaded, "errors": errors}))
''' % (FRAMEWORKS,)


def core_modules() -> List[str]:
    """Every module of flowmem/ by name, but the adapters and __main__ (which runs the CLI)."""
    out = []
    for directory, _, files in os.walk(os.path.join(ROOT, "flowmem")):
        for name in files:
            if name.endswith(".py") and name != "__main__.py":
                parts = os.path.relpath(os.path.join(directory, name), ROOT)[:-3].split(os.sep)
                out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(m for m in out if m not in ADAPTERS)


def imported_without_frameworks(modules: List[str]) -> Dict[str, Any]:
    """What importing `modules` in a child with the frameworks hidden did (CHILD's report)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
    environ["PYTHONPATH"] = ROOT
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(modules)], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError("the child failed:\n" + done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


class FrameworkImportTest(unittest.TestCase):
    def test_importing_flowmem_and_every_core_module_never_asks_for_a_framework(self):
        modules = core_modules()
        self.assertIn("flowmem.integrations", modules)
        self.assertIn("flowmem.integrations.calls", modules)
        report = imported_without_frameworks(["flowmem"] + modules)
        self.assertEqual(report["errors"], {})
        self.assertEqual((report["attempts"], report["loaded"]), ([], []))

    def test_an_adapter_without_its_framework_says_which_package_to_install(self):
        report = imported_without_frameworks(sorted(ADAPTERS))
        for adapter, package in ADAPTERS.items():
            with self.subTest(adapter=adapter):
                message, name, cause = report["errors"][adapter]
                self.assertIn("%s needs " % adapter, message)
                self.assertIn("pip install %s" % package, message)
                self.assertTrue(name.split(".")[0] in FRAMEWORKS and "ModuleNotFoundError" in cause, (name, cause))
        self.assertEqual(sorted({a.split(".")[0] for a in report["attempts"]}), ["langchain_core", "llama_index"])

    def test_the_hiding_child_sees_a_framework_import_where_there_is_one(self):
        # The check itself: a module that imports a framework is caught, whether it is installed or not.
        report = imported_without_frameworks(["flowmem", "langchain_core.messages"])
        self.assertEqual(report["attempts"], ["langchain_core"])
        self.assertIn("langchain_core.messages", report["errors"])


if __name__ == "__main__":
    unittest.main()
