"""Measure another checkout's flowmem in this process: `--flowmem PATH` of the in-process benches.

A bench that times flowmem inside its own process (bench_metadata, bench_delete_caches,
bench_import_fairness) can compare two commits by importing the package from another
checkout. It is imported by location (importlib), not by putting the checkout on sys.path,
so that nothing else the bench imports can come from there; it must happen before anything
imports flowmem, which is why those benches import it inside main().
"""
from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType


def use_flowmem(checkout: str) -> ModuleType:
    """The flowmem package of `checkout` (a clone's root), imported as `flowmem` for this process.

    Raises RuntimeError when another flowmem was imported already: its modules would mix.
    """
    package = os.path.join(os.path.abspath(checkout), "flowmem")
    loaded = sys.modules.get("flowmem")
    if loaded is not None:
        if os.path.dirname(os.path.abspath(loaded.__file__ or "")) == package:
            return loaded
        raise RuntimeError("flowmem was imported from %s before --flowmem %s" % (loaded.__file__, checkout))
    spec = importlib.util.spec_from_file_location("flowmem", os.path.join(package, "__init__.py"),
                                                  submodule_search_locations=[package])
    if spec is None or spec.loader is None:
        raise RuntimeError("no flowmem package in %s" % checkout)
    module = importlib.util.module_from_spec(spec)
    sys.modules["flowmem"] = module
    spec.loader.exec_module(module)
    return module
