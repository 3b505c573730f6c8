"""The suite's sizes and each user's plan: how many users, sessions and questions of each category."""
from __future__ import annotations

import datetime

SIZES = {"small": {"en": 4, "zh": 3}, "medium": {"en": 16, "zh": 12}}

# Users of the harder groups (tools/evalkit/synthetic_hard.py), numbered from HARD_FIRST, after the others.
HARD_SIZES = {"small": {"en": 1, "zh": 1}, "medium": {"en": 4, "zh": 4}}

HARD_FIRST = 51

HARD_GAP_DAYS = (6, 18)  # sessions spread over several months, so that a month or a season leaves some out

HARD_LAST_START_DAY = datetime.date(2023, 3, 1)

SESSIONS_PER_USER = 12

MIN_TURNS, MAX_TURNS = 8, 20

FIRST_DAY, LAST_START_DAY = datetime.date(2023, 1, 9), datetime.date(2023, 7, 15)

GAP_DAYS = (2, 7)

PLAN = {
    "single-hop": 5, "paraphrase": 2, "multi-session": 3, "knowledge-update": 4,
    "temporal-relative": 5, "temporal-absolute": 4, "multiple-choice": 3, "unanswerable": 3,
}

FILLER_RELATIVE = (2, 3)  # labelled relative expressions in filler turns, per user

FILLER_VAGUE = 2  # unresolvable expressions in filler turns, per user

PAST_SHARE = 0.65  # share of temporal-relative events in the past (the rest are planned)

REACTION_SHARE = 0.5  # how often a planted fact gets a reply that mentions its entity
