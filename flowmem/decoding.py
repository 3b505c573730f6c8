"""JSON from a client, read one way everywhere: decode_json().

HTTP bodies (decode_json_object(): a JSON object, or the contract's 400), MCP messages (mcp/protocol.py), files for
`flowmem add` and `import` (commands/export_import.py, portable.py) and the answers Client reads
(client.py) all decode here, so each refuses the same things with a ValueError saying
why: text that is not JSON, NaN and Infinity (not JSON, though Python writes them), an
integer too long for int() (Python's limit, named without its advice to programmers),
and nesting deeper than MAX_JSON_DEPTH.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Dict

from .errors import BadRequest

# The deepest JSON any caller may send. The contract's deepest body, an import, is 5 levels
# ({"records": [{"messages": [{...}]}]}) and an MCP message about 6; past 64 a value is no one's
# request. Bounding it where JSON is read means nothing later (json.dumps of an MCP Add to derive
# its request_id, repr in an error) can meet nesting that exhausts Python's recursion limit.
MAX_JSON_DEPTH = 64
NESTED_TOO_DEEPLY = "is nested too deeply (more than %d levels of arrays and objects)" % MAX_JSON_DEPTH


def _reject_constant(name: str) -> Any:
    raise ValueError("%s is not valid JSON" % name)


def decode_json(text: str) -> Any:
    """`text` as a JSON value, or ValueError saying why it is not one a client may send: not JSON,
    NaN or Infinity, an integer too long to convert, or nesting deeper than MAX_JSON_DEPTH."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        # The recursion's traceback is thousands of frames of the decoder: it explains nothing.
        raise ValueError(NESTED_TOO_DEEPLY) from None
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError) or "integer string conversion" not in str(e):
            raise
        # Python's own words name sys.set_int_max_str_digits(), advice for a programmer, not a client.
        raise ValueError("it holds a number of more than %d digits" % sys.get_int_max_str_digits()) from e
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise ValueError(NESTED_TOO_DEEPLY)
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels in `value` (a walk without recursion)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def decode_json_object(body: bytes) -> Dict[str, Any]:
    """`body` (UTF-8 bytes) as a JSON object, or BadRequest saying why it is not one (decode_json())."""
    if not body.strip():
        raise BadRequest("request body is empty; send a JSON object")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest("request body is not UTF-8") from e
    try:
        value = decode_json(text)
    except ValueError as e:  # JSONDecodeError, over-long integers, NaN/Infinity, nesting
        if str(e) == NESTED_TOO_DEEPLY:
            raise BadRequest("request body " + NESTED_TOO_DEEPLY) from None
        raise BadRequest("request body is not valid JSON: %s" % e) from e
    if not isinstance(value, dict):
        raise BadRequest("request body must be a JSON object, got a JSON %s" % type(value).__name__)
    return value
