"""Lone surrogates in what a client sends: refused by the field that holds one, before anything else reads it.

JSON may escape any UTF-16 code unit, so `"\\ud800"` decodes to a Python string that is
no Unicode text: a lone (unpaired) surrogate. So does a command-line argument whose bytes
are not UTF-8 (Python decodes argv with surrogateescape). Such a string cannot be
encoded as UTF-8: SQLite refuses to bind it, json.dumps(ensure_ascii=False) output with
it cannot be sent, and an error reason or an Add's `ignored_fields` that echoes it fails
to encode. Each of those was a 500 (or a traceback, or MCP's internal error), wherever the
string sat: a metadata key, a filter's key, an unknown field's name, a value.

So every request is walked once, whole, keys and values at any depth (first_unpaired()),
before it is parsed: the first string holding one is a 422 naming where it is, as the
contract names fields (`messages[0].metadata` for one of its keys, `messages[0].content`
for a value), and its text is shown escaped (`"\\ud800"`), never as it is. validation.py
walks every Add and Search body (an import's records are Adds), metadata.py every
metadata object and filter (the Python API and the listing's `?metadata=` reach it
without a body), and MCP every tool call's arguments (mcp/arguments.py).
"""
from __future__ import annotations

import json
import re
from typing import Any, List, Mapping, Optional, Tuple

from .errors import InvalidField

_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_SHOWN_FIELD = 200  # a field's path as a reason names it: a long key name is cut, never echoed whole
_WHY = "it holds an unpaired surrogate escape"
NOT_UNICODE = "is not valid Unicode (%s)" % _WHY


def unpaired(text: str) -> bool:
    """Whether `text` holds a lone surrogate (and so has no UTF-8 encoding)."""
    return _SURROGATE.search(text) is not None


def shown(text: str) -> str:
    """`text` as a reason shows it: JSON with every character past ASCII escaped, cut to 80 characters."""
    return json.dumps(text)[:80]


def first_unpaired(value: Any, field: str = "") -> Optional[Tuple[str, str, str]]:
    """(field, problem, the string) for the first string in `value` (a decoded JSON value: object keys and
    values, array items, at any depth, in document order) holding a lone surrogate; None if there is none.

    `field` names `value` itself ("" for a request body: its keys are then fields of their own).
    A bad key is named by the object holding it (or, at the top, by its escaped name).
    """
    if isinstance(value, str):
        return (field or "value", NOT_UNICODE, value) if unpaired(value) else None
    if _encodes(value):
        return None  # the common case, checked in C: only a value that fails is walked to find where
    stack: List[Tuple[str, Any]] = [(field, value)]
    while stack:  # no recursion: a client's nesting is bounded where JSON is read, a Python caller's is not
        path, item = stack.pop()
        if isinstance(item, str):
            if unpaired(item):
                return path or "value", NOT_UNICODE, item
        elif isinstance(item, Mapping):
            children = []
            for key, child in item.items():
                if isinstance(key, str) and unpaired(key):
                    if not path:
                        return shown(key)[1:-1], "is a field name that is not valid Unicode (%s)" % _WHY, key
                    return path, "has a key that is not valid Unicode (%s: %s)" % (shown(key), _WHY), key
                children.append((("%s.%s" % (path, key) if path else str(key))[:MAX_SHOWN_FIELD], child))
            stack.extend(reversed(children))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed([("%s[%d]" % (path, i), child) for i, child in enumerate(item)]))
    return None


def _encodes(value: Any) -> bool:
    """Whether `value` is JSON whose every key and string has a UTF-8 encoding (False when that is not
    known: a value json cannot write, or nested past its recursion, is walked instead)."""
    try:
        json.dumps(value, ensure_ascii=False, check_circular=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        return False
    return True


def refuse_unpaired(value: Any, field: str = "") -> None:
    """InvalidField for the first lone surrogate in `value` (first_unpaired()), caused by the string's
    UnicodeEncodeError; nothing if there is none."""
    found = first_unpaired(value, field)
    if found is not None:
        try:
            found[2].encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidField(found[0], found[1]) from e
