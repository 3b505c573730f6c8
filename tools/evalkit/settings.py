"""`--set NAME=VALUE`: a flowmem setting overridden on an evaluation's or a tuning's command line.

One parser for tools/eval.py, tune.py and crossval.py, so that a setting is spelled and typed
the same in each: NAME is a Config field, VALUE typed like its default.
"""
from __future__ import annotations

from typing import Any, Dict, List

from flowmem import config as flowmem_config


def parse_settings(pairs: List[str]) -> Dict[str, Any]:
    """`name=value` pairs into Config flags, typed like the Config field."""
    defaults = flowmem_config.Config()
    out: Dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in flowmem_config.field_names():
            raise SystemExit("eval: --set takes NAME=VALUE with NAME one of: %s"
                             % ", ".join(flowmem_config.field_names()))
        kind = type(getattr(defaults, name))
        if kind is bool:
            out[name] = flowmem_config.to_bool(value)
        else:
            out[name] = value if kind in (str, type(None)) else kind(value)
    return out
