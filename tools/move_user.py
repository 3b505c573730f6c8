"""Moved to flowmem/cluster/move.py and placement.py: `flowmem cluster move-user`. The benches import it."""
from flowmem.cluster.move import *  # noqa: F401,F403
from flowmem.cluster.placement import *  # noqa: F401,F403
