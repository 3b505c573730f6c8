"""`flowmem export` and `flowmem import`: a memory out as JSON lines, a dump or a LoCoMo file in.

An export is the Add bodies stored (Memory.export), one JSON object a line, in the
order they were stored; importing it replays them as Adds (Memory.import_records),
idempotent by (request_id, user_id), so an interrupted import is finished by running
it again. `import` also reads a LoCoMo-format JSON file (portable.py's reader: one
user per conversation), so a benchmark's conversations can be loaded without a server.
Records go to stdout, progress and the summary to stderr and stdout as each says; a
run that lasts shows a progress line on stderr every PROGRESS_EVERY_S seconds. `import`
reads and checks its whole file before the database is opened (or made): a file with a
bad record creates nothing.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .. import portable
from ..decoding import decode_json, decode_json_object
from ..errors import BadRequest, FlowmemError, InvalidField
from ..memory import Memory
from .command import Command, UsageError, loaded, read_input

PROGRESS_EVERY_S = 2.0


class Progress:
    """A line on stderr at most every PROGRESS_EVERY_S seconds: `flowmem: <what>: <n> <unit> ...`."""

    def __init__(self, what: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.clock = clock
        self.last = clock()
        self.shown = False

    def __call__(self, text: str, final: bool = False) -> None:
        now = self.clock()
        if now - self.last >= PROGRESS_EVERY_S or (final and self.shown):
            self.last, self.shown = now, True
            print("flowmem: %s: %s" % (self.what, text), file=sys.stderr, flush=True)


def export(memory: Memory, user_id: Optional[str]) -> None:
    """Write `user_id`'s Adds (everyone's if None) to stdout, one JSON line each."""
    if user_id is not None and not memory.stats(user_id).get("exists", True):
        raise UsageError("no user %r in %s" % (user_id, memory.config.db))
    progress = Progress("export %s" % memory.config.db)
    requests = messages = 0
    for body in memory.export(user_id):
        sys.stdout.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
        requests += 1
        messages += len(body["messages"])
        progress("%d Adds, %d messages written" % (requests, messages))
    sys.stdout.flush()
    progress("%d Adds, %d messages written" % (requests, messages), final=True)


def numbered_bodies(data: bytes) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(where, body) for each Add body of `data` (`add`'s input, or a dump to import): one JSON
    array of them ("item N"), one JSON object, or one per line ("line N")."""
    stripped = data.strip()
    if stripped.startswith(b"["):
        try:
            items = decode_json(stripped.decode("utf-8"))
        except ValueError as e:  # UnicodeDecodeError is one; decode_json() bounds the nesting
            raise UsageError("input is not a JSON array of Add bodies: %s" % e) from e
        yield from _items(items)
        return
    try:
        body = decode_json_object(stripped)
    except BadRequest:
        body = None  # not one JSON object: one per line, then
    if body is not None:
        yield "line 1", body
        return
    for number, line in enumerate(data.splitlines(), 1):
        if line.strip():
            try:
                yield "line %d" % number, decode_json_object(line)
            except BadRequest as e:
                raise UsageError("line %d: %s" % (number, e.reason)) from e


def _items(items: Iterable[Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """("item N", body) for each item of a JSON array of Add bodies; UsageError at one that is not an object."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError("item %d of the input array is not a JSON object" % i)
        yield "item %d" % i, item


def read_records(data: bytes) -> Tuple[str, List[Tuple[str, Dict[str, Any]]]]:
    """("LoCoMo" or "flowmem dump", [(where, Add body)]) from an import file's bytes.

    A JSON list of objects with a "conversation" (or one such object) is LoCoMo's
    format; anything else is read as Add bodies by numbered_bodies (a JSON array from
    what was decoded here already).
    """
    stripped = data.strip()
    if stripped[:1] in (b"[", b"{"):
        try:
            whole = decode_json(stripped.decode("utf-8"))
        except ValueError:  # UnicodeDecodeError is one
            whole = None  # JSON lines, or broken: numbered_bodies says which line
        samples = whole if isinstance(whole, list) else [whole]
        if samples and all(isinstance(s, dict) and "conversation" in s for s in samples):
            return "LoCoMo", [("conversation %s" % s.get("sample_id", i), body)
                              for i, s in enumerate(samples) for body in portable.locomo_bodies([s], _not_locomo)]
        if isinstance(whole, list):
            return "flowmem dump", list(_items(whole))
    return "flowmem dump", list(numbered_bodies(data))


def _not_locomo(problem: str) -> UsageError:
    return UsageError("not a LoCoMo conversation (%s)" % problem)


def checked(records: List[Tuple[str, Dict[str, Any]]]) -> None:
    """Check every record as the import checks it (an Add body, maybe with exported ids; unknown
    fields refused); UsageError naming the first bad one's line.

    Called before the database is opened, so a file with a bad record creates nothing.
    """
    for where, body in records:
        try:
            portable.exported(body, strict=True)  # as the import will check it: exported ids, unknown fields
        except InvalidField as e:
            raise UsageError("%s: %s (nothing was imported)" % (where, e.reason)) from e


def import_records(memory: Memory, name: str, kind: str, records: List[Tuple[str, Dict[str, Any]]]) -> str:
    """Import `records` (checked()'s, from file `name`) into `memory`; the one-line summary."""
    progress = Progress("import %s" % name)

    def report(done: int, total: Optional[int]) -> None:
        progress("%d of %d Adds imported" % (done, total or len(records)))

    try:
        result = memory.import_records([body for _, body in records], progress=report)
    except FlowmemError as e:  # stopped partway (a full disk): say where in the file, as well as how many
        stored = e.detail.get("records_stored")
        if not isinstance(stored, int) or not 0 < stored < len(records):
            raise
        raise UsageError("import of %s stopped at its %s: %s" % (name, records[stored][0], e.reason)) from e
    progress("%d of %d Adds imported" % (len(records), len(records)), final=True)
    return ("imported %s (%s) into %s: %d Adds, %d stored, %d already stored, %d messages stored"
            % (name, kind, memory.config.db, result["requests"], result["stored"], result["already_stored"],
               result["messages"]))


def _export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", help="only this user_id's Adds")


def _import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the file, or - for standard input")


def _export(args: argparse.Namespace) -> int:
    with Memory(loaded(args), read_only=True, create=False) as memory:
        export(memory, args.user)
    return 0


def _import(args: argparse.Namespace) -> int:
    config = loaded(args)
    kind, records = read_records(read_input(args.file))
    checked(records)
    with Memory(config, read_only=False, create=True) as memory:
        print(import_records(memory, "standard input" if args.file == "-" else args.file, kind, records))
    return 0


EXPORT = Command(
    "export", "write every Add stored (or one user's) as JSON lines, for import",
    "Write the Add bodies stored, one JSON object a line, in the order they were stored: "
    "`flowmem import` replays them (idempotent). Read-only; progress goes to stderr.",
    _export, _export_arguments)

IMPORT = Command(
    "import", "add a flowmem export (JSON lines) or a LoCoMo-format JSON file",
    "Add the records of FILE: a flowmem export (one Add body a line, or a JSON array of "
    "them), or a LoCoMo-format JSON file (one user per conversation, one session per session, "
    "\"Speaker: text\" messages). Adds already stored are skipped. Progress goes to stderr.",
    _import, _import_arguments)
