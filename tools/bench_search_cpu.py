#!/usr/bin/env python3
"""CPU time per search over every question of a LoCoMo-format file, for comparing two checkouts.

    python -m tools.bench_search_cpu PATH/locomo10-dev.json
    python OTHER_CHECKOUT/tools/bench_search_cpu.py PATH/locomo10-dev.json   # then alternate
    python -m tools.bench_search_cpu PATH/locomo10-dev.json --style chat     # as typed chat (chatstyle.py)

The file is replayed into a fresh in-process memory (synchronous OFF), every question is
searched once to warm the session cache, then `--passes` more times; each question's
figure is its fastest pass in CPU time (time.process_time), which a noisy, shared machine
disturbs far less than wall time. Prints the p50 and mean over questions. Run two
checkouts alternately, several times, and compare like with like.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from flowmem.config import load
from tools import data_paths
from tools.evalkit.chatstyle import chat_style
from tools.evalkit.replay import InProcessClient, replay

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="LoCoMo-format file")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--style", choices=("written", "chat"), default="written",
                        help="chat: the conversations recast as typed chat (tools/evalkit/chatstyle.py)")
    args = parser.parse_args()
    data = data_paths.load_locomo(args.data)
    if args.style == "chat":
        data = chat_style(data)
    with tempfile.TemporaryDirectory(prefix="flowmem-cpu-") as tmp:
        client = InProcessClient(load({"db": os.path.join(tmp, "cpu.db"), "synchronous": "OFF"}, environ={}))
        try:
            for conversation in data.conversations:
                replay(client, conversation)
            questions = [{"query": q.question, "user_id": c.user_id, "top_k": 100}
                         for c in data.conversations for q in c.questions]
            for body in questions:
                client.memory.search(body)
            fastest = [float("inf")] * len(questions)
            for _ in range(args.passes):
                for i, body in enumerate(questions):
                    started = time.process_time()
                    client.memory.search(body)
                    fastest[i] = min(fastest[i], (time.process_time() - started) * 1000)
        finally:
            client.close()
    print("%s (%s): %d questions, CPU ms per search (fastest of %d passes): p50 %.2f, mean %.2f"
          % (REPO, args.style, len(questions), args.passes, statistics.median(fastest), statistics.mean(fastest)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
