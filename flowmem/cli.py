"""The `flowmem` command: the parser made from the commands' records, one dispatch, errors in one line.

Each command is one Command record (flowmem/commands/command.py) in the module of its
family under flowmem/commands/: its name and help, its own arguments, the setting groups
it takes as flags, and the function that runs it, which reads its settings, opens its
database its own way and prints. COMMANDS lists them in the order `flowmem --help` shows
them; build_parser() makes one subparser per record (the flags and their help:
commands/parser.py) and run() calls the one named. Nothing here knows any command.

Errors print one line and exit non-zero; never a traceback. A command used wrongly
raises UsageError, the CLI's own error: HTTP statuses are the HTTP layer's. A usage error
argparse finds exits 2, naming the command and its help.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, Optional, Sequence

from . import __version__
from .commands import cluster, database, export_import, listing, memories, server
from .commands.command import Command, UsageError
from .commands.parser import Parser, flag_name, settings_flags, settings_table, wants_all
from .errors import FlowmemError

__all__ = ["COMMANDS", "UsageError", "build_parser", "flag_name", "main", "run", "settings_table"]

COMMANDS: Sequence[Command] = (
    server.SERVE, memories.ADD, memories.SEARCH, listing.LIST, memories.DELETE_MESSAGE, memories.DELETE_USER,
    memories.STATS, export_import.EXPORT, export_import.IMPORT, database.INIT, database.REINDEX, database.SETTINGS,
    database.BACKUP, server.MCP, cluster.CLUSTER)


def build_parser(show_all: bool = False) -> argparse.ArgumentParser:
    """The `flowmem` parser; `show_all` gives every command's help every flag it takes (`--help-all`)."""
    parser = Parser(prog="flowmem", description="Long-term memory for AI agents (SQLite FTS5).")
    parser.add_argument("--version", action="version", version="flowmem " + __version__)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    parsers: Dict[str, argparse.ArgumentParser] = {}
    for command in COMMANDS:
        p = parsers[command.name] = subparsers.add_parser(command.name, help=command.help,
                                                          description=command.description)
        command.arguments(p)
        if command.groups:
            settings_flags(p, command.groups, command.short, show_all)
    parser.set_defaults(parsers=parsers)  # so that run() can say which command a stray argument was given to
    return parser


def run(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command `argv` (sys.argv's by default) names; its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = build_parser(wants_all(argv)).parse_known_args(argv)
    if extra:
        args.parsers[args.command].error("unrecognized arguments: %s" % " ".join(extra))
    return next(c for c in COMMANDS if c.name == args.command).run(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of `flowmem` and `python -m flowmem`; returns the exit status."""
    try:
        return run(argv)
    except FlowmemError as e:
        print("flowmem: error: %s" % e.reason, file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`flowmem export | head`): not an error to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail too
        return 141
    except OSError as e:
        print("flowmem: error: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("flowmem: interrupted", file=sys.stderr)
        return 130
