"""`python3 -m tools.bench` (tools/bench/__init__.py says what it measures)."""
import sys

from tools.bench.run import main

sys.exit(main())
