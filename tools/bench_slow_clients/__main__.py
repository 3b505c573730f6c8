"""`python3 -m tools.bench_slow_clients` (tools/bench_slow_clients/__init__.py says what it measures)."""
import sys

from tools.bench_slow_clients.run import main

sys.exit(main())
