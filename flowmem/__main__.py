"""`python -m flowmem ...`: see flowmem/cli.py."""
import sys

if sys.version_info < (3, 9):
    sys.exit("flowmem: error: Python 3.9 or newer is required (this is %d.%d)" % sys.version_info[:2])

from flowmem.cli import main  # noqa: E402  (after the version check, which must run first)

sys.exit(main())
