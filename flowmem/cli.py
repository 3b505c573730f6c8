"""The `flowmem` command: serve, add, search, delete-user, stats, init, reindex, backup, settings.

Every command only parses arguments, builds a Config and calls the core (Memory or
the HTTP server). `add` and `search` work directly on a database file, no server
needed. Errors print one line and exit non-zero; never a traceback. A command used
wrongly raises UsageError, the CLI's own error: HTTP statuses are the HTTP layer's.

Every setting of config.Config is a flag, `--<name with dashes>`, with the help text
declared beside the field; `settings` prints them all as the Markdown table that
README.md's Settings section holds a copy of (tests/test_cli.py compares the two).

Only `serve`, `add` and `init` create a database; the others refuse a missing file.
`search`, `stats` and `backup` open it read-only, so they work on read-only files
and never change a file a server is using. Index settings given to any command must
match the database's; `reindex` is the one command that changes them.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from . import __version__, config as config_module
from .errors import BadRequest, FlowmemError
from .http.run import serve
from .memory import Memory, init, reindex
from .storage.settings import ViewSettings, flag_value
from .validation import decode_json_object

# Settings that are no flag: a key on the command line would show in `ps` (use FLOWMEM_API_KEY or the file).
NOT_FLAGS = ("api_key",)
# The group of settings only `serve` takes; the other commands take every other group.
SERVER_GROUP = "server"


class UsageError(FlowmemError):
    """A command used wrongly, or input it cannot read: the CLI's own error, printed as one line."""


def flag_name(name: str) -> str:
    """The command-line flag of setting `name`: `--<name with dashes>`."""
    return "--" + name.replace("_", "-")


def _default_text(setting: config_module.Setting, value: Callable[[str], str] = str) -> str:
    """A setting's default as --help and the table say it, each value shown by `value`.

    An index setting's default is the database's own; a new database's is ViewSettings'.
    """
    if setting.group == "index":
        return "as the database was built (a new one: %s)" % value(flag_value(getattr(ViewSettings(), setting.name)))
    if setting.default is None or setting.default == "":
        return "none"
    return value(flag_value(setting.default))


def _settings_flags(parser: argparse.ArgumentParser, server: bool) -> None:
    """A flag for every setting a command takes (all of them for `serve`), grouped as config.GROUPS."""
    first = True
    for group, title in config_module.GROUPS.items():
        if group == SERVER_GROUP and not server:
            continue
        arguments = parser.add_argument_group(
            "settings: " + title, "Each setting is also read from FLOWMEM_<NAME> (e.g. FLOWMEM_DB); a flag wins. "
            "Yes/no settings take 1/0, yes/no, true/false or on/off." if first else None)
        first = False
        for setting in config_module.settings():
            if setting.group != group or setting.name in NOT_FLAGS:
                continue
            # argparse expands %-formats in help texts: a literal % must be doubled.
            text = "%s (default: %s)" % (setting.help, _default_text(setting))
            arguments.add_argument(flag_name(setting.name), dest=setting.name,
                                   type=config_module.field_type(setting.name), default=None,
                                   metavar=setting.name.upper(), help=text.replace("%", "%%"))


def _cell(text: str) -> str:
    # A | would end the cell and a < could open an HTML tag in Markdown.
    return text.replace("|", "\\|").replace("<", "&lt;")


def settings_table() -> str:
    """Every setting as Markdown: per group of config.GROUPS, a table of flag, variable, default and help.

    `flowmem settings` prints it; README.md's Settings section holds a copy, which
    tests/test_cli.py checks is identical.
    """
    lines: List[str] = []
    for group, title in config_module.GROUPS.items():
        lines += ["", "**%s%s**" % (title[0].upper(), title[1:]), "",
                  "| flag | variable | default | what |", "|---|---|---|---|"]
        for setting in config_module.settings():
            if setting.group != group:
                continue
            shown = "no flag" if setting.name in NOT_FLAGS else "`%s`" % flag_name(setting.name)
            default = _default_text(setting, lambda text: "`%s`" % text)
            lines.append("| %s | `%s` | %s | %s |" % (shown, setting.variable, default, _cell(setting.help)))
    return "\n".join(lines[1:]) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flowmem", description="Long-term memory for AI agents (SQLite FTS5).")
    parser.add_argument("--version", action="version", version="flowmem " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    p = commands.add_parser("serve", help="run the HTTP server (POST /add, POST /search, GET /health)",
                            description="Run the HTTP server until SIGINT or SIGTERM.")
    _settings_flags(p, server=True)

    p = commands.add_parser("add", help="add conversations to a database file, no server needed",
                            description="Add messages to a database file. Input: a JSON Add body "
                            '({"request_id", "user_id", "session_id", "messages": [...]}), a JSON array '
                            "of them, or one per line; or a single message with --user, --session, --content.")
    p.add_argument("file", nargs="?", help="file with Add bodies, or - for standard input")
    p.add_argument("--user", help="user_id of a single message")
    p.add_argument("--session", help="session_id of a single message")
    p.add_argument("--content", help="text of a single message")
    p.add_argument("--role", default="user", help="role of a single message (default: user)")
    p.add_argument("--timestamp", type=int, help="Unix ms of a single message")
    p.add_argument("--request-id", help="request_id of a single message (default: a new random id)")
    _settings_flags(p, server=False)

    p = commands.add_parser("search", help="search one user's memory in a database file",
                            description="Search one user's memory in a database file.")
    p.add_argument("query", help="the question")
    p.add_argument("--user", required=True, help="user_id to search")
    p.add_argument("--top-k", type=int, default=10, help="maximum number of items (default: 10)")
    p.add_argument("--json", action="store_true", help="print the contract's JSON response")
    _settings_flags(p, server=False)

    p = commands.add_parser("delete-user", help="remove every trace of a user",
                            description="Remove a user's messages, views, index entries and idempotency records.")
    p.add_argument("--user", required=True, help="user_id to delete")
    _settings_flags(p, server=False)

    p = commands.add_parser("stats", help="counts for the database or one user",
                            description="Print counts for the database, or for one user, as JSON (read-only).")
    p.add_argument("--user", help="user_id to describe")
    _settings_flags(p, server=False)
    _add_database_commands(commands)
    return parser


def _add_database_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The commands that create, rebuild, copy or describe a database file rather than its memories."""
    p = commands.add_parser("init", help="create a new database, choosing its index settings",
                            description="Create a new database file with the index settings given (the others "
                            "default); refuses if the file exists.")
    _settings_flags(p, server=False)

    p = commands.add_parser("reindex", help="rebuild the index with other settings (safe while a server runs)",
                            description="Rebuild a database's index from its stored messages, with the index "
                            "settings given and the database's own for the rest, in one write transaction; a server "
                            "on the file waits for it and then reads the new index. Progress goes to stderr.")
    _settings_flags(p, server=False)

    commands.add_parser("settings", help="print every setting as a Markdown table (flag, variable, default, what)",
                        description="Print every setting, with its flag, FLOWMEM_ variable, default and what it "
                        "does, as the Markdown tables of README.md's Settings section.")

    p = commands.add_parser("backup", help="copy the database consistently while a server keeps serving",
                            description="Copy the database to one self-contained file (journal mode DELETE) from a "
                            "single snapshot, check the copy's integrity, then move it into place.")
    p.add_argument("--to", required=True, help="the copy's path")
    p.add_argument("--force", action="store_true", help="overwrite the file at --to if there is one")
    _settings_flags(p, server=False)


def _add_bodies(args: argparse.Namespace) -> List[Dict[str, Any]]:
    if args.file is None:
        missing = [flag for flag, value in (("--user", args.user), ("--session", args.session),
                                            ("--content", args.content)) if value is None]
        if missing:
            raise UsageError("give a file of Add bodies, or a single message with %s" % ", ".join(missing))
        message: Dict[str, Any] = {"role": args.role, "content": args.content}
        if args.timestamp is not None:
            message["timestamp"] = args.timestamp
        return [{"request_id": args.request_id or uuid.uuid4().hex, "user_id": args.user,
                 "session_id": args.session, "messages": [message]}]
    if args.file == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.file, "rb") as f:
            data = f.read()
    return list(parse_bodies(data))


def parse_bodies(data: bytes) -> Iterable[Dict[str, Any]]:
    """The Add bodies of `add --file` input: one JSON array of them, or one JSON object per line."""
    stripped = data.strip()
    if stripped.startswith(b"["):
        try:
            items = json.loads(stripped.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise UsageError("input is not a JSON array of Add bodies: %s" % e) from e
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise UsageError("item %d of the input array is not a JSON object" % i)
            yield item
        return
    try:
        yield decode_json_object(stripped)
        return
    except BadRequest:
        pass  # not one JSON object: one per line, then
    for number, line in enumerate(stripped.splitlines(), 1):
        if line.strip():
            try:
                yield decode_json_object(line)
            except BadRequest as e:
                raise UsageError("line %d: %s" % (number, e.reason)) from e


def _print_hits(data: Sequence[Dict[str, Any]]) -> None:
    if not data:
        print("no results")
    for rank, hit in enumerate(data, 1):
        print("%d. %.4f  %s  %s  session %s  %s" % (rank, hit["score"], hit["id"], hit["view"], hit["session_id"],
                                                     hit["created_at"] or "-"))
        for line in hit["content"].split("\n"):
            print("     " + line)


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


def _settings_text(settings: ViewSettings) -> str:
    return " ".join("%s=%s" % (name, flag_value(value)) for name, value in settings._asdict().items())


# How each command opens its database: (read_only, create). serve/init/reindex open their own way.
OPENING = {"add": (False, True), "search": (True, False), "stats": (True, False), "backup": (True, False),
           "delete-user": (False, False)}


def run(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "settings":
        print(settings_table(), end="")  # the defaults: no settings are read for it
        return 0
    flags = {name: getattr(args, name, None) for name in config_module.field_names()}
    config = config_module.load(flags)
    if args.command == "serve":
        logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
        serve(config)
        return 0
    if args.command == "init":
        print("created %s (%s)" % (config.db, _settings_text(init(config))))
        return 0
    if args.command == "reindex":
        print("reindexed %s (%s)" % (config.db, _settings_text(reindex(config, _progress(config.db)))))
        return 0
    read_only, create = OPENING[args.command]
    memory = Memory(config, read_only=read_only, create=create)
    try:
        if args.command == "add":
            for body in _add_bodies(args):
                print(json.dumps(memory.add(body), ensure_ascii=False))
        elif args.command == "search":
            result = memory.search({"query": args.query, "user_id": args.user, "top_k": args.top_k})
            if args.json:
                print(json.dumps(result, ensure_ascii=False, indent=2))
            else:
                _print_hits(result["data"])
        elif args.command == "delete-user":
            if not memory.delete_user(args.user):
                raise UsageError("no user %r in %s" % (args.user, config.db))
            print("deleted user %r" % args.user)
        elif args.command == "stats":
            print(json.dumps(memory.stats(args.user), ensure_ascii=False, indent=2))
        elif args.command == "backup":
            copied = memory.backup(args.to, args.force)
            print("backed up %s to %s (%d users, %d messages, %d bytes; integrity checked)"
                  % (config.db, copied["path"], copied["users"], copied["messages"], copied["bytes"]))
    finally:
        memory.close()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of `flowmem` and `python -m flowmem`; returns the exit status."""
    try:
        return run(argv)
    except FlowmemError as e:
        print("flowmem: error: %s" % e.reason, file=sys.stderr)
        return 1
    except OSError as e:
        print("flowmem: error: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("flowmem: interrupted", file=sys.stderr)
        return 130
