"""Where the tools find LoCoMo, and the one line they say when it is not there or not LoCoMo.

LoCoMo (CC BY-NC 4.0) does not ship with flowmem. The tools that measure on it take its
path and default to DEFAULT_LOCOMO, inside the clone (data/ is not tracked), where
`make locomo-dev LOCOMO10=PATH/locomo10.json` (tools/locomo_dev.py) writes the
development split. A missing file or one that is not LoCoMo's format ends the tool
with one line on stderr and status 1, never a traceback: `error: LoCoMo file not
found: PATH (get it from ...)`.
"""
from __future__ import annotations

import os
import sys
from typing import NoReturn

from tools.evalkit import dataset as datasets

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_LOCOMO = os.path.join("data", "locomo10-dev.json")  # relative to the clone: see locomo_path()
WHERE = ("get it from https://github.com/snap-research/locomo, data/locomo10.json; "
         "`make locomo-dev LOCOMO10=PATH/locomo10.json` writes the development split to %s; see README, Measuring"
         % DEFAULT_LOCOMO)


def fail(text: str) -> NoReturn:
    """End the tool with `error: <text>` on stderr, status 1."""
    print("error: %s" % text, file=sys.stderr, flush=True)
    raise SystemExit(1)


def locomo_path(path: str) -> str:
    """`path` if it is a file; the default is looked for in the clone, wherever the tool runs from; else fail()."""
    if path == DEFAULT_LOCOMO and not os.path.exists(path):
        path = os.path.join(REPO, DEFAULT_LOCOMO)
    if not os.path.isfile(path):
        fail("LoCoMo file not found: %s (%s)" % (path, WHERE))
    return path


def load_locomo(path: str) -> datasets.Dataset:
    """datasets.load_locomo(path), or fail() in one line if the file is missing or not in LoCoMo's format."""
    path = locomo_path(path)
    try:
        return datasets.load_locomo(path)
    except (OSError, UnicodeDecodeError) as e:
        fail("cannot read LoCoMo file %s: %s" % (path, e))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        fail("%s is not a LoCoMo-format file (%s: %s; %s)" % (path, type(e).__name__, e, WHERE))
