"""Settings' values read from text (a FLOWMEM_* variable, a flag, a tool's NAME=VALUE): yes/no words, numbers.

config.py declares the settings and builds a Config; this reads one value of a declared
type, so that every place that takes a setting as text reads it alike.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from .errors import ConfigError


def to_bool(raw: Any) -> bool:
    """1/0, true/false, yes/no, on/off (any case) as a bool."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("not a yes/no value: %r" % raw)


def kind_of(field: dataclasses.Field) -> str:
    """The name of a field's value type: "int" for both `int` and `Optional[int]`."""
    kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "str")
    return kind[len("Optional["):-1] if kind.startswith("Optional[") else kind


def parse_value(field: dataclasses.Field, raw: str, variable: str) -> Any:
    """`raw` read as the type of setting `field`; ConfigError naming `variable` if it is not one."""
    kind = kind_of(field)
    try:
        if kind == "bool":
            return to_bool(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError as e:
        raise ConfigError("%s must be a %s, got %r" % (variable, "yes/no value" if kind == "bool" else "number",
                                                       raw)) from e
    return raw
