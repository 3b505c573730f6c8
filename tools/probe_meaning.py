#!/usr/bin/env python3
"""How Search ranks questions asked in other words than the memory's: the meaning probes.

    python -m tools.probe_meaning                         # the tables and one line per question
    python -m tools.probe_meaning --set weight_meaning=0  # with a setting changed (any flowmem setting)
    python -m tools.probe_meaning --json                  # the same as JSON

The probes (tools/evalkit/probes.py): one made-up user's life in 8 sessions and 16 questions
about it (6 in the memory's own words, 10 in other words), and 12 question/memory pairs that
share no content word, each a user of its own with 40 unrelated messages. Each probe runs in a
fresh in-process memory in a temporary folder, top_k 10. Per question: the rank of the first
item holding an evidence message ("-": none in the 10), whether that item came through the
"meaning" signal, and whether the results were the fallback (nothing matched: the latest
messages; the tables count such a question not found, its line still shows the rank). Standard
library only; well under a few seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, List, Mapping, Optional

from flowmem.errors import ConfigError
from tools.evalkit import probes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COLUMNS = ("questions", "ranked_1st", "in_first_3", "in_top_10", "through_meaning", "fallback")
HEADERS = ("questions", "ranked 1st", "in first 3", "in top 10", "via meaning", "fallback")


def table(title: str, rows: List[Any]) -> List[str]:
    """`rows` of (label, summary) as aligned lines: each figure out of the row's questions."""
    width = max(len(label) for label, _ in rows)
    lines = ["%s  %s" % (title.ljust(width), "  ".join(h.rjust(11) for h in HEADERS))]
    for label, summary in rows:
        n = summary["questions"]
        cells = [str(n)] + ["%d/%d" % (summary[c], n) for c in COLUMNS[1:]]
        lines.append("%s  %s" % (label.ljust(width), "  ".join(c.rjust(11) for c in cells)))
    return lines


def question_line(row: Mapping[str, Any], kind: str) -> str:
    rank = "-" if row["rank"] is None else str(row["rank"])
    return "  %2s  %-7s  %-8s  %-11s  %s" % (rank, "meaning" if row["meaning"] else "-",
                                          "fallback" if row["fallback"] else "-", kind, row["question"])


def render(result: Mapping[str, Any]) -> str:
    life, pairs = result["life"], result["pairs"]
    shown = ", ".join("%s=%s" % kv for kv in sorted(result["settings"].items())) or "defaults"
    out = ["# meaning probes (top_k %d; settings: %s)" % (result["top_k"], shown), ""]
    out += table("life", [("all", life["all"]), ("own words", life["own_words"]),
                          ("paraphrased", life["paraphrased"])])
    out.append("")
    out += table("pairs", [("all", pairs["all"])])
    out += ["", "rank  through  results   kind         question"]
    for row in life["questions"]:
        out.append(question_line(row, "paraphrased" if row["paraphrased"] else "own words"))
    for row in pairs["questions"]:
        out.append(question_line(row, "pair"))
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a flowmem setting, e.g. --set weight_meaning=0 (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--channel", nargs="?", const="", metavar="TABLE",
                        help="rank by the meaning channel alone (probes.channel()), with the shipped word vectors "
                        "or the file TABLE")
    args = parser.parse_args(argv)
    if args.channel is not None:
        figures = probes.channel(args.channel or None)
        print(json.dumps(figures, sort_keys=True) if args.json else
              "channel alone: life %(life_first_3)d/16 in the first 3 (paraphrased %(paraphrased_first_3)d/10); "
              "pairs %(pairs_first)d/12 first, %(pairs_first_3)d/12 in the first 3" % figures)
        return 0
    try:
        result = probes.run(probes.parse_settings(args.set))
    except (probes.UnknownSetting, ConfigError) as e:
        print("probe_meaning: %s" % e, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
