"""`flowmem export` and `flowmem import`: a memory out as JSON lines, a dump or a LoCoMo file in.

An export is the Add bodies stored (Memory.export), one JSON object a line, in the
order they were stored; importing it replays them as Adds (Memory.import_records),
idempotent by (request_id, user_id), so an interrupted import is finished by running
it again. `import` also reads a LoCoMo-format JSON file (portable.py's reader: one
user per conversation), so a benchmark's conversations can be loaded without a server.
Records go to stdout, progress and the summary to stderr and stdout as each says; a
run that lasts shows a progress line on stderr every PROGRESS_EVERY_S seconds.
"""
from __future__ import annotations

import json
import re
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import portable
from .cli_parser import UsageError
from .errors import InvalidField
from .memory import Memory

PROGRESS_EVERY_S = 2.0
RECORD = re.compile(r"records\[(\d+)\]\.?(.*)")  # a field of import_records' InvalidField: records[i].<field>


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


def export(memory: Memory, user_id: Optional[str], out: Any = None) -> Dict[str, int]:
    """Write `user_id`'s Adds (everyone's if None) to `out` (stdout), one JSON line each; counts of what was written."""
    out = out or sys.stdout
    if user_id is not None and not memory.stats(user_id).get("exists", True):
        raise UsageError("no user %r in %s" % (user_id, memory.config.db))
    progress = Progress("export %s" % memory.config.db)
    counts = {"requests": 0, "messages": 0}
    for body in memory.export(user_id):
        out.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
        counts["requests"] += 1
        counts["messages"] += len(body["messages"])
        progress("%d Adds, %d messages written" % (counts["requests"], counts["messages"]))
    out.flush()
    progress("%d Adds, %d messages written" % (counts["requests"], counts["messages"]), final=True)
    return counts


def read_records(data: bytes, numbered: Callable[[bytes], Iterator[Tuple[str, Dict[str, Any]]]]
                 ) -> Tuple[str, List[Tuple[str, Dict[str, Any]]]]:
    """("LoCoMo" or "flowmem dump", [(where, Add body)]) from an import file's bytes.

    A JSON list of objects with a "conversation" (or one such object) is LoCoMo's
    format; anything else is read as Add bodies by `numbered` (cli.numbered_bodies).
    """
    stripped = data.strip()
    if stripped[:1] in (b"[", b"{"):
        try:
            whole = json.loads(stripped.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            whole = None  # JSON lines, or broken: `numbered` says which line
        samples = whole if isinstance(whole, list) else [whole]
        if samples and all(isinstance(s, dict) and "conversation" in s for s in samples):
            return "LoCoMo", [("conversation %s" % s.get("sample_id", i), body)
                              for i, s in enumerate(samples) for body in _locomo_bodies(s)]
    return "flowmem dump", list(numbered(data))


def _locomo_bodies(sample: Dict[str, Any]) -> List[Dict[str, Any]]:
    try:
        return list(portable.locomo_records([sample]))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UsageError("not a LoCoMo conversation (%s: %s)" % (type(e).__name__, e)) from e


def checked(kind: str, records: List[Tuple[str, Dict[str, Any]]]) -> Tuple[str, List[Tuple[str, Dict[str, Any]]]]:
    """(kind, records) once every record is checked as Add checks a body; UsageError naming the first bad one's line.

    Called before the database is opened, so a file with a bad record creates nothing.
    """
    try:
        portable.parsed([body for _, body in records])
    except InvalidField as e:
        match = RECORD.match(e.field)
        if not match:
            raise
        problem = (match.group(2) + e.reason[len(e.field):]).strip()
        raise UsageError("%s: %s (nothing was imported)" % (records[int(match.group(1))][0], problem)) from e
    return kind, records


def import_records(memory: Memory, name: str, kind: str, records: List[Tuple[str, Dict[str, Any]]]) -> str:
    """Import `records` (checked()'s, from file `name`) into `memory`; the one-line summary."""
    progress = Progress("import %s" % name)

    def report(done: int, total: Optional[int]) -> None:
        progress("%d of %d Adds imported" % (done, total or len(records)))

    result = memory.import_records([body for _, body in records], progress=report)
    progress("%d of %d Adds imported" % (len(records), len(records)), final=True)
    return ("imported %s (%s) into %s: %d Adds, %d stored, %d already stored, %d messages stored"
            % (name, kind, memory.config.db, result["requests"], result["stored"], result["already_stored"],
               result["messages"]))
