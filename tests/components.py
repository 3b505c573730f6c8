"""Outside components some tests exercise for real: a browser, the MCP SDK, HAProxy, Litestream.

flowmem never needs them to run; `.ci/run` installs them. A test that needs one calls
`need()`: where the component is absent the test is skipped with a one-line reason, and
where the `CI` environment variable is set it fails instead, so that CI can never pass
by skipping what it was meant to exercise.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import unittest
from typing import Optional


def need(test: unittest.TestCase, found: bool, reason: str) -> None:
    """Skip `test` with `reason` unless `found`; under CI, fail instead of skipping."""
    if found:
        return
    if os.environ.get("CI"):
        test.fail("%s (required when CI is set; .ci/run installs it)" % reason)
    raise unittest.SkipTest(reason)


def program(test: unittest.TestCase, *names: str) -> str:
    """The path of the first of `names` on PATH (or an absolute path that exists); skip or fail as need() says."""
    found: Optional[str] = None
    for name in names:
        found = shutil.which(name)
        if found:
            break
    need(test, found is not None, "%s not installed" % " or ".join(names))
    assert found is not None
    return found


def module(test: unittest.TestCase, name: str, package: str) -> None:
    """Skip or fail (need()) unless the Python module `name` (from PyPI's `package`) can be imported."""
    try:
        found = importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is absent
        found = False
    need(test, found, "%s not installed (pip install %s)" % (name, package))
