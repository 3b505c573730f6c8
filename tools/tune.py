#!/usr/bin/env python3
"""Choose flowmem's ranking weights by measurement on the LoCoMo development split.

    python -m tools.tune                     # coordinate ascent from the current defaults
    python -m tools.tune --show              # only score the current defaults
    python -m tools.tune --set weight_segment=0 --show
    python -m tools.tune --choices --show    # each question as multiple choice (answer options)
    python -m tools.tune --style written     # LoCoMo as written only (default: both styles)

What a trial measures and how is tools/evalkit/tuning.py's docstring. Only the development
split is used (`--data`); never tune on the holdout.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from tools import data_paths
from tools.evalkit.settings import parse_settings
from tools.evalkit.tuning import (
    CHAT_SUFFIX,
    DEFAULT_DATA,
    as_multiple_choice,
    ascend,
    describe,
    index_styles,
    score,
    start_settings,
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="LoCoMo-format file (development split only)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="start from this setting")
    parser.add_argument("--show", action="store_true", help="score the starting settings and stop")
    parser.add_argument("--choices", action="store_true", help="ask each question with answer options "
                        "(as_multiple_choice())")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--style", choices=("written", "chat", "both"), default="both",
                        help="ask the questions of the conversations as written, as typed chat, or both (default)")
    args = parser.parse_args(argv)
    start = parse_settings(args.set)
    settings = start_settings(start)
    data = data_paths.load_locomo(args.data)
    questions, owners = index_styles(as_multiple_choice(data) if args.choices else data, args.style, start)
    print("start  %s" % describe(score(questions, settings)), flush=True)
    if args.style == "both":
        for style, mine in (("written", False), ("chat", True)):
            asked = [q for q, owner in zip(questions, owners) if owner.endswith(CHAT_SUFFIX) == mine]
            print("       %-7s %s" % (style, describe(score(asked, settings))), flush=True)
    if args.show:
        return 0
    settings, best = ascend(questions, settings, args.rounds)
    print("best   %s" % describe(best))
    print("settings: " + " ".join("--set %s=%s" % (k, v) for k, v in sorted(settings.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
