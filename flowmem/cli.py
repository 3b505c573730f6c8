"""The `flowmem` command: serve, add, search, list, delete-message, delete-user, stats, export, import, init,
reindex, backup, settings, mcp.

Every command only parses arguments (cli_parser.py: the flags, short help and
`--help-all`, one-line usage errors), builds a Config and calls the core (Memory or
the HTTP server). `add`, `search`, `export` and `import` work directly on a database
file, no server needed. Errors print one line and exit non-zero; never a traceback. A
command used wrongly raises UsageError, the CLI's own error: HTTP statuses are the
HTTP layer's. Input read from a file is named by line (or array item) when it fails;
a --db that cannot be a database file (a directory, or in one that does not exist) is
named before SQLite is asked (db_path.py), and a port in use names --port.

`add` of a single message is idempotent as MCP's add_memory is: without --request-id
its request_id is derived from the message (as the Python API's m.add does), so a command run
twice, or retried after an interruption, stores once, and it says whether it stored.

Only `serve`, `add`, `import` and `init` create a database; the others refuse a missing
file. `search`, `list`, `stats`, `export` and `backup` open it read-only, so they work on
read-only files and never change a file a server is using. Index settings given to
any command must match the database's; `reindex` is the one command that changes them.
"""
from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sys
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

from . import __version__, cli_list, config as config_module, db_path
from .cli_parser import Parser, UsageError, flag_name, integer, settings_flags, settings_table, wants_all, warn
from .cli_portable import checked, export, import_records, numbered_bodies, read_records
from .errors import FlowmemError
from .http.run import serve
from .mcp.stdio import run as run_mcp
from .memory import Memory, init, reindex
from .sdk import add_request
from .storage.settings import ViewSettings, flag_value

__all__ = ["UsageError", "build_parser", "flag_name", "main", "run", "settings_table"]


def build_parser(show_all: bool = False) -> argparse.ArgumentParser:
    """The `flowmem` parser; `show_all` gives every command's help every flag it takes (`--help-all`)."""
    parser = Parser(prog="flowmem", description="Long-term memory for AI agents (SQLite FTS5).")
    parser.add_argument("--version", action="version", version="flowmem " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    def command(name: str, help: str, description: str) -> argparse.ArgumentParser:
        parsers[name] = commands.add_parser(name, help=help, description=description)
        return parsers[name]

    parsers: Dict[str, argparse.ArgumentParser] = {}
    parser.set_defaults(parsers=parsers)  # so that run() can say which command a stray argument was given to

    p = command("serve", "run the HTTP server (POST /add, POST /search, GET /health)",
                "Run the HTTP server until SIGINT or SIGTERM (then it finishes the requests it has).")
    settings_flags(p, "serve", show_all)

    p = command("add", "add conversations to a database file, no server needed",
                "Add messages to a database file. Input: a JSON Add body "
                '({"request_id", "user_id", "session_id", "messages": [...]}), a JSON array '
                "of them, or one per line; or a single message with --user, --session, --content.")
    p.add_argument("file", nargs="?", help="file with Add bodies, or - for standard input")
    p.add_argument("--user", help="user_id of a single message")
    p.add_argument("--session", help="session_id of a single message")
    p.add_argument("--content", help="text of a single message")
    p.add_argument("--role", help="role of a single message (default: user)")
    p.add_argument("--timestamp", type=integer, metavar="MS", help="Unix ms of a single message")
    p.add_argument("--metadata", metavar="JSON", help='metadata of a single message, e.g. {"source":"notes"}')
    p.add_argument("--request-id", metavar="ID", help="request_id of a single message (default: derived from it)")
    p.add_argument("--json", action="store_true", help="print each Add's JSON response")
    settings_flags(p, "add", show_all)

    p = command("search", "search one user's memory in a database file",
                "Search one user's memory in a database file.")
    p.add_argument("query", help="the question")
    p.add_argument("--user", required=True, help="user_id to search")
    p.add_argument("--top-k", type=integer, default=10, metavar="N", help="maximum number of items (default: 10)")
    p.add_argument("--json", action="store_true", help="print the contract's JSON response")
    p.add_argument("--session", metavar="ID", help="only messages of this session_id")
    p.add_argument("--since", metavar="TIME", help="only messages from this time on (ISO-8601 or Unix ms)")
    p.add_argument("--until", metavar="TIME", help="only messages before this time (ISO-8601 or Unix ms)")
    p.add_argument("--role", help="only messages with this role")
    settings_flags(p, "search", show_all)

    cli_list.add_command(command, show_all)

    _add_delete_commands(command, show_all)

    p = command("stats", "counts for the database or one user",
                "Print counts for the database, or for one user, as JSON (read-only).")
    p.add_argument("--user", help="user_id to describe")
    settings_flags(p, "stats", show_all)
    _add_database_commands(command, show_all)
    _add_mcp_command(command, show_all)
    return parser


def _add_delete_commands(command: Callable[[str, str, str], argparse.ArgumentParser], show_all: bool) -> None:
    """`delete-message` and `delete-user`: what is forgotten, one message or everything of a user."""
    p = command("delete-message", "forget one message of a user",
                "Remove one message (an id `m-<tag>-<n>` from search or list) and everything derived from it; "
                "the other messages keep their ids.")
    p.add_argument("id", metavar="ID", help="the message's id")
    p.add_argument("--user", required=True, help="the user_id it belongs to")
    settings_flags(p, "delete-message", show_all)

    p = command("delete-user", "remove every trace of a user",
                "Remove a user's messages, views, index entries and idempotency records.")
    p.add_argument("--user", required=True, help="user_id to delete")
    settings_flags(p, "delete-user", show_all)


MCP_DESCRIPTION = ("Speak the Model Context Protocol on stdin and stdout (JSON-RPC 2.0, one message a line) until "
                   "stdin closes: tools add_memory, search_memory, list_memories, delete_memories. Creates the "
                   "database if missing; logs go to stderr, never to stdout.")


def _add_mcp_command(command: Callable[[str, str, str], argparse.ArgumentParser], show_all: bool) -> None:
    """`mcp`: the memory served to an agent over the Model Context Protocol (flowmem/mcp/)."""
    p = command("mcp", "serve the memory to an agent over MCP (stdio)", MCP_DESCRIPTION)
    settings_flags(p, "mcp", show_all)


def _add_database_commands(command: Callable[[str, str, str], argparse.ArgumentParser], show_all: bool) -> None:
    """The commands that move, create, rebuild, copy or describe a database file rather than search it."""
    p = command("export", "write every Add stored (or one user's) as JSON lines, for import",
                "Write the Add bodies stored, one JSON object a line, in the order they were stored: "
                "`flowmem import` replays them (idempotent). Read-only; progress goes to stderr.")
    p.add_argument("--user", help="only this user_id's Adds")
    settings_flags(p, "export", show_all)

    p = command("import", "add a flowmem export (JSON lines) or a LoCoMo-format JSON file",
                "Add the records of FILE: a flowmem export (one Add body a line, or a JSON array of "
                "them), or a LoCoMo-format JSON file (one user per conversation, one session per session, "
                "\"Speaker: text\" messages). Adds already stored are skipped. Progress goes to stderr.")
    p.add_argument("file", help="the file, or - for standard input")
    settings_flags(p, "import", show_all)

    p = command("init", "create a new database, choosing its index settings",
                "Create a new database file with the index settings given (the others default); "
                "refuses if the file exists.")
    settings_flags(p, "init", show_all)

    p = command("reindex", "rebuild the index with other settings (safe while a server runs)",
                "Rebuild a database's index from its stored messages, with the index settings given and "
                "the database's own for the rest, in one write transaction; a server on the file waits for "
                "it and then reads the new index. Progress goes to stderr.")
    settings_flags(p, "reindex", show_all)

    command("settings", "print every setting as a Markdown table (flag, variable, default, what)",
            "Print every setting, with its flag, FLOWMEM_ variable, default and what it does, as the "
            "Markdown tables of docs/operations.md's Settings section.")

    p = command("backup", "copy the database consistently while a server keeps serving",
                "Copy the database to one self-contained file (journal mode DELETE) from a single snapshot, "
                "check the copy's integrity, then move it into place.")
    p.add_argument("--to", required=True, metavar="PATH", help="the copy's path")
    p.add_argument("--force", action="store_true", help="overwrite the file at --to if there is one")
    settings_flags(p, "backup", show_all)


def _read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


SINGLE_MESSAGE_FLAGS = ("user", "session", "content", "role", "timestamp", "metadata", "request_id")


def _add_bodies(args: argparse.Namespace) -> Iterable[Tuple[str, Dict[str, Any]]]:
    """(where, body) for each Add of `add`'s input; `where` names its line or item ("" for flags)."""
    if args.file is not None:
        given = [flag_name(name) for name in SINGLE_MESSAGE_FLAGS if getattr(args, name) is not None]
        if given:  # a file's bodies carry their own: a flag beside it would be silently ignored
            raise UsageError("%s describe%s a single message; a file's Add bodies carry their own"
                             % (", ".join(given), "" if len(given) > 1 else "s"))
        return numbered_bodies(_read_input(args.file))
    missing = [flag for flag, value in (("--user", args.user), ("--session", args.session),
                                        ("--content", args.content)) if value is None]
    if missing:
        raise UsageError("give a file of Add bodies, or a single message with %s" % ", ".join(missing))
    # The body the Python API makes of the same call (sdk.add_request), its request_id derived the same way
    # unless given: the same command run again (or retried) is the same Add, and stores nothing.
    return [("", add_request(args.content, args.user, args.session, args.role or "user",
                             cli_list.json_object(args.metadata, "--metadata"), args.timestamp, args.request_id))]


# What the plain output says above results that are a fallback (retrieval/fallback.py).
FALLBACK_NOTES = {"meaning": "no word of the question is in this memory: the messages nearest it in meaning",
                  "latest_session": "nothing in this memory matches the question: its latest messages"}
# ... and what each such result's line says, so that no line of it reads as a match.
FALLBACK_MARKS = {"meaning": "no word matched: near in meaning", "latest_session": "no match: a latest message"}


def _print_hits(data: Sequence[Dict[str, Any]]) -> None:
    if not data:
        print("no results")
    kinds = sorted({hit["signals"]["fallback"] for hit in data if "fallback" in hit.get("signals", {})})
    for kind in kinds:
        print("(%s)" % FALLBACK_NOTES.get(kind, "a fallback: " + kind))
    for rank, hit in enumerate(data, 1):
        kind = hit.get("signals", {}).get("fallback")
        mark = "" if kind is None else "  (%s)" % FALLBACK_MARKS.get(kind, "a fallback, not a match")
        print("%d. %.4f  %s  %s  session %s  %s%s" % (rank, hit["score"], hit["id"], hit["view"], hit["session_id"],
                                                       hit["created_at"] or "-", mark))
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
           "delete-user": (False, False), "export": (True, False), "import": (False, True), "list": (True, False),
           "delete-message": (False, False)}


def _add(memory: Memory, args: argparse.Namespace) -> None:
    for where, body in args.bodies:
        try:
            result = memory.add(body)
        except FlowmemError as e:
            if not where:
                raise
            raise UsageError("%s: %s" % (where, e.reason)) from e
        text = json.dumps(result, ensure_ascii=False) if args.json else added_text(body, result)
        print(("%s: %s" % (where, text)) if where and not args.json else text, flush=True)


def added_text(body: Dict[str, Any], result: Dict[str, Any]) -> str:
    """What `add` says of one Add: whether it stored (the response's `stored`), and if not, why."""
    ids = "user %s, session %s, request_id %s" % (result["user_id"], result["session_id"], result["request_id"])
    if not result["stored"]:
        if result.get("body_differs"):
            return ("nothing written: request_id %s was stored before with other messages (user %s, session %s); "
                    "to store these, give them a request_id of their own"
                    % (result["request_id"], result["user_id"], result["session_id"]))
        return "already stored: nothing written (%s)" % ids
    n = len(body["messages"])
    dated = result.get("dated_on_receipt", 0)
    when = "; %d dated now, as received: no timestamp given" % dated if dated else ""
    return "stored %d message%s (%s)%s" % (n, "" if n == 1 else "s", ids, when)


def _search(memory: Memory, args: argparse.Namespace) -> None:
    body: Dict[str, Any] = {"query": args.query, "user_id": args.user, "top_k": args.top_k}
    given = {"session_id": args.session, "role": args.role, "since": args.since, "until": args.until}
    filters = {k: v for k, v in given.items() if v is not None}  # times as Search reads them: ISO-8601 or Unix ms
    if filters:
        body["filters"] = filters
    result = memory.search(body)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        _print_hits(result["data"])


def _delete_message(memory: Memory, args: argparse.Namespace) -> None:
    result = memory.delete_message(args.user, args.id)
    if not result["deleted"]:
        raise UsageError("no message %s of user %r in %s" % (args.id, args.user, memory.config.db))
    print("deleted message %s (user %r, session %r)" % (args.id, args.user, result.get("session_id")))


def _delete_user(memory: Memory, args: argparse.Namespace) -> None:
    if not memory.delete_user(args.user)["deleted"]:
        raise UsageError("no user %r in %s" % (args.user, memory.config.db))
    print("deleted user %r" % args.user)


def _stats(memory: Memory, args: argparse.Namespace) -> None:
    print(json.dumps(memory.stats(args.user), ensure_ascii=False, indent=2))


def _backup(memory: Memory, args: argparse.Namespace) -> None:
    copied = memory.backup(args.to, args.force)
    print("backed up %s to %s (%d users, %d messages, %d bytes; integrity checked)"
          % (memory.config.db, copied["path"], copied["users"], copied["messages"], copied["bytes"]))


def _export(memory: Memory, args: argparse.Namespace) -> None:
    export(memory, args.user)


def _import(memory: Memory, args: argparse.Namespace) -> None:
    print(import_records(memory, "standard input" if args.file == "-" else args.file, *args.records))


COMMANDS: Dict[str, Callable[[Memory, argparse.Namespace], None]] = {
    "add": _add, "search": _search, "delete-user": _delete_user, "stats": _stats, "backup": _backup,
    "export": _export, "import": _import, "list": cli_list.run, "delete-message": _delete_message}


def run(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = build_parser(wants_all(argv)).parse_known_args(argv)
    if extra:
        args.parsers[args.command].error("unrecognized arguments: %s" % " ".join(extra))
    if args.command == "settings":
        print(settings_table(), end="")  # the defaults: no settings are read for it
        return 0
    flags = {name: getattr(args, name, None) for name in config_module.field_names()}
    config = config_module.load(flags)
    db_path.check(config.db)
    if args.command == "serve":
        if args.api_key is not None:
            warn("a key given on the command line shows in `ps` to every user of this machine; "
                 "use --api-key-file or FLOWMEM_API_KEY")
        logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
        _serve(config)
        return 0
    if args.command == "init":
        print("created %s (%s)" % (config.db, _settings_text(init(config))))
        return 0
    if args.command == "reindex":
        print("reindexed %s (%s)" % (config.db, _settings_text(reindex(config, _progress(config.db)))))
        return 0
    # Input read and decoded whole before the database is opened (or made): a bad file leaves none.
    if args.command == "import":
        args.records = read_records(_read_input(args.file))
        checked(args.records[1])
    if args.command == "add":
        args.bodies = list(_add_bodies(args))
    if args.command == "mcp":
        return run_mcp(config)
    read_only, create = OPENING[args.command]
    memory = Memory(config, read_only=read_only, create=create)
    try:
        COMMANDS[args.command](memory, args)
    finally:
        memory.close()
    return 0


def _serve(config: config_module.Config) -> None:
    """serve(), with a port it cannot listen on named, and the flag that chooses another."""
    try:
        serve(config)
    except OSError as e:
        where = "port %d on %s" % (config.port, config.host or "every address")
        if e.errno == errno.EADDRINUSE:
            raise UsageError("port %d is in use on %s; choose another with --port"
                             % (config.port, config.host or "every address")) from e
        if e.errno == errno.EACCES:
            raise UsageError("%s may not be listened on by this user; choose one above 1023 with --port"
                             % where) from e
        raise


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
