"""What a run of the slow-client bench does: its plan (FULL or --quick) and its phases, a to f."""
from __future__ import annotations

from typing import NamedTuple, Optional


class Plan(NamedTuple):
    """How big each part of the run is; `--quick` picks smaller values."""

    users: int  # prepared users...
    messages_per_user: int  # ...and messages each (Adds of 20)
    searches: int  # real client, per phase: keep-alive Searches
    adds: int  # keep-alive Adds
    fresh: int  # Searches on a fresh connection each
    hold_s: float  # a hostile phase lasts at least this long
    measure_budget_s: float  # the real client stops after this long in a phase, done or not


FULL = Plan(4, 300, 300, 100, 100, 30.0, 90.0)
QUICK = Plan(3, 200, 100, 30, 30, 12.0, 30.0)


class PhaseSpec(NamedTuple):
    key: str
    label: str
    kind: Optional[str]  # hostile connection kind, None for a baseline
    count: int  # type: ignore[assignment]  # shadows tuple.count(), which nothing here calls


ALL_PHASES = "abcdef"
