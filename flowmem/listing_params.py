"""The listing calls' page parameters (Memory.list_*, export_page): a page size and an order.

HTTP passes them as query strings, so digits may come as text; they are read with the same
strict rules as every other number (validation.py): an integer is an optional `-` and at most
MAX_DIGITS ASCII digits, else InvalidField naming the parameter. A moment (`since`, `until`)
is validation.parse_time()'s, which a Search's filters read too.
"""
from __future__ import annotations

import json
from typing import Any

from .errors import InvalidField
from .validation import integer_text, parse_integer, shown_integer

MAX_PAGE = 1000
ORDERS = ("asc", "desc")


def parse_limit(value: Any, field: str = "limit", default: int = 50) -> int:
    """A page size from 1 to MAX_PAGE (an integer, or its decimal digits as text); `default` if None."""
    if value is None:
        return default
    value = integer_text(value, field)
    if isinstance(value, str):
        raise InvalidField(field, "must be an integer from 1 to %d in ASCII digits, got %s"
                           % (MAX_PAGE, json.dumps(value, ensure_ascii=False)[:80]))
    limit = parse_integer(value, field)
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidField(field, "must be from 1 to %d, got %s" % (MAX_PAGE, shown_integer(limit)))
    return limit


def parse_order(value: Any, field: str = "order") -> bool:
    """"asc" (the default) or "desc": True when descending."""
    if value is None:
        return False
    if value not in ORDERS:
        raise InvalidField(field, "must be \"asc\" or \"desc\", got %s" % json.dumps(value, ensure_ascii=False)[:80])
    return value == "desc"
