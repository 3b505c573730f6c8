"""Memories in and out as Add bodies: export, import, and LoCoMo files.

The portable form of a memory is the Adds that made it: `{request_id, user_id,
session_id, messages: [{role, content, timestamp}]}` each, the contract's own body
(a message's `timestamp` left out when it had none). Exporting lists a user's stored
Adds in the order they were stored (storage/listing.py adds()); importing replays
them as Adds, so it is idempotent as Add is, by (request_id, user_id), and a memory
rebuilt from its export holds the same messages in the same sessions and order, with
the same ids (ids come from user, session and position: storage/ids.py), so its
searches answer byte for byte as the original's did (tests/test_export_import.py).
What an export cannot carry is what the messages never said: when an Add arrived.

LoCoMo's public format (one conversation per sample, `session_<n>` turn lists dated by
`session_<n>_date_time`) becomes Add bodies here, as the challenge platform sends
them: one user per sample, one session per LoCoMo session, at most 20 messages an Add,
each turn "Speaker: text" (plus its photo's caption), speaker_a as `user` and
speaker_b as `assistant`, every turn dated by its session. tools/evalkit reads LoCoMo
with these same functions, so what it measures is what `flowmem import` loads.
"""
from __future__ import annotations

import datetime
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .decoding import decode_json
from .errors import InvalidField
from .storage import metadata_index
from .storage.listing import StoredAdd
from .validation import AddRequest, fingerprint, parse_add

MAX_ADD_MESSAGES = 20  # the platform's Adds hold at most 20 messages

Progress = Callable[[int, Optional[int]], None]  # (records done, records in all if known)


def add_body(user_id: str, add: StoredAdd) -> Dict[str, Any]:
    """A stored Add as the Add body that stores it again, each message with its id (and
    `dated_on_receipt` when it was), which an import keeps (storage/session_rows.py); the
    session's last Add also says `numbers_given` when messages after it were deleted, so that
    the session's next message gets the same new number in the copy."""
    messages = []
    for role, content, timestamp_ms, metadata, message_id, dated in add.messages:
        message: Dict[str, Any] = {"id": message_id, "role": role, "content": content}
        if timestamp_ms is not None:
            message["timestamp"] = timestamp_ms
        if dated:
            message["dated_on_receipt"] = True
        if metadata is not None:
            message["metadata"] = metadata_index.loads(metadata)
        messages.append(message)
    body: Dict[str, Any] = {"request_id": add.request_id, "user_id": user_id, "session_id": add.session_id,
                            "messages": messages}
    if add.numbers_given is not None:  # its session's later messages were deleted: their numbers stay given
        body["numbers_given"] = add.numbers_given
    return body


class ImportRecord(NamedTuple):
    """An import's record: the Add it replays, and where its messages go when it names their ids."""

    request: AddRequest
    placement: Optional[Tuple[str, Tuple[int, ...], int]]  # (session tag, message numbers, numbers given)


def parsed(records: Iterable[Any], strict: bool = True,
           max_messages: Optional[int] = None) -> Tuple[Iterator[ImportRecord], Optional[int]]:
    """The records as import records (and how many there are, when known), each checked as Add checks
    a body (unknown fields refused when `strict`, else named in its request's ignored_fields),
    InvalidField naming `records[i].<field>`. A list (or other sequence) is checked whole
    before the first is returned, so that a malformed one leaves nothing written; any other
    iterable is checked as it is read (a dump too large to hold), and what came before a
    malformed record stays stored: importing again after fixing it stores only the rest."""
    if isinstance(records, Sequence):
        return iter([_parse(record, i, strict, max_messages) for i, record in enumerate(records)]), len(records)
    return (_parse(record, i, strict, max_messages) for i, record in enumerate(records)), None


def _parse(record: Any, i: int, strict: bool, max_messages: Optional[int]) -> ImportRecord:
    field = "records[%d]" % i
    if not isinstance(record, Mapping):
        raise InvalidField(field, "must be an Add body (a JSON object), got %s" % type(record).__name__)
    try:
        return exported(record, strict, max_messages)
    except InvalidField as e:
        raise InvalidField("%s.%s" % (field, e.field), e.reason[len(e.field) + 1:]) from e


_ID = re.compile(r"m-([0-9a-f]{16})-([1-9][0-9]{0,17})")  # storage/ids.py message_id()


def exported(record: Mapping[str, Any], strict: bool, max_messages: Optional[int] = None) -> ImportRecord:
    """An exported Add body as an import record: an Add body whose messages may carry their `id`
    and `dated_on_receipt` (add_body()). Its fingerprint is the one the Add had, so that a replay
    with another body says so (`body_differs`)."""
    raw = record.get("messages")
    if not isinstance(raw, list) or not any(isinstance(m, Mapping) and m.keys() & _EXPORTED for m in raw):
        return ImportRecord(parse_add(record, None, strict, max_messages), None)
    bare = [dict(m) for m in raw]
    ids = [m.pop("id", None) for m in bare]
    dated = [m.pop("dated_on_receipt", False) for m in bare]
    given = record.get("numbers_given")
    request = parse_add({k: v for k, v in dict(record, messages=bare).items() if k != "numbers_given"}, None, strict,
                        max_messages)
    for j, flag in enumerate(dated):
        if not isinstance(flag, bool) or (flag and request.messages[j].timestamp_ms is None):
            raise InvalidField("messages[%d].dated_on_receipt" % j, "must be true (with a timestamp) or false")
    if any(dated):
        messages = [m._replace(dated_on_receipt=flag) for m, flag in zip(request.messages, dated)]
        undated = [m._replace(timestamp_ms=None) if flag else m for m, flag in zip(request.messages, dated)]
        request = request._replace(messages=messages, fingerprint=fingerprint(request.session_id, undated))
    placement = _placement(ids)
    if given is not None and (placement is None or type(given) is not int or given < placement[1][-1]):
        raise InvalidField("numbers_given", "must be a number no less than the last message's (with message ids)")
    return ImportRecord(request, None if placement is None else placement + (given or placement[1][-1],))


_EXPORTED = {"id", "dated_on_receipt"}  # what an export writes in an Add message beside its fields
EXPORTED_FIELDS = ("numbers_given",)  # what it writes in an Add beside the Add's


def _placement(ids: Sequence[Any]) -> Optional[Tuple[str, Tuple[int, ...]]]:
    """(tag, numbers) of an exported Add's message ids, all or none of them given; None for none."""
    if all(i is None for i in ids):
        return None
    tags, numbers = set(), []
    for j, given in enumerate(ids):
        match = _ID.fullmatch(given) if isinstance(given, str) else None
        if match is None:
            raise InvalidField("messages[%d].id" % j, "must be a message id m-<16 hex digits>-<number>, as an export "
                               "writes it (every message of the Add carries one, or none does)")
        tags.add(match.group(1))
        numbers.append(int(match.group(2)))
        if len(tags) > 1 or (j and numbers[j] <= numbers[j - 1]):
            raise InvalidField("messages[%d].id" % j, "must be of the same session as the Add's first message's, "
                               "numbered after the one before it")
    return tags.pop(), tuple(numbers)


# -- LoCoMo -------------------------------------------------------------------------------


class LocomoTurn(NamedTuple):
    dia_id: str  # LoCoMo's turn id ("D1:3"), what its questions' evidence names
    role: str
    content: str
    timestamp_ms: int


def locomo_time_ms(text: str) -> int:
    """LoCoMo's "1:56 pm on 8 May, 2023" as Unix ms (read as UTC)."""
    moment = datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp()) * 1000


def locomo_content(turn: Mapping[str, Any]) -> str:
    """A turn as the challenge platform sends it: "Speaker: text" plus any photo caption."""
    content = "%s: %s" % (turn["speaker"], turn["text"])
    if turn.get("blip_caption"):
        content += " [shares a photo: %s]" % turn["blip_caption"]
    return content


def locomo_sessions(sample: Mapping[str, Any]) -> List[Tuple[str, List[LocomoTurn]]]:
    """A LoCoMo sample's sessions in order, as (session id "session_<n>", its turns); empty ones left out."""
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv
                     if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list) and conv[k])
    out = []
    for n in numbers:
        stamp = locomo_time_ms(conv["session_%d_date_time" % n])
        out.append(("session_%d" % n, [LocomoTurn(t["dia_id"], "user" if t["speaker"] == conv["speaker_a"]
                                                  else "assistant", locomo_content(t), stamp)
                                       for t in conv["session_%d" % n]]))
    return out


def session_add_bodies(user_id: str, session_id: str, messages: Sequence[Mapping[str, Any]],
                       max_messages: int = MAX_ADD_MESSAGES) -> List[Dict[str, Any]]:
    """The Adds that send one session's messages, `max_messages` at most each, request ids
    "<user>/<session>/<first message's index>" (so sending them again stores nothing)."""
    return [{"request_id": "%s/%s/%d" % (user_id, session_id, start), "user_id": user_id, "session_id": session_id,
             "messages": [dict(m) for m in messages[start:start + max_messages]]}
            for start in range(0, len(messages), max_messages)]


def locomo_records(samples: Iterable[Mapping[str, Any]]) -> Iterator[Dict[str, Any]]:
    """The Add bodies of LoCoMo samples (a LoCoMo file's JSON): each sample's `sample_id` is its user."""
    for sample in samples:
        for session_id, turns in locomo_sessions(sample):
            messages = [{"role": t.role, "content": t.content, "timestamp": t.timestamp_ms} for t in turns]
            yield from session_add_bodies(sample["sample_id"], session_id, messages)


def read_locomo(path: str) -> Iterator[Dict[str, Any]]:
    """The Add bodies of a LoCoMo file (locomo10.json's form); InvalidField naming what is not LoCoMo."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        samples = decode_json(data.decode("utf-8"))  # nesting bounded (decoding.MAX_JSON_DEPTH)
    except ValueError as e:  # UnicodeDecodeError is one
        raise InvalidField("locomo", "file is not JSON: %s" % e) from e
    if not isinstance(samples, list):
        raise InvalidField("locomo", "file must hold a JSON array of samples, got %s" % type(samples).__name__)
    return iter(locomo_bodies(samples, lambda problem: InvalidField(
        "locomo", "file is not in LoCoMo's format (%s)" % problem)))


def locomo_bodies(samples: Iterable[Mapping[str, Any]], error: Callable[[str], Exception]) -> List[Dict[str, Any]]:
    """locomo_records() read whole; what is not LoCoMo's form raises `error(problem)`, the problem
    as "KeyError: 'conversation'" (read_locomo's InvalidField, or `flowmem import`'s UsageError)."""
    try:
        return list(locomo_records(samples))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise error("%s: %s" % (type(e).__name__, e)) from e
