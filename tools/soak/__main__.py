"""`python3 -m tools.soak`: the soak test (tools/soak/__init__.py says what it does)."""
import sys

from tools.soak.run import main

sys.exit(main())
