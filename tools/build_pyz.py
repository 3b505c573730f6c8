#!/usr/bin/env python3
"""Build dist/flowmem.pyz: flowmem as one file that any Python 3.9+ runs (`make pyz`).

    python -m tools.build_pyz [--out dist/flowmem.pyz] [--python "/usr/bin/env python3"]
    python dist/flowmem.pyz serve --db /var/lib/flowmem/flowmem.db     # or ./flowmem.pyz serve ...

The package directory is copied whole (its modules and its data files: the lexicons,
their licences, any page the server serves) into a temporary directory, with no
__pycache__ and no compiled files, beside a __main__.py that runs flowmem.cli.main;
zipapp.create_archive then writes it as a compressed zip with a `#!` line. Standard
library only. flowmem reads its data files with pkgutil.get_data (text/lexicon.py),
which reads members of the archive, so nothing is unpacked at run time; SQLite needs
a real file only for the database. tests/test_pyz.py builds one and serves through it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import zipapp
from typing import List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(REPO, "flowmem")
DEFAULT_OUT = os.path.join(REPO, "dist", "flowmem.pyz")

MAIN = '''"""flowmem as a zip application: see tools/build_pyz.py."""
import sys

if sys.version_info < (3, 9):
    sys.exit("flowmem: error: Python 3.9 or newer is required (this is %d.%d)" % sys.version_info[:2])

from flowmem.cli import main  # noqa: E402

sys.exit(main())
'''


def _skip(directory: str, names: Sequence[str]) -> List[str]:
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))]


def build(out: str = DEFAULT_OUT, interpreter: str = "/usr/bin/env python3") -> str:
    """Write the archive at `out` (its directory created if need be); returns `out`."""
    with tempfile.TemporaryDirectory(prefix="flowmem-pyz-") as staging:
        shutil.copytree(PACKAGE, os.path.join(staging, "flowmem"), ignore=_skip)
        with open(os.path.join(staging, "__main__.py"), "w", encoding="utf-8") as f:
            f.write(MAIN)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        partial = out + ".partial"
        zipapp.create_archive(staging, partial, interpreter=interpreter, compressed=True)
        os.replace(partial, out)  # a reader never finds half an archive
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="the archive to write (default: dist/flowmem.pyz)")
    parser.add_argument("--python", default="/usr/bin/env python3", help="the interpreter of its #! line")
    args = parser.parse_args(argv)
    path = build(args.out, args.python)
    print("wrote %s (%d bytes); run it with: python3 %s --help" % (path, os.path.getsize(path),
                                                                   os.path.relpath(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
