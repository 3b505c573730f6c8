"""The typed-chat set's sizes, each user's plan, and how often its noise strikes."""
from __future__ import annotations

import datetime

USERS = 5
SESSIONS = (6, 10)
MESSAGES = (40, 120)
FIRST_DAY = datetime.date(2024, 1, 8)
START_SPREAD_DAYS = 60
GAP_DAYS = (2, 9)
PLAN = {"burst-reply": 7, "burst-fact": 7, "own-time": 6, "single": 7, "update": 6, "unanswerable": 3}
CATEGORIES = list(PLAN)
NIGHT_SESSIONS, MULTI_DAY_SESSIONS = 2, 1
UNANSWERABLE_ANSWER = "Not mentioned in the conversation."

# Noise rates (per message unless said otherwise).
LOWER, DROP_PUNCT, TYPO, EMOJI, INTERRUPT, KEY_EXPOSED = 0.5, 0.6, 0.15, 0.1, 0.2, 0.3

DAY = datetime.timedelta(days=1)
UTC = datetime.timezone.utc
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
