"""Metadata: the small JSON object a client may attach to an Add and to each of its messages.

An agent tags what it remembers (its source, the agent that said it, a topic) and later
keeps a search or a listing to a tag (`filters.metadata`). A message stores one object:
its Add's `metadata` merged with its own (its own keys win), checked here and stored
canonically (storage/metadata_index.py). What an object may hold is bounded, so that
what one message stores and what one filter costs stay small:

- at most MAX_KEYS keys, each a non-blank string of at most MAX_KEY_CHARS characters
  without control characters (a key is typed back in a filter);
- each value a string of at most MAX_VALUE_CHARS characters, a finite number or a
  boolean; null leaves the key out; arrays and objects are refused (a filter compares
  values for equality, which a nested value would leave unclear);
- the whole object at most MAX_BYTES bytes as JSON;
- keys and values valid Unicode: a lone surrogate (a JSON escape such as "\\ud800", which
  no UTF-8 holds) is refused naming the field, shown escaped (surrogates.py).

A filter (parse_filter()) takes the same keys and values, but a null is refused, never
read as no condition: `{"tenant": null}` kept every tenant's messages. No stored message
holds a null (an Add's null leaves its key out), so the filter could only ever mean "the
key is absent", which would give an application more than it named; one that means no
condition on a key leaves the key out. A listing's `metadata` may come as JSON text (a
query string's): text that is not a JSON object is a 422 naming the parameter, as any
other malformed value is (parse_filter_text()).

The challenge platform never sends metadata: its Adds and Searches are as before.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, Mapping, Optional

from .decoding import decode_json
from .errors import InvalidField
from .storage import metadata_index
from .surrogates import refuse_unpaired, shown

MAX_KEYS = 32
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 512
MAX_BYTES = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def parse_metadata(raw: Any, field: str) -> Dict[str, Any]:
    """A metadata object checked against the rules above ({} for None), null values left out;
    InvalidField naming `field` or `field.key` for the first problem."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidField(field, "must be an object of keys and values, got %s" % _kind(raw))
    out: Dict[str, Any] = {}
    for key, value in raw.items():
        _check_key(key, field)  # first: a key left out for its null is still one the client sent
        if value is not None:
            out[key] = _value(value, "%s.%s" % (field, key))
    if len(out) > MAX_KEYS:
        raise InvalidField(field, "must have at most %d keys, got %d" % (MAX_KEYS, len(out)))
    size = len((metadata_index.object_text(out) or "").encode("utf-8"))
    if size > MAX_BYTES:
        raise InvalidField(field, "must be at most %d bytes as JSON, got %d" % (MAX_BYTES, size))
    return out


def merged(add: Mapping[str, Any], own: Mapping[str, Any], field: str) -> Optional[str]:
    """A message's stored metadata: its Add's `add` with its `own` over it, as stored text (None for none)."""
    both = {**add, **own}
    if len(both) > MAX_KEYS:
        raise InvalidField(field, "with its Add's metadata has %d keys; at most %d" % (len(both), MAX_KEYS))
    text = metadata_index.object_text(both)
    if text is not None and len(text.encode("utf-8")) > MAX_BYTES:
        raise InvalidField(field, "with its Add's metadata is over %d bytes as JSON" % MAX_BYTES)
    return text


def parse_filter(raw: Any, field: str) -> metadata_index.Pairs:
    """A `filters.metadata` object as the (key, value) pairs a message must all hold; () for none (None or
    {}). A null value is refused (the module docstring says why)."""
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            _check_key(key, field)
            if value is None:
                raise InvalidField("%s.%s" % (field, key), "must be a string, a number or a boolean, not null: no "
                                   "message holds a null (an Add's null leaves its key out), and a filter never "
                                   "reads it as no condition; leave the key out for that")
    return metadata_index.pairs(parse_metadata(raw, field))


def parse_filter_text(raw: Any, field: str) -> metadata_index.Pairs:
    """parse_filter() of `raw`, or of the JSON object it is the text of (a query string's parameter); text
    that is not one is InvalidField naming `field`, never a ValueError."""
    if not isinstance(raw, str):
        return parse_filter(raw, field)
    try:
        value = decode_json(raw)
    except ValueError as e:  # not JSON, NaN, an over-long number, nesting past decoding.MAX_JSON_DEPTH
        raise InvalidField(field, "must be a JSON object of keys and values, got text that is not JSON (%s)"
                           % str(e)[:120]) from None
    if not isinstance(value, Mapping):
        raise InvalidField(field, "must be a JSON object of keys and values, got %s" % _kind(value))
    return parse_filter(value, field)


def _check_key(key: Any, field: str) -> None:
    if not isinstance(key, str) or not key.strip():
        raise InvalidField(field, "keys must be non-blank strings, got %s" % json.dumps(key)[:80])
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidField(field, "keys must be valid Unicode, got %s (it holds an unpaired surrogate escape)"
                           % shown(key)) from e
    if len(key) > MAX_KEY_CHARS:
        raise InvalidField(field, "keys must be at most %d characters, got one of %d" % (MAX_KEY_CHARS, len(key)))
    control = _CONTROL.search(key)
    if control:
        raise InvalidField(field, "keys must not contain control characters (U+%04X in %s)"
                           % (ord(control.group()), json.dumps(key)[:80]))


def _value(value: Any, field: str) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidField(field, "must be a finite number")
        if isinstance(value, int) and abs(value) >= 2 ** 63:
            raise InvalidField(field, "must be a number SQLite can hold (below 2^63 in size)")
        return value
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            raise InvalidField(field, "must be at most %d characters, got %d" % (MAX_VALUE_CHARS, len(value)))
        refuse_unpaired(value, field)
        return value
    raise InvalidField(field, "must be a string, a number or a boolean, got %s" % _kind(value))


def _kind(value: Any) -> str:
    """A value's JSON type as a reason names it ("a number", not Python's "a int")."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "a number", float: "a number", str: "a string"}.get(type(value), "a %s" % type(value).__name__)
