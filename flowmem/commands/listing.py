"""`flowmem list`: what a database holds, a user's messages, a user's sessions or the users.

One command with what to list as its first word, messages when none is given
(`flowmem list --user U`, `flowmem list sessions --user U`, `flowmem list users`): the
three are one listing at three depths, and a word reads better than three commands or a
flag that changes what the others mean. The message filters (--session, --since,
--until, --metadata, --order) are Memory.list_messages'; given with sessions or users
they are refused, not ignored.

Rows are read a page at a time (Memory.list_*'s cursors, followed by paging.walk) and
printed as they come, so a long listing starts at once and holds one page in memory.
--limit bounds the rows (0: all of them); when more are left, a line on stderr says so,
so that stdout holds only rows. Plain output is one line a row, a message's content
clipped to that line; --json writes each row as the listing returns it, one JSON
object a line.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Dict, Optional

from ..listing_params import MAX_PAGE
from ..memory import Memory
from ..paging import walk
from .command import Command, UsageError, json_object, loaded
from .parser import integer

KINDS = ("messages", "sessions", "users")
MESSAGE_FILTERS = ("session", "since", "until", "metadata", "order")
DEFAULT_LIMIT = 100
CLIP = 72  # characters of a message's content on its line: with id, date, session and role, about 120 columns


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", nargs="?", choices=KINDS, default="messages", help="what to list (default: messages)")
    p.add_argument("--user", help="the user_id whose messages or sessions to list")
    p.add_argument("--session", metavar="ID", help="only messages of this session_id")
    p.add_argument("--since", metavar="TIME", help="only messages from this time on (ISO-8601 or Unix ms)")
    p.add_argument("--until", metavar="TIME", help="only messages before this time (ISO-8601 or Unix ms)")
    p.add_argument("--metadata", metavar="JSON", help='only messages whose metadata holds these, e.g. {"topic":"x"}')
    p.add_argument("--order", choices=("asc", "desc"), help="messages oldest (asc, default) or newest first")
    p.add_argument("--limit", type=integer, default=DEFAULT_LIMIT, metavar="N",
                   help="at most N rows (default: %d; 0: all)" % DEFAULT_LIMIT)
    p.add_argument("--json", action="store_true", help="one JSON object a line, as the listing returns it")


def _list(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=True, create=False) as memory:
        listed(memory, args)
    return 0


def listed(memory: Memory, args: argparse.Namespace) -> None:
    """List what `args` asks for from `memory` to stdout (a note on stderr when --limit cut it short)."""
    _check(args)
    if args.limit < 0:
        raise UsageError("--limit must be 0 (all) or more, got %d" % args.limit)
    page = min(args.limit + 1, MAX_PAGE) if args.limit else MAX_PAGE  # +1: whether any is left past the limit
    rows = walk(_fetch(memory, args, page))
    shown = 0
    for row in rows:
        if args.limit and shown == args.limit:
            print("flowmem: list: only the first %d shown (--limit %d); more follow: give a larger --limit, "
                  "or 0 for all" % (shown, args.limit), file=sys.stderr)
            break
        print(json.dumps(row, ensure_ascii=False) if args.json else LINES[args.what](row))
        shown += 1
    if not shown and not args.json:
        print("no %s" % args.what)
    sys.stdout.flush()


def _check(args: argparse.Namespace) -> None:
    """UsageError for a flag that does not go with what is listed, or a user missing or extra."""
    if args.what == "users" and args.user is not None:
        raise UsageError("`list users` lists every user; --user goes with `list messages` and `list sessions`")
    if args.what != "users" and args.user is None:
        raise UsageError("give --user, the user_id whose %s to list (or `flowmem list users`)" % args.what)
    if args.what != "messages":
        given = ["--" + name for name in MESSAGE_FILTERS if getattr(args, name) is not None]
        if given:
            raise UsageError("%s %s only messages, not %s" % (", ".join(given), "filter" if len(given) > 1
                                                             else "filters", args.what))
    args.metadata = json_object(args.metadata, "--metadata")


def _fetch(memory: Memory, args: argparse.Namespace, page: int) -> Callable[[Optional[str]], Dict[str, Any]]:
    """The call that reads one page of the listing, given the last page's cursor."""
    if args.what == "users":
        return lambda cursor: memory.list_users(page, cursor)
    if args.what == "sessions":
        return lambda cursor: memory.list_sessions(args.user, page, cursor)
    # metadata only when given: the filter is a keyword of list_messages that older cores lack
    filters = {} if args.metadata is None else {"metadata": args.metadata}
    return lambda cursor: memory.list_messages(args.user, args.session, args.since, args.until, page, cursor,
                                               args.order or "asc", **filters)


def _date(iso: Optional[str]) -> str:
    # `2023-05-08T13:56:00.000+00:00` -> `2023-05-08 13:56`: always UTC, as the help says
    return iso[:16].replace("T", " ") if iso else "-"


def clip(text: str, width: int = CLIP) -> str:
    """`text` on one line: whitespace runs as one space, unprintable characters as `?`, at most `width`."""
    flat = "".join(c if c.isprintable() else "?" for c in " ".join(text.split()))
    return flat if len(flat) <= width else flat[:width - 3] + "..."


def _message_line(row: Dict[str, Any]) -> str:
    return "%s  %s  %s  %s  %s" % (row["id"], _date(row["created_at"]), clip(row["session_id"], 30),
                                   clip(row["role"], 20), clip(row["content"]))


def _session_line(row: Dict[str, Any]) -> str:
    return "%s  %d message%s  %s .. %s" % (clip(row["session_id"], 60), row["messages"],
                                           "" if row["messages"] == 1 else "s", _date(row["first_at"]),
                                           _date(row["last_at"]))


def _user_line(row: Dict[str, Any]) -> str:
    return "%s  %d session%s  %d message%s" % (clip(row["user_id"], 60), row["sessions"],
                                               "" if row["sessions"] == 1 else "s", row["messages"],
                                               "" if row["messages"] == 1 else "s")


LINES: Dict[str, Callable[[Dict[str, Any]], str]] = {
    "messages": _message_line, "sessions": _session_line, "users": _user_line}

LIST = Command(
    "list", "list a user's messages, a user's sessions, or the users",
    "List a user's messages (the default), a user's sessions, or the users, oldest first, one line "
    "each (dates UTC), or as JSON lines with --json. Read-only.",
    _list, _arguments)
