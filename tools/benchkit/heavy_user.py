"""One heavy user made of LoCoMo's conversations: the speed benches' corpus and questions.

corpus() gives the Add bodies of one user (USER) holding `n` messages: the development
file's sessions in order, then copies of them a year later each, as many as it takes;
questions() draws development questions with a seed. tools/bench_locomo.py times searches
of that user, tools/profile_search.py times each stage of them.
"""
from __future__ import annotations

import random
from typing import Any, Dict, Iterator, List

from tools.evalkit import dataset as datasets
from tools.evalkit.replay import add_bodies

USER = "heavy-user"


def corpus(data: datasets.Dataset, n: int) -> Iterator[Dict[str, Any]]:
    """Add bodies for one user holding `n` messages: the sessions in order, then copies a year later each."""
    added, copy = 0, 0
    while added < n:
        for conversation in data.conversations:
            for body in add_bodies(conversation):
                messages = body["messages"][: n - added]
                if not messages:
                    return
                shift = copy * datasets.YEAR_MS
                yield {"request_id": "%s/%d" % (body["request_id"], copy), "user_id": USER,
                       "session_id": "%s/%s/%d" % (conversation.user_id, body["session_id"], copy),
                       "messages": [dict(m, timestamp=m["timestamp"] + shift) if "timestamp" in m else m
                                    for m in messages]}
                added += len(messages)
        copy += 1


def questions(data: datasets.Dataset, count: int, seed: int) -> List[str]:
    """`count` development questions, drawn with `seed` (all of them if fewer)."""
    every = [q.question for c in data.conversations for q in c.questions]
    return random.Random(seed).sample(every, min(count, len(every)))
