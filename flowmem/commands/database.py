"""`flowmem init`, `reindex`, `backup` and `settings`: a database file made, rebuilt or copied; the settings.

Index settings given to any command must match the database's; `init` chooses them for a
new file and `reindex` is the one command that changes them (in one write transaction, so
a server on the file waits for it and then reads the new index). `backup` copies from a
single snapshot while a server keeps serving. `settings` reads no settings: it prints the
defaults whatever the environment says.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable

from ..memory import Memory, init, reindex
from ..storage.settings import ViewSettings, flag_value
from .command import Command, loaded
from .parser import settings_table


def _settings_text(settings: ViewSettings) -> str:
    return " ".join("%s=%s" % (name, flag_value(value)) for name, value in settings._asdict().items())


def _init(args: argparse.Namespace) -> int:
    config = loaded(args)
    print("created %s (%s)" % (config.db, _settings_text(init(config))))
    return 0


def _reindex(args: argparse.Namespace) -> int:
    config = loaded(args)
    print("reindexed %s (%s)" % (config.db, _settings_text(reindex(config, _progress(config.db)))))
    return 0


def _progress(path: str) -> Callable[[int, int], None]:
    """A reindex progress report: a line on stderr at each tenth of the messages."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        tenth = done * 10 // total if total else 10
        if tenth > shown[0]:
            shown[0] = tenth
            print("flowmem: reindex %s: %d of %d messages re-indexed" % (path, done, total), file=sys.stderr,
                  flush=True)

    return report


def _backup_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--to", required=True, metavar="PATH", help="the copy's path")
    p.add_argument("--force", action="store_true", help="overwrite the file at --to if there is one")


def _backup(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=True, create=False) as memory:
        copied = memory.backup(args.to, args.force)
        print("backed up %s to %s (%d users, %d messages, %d bytes; integrity checked)"
              % (memory.config.db, copied["path"], copied["users"], copied["messages"], copied["bytes"]))
    return 0


def _settings(args: argparse.Namespace) -> int:
    print(settings_table(), end="")
    return 0


INIT = Command(
    "init", "create a new database, choosing its index settings",
    "Create a new database file with the index settings given (the others default); refuses if the file exists.",
    _init, short=("db", "window_size", "stem"))

REINDEX = Command(
    "reindex", "rebuild the index with other settings (safe while a server runs)",
    "Rebuild a database's index from its stored messages, with the index settings given and "
    "the database's own for the rest, in one write transaction; a server on the file waits for "
    "it and then reads the new index. Progress goes to stderr. With an embedder (--embedder-url), every "
    "message without a vector gets one before it returns; --embedder-model clears another model's vectors.",
    _reindex, short=("db", "window_size", "stem"), groups=("database", "index", "embedder"))

SETTINGS = Command(
    "settings", "print every setting as a Markdown table (flag, variable, default, what)",
    "Print every setting, with its flag, FLOWMEM_ variable, default and what it does, as the "
    "Markdown tables of docs/operations.md's Settings section.",
    _settings, groups=())

BACKUP = Command(
    "backup", "copy the database consistently while a server keeps serving",
    "Copy the database to one self-contained file (journal mode DELETE) from a single snapshot, "
    "check the copy's integrity, then move it into place.",
    _backup, _backup_arguments)
