"""The `flowmem` command: serve, add, search, delete-user, stats, init, reindex, backup.

Every command only parses arguments, builds a Config and calls the core (Memory or
the HTTP server). `add` and `search` work directly on a database file, no server
needed. Errors print one line and exit non-zero; never a traceback.

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
from .http.api import decode_json_object
from .http.run import serve
from .memory import Memory, init, reindex
from .storage.settings import ViewSettings, flag_value

SERVER_ONLY = ("host", "port", "api_key", "api_key_file", "max_body_bytes", "max_inflight", "request_timeout_s",
               "keepalive_timeout_s", "shutdown_timeout_s", "max_connections", "workers", "allowed_hosts",
               "allowed_origins", "log_level")


def _settings_flags(parser: argparse.ArgumentParser, server: bool) -> None:
    group = parser.add_argument_group("settings (each also read from FLOWMEM_<NAME>, e.g. FLOWMEM_DB)")
    defaults = config_module.Config()
    for name in config_module.field_names():
        if name in SERVER_ONLY and not server:
            continue
        if name == "api_key":
            continue  # a key on the command line would show in `ps`; use the file or FLOWMEM_API_KEY
        default = getattr(defaults, name)
        if name in ViewSettings._fields:
            shown = "as the database was built (a new one: %s)" % (flag_value(getattr(ViewSettings(), name)),)
        else:
            shown = "%s" % (default,)
        group.add_argument("--" + name.replace("_", "-"), dest=name, type=config_module.field_type(name), default=None,
                           metavar=name.upper(), help="default: " + shown)



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

    p = commands.add_parser("init", help="create a new database, choosing its index settings",
                            description="Create a new database file with the index settings given (the others "
                            "default); refuses if the file exists.")
    _settings_flags(p, server=False)

    p = commands.add_parser("reindex", help="rebuild the index with other settings (safe while a server runs)",
                            description="Rebuild a database's index from its stored messages, with the index "
                            "settings given and the database's own for the rest, in one write transaction; a server "
                            "on the file waits for it and then reads the new index. Progress goes to stderr.")
    _settings_flags(p, server=False)

    p = commands.add_parser("backup", help="copy the database consistently while a server keeps serving",
                            description="Copy the database to one self-contained file (journal mode DELETE) from a "
                            "single snapshot, check the copy's integrity, then move it into place.")
    p.add_argument("--to", required=True, help="the copy's path")
    p.add_argument("--force", action="store_true", help="overwrite the file at --to if there is one")
    _settings_flags(p, server=False)
    return parser


def _add_bodies(args: argparse.Namespace) -> List[Dict[str, Any]]:
    if args.file is None:
        missing = [flag for flag, value in (("--user", args.user), ("--session", args.session),
                                            ("--content", args.content)) if value is None]
        if missing:
            raise BadRequest("give a file of Add bodies, or a single message with %s" % ", ".join(missing))
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
    return list(_parse_bodies(data))


def _parse_bodies(data: bytes) -> Iterable[Dict[str, Any]]:
    stripped = data.strip()
    if stripped.startswith(b"["):
        try:
            items = json.loads(stripped.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise BadRequest("input is not a JSON array of Add bodies: %s" % e)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise BadRequest("item %d of the input array is not a JSON object" % i)
            yield item
        return
    try:
        yield decode_json_object(stripped)
        return
    except BadRequest:
        pass
    for number, line in enumerate(stripped.splitlines(), 1):
        if line.strip():
            try:
                yield decode_json_object(line)
            except BadRequest as e:
                raise BadRequest("line %d: %s" % (number, e.reason))


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
                raise BadRequest("no user %r in %s" % (args.user, config.db))
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
