"""`python -m tools.build_meaning`: the build of tools/build_meaning/__init__.py."""
import sys

from tools.build_meaning import main

sys.exit(main(sys.argv[1:]))
