"""Check Add and Search bodies against the contract; name the first bad field.

Parsers take the decoded JSON object and return plain, typed requests, or raise
InvalidField naming the field the way the contract does (`messages[2].content`).
Unknown fields are ignored, as the contract requires.
"""
from __future__ import annotations

import math
from typing import Any, List, Mapping, NamedTuple, Optional

from .errors import InvalidField
from .store import NewMessage

# Timestamps outside years 1..9999 cannot be shown as ISO-8601 dates.
MIN_TIMESTAMP_MS = -62135596800000
MAX_TIMESTAMP_MS = 253402300799999


class AddRequest(NamedTuple):
    request_id: str
    user_id: str
    session_id: str
    messages: List[NewMessage]


class SearchRequest(NamedTuple):
    query: str
    user_id: str
    top_k: int
    options: List[str]


def _text(value: Any, field: str, blank_ok: bool = False) -> str:
    if value is None:
        raise InvalidField(field, "is required")
    if not isinstance(value, str):
        raise InvalidField(field, "must be a string, got %s" % _json_type(value))
    if not blank_ok and not value.strip():
        raise InvalidField(field, "must not be blank")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidField(field, "is not valid Unicode (it holds an unpaired surrogate escape)")
    return value


def _integer(value: Any, field: str) -> int:
    """An integer, or a float with no fractional part (JSON encoders write 5.0 for 5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidField(field, "must be an integer, got %s" % _json_type(value))
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise InvalidField(field, "must be an integer, got %r" % value)
        value = int(value)
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_add(body: Mapping[str, Any]) -> AddRequest:
    """Validate an Add body; raise InvalidField naming the first problem."""
    request_id = _text(body.get("request_id"), "request_id")
    user_id = _text(body.get("user_id"), "user_id")
    session_id = _text(body.get("session_id"), "session_id")
    raw = body.get("messages")
    if raw is None:
        raise InvalidField("messages", "is required")
    if not isinstance(raw, list):
        raise InvalidField("messages", "must be an array, got %s" % _json_type(raw))
    if not raw:
        raise InvalidField("messages", "must not be empty")
    messages = [_message(m, "messages[%d]" % i) for i, m in enumerate(raw)]
    return AddRequest(request_id, user_id, session_id, messages)


def _message(raw: Any, field: str) -> NewMessage:
    if not isinstance(raw, dict):
        raise InvalidField(field, "must be an object, got %s" % _json_type(raw))
    role = _text(raw.get("role"), field + ".role")
    content = _text(raw.get("content"), field + ".content")
    timestamp: Optional[int] = None
    if raw.get("timestamp") is not None:
        timestamp = _integer(raw["timestamp"], field + ".timestamp")
        if not MIN_TIMESTAMP_MS <= timestamp <= MAX_TIMESTAMP_MS:
            raise InvalidField(field + ".timestamp", "must be Unix milliseconds within years 1 to 9999")
    return NewMessage(role, content, timestamp)


def parse_search(body: Mapping[str, Any], top_k_cap: int) -> SearchRequest:
    """Validate a Search body; `top_k` above `top_k_cap` is clamped, never an error."""
    query = _text(body.get("query"), "query")
    user_id = _text(body.get("user_id"), "user_id")
    if body.get("top_k") is None:
        raise InvalidField("top_k", "is required")
    top_k = _integer(body["top_k"], "top_k")
    if top_k < 0:
        raise InvalidField("top_k", "must not be negative, got %d" % top_k)
    options: List[str] = []
    raw = body.get("options")
    if raw is not None:
        if not isinstance(raw, list):
            raise InvalidField("options", "must be an array of strings, got %s" % _json_type(raw))
        options = [_text(o, "options[%d]" % i, blank_ok=True) for i, o in enumerate(raw)]
    return SearchRequest(query, user_id, min(top_k, top_k_cap), options)
