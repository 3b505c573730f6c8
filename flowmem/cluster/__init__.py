"""The operator's cluster, shipped with flowmem and run as `flowmem cluster ACTION ...`.

A cluster is N flowmem nodes, each holding whole users, with HAProxy in front routing each
request to its user's node and Litestream beside each node replicating its file. haproxy.py
writes the front's configuration (from haproxy.cfg.template and flowmem_route.lua, package
data) and decides ownership (slots, the shard map); replication.py runs Litestream and
restores from its replica; nodes.py starts, grows, stops and describes a loopback cluster;
control.py is what the actions share (cluster.json, HAProxy's runtime API, a map entry set
live and on file); placement.py and move.py move one user between nodes losing no
acknowledged Add; rebalance.py hands slots to a node that holds fewer than its share.
Each action's main(argv, prog) is its command line; flowmem/commands/cluster.py names them.
This is the service level: it may use every layer of flowmem, and nothing in flowmem uses it
but the command.
"""
