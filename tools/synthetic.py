#!/usr/bin/env python3
"""Write the synthetic evaluation suite (tools/evalkit/synthetic/), or the typed-chat set, as JSON.

Usage (from anywhere):

    python -m tools.synthetic [--seed 1] [--size small|medium] --out PATH
    python -m tools.synthetic --chat [--seed 1] --out PATH     # tools/evalkit/synthetic_chat/

The same seed and size always give byte-identical output. The committed fixtures are

    python -m tools.synthetic --seed 1 --size small --out fixtures/synthetic-small.json
    python -m tools.synthetic --chat --seed 1 --out fixtures/synthetic-chat.json
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from tools.evalkit import synthetic_chat
from tools.evalkit.synthetic import SIZES, dumps, generate

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the synthetic evaluation suite as JSON.")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--size", choices=list(SIZES), default="small", help="suite size (default small)")
    parser.add_argument("--chat", action="store_true", help="the typed-chat set instead (--size does not apply)")
    parser.add_argument("--out", required=True, help="output JSON path")
    args = parser.parse_args(argv)
    dataset = synthetic_chat.generate(args.seed) if args.chat else generate(args.seed, args.size)
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
