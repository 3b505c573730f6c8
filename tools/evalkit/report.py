"""Markdown tables of evaluation summaries and comparisons."""
from __future__ import annotations

from typing import Dict, List, Sequence

from . import metrics


def table(groups: Dict[str, Dict[str, float]], columns: Sequence[str]) -> str:
    """Rows: each group (overall, answerable, categories); columns: `n` then the named metrics."""
    lines = ["| group | n | " + " | ".join(columns) + " |", "|---|---:|" + "---:|" * len(columns)]
    for name, summary in groups.items():
        cells = ["%.3f" % summary[c] if summary.get("n") else "-" for c in columns]
        lines.append("| %s | %d | %s |" % (name, summary.get("n", 0), " | ".join(cells)))
    return "\n".join(lines)


def summary_tables(groups: Dict[str, Dict[str, float]]) -> List[str]:
    """The message-budget table, then the context-budget and item-rank table."""
    return [
        "Message-budget rank:\n\n" + table(groups, metrics.MESSAGE_METRICS),
        "Context budget (characters) and item rank:\n\n"
        + table(groups, metrics.CONTEXT_METRICS + metrics.ITEM_METRICS),
    ]
