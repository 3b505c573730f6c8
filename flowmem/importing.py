"""An import: Add bodies (an export, a dump) replayed as Adds, in chunks, keeping their ids.

Records are checked as Add checks a body (portable.parsed(): a list whole before anything
is written), then written in chunks of IMPORT_CHUNK_MESSAGES messages, each one
transaction (Store.add_many()), so that other writers get the write lock between them
(docs/import_fairness.md). A record is idempotent as its Add is, by (request_id, user_id),
and carries the fingerprint its Add had, so a replay with another body says so. Messages
that carry their ids (an export's) keep them (storage/session_rows.py). The user of each
record is held to the key the import first found it with: a user deleted while the import
runs stays deleted (Conflict), and the import says how many records it stored before.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional

from . import portable
from .errors import FlowmemError, InvalidField, partly_stored
from .storage.appending import Refused, Stored
from .storage.rows import NewAdd
from .storage.store import Store


def import_records(store: Store, records: Iterable[Mapping[str, Any]], progress: Optional[portable.Progress] = None,
                   strict: bool = True, max_messages: Optional[int] = None) -> Dict[str, Any]:
    """Replay Add bodies (an export) as Adds: `{"requests", "stored", "already_stored", "messages"}`,
    `messages` counting those stored now, `body_differs` (when any) those not stored because an Add
    with their request_id but another body was, `ignored_fields` (when any, not `strict`) the
    unknown fields left out. Idempotent as Add is; InvalidField names `records[i]...`
    (portable.parsed(): a list is checked whole first and then nothing is written; `strict`
    refuses unknown fields, as the Python API's Add does). Messages that carry their ids (an
    export's) keep them. A record holds at most `max_messages` messages, as an Add does.

    Written in chunks of IMPORT_CHUNK_MESSAGES messages, each one transaction (Store.add_many),
    so that other writers get the write lock between them. A storage error (a full disk) stops
    the import: nothing of the chunk it hit is written, and it is raised (errors.partly_stored())
    saying how many records, the first ones, are stored (0: none); so is a refused record (ids
    that cannot be kept here: InvalidField; its user deleted while the import ran: Conflict,
    a delete wins). A malformed record of an iterable checked as it is read stops it after
    the records before it are stored, as its InvalidField says."""
    parsed, total = portable.parsed(records, strict, max_messages)
    counts: Dict[str, Any] = {"requests": 0, "stored": 0, "already_stored": 0, "messages": 0}
    users: Dict[str, int] = {}  # each user's key as the import first found it: a deletion since wins
    chunks = _chunks(parsed, IMPORT_CHUNK_MESSAGES)
    while True:
        try:
            chunk = next(chunks, None)
        except InvalidField as e:
            if not counts["requests"]:
                raise
            raise InvalidField(e.field, "%s (the %d records before it are stored, none after it)"
                               % (e.reason[len(e.field) + 1:], counts["requests"])) from e
        if chunk is None:
            return counts
        stored = _import_chunk(store, chunk, users, counts, total)
        for record, outcome in zip(chunk, stored):
            _count_import(counts, record, outcome)
            if progress is not None:  # told each record, once its chunk is committed
                progress(counts["requests"], total)


def _import_chunk(store: Store, chunk: List[portable.ImportRecord], users: Dict[str, int], counts: Mapping[str, Any],
                  total: Optional[int]) -> List[Stored]:
    """One chunk of an import in one transaction; what was stored of each record."""
    adds = [NewAdd(r.request.user_id, r.request.session_id, r.request.request_id, r.request.messages,
                   r.request.fingerprint, False, r.placement, users.get(r.request.user_id)) for r in chunk]
    try:
        stored = store.add_many(adds)
    except Refused as e:
        error = e.error
        if isinstance(error, InvalidField):
            error = InvalidField("records[%d].%s" % (counts["requests"] + e.position, error.field),
                                 error.reason[len(error.field) + 1:])
        raise partly_stored(error, counts["requests"], total) from e
    except FlowmemError as e:
        raise partly_stored(e, counts["requests"], total) from e
    for outcome, add in zip(stored, adds):
        users.setdefault(add.user_id, outcome.user_key)
    return stored


# An import's chunk, one transaction: what an Add waits for at most behind it (docs/import_fairness.md).
IMPORT_CHUNK_MESSAGES = 200


def _count_import(counts: Dict[str, Any], record: portable.ImportRecord, outcome: Stored) -> None:
    """Count one imported record's outcome into an import's answer (Memory.import_records())."""
    counts["stored" if outcome.new else "already_stored"] += 1
    counts["messages"] += len(record.request.messages) if outcome.new else 0
    counts["requests"] += 1
    if not outcome.new and outcome.fingerprint not in (None, record.request.fingerprint):
        counts["body_differs"] = counts.get("body_differs", 0) + 1
    ignored = counts.setdefault("ignored_fields", []) if record.request.ignored_fields else []
    ignored.extend("records[%d].%s" % (counts["requests"] - 1, name) for name in record.request.ignored_fields
                   if len(ignored) < MAX_IGNORED_NAMED)


MAX_IGNORED_NAMED = 100  # the unknown fields an import's answer names, at most


def _chunks(records: Iterable[portable.ImportRecord], messages: int) -> Iterator[List[portable.ImportRecord]]:
    """`records` in runs of about `messages` messages (an Add of more is a run of its own). When
    reading the next one raises (a malformed record), the run so far comes first, then the error."""
    chunk: List[portable.ImportRecord] = []
    size = 0
    source = iter(records)
    while True:
        try:
            record = next(source)
        except StopIteration:
            break
        except InvalidField:
            if chunk:
                yield chunk
            raise
        if chunk and size + len(record.request.messages) > messages:
            yield chunk
            chunk, size = [], 0
        chunk.append(record)
        size += len(record.request.messages)
    if chunk:
        yield chunk
