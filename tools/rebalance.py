"""Moved to flowmem/cluster/rebalance.py: `flowmem cluster rebalance`. The benches import it."""
from flowmem.cluster.rebalance import *  # noqa: F401,F403
