"""Moved to flowmem/cluster/ (nodes.py, control.py): `flowmem cluster up|add-node|status|down`. Benches import it."""
from flowmem.cluster.control import *  # noqa: F401,F403
from flowmem.cluster.nodes import *  # noqa: F401,F403
