"""What every `flowmem` command is made of: its record (Command), its error, its settings.

A command is one Command: its name and help, the arguments of its own, the groups of
settings it takes as flags (config.GROUPS) and the few its short --help shows, and the
function that runs it. Everything that is particular to a command (how it opens its
database, the input it reads before, what it prints) is in that function, so reading
one record and one function is reading the whole command; flowmem/cli.py only makes the
parser from the records and calls the one named.

A command reads its settings with loaded(args) (flags, then FLOWMEM_ variables, then
defaults; a --db that cannot be a database file named before SQLite is asked,
db_path.py), so one that reads none (`settings`) never fails on a bad variable.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Dict, NamedTuple, Optional, Sequence

from .. import config as config_module, db_path
from ..decoding import decode_json
from ..errors import FlowmemError

# The groups of config.GROUPS a command takes unless it says otherwise: every command that
# opens a database takes its path, and checks the index settings given against the database's.
DATABASE_GROUPS = ("database", "index")


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command that takes only settings."""


class Command(NamedTuple):
    """One `flowmem` command, whole.

    name: the word that runs it; help: its line in `flowmem --help`; description: the top of
    its own --help; run: args -> exit status; arguments: adds its own arguments (besides the
    settings) to its parser; groups: the groups of settings it takes as flags (none: it reads
    no settings and has no --help-all); short: the settings its --help shows (the rest only
    under --help-all).
    """

    name: str
    help: str
    description: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    groups: Sequence[str] = DATABASE_GROUPS
    short: Sequence[str] = ("db",)


class UsageError(FlowmemError):
    """A command used wrongly, or input it cannot read: the CLI's own error, printed as one line."""


def loaded(args: argparse.Namespace) -> config_module.Config:
    """The Config a command's flags, FLOWMEM_ variables and defaults give; its --db checked as a path."""
    flags = {name: getattr(args, name, None) for name in config_module.field_names()}
    config = config_module.load(flags)
    db_path.check(config.db)
    return config


def read_input(path: str) -> bytes:
    """The bytes of file `path`, or of standard input for `-`."""
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def json_object(text: Optional[str], flag: str) -> Optional[Dict[str, Any]]:
    """The JSON object a flag such as --metadata gives (None if not given); UsageError otherwise."""
    if text is None:
        return None
    try:
        value = decode_json(text)
    except ValueError as e:
        raise UsageError("%s is not valid JSON: %s" % (flag, e)) from e
    if not isinstance(value, dict):
        raise UsageError("%s must be a JSON object, such as '{\"topic\": \"travel\"}'" % flag)
    return value


def warn(text: str) -> None:
    """A one-line warning on stderr."""
    print("flowmem: warning: %s" % text, file=sys.stderr, flush=True)
