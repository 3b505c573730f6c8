"""Read request bodies and check Add and Search bodies against the contract; name the first bad field.

Parsers take the decoded JSON object and return plain, typed requests, or raise
InvalidField naming the field the way the contract does (`messages[2].content`).
Unknown fields are ignored, as the contract requires, and named (`ignored_fields` of the
request: HTTP answers with them); with `strict` (the Python API, MCP) they are refused
instead. Unknown keys of a Search's `filters`, which the contract does not have, are
always refused: _filters() says why. `metadata` (on an Add and on its messages) is
checked by metadata.py, and a lone surrogate anywhere in a body by surrogates.py.

Beyond the JSON types, three rules protect what is stored and what a search costs:

- Ids (`request_id`, `user_id`, `session_id`) must not hold control characters.
  An id is a name people type back (`flowmem delete-user --user alice`); a NUL
  cannot be passed on a command line at all, and `"alice\\u0000"` was once deleted as
  `alice`. Message content and role are stored verbatim and keep every character;
  the query and options are never stored, so control characters there are harmless
  and stay accepted.
- A message timestamp below 10^11 is refused: as Unix milliseconds it is before
  1973-03-03, and in practice it is Unix seconds, which would date every piece of
  evidence to January 1970. It is refused, never converted: the contract says Unix ms.
- Numbers and times are read one strict way wherever a client sends them (a query
  string, a JSON body, a CLI flag, an MCP argument): as text, an integer is an
  optional `-` and at most MAX_DIGITS ASCII digits (`²`, `①` and `１２` are digits to
  str.isdigit() and int(), not to a client's JSON or a URL); any integer is range-checked
  before it is shown in an error (a 5,000-digit one is named by its length); an ISO-8601
  time must fall within years 1 to 9999 once its offset is applied. So every such value
  is a number in range or a 422 naming its field, never an exception from int() or datetime.
- A Search's query and options are cut to a bounded size (the rest is ignored, never
  a 422: a long benchmark question still gets evidence for what it asks first);
  query.py bounds the terms read from what is kept. Together they bound the work of
  any one search.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
from typing import Any, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .errors import InvalidField
from .metadata import merged, parse_filter, parse_metadata
from .retrieval.filters import Filters
from .storage.rows import NewMessage
from .surrogates import refuse_unpaired

# Unix milliseconds below 10^11 are before 1973-03-03T09:46:40Z. No conversation
# memory holds evidence that old, while Unix *seconds* of any date from 1973 to 5138
# fall there: such a value is a client sending seconds, and taking it as
# milliseconds would date every piece of evidence in January 1970.
MIN_TIMESTAMP_MS = 10 ** 11
# Timestamps after year 9999 cannot be shown as ISO-8601 dates.
MAX_TIMESTAMP_MS = 253402300799999

# Control characters (Unicode category Cc: U+0000-U+001F, U+007F-U+009F) have no
# place in an id, TAB included: one rule, easy to state, and no id that a terminal,
# a log or a shell could show or pass differently from what was stored.
_ID_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# Search cost bounds (the rest is ignored), measured with `python tools/bench_query_caps.py`;
# query.py gives the figures for the term caps these feed. The characters bound
# tokenizing: analyze() takes 0.8 ms on 2,000 characters, 1.5 s on 1 MiB, 12 s on
# 8 MiB (the body limit). 2,000 characters is 15 times LoCoMo's longest question (131);
# 16 options of 500 characters (a few sentences each) leave multiple choice whole (the
# synthetic suite's have at most 5 options of at most 16 characters; LoCoMo has none).
MAX_QUERY_CHARS = 2000
MAX_OPTIONS = 16
MAX_OPTION_CHARS = 500

# The most digits an integer written as text may have: 2^63 (SQLite's integers) has 19, and
# no field takes more than 15 (a timestamp). A longer one is refused by its length, before
# int() would spend time on it (or refuse it past 4,300 digits).
MAX_DIGITS = 19
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,%d}" % MAX_DIGITS)  # [0-9], not \d: ASCII digits only
# Unix ms of 0001-01-01T00:00:00Z, the first moment a datetime (and so an ISO-8601 time) can show.
MIN_ISO_MS = -62135596800000


class AddRequest(NamedTuple):
    request_id: str
    user_id: str
    session_id: str
    messages: List[NewMessage]
    ignored_fields: Tuple[str, ...] = ()  # unknown fields, as the contract lets a body have
    fingerprint: str = ""  # the body's digest (fingerprint()): what tells a replay of another body
    dated_on_receipt: int = 0  # how many messages had no timestamp and took the Add's receipt time
    anchored: bool = False  # request_id names the body only: stored anchored where it lands (storage/ids.py)


class SearchRequest(NamedTuple):
    query: str
    user_id: str
    top_k: int
    options: List[str]
    filters: Optional[Filters] = None  # None: every message of the user's is a candidate
    ignored_fields: Tuple[str, ...] = ()


ADD_FIELDS = ("request_id", "user_id", "session_id", "messages", "metadata", "anchored")
MESSAGE_FIELDS = ("role", "content", "timestamp", "metadata")
SEARCH_FIELDS = ("query", "user_id", "top_k", "options", "filters")


def unknown_fields(body: Mapping[str, Any], known: Sequence[str], prefix: str, strict: bool, what: str) -> List[str]:
    """The fields of `body` not in `known` (named with `prefix`); with `strict`, InvalidField for the first."""
    names = [prefix + str(key) for key in body if key not in known]
    if names and strict:
        raise InvalidField(names[0], "is not a field of %s; the fields are %s" % (what, ", ".join(known)))
    return names


def fingerprint(session_id: str, messages: Sequence[NewMessage]) -> str:
    """A digest of what an Add stores: its session and its messages as sent (timestamps as given)."""
    text = json.dumps([session_id, [[m.role, m.content, m.timestamp_ms, m.metadata] for m in messages]],
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _text(value: Any, field: str, blank_ok: bool = False) -> str:
    if value is None:
        raise InvalidField(field, "is required")
    if not isinstance(value, str):
        raise InvalidField(field, "must be a string, got %s" % _json_type(value))
    if not blank_ok and not value.strip():
        raise InvalidField(field, "must not be blank")
    refuse_unpaired(value, field)
    return value


def _id(value: Any, field: str) -> str:
    """A non-blank string without control characters: names the first one found."""
    text = _text(value, field)
    control = _ID_CONTROL.search(text)
    if control:
        raise InvalidField(field, "must not contain control characters (U+%04X at position %d)"
                           % (ord(control.group()), control.start()))
    return text


def _integer(value: Any, field: str) -> int:
    """An integer, or a float with no fractional part (JSON encoders write 5.0 for 5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidField(field, "must be an integer, got %s" % _json_type(value))
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise InvalidField(field, "must be an integer, got %r" % value)
        value = int(value)
    return value


def shown_integer(value: int) -> str:
    """An integer as an error message shows it: its digits, or how many there are past MAX_DIGITS
    (str() of one past 4,300 digits raises, and a 300-digit echo helps no one)."""
    text = str(value) if value.bit_length() < 14000 else None  # 2^14000 has 4,215 digits
    if text is not None and len(text.lstrip("-")) <= MAX_DIGITS:
        return text
    length = "%d" % len(text.lstrip("-")) if text is not None else "over 4,000"
    return "a %snumber of %s digits" % ("negative " if value < 0 else "", length)


def integer_text(value: Any, field: str) -> Any:
    """`value` as an int if it is text written as an integer (`-` and ASCII digits, ASCII spaces around
    allowed, no other white space); other text, and anything not text, is returned as it is, for the
    caller's check to name.

    Text of more than MAX_DIGITS digits is refused here, by its length: no field takes a number that long.
    """
    if not isinstance(value, str):
        return value
    text = value.strip(" ")
    if _INTEGER_TEXT.fullmatch(text):
        return int(text)
    digits = text[1:] if text[:1] == "-" else text
    if digits and len(digits) > MAX_DIGITS and digits.isascii() and digits.isdigit():
        raise InvalidField(field, "must be a number of at most %d digits, got %d digits" % (MAX_DIGITS, len(digits)))
    return value


def _timestamp(value: Any, field: str) -> int:
    """Unix milliseconds from 1973-03-03 to the end of year 9999; seconds are named as such."""
    timestamp = _integer(value, field)
    if timestamp > MAX_TIMESTAMP_MS:
        raise InvalidField(field, "must be Unix milliseconds within years 1973 to 9999, got %s"
                           % shown_integer(timestamp))
    if timestamp >= MIN_TIMESTAMP_MS:
        return timestamp
    rule = "must be Unix milliseconds from %d (%s) on" % (MIN_TIMESTAMP_MS, _iso(MIN_TIMESTAMP_MS))
    if timestamp * 1000 < MIN_TIMESTAMP_MS:
        # As seconds it would be before 1973 too: there is no milliseconds value to suggest.
        raise InvalidField(field, "%s, got %s" % (rule, shown_integer(timestamp)))
    raise InvalidField(field, "%s; %d looks like Unix seconds (as milliseconds it is %s): for %s send %d"
                       % (rule, timestamp, _iso(timestamp), _iso(timestamp * 1000), timestamp * 1000))


def _iso(timestamp_ms: int) -> str:
    """The UTC time of Unix milliseconds, to the second ("2024-06-01T10:00:00Z")."""
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=timestamp_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def json_type(value: Any) -> str:
    """The JSON Schema type of a decoded JSON value ("integer" for a whole number, even written 5.0)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


_TYPE_IN_MESSAGES = {"boolean": "a boolean", "integer": "a number", "number": "a number", "string": "a string",
                     "array": "an array", "object": "an object"}


def _json_type(value: Any) -> str:
    """The value's type as an error message names it ("a number" for any number)."""
    kind = json_type(value)
    return _TYPE_IN_MESSAGES.get(kind, kind)


def parse_add(body: Mapping[str, Any], received_ms: Optional[int] = None, strict: bool = False,
              max_messages: Optional[int] = None) -> AddRequest:
    """Validate an Add body; raise InvalidField naming the first problem (`max_messages`: the most it may hold).

    received_ms: when the Add arrived (Unix ms): an Add none of whose messages has a timestamp has
    them all dated with it (None leaves them undated). In an Add where some messages have one,
    those without stay undated: the time it arrived may be years after the others', and dating
    them with it would cut the conversation apart by time. strict: refuse unknown fields.
    """
    refuse_unpaired(body)  # a key or value no UTF-8 holds, anywhere in it, ignored fields included (surrogates.py)
    ignored = unknown_fields(body, ADD_FIELDS, "", strict, "an Add")
    request_id = _id(body.get("request_id"), "request_id")
    user_id = _id(body.get("user_id"), "user_id")
    session_id = _id(body.get("session_id"), "session_id")
    shared = parse_metadata(body.get("metadata"), "metadata")
    raw = body.get("messages")
    if raw is None:
        raise InvalidField("messages", "is required")
    if not isinstance(raw, list):
        raise InvalidField("messages", "must be an array, got %s" % _json_type(raw))
    if not raw:
        raise InvalidField("messages", "must not be empty")
    if max_messages is not None and len(raw) > max_messages:  # refused before any is read
        raise InvalidField("messages", "holds %d messages, more than the %d an Add may hold (max_add_messages); "
                           "send them in several Adds" % (len(raw), max_messages))
    messages = [_message(m, "messages[%d]" % i, shared, strict, ignored) for i, m in enumerate(raw)]
    digest = fingerprint(session_id, messages)
    undated = received_ms is not None and all(m.timestamp_ms is None for m in messages)
    if undated:
        messages = [m._replace(timestamp_ms=received_ms, dated_on_receipt=True) for m in messages]
    anchored = body.get("anchored", False)
    if not isinstance(anchored, bool):
        raise InvalidField("anchored", "must be true or false, got %s" % _json_type(anchored))
    return AddRequest(request_id, user_id, session_id, messages, tuple(ignored), digest,
                      len(messages) if undated else 0, anchored)


def _message(raw: Any, field: str, shared: Mapping[str, Any], strict: bool, ignored: List[str]) -> NewMessage:
    if not isinstance(raw, dict):
        raise InvalidField(field, "must be an object, got %s" % _json_type(raw))
    ignored.extend(unknown_fields(raw, MESSAGE_FIELDS, field + ".", strict, "an Add message"))
    role = _text(raw.get("role"), field + ".role")
    content = _text(raw.get("content"), field + ".content")
    timestamp: Optional[int] = None
    if raw.get("timestamp") is not None:
        timestamp = _timestamp(raw["timestamp"], field + ".timestamp")
    own = parse_metadata(raw.get("metadata"), field + ".metadata")
    return NewMessage(role, content, timestamp, merged(shared, own, field + ".metadata"))


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at the last whitespace before the cut if
    there is one (so no word is kept half), else exactly at `limit` (scripts without spaces)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit].isspace() or head[-1].isspace():
        return head
    # rsplit, not a regular expression: linear whatever the text (no backtracking).
    words = head.rsplit(None, 1)
    return words[0] if len(words) == 2 else head


def parse_search(body: Mapping[str, Any], top_k_cap: int, strict: bool = False) -> SearchRequest:
    """Validate a Search body; `top_k` above `top_k_cap` is clamped, never an error; `strict`
    refuses unknown fields instead of naming them.

    The query is cut to MAX_QUERY_CHARS and the options to the first MAX_OPTIONS,
    each to MAX_OPTION_CHARS: what lies beyond is ignored, never an error. `filters`
    is read by _filters().
    """
    refuse_unpaired(body)
    ignored = unknown_fields(body, SEARCH_FIELDS, "", strict, "a Search")
    query = clip(_text(body.get("query"), "query"), MAX_QUERY_CHARS)
    user_id = _id(body.get("user_id"), "user_id")
    if body.get("top_k") is None:
        raise InvalidField("top_k", "is required")
    top_k = _integer(body["top_k"], "top_k")
    if top_k < 0:
        raise InvalidField("top_k", "must not be negative, got %s" % shown_integer(top_k))
    options: List[str] = []
    raw = body.get("options")
    if raw is not None:
        if not isinstance(raw, list):
            raise InvalidField("options", "must be an array of strings, got %s" % _json_type(raw))
        # Every entry is checked (a malformed one is an error wherever it is); only the first are kept.
        options = [_text(o, "options[%d]" % i, blank_ok=True) for i, o in enumerate(raw)]
        options = [clip(o, MAX_OPTION_CHARS) for o in options[:MAX_OPTIONS]]
    return SearchRequest(query, user_id, min(top_k, top_k_cap), options, _filters(body.get("filters")),
                         tuple(ignored))


_FILTER_KEYS = ("session_id", "since", "until", "role", "metadata")


def _filters(raw: Any) -> Optional[Filters]:
    """A Search's `filters` object (retrieval/filters.py); None when absent, null or empty.

    Unlike the body's, its unknown keys are refused: a misspelt filter ignored would
    widen the search the caller meant to narrow. A null value is an absent filter.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InvalidField("filters", "must be an object, got %s" % _json_type(raw))
    for key in raw:
        if key not in _FILTER_KEYS:
            raise InvalidField("filters.%s" % key, "is not a filter; the filters are %s" % ", ".join(_FILTER_KEYS))
    given = {key: value for key, value in raw.items() if value is not None}
    if not given:
        return None
    # Times as the listing calls read them (parse_time()): ISO-8601, UTC unless an offset is named, or Unix ms.
    since = parse_time(given.get("since"), "filters.since")
    until = parse_time(given.get("until"), "filters.until")
    if since is not None and until is not None and since >= until:
        raise InvalidField("filters.until", "must be later than filters.since (until is exclusive: since %s and "
                           "until %s keep nothing)" % (_iso(since), _iso(until)))
    session_id = _id(given["session_id"], "filters.session_id") if "session_id" in given else None
    role = _text(given["role"], "filters.role") if "role" in given else None
    return Filters(session_id, since, until, role, parse_filter(given.get("metadata"), "filters.metadata"))


def parse_time(value: Any, field: str) -> Optional[int]:
    """A moment as Unix ms: an integer (or its digits as text) of Unix milliseconds, or an ISO-8601
    date or date and time (UTC unless it names an offset; `Z` accepted); None stays None."""
    if value is None:
        return None
    value = integer_text(value, field)
    if not isinstance(value, str):
        return _timestamp(value, field)
    text = value.strip()
    try:
        moment = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" and text else text)
    except ValueError as e:
        raise InvalidField(field, "must be an ISO-8601 date or time (2023-05-08, 2023-05-08T13:56:00Z) or Unix "
                           "milliseconds, got %s" % json.dumps(value, ensure_ascii=False)[:80]) from e
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    ms = (moment - epoch) // datetime.timedelta(milliseconds=1)
    # An offset can carry a time past either end of what a date can show (9999-12-31T23:59:59-23:59 is
    # year 10000 in UTC), and every such moment is later named as a date (validation.py, created_at).
    if not MIN_ISO_MS <= ms <= MAX_TIMESTAMP_MS:
        raise InvalidField(field, "must be within years 1 to 9999 in UTC, got %s"
                           % json.dumps(value, ensure_ascii=False)[:80])
    return ms


# An id as Add takes it (a non-blank string without control characters), InvalidField naming the field.
parse_id = _id

# The integer rule of a body, which the listing's page parameters follow too (listing_params.py).
parse_integer = _integer
