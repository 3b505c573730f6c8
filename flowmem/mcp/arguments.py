"""A tool call's arguments checked against the tool's input schema: the subset of JSON Schema the tools use.

MCP requires a server to validate tool inputs, and a model calling a tool corrects
itself best from one sentence naming the field (`messages[1].content must be a
string, got an integer`), so the problem is named as the contract names fields. Only
what the tools' schemas use is understood: `type` (one or a list), `properties`,
`required`, `additionalProperties: false`, `items`, `enum`, `minimum`, `maximum`,
`minItems`; the rest (`minLength`, `default`, descriptions) is for the client and the
model to read. A string no UTF-8 holds (a lone surrogate) is named before any of it,
wherever it is, keys included. The checks of meaning (blank text, control characters in ids, Unix
seconds sent as milliseconds, bad cursors) stay in validation.py, which Memory
applies as for any other caller.

Two leniencies, both for models: an optional property sent as null counts as left out
(many clients fill every property a schema declares), and a number with no fractional
part is an integer (JSON Schema 2020-12 says so too: 5.0 is an integer).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Union

from ..surrogates import first_unpaired
from ..validation import json_type

JSON_TYPES = {
    "object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
    "number": "a number", "boolean": "a boolean", "null": "null",
}


def _allowed(schema: Mapping[str, Any]) -> List[str]:
    kind: Union[str, List[str], None] = schema.get("type")
    if kind is None:
        return []
    return [kind] if isinstance(kind, str) else list(kind)


def problem(value: Any, schema: Mapping[str, Any], field: str = "") -> Optional[str]:
    """The first way `value` breaks `schema`, as a sentence naming the field; None if it fits.

    `field` is the path so far ("" for the arguments object itself, which is first searched whole
    for a lone surrogate, in a key or a value: surrogates.py).
    """
    if not field:
        unpaired = first_unpaired(value)
        if unpaired:
            return "%s %s" % unpaired[:2]
    allowed = _allowed(schema)
    found = json_type(value)
    if allowed and found not in allowed and not (found == "integer" and "number" in allowed):
        wanted = " or ".join(JSON_TYPES[t] for t in allowed)
        return "%s must be %s, got %s" % (field or "arguments", wanted, JSON_TYPES.get(found, found))
    if "enum" in schema and value not in schema["enum"]:
        return "%s must be one of %s, got %s" % (field, ", ".join(map(repr, schema["enum"])), _shown(value))
    if found in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return "%s must be at least %s, got %s" % (field, schema["minimum"], _shown(value))
        if "maximum" in schema and value > schema["maximum"]:
            return "%s must be at most %s, got %s" % (field, schema["maximum"], _shown(value))
    if found == "array":
        return _array_problem(value, schema, field)
    if found == "object":
        return _object_problem(value, schema, field)
    return None


def _array_problem(value: List[Any], schema: Mapping[str, Any], field: str) -> Optional[str]:
    if len(value) < schema.get("minItems", 0):
        return "%s must hold at least %d item(s)" % (field, schema["minItems"])
    items = schema.get("items")
    if items is None:
        return None
    for i, item in enumerate(value):
        found = problem(item, items, "%s[%d]" % (field, i))
        if found:
            return found
    return None


def _object_problem(value: Dict[str, Any], schema: Mapping[str, Any], field: str) -> Optional[str]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    prefix = field + "." if field else ""
    # A misspelt name first: "userId is not an argument" says more than "user_id is required".
    if schema.get("additionalProperties") is False:
        unknown = [name for name in value if name not in properties]
        if unknown:
            return "%s%s is not an argument%s; %s takes %s" % (
                prefix, unknown[0], "" if field else " of this tool", field or "it", ", ".join(properties))
    for name in schema.get("required", ()):
        if value.get(name) is None:
            return "%s%s is required" % (prefix, name)
    for name, sub in properties.items():
        # An optional property sent as null is taken as left out (see the module docstring).
        if value.get(name) is not None:
            found = problem(value[name], sub, prefix + name)
            if found:
                return found
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def present(arguments: Mapping[str, Any], *names: str) -> Dict[str, Any]:
    """The arguments among `names` that were given (not null), whole numbers as int.

    A checked integer may arrive as 5.0; the core takes Python ints.
    """
    out: Dict[str, Any] = {}
    for name in names:
        value = arguments.get(name)
        if value is not None:
            out[name] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out
