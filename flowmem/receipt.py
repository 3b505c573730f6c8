"""An Add's time of receipt, read from a Memory's clock and checked before anything is stored.

`Memory(clock=...)` dates the messages of an Add that sends none with a timestamp by the
clock's reading: Unix seconds, as time.time() gives them. A reading that is no such time
(milliseconds, as `time.time() * 1000` gives them; NaN; a datetime) was stored as it came,
and then every list and search of that user failed to show its date (OverflowError past
year 9999). receipt_ms() refuses it at the Add instead, naming the clock, by the rule a
message's own timestamp is held to (validation.py): Unix milliseconds within years 1973 to
9999, so that every date stored is one a listing and a search can show. Memory reads its
clock at every Add, dated or not, so a wrong clock shows at the first Add, not at the
first one that happens to need it.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from .errors import InvalidField
from .validation import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS


def receipt_ms(reading: Any) -> int:
    """A clock's `reading` (Unix seconds) as Unix milliseconds; InvalidField naming `clock` when it is
    not a number, or not a time within years 1973 to 9999 (what a message's timestamp may be)."""
    try:
        seconds = float(reading) if isinstance(reading, numbers.Real) and not isinstance(reading, bool) else math.nan
    except OverflowError:  # an int or Fraction past any float
        seconds = math.inf
    if not math.isfinite(seconds):
        raise InvalidField("clock", "must return Unix seconds as a finite number, as time.time() does; it returned "
                           "%s" % _shown(reading))
    ms = int(seconds * 1000)
    if MIN_TIMESTAMP_MS <= ms <= MAX_TIMESTAMP_MS:
        return ms
    hint = ""
    if MIN_TIMESTAMP_MS <= seconds <= MAX_TIMESTAMP_MS:
        hint = "; that is Unix milliseconds: return seconds (time.time(), not time.time() * 1000)"
    raise InvalidField("clock", "must return Unix seconds within years 1973 to 9999 (%d to %d), as time.time() "
                       "does; it returned %s%s" % (MIN_TIMESTAMP_MS // 1000, MAX_TIMESTAMP_MS // 1000,
                                                   _shown(reading), hint))


def _shown(reading: Any) -> str:
    text = repr(reading)
    return text if len(text) <= 80 else text[:77] + "..."
