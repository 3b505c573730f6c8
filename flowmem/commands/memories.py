"""`flowmem add`, `search`, `delete-message`, `delete-user` and `stats`: a memory's contents on a database file.

No server is needed: each opens the file itself, `add` creating it, the others refusing
a missing one, `search` and `stats` read-only (so they work on read-only files and never
change one a server is using). `add` reads its whole input before the database is
opened, so a bad file creates nothing; each failing body is named by its line (or array
item).

`add` of a single message stores it each time, as the Python API's m.add does: without
--request-id its request_id is anchored where the message lands (sdk.add_request()), so
"yes", "no", "yes" are three messages. The command either stores or fails with nothing
written; to make a rerun store nothing twice, give it a --request-id. It says whether it stored.
"""
from __future__ import annotations

import argparse
import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import FlowmemError
from ..memory import Memory
from ..sdk import add_request
from .command import Command, UsageError, json_object, loaded, read_input
from .export_import import numbered_bodies
from .parser import flag_name, integer

SINGLE_MESSAGE_FLAGS = ("user", "session", "content", "role", "timestamp", "metadata", "request_id")


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="file with Add bodies, or - for standard input")
    p.add_argument("--user", help="user_id of a single message")
    p.add_argument("--session", help="session_id of a single message")
    p.add_argument("--content", help="text of a single message")
    p.add_argument("--role", help="role of a single message (default: user)")
    p.add_argument("--timestamp", type=integer, metavar="MS", help="Unix ms of a single message")
    p.add_argument("--metadata", metavar="JSON", help='metadata of a single message, e.g. {"source":"notes"}')
    p.add_argument("--request-id", metavar="ID", help="request_id of a single message (default: a new Add each run)")
    p.add_argument("--json", action="store_true", help="print each Add's JSON response")


def _add(args: argparse.Namespace) -> int:
    config = loaded(args)
    bodies = list(_add_bodies(args))  # read and decoded whole before the database is made: a bad file leaves none
    with Memory(config, read_only=False, create=True) as memory:
        for where, body in bodies:
            try:
                result = memory.add(body)
            except FlowmemError as e:
                if not where:
                    raise
                raise UsageError("%s: %s" % (where, e.reason)) from e
            text = json.dumps(result, ensure_ascii=False) if args.json else added_text(body, result)
            print(("%s: %s" % (where, text)) if where and not args.json else text, flush=True)
    return 0


def _add_bodies(args: argparse.Namespace) -> Iterable[Tuple[str, Dict[str, Any]]]:
    """(where, body) for each Add of `add`'s input; `where` names its line or item ("" for flags)."""
    if args.file is not None:
        given = [flag_name(name) for name in SINGLE_MESSAGE_FLAGS if getattr(args, name) is not None]
        if given:  # a file's bodies carry their own: a flag beside it would be silently ignored
            raise UsageError("%s describe%s a single message; a file's Add bodies carry their own"
                             % (", ".join(given), "" if len(given) > 1 else "s"))
        return numbered_bodies(read_input(args.file))
    missing = [flag for flag, value in (("--user", args.user), ("--session", args.session),
                                        ("--content", args.content)) if value is None]
    if missing:
        raise UsageError("give a file of Add bodies, or a single message with %s" % ", ".join(missing))
    # The body the Python API makes of the same call (sdk.add_request): anchored unless a request_id is given.
    return [("", add_request(args.content, args.user, args.session, args.role or "user",
                             json_object(args.metadata, "--metadata"), args.timestamp, args.request_id))]


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


def _search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", help="the question")
    p.add_argument("--user", required=True, help="user_id to search")
    p.add_argument("--top-k", type=integer, default=10, metavar="N", help="maximum number of items (default: 10)")
    p.add_argument("--json", action="store_true", help="print the contract's JSON response")
    p.add_argument("--session", metavar="ID", help="only messages of this session_id")
    p.add_argument("--since", metavar="TIME", help="only messages from this time on (ISO-8601 or Unix ms)")
    p.add_argument("--until", metavar="TIME", help="only messages before this time (ISO-8601 or Unix ms)")
    p.add_argument("--role", help="only messages with this role")


def _search(args: argparse.Namespace) -> int:
    body: Dict[str, Any] = {"query": args.query, "user_id": args.user, "top_k": args.top_k}
    given = {"session_id": args.session, "role": args.role, "since": args.since, "until": args.until}
    filters = {k: v for k, v in given.items() if v is not None}  # times as Search reads them: ISO-8601 or Unix ms
    if filters:
        body["filters"] = filters
    with Memory(loaded(args), read_only=True, create=False) as memory:
        result = memory.search(body)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print("\n".join(evidence_lines(result.get("evidence")) + hit_lines(result["data"])))
    return 0


# What the plain output says above results that are a fallback (retrieval/fallback.py).
FALLBACK_NOTES = {"meaning": "no word of the question is in this memory: the messages nearest it in meaning",
                  "latest_session": "nothing in this memory matches the question: its latest messages"}
# ... and what each such result's line says, so that no line of it reads as a match.
FALLBACK_MARKS = {"meaning": "no word matched: near in meaning", "latest_session": "no match: a latest message"}


# What the plain output's first line adds to the search's grade (retrieval/strength.py, docs/api.md).
EVIDENCE_WORDS = {"strong": "", "weak": "  (the results may well not answer)",
                  "none": "  (nothing in this memory answers)"}


def evidence_lines(evidence: Optional[str]) -> List[str]:
    """The first line of `search`'s plain output: the search's `evidence` grade (no line for an answer without one)."""
    return [] if evidence is None else ["evidence: %s%s" % (evidence, EVIDENCE_WORDS.get(evidence, ""))]


def hit_lines(data: Sequence[Dict[str, Any]]) -> List[str]:
    """Search results as `search` prints them: a note above fallbacks, a line per hit, its content indented."""
    lines = [] if data else ["no results"]
    kinds = sorted({hit["signals"]["fallback"] for hit in data if "fallback" in hit.get("signals", {})})
    lines += ["(%s)" % FALLBACK_NOTES.get(kind, "a fallback: " + kind) for kind in kinds]
    for rank, hit in enumerate(data, 1):
        kind = hit.get("signals", {}).get("fallback")
        mark = "" if kind is None else "  (%s)" % FALLBACK_MARKS.get(kind, "a fallback, not a match")
        lines.append("%d. %.4f  %s  %s  session %s  %s%s" % (rank, hit["score"], hit["id"], hit["view"],
                                                            hit["session_id"], hit["created_at"] or "-", mark))
        lines += ["     " + line for line in hit["content"].split("\n")]
    return lines


def _delete_message(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=False, create=False) as memory:
        result = memory.delete_message(args.user, args.id)
        if not result["deleted"]:
            raise UsageError("no message %s of user %r in %s" % (args.id, args.user, memory.config.db))
    print("deleted message %s (user %r, session %r)" % (args.id, args.user, result.get("session_id")))
    return 0


def _delete_user(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=False, create=False) as memory:
        if not memory.delete_user(args.user)["deleted"]:
            raise UsageError("no user %r in %s" % (args.user, memory.config.db))
    print("deleted user %r" % args.user)
    return 0


def _stats(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=True, create=False) as memory:
        print(json.dumps(memory.stats(args.user), ensure_ascii=False, indent=2))
    return 0


def _delete_user_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, help="user_id to delete")


def _stats_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", help="user_id to describe")


def _id_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID", help="the message's id")
    p.add_argument("--user", required=True, help="the user_id it belongs to")


ADD = Command(
    "add", "add conversations to a database file, no server needed",
    "Add messages to a database file. Input: a JSON Add body "
    '({"request_id", "user_id", "session_id", "messages": [...]}), a JSON array '
    "of them, or one per line; or a single message with --user, --session, --content.",
    _add, _add_arguments)

SEARCH = Command(
    "search", "search one user's memory in a database file", "Search one user's memory in a database file.",
    _search, _search_arguments, groups=("database", "index", "results", "ranking"))

DELETE_MESSAGE = Command(
    "delete-message", "forget one message of a user",
    "Remove one message (an id `m-<tag>-<n>` from search or list) and everything derived from it; "
    "the other messages keep their ids.",
    _delete_message, _id_arguments)

DELETE_USER = Command(
    "delete-user", "remove every trace of a user",
    "Remove a user's messages, views, index entries and idempotency records.",
    _delete_user, _delete_user_arguments)

STATS = Command(
    "stats", "counts for the database or one user",
    "Print counts for the database, or for one user, as JSON (read-only).",
    _stats, _stats_arguments)
