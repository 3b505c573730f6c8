"""Moved to flowmem/cluster/replication.py: `flowmem cluster replication`. The benches import it."""
from flowmem.cluster.replication import *  # noqa: F401,F403
