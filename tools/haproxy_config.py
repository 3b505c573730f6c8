"""Moved to flowmem/cluster/haproxy.py: `flowmem cluster haproxy-config`. The benches import it."""
from flowmem.cluster.haproxy import *  # noqa: F401,F403
