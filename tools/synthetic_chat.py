#!/usr/bin/env python3
"""Write the synthetic typed-chat evaluation set (tools/evalkit/synthetic_chat.py) as JSON.

Usage (from anywhere):

    python tools/synthetic_chat.py [--seed 1] --out PATH

The same seed always gives byte-identical output. The committed fixture is

    python tools/synthetic_chat.py --seed 1 --out fixtures/synthetic-chat.json

and `python tools/eval.py synthetic fixtures/synthetic-chat.json` measures flowmem on it.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tools.evalkit.synthetic_chat import dumps, generate  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the synthetic typed-chat evaluation set as JSON.")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out", required=True, help="output JSON path")
    args = parser.parse_args(argv)
    dataset = generate(args.seed)
    text = dumps(dataset)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    questions = sum(len(c.questions) for c in dataset.conversations)
    messages = sum(len(s.turns) for c in dataset.conversations for s in c.sessions)
    print("wrote %s: %d users, %d messages, %d questions, %d bytes" % (
        args.out, len(dataset.conversations), messages, questions, len(text.encode("utf-8"))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
