#!/usr/bin/env python3
"""The ablation ladder: every retrieval component switched off in turn (or on, if off by default).

    python tools/ablation.py [--locomo PATH] [--synthetic PATH] [--json OUT]

Each row runs the full evaluation (tools/eval.py's code, in-process, a fresh database)
on the LoCoMo development split and on the synthetic suite with one setting changed
from the defaults, and prints the four target metrics in message-budget rank, their
change against the defaults, and for the synthetic suite the knowledge-update check
(new value ranked first and old value still in the first 20 messages).

Every answer comes from Memory.search, so from the one ranking path the server and
tools/tune.py share (retrieval/pipeline.py: prepare(), then ranked_items()). A row
indexes afresh because some rows change how the index is built (stemming, speakers)
or what the candidate pool holds (feedback), which only a new database shows.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from flowmem import config as flowmem_config  # noqa: E402
from flowmem.storage.views import MESSAGE  # noqa: E402
from tools.evalkit import dataset as datasets, runner  # noqa: E402
from tools.evalkit.replay import InProcessClient  # noqa: E402

TARGETS = ("hit@1", "hit@10", "recall@100", "mrr")
DEFAULT_LOCOMO = os.path.join(REPO, "..", "shared", "data", "locomo", "locomo10-dev.json")
DEFAULT_SYNTHETIC = os.path.join(REPO, "fixtures", "synthetic-small.json")


def rungs() -> List[Tuple[str, Dict[str, Any]]]:
    """(label, settings) for every component: switched off if on by default, else on at a small weight."""
    defaults = flowmem_config.Config()
    out: List[Tuple[str, Dict[str, Any]]] = [
        ("all defaults", {}),
        ("no stemming", {"stem": False}),
        ("speaker label indexed as text", {"split_speakers": False}),
    ]
    for signal, weight in defaults.weights():
        name = "weight_" + signal
        if weight > 0:
            out.append(("without %s" % signal, {name: 0.0}))
        else:
            out.append(("with %s (off by default) at 0.1" % signal, {name: 0.1}))
    out += [
        ("tail without feedback", {"tail_weight_feedback": 0.0}),
        ("tail speaker weight as in head", {"tail_weight_speaker": defaults.weight_speaker}),
        ("no separate tail (one fusion)",
         {"tail_weight_feedback": 0.0, "tail_weight_speaker": defaults.weight_speaker}),
        ("no feedback retrieval", {"feedback_terms": 0}),
        ("messages only, no windows", {"view_kind": MESSAGE}),
        ("no state-update rerank", {"state_update_window": 0}),
    ]
    return out


def evaluate(data: datasets.Dataset, settings: Dict[str, Any]) -> Tuple[Dict[str, float], Dict[str, float]]:
    """The overall summary and the knowledge-update check of `data` on a fresh memory with `settings`."""
    with tempfile.TemporaryDirectory(prefix="flowmem-ablation-") as tmp:
        config = flowmem_config.load(dict(settings, db=os.path.join(tmp, "a.db"), synchronous="OFF"), environ={})
        client = InProcessClient(config)
        try:
            run = runner.evaluate(data, client)
        finally:
            client.close()
    return runner.groups(run, [])["overall"], runner.update_order(run)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", default=DEFAULT_LOCOMO)
    parser.add_argument("--synthetic", default=DEFAULT_SYNTHETIC)
    parser.add_argument("--json", help="write every row's figures here")
    args = parser.parse_args(argv)
    locomo = datasets.load_locomo(args.locomo)
    synthetic = datasets.load_json(args.synthetic)
    rows = []
    base: Dict[str, Dict[str, float]] = {}
    print("| component | LoCoMo hit@1 | hit@10 | R@100 | MRR | synthetic hit@1 | hit@10 | R@100 | MRR |"
          " updates: new first and old in 20 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, settings in rungs():
        lo, _ = evaluate(locomo, settings)
        sy, updates = evaluate(synthetic, settings)
        if not base:
            base = {"locomo": lo, "synthetic": sy}

        def cells(summary: Dict[str, float], reference: Dict[str, float]) -> str:
            if summary is reference:
                return " | ".join("%.3f" % summary[t] for t in TARGETS)
            return " | ".join("%.3f (%+.3f)" % (summary[t], summary[t] - reference[t]) for t in TARGETS)

        print("| %s | %s | %s | %.3f |" % (label, cells(lo, base["locomo"]), cells(sy, base["synthetic"]),
                                          updates.get("both", 0.0)), flush=True)
        rows.append({"label": label, "settings": settings, "locomo": lo, "synthetic": sy, "updates": updates})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
