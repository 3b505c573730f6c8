#!/usr/bin/env python3
"""Measure what flowmem retrieves: LoCoMo or the synthetic suite, or compare two runs.

    python -m tools.eval locomo [PATH]              # default data/locomo10-dev.json (README: how to make it)
    python -m tools.eval locomo --style chat        # the same conversations as people type them (chatstyle.py)
    python -m tools.eval locomo --baseline fts5     # bare FTS5 instead of flowmem (bare.py)
    python -m tools.eval synthetic [PATH]           # default fixtures/synthetic-small.json
    python -m tools.eval natural [--split report]   # the natural lives: found@1/3/10, own size and 10,000
    python -m tools.eval compare A.jsonl B.jsonl    # paired difference with bootstrap CIs
                                      [--category temporal]
    python -m tools.eval --compare A.jsonl B.jsonl  # the same

`locomo` and `synthetic` replay each conversation the way the challenge platform does
and score every returned item in message-budget and item rank (tools/evalkit/metrics.py).
In-process by default, on a fresh database in a temporary folder; `--endpoint URL`
sends the same requests to a running server instead. `--out FILE.jsonl` keeps one
line per question for `compare`; `--set NAME=VALUE` overrides any flowmem setting
(in-process only), e.g. `--set window_size=5`. `--style chat` recasts the turns as typed
chat (tools/evalkit/chatstyle.py) before replaying them; `--baseline fts5` replays and
scores the bare FTS5 baseline (tools/evalkit/bare.py) the same way.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
from typing import Any, Dict, List, Optional

from flowmem import config as flowmem_config
from tools import data_paths
from tools.evalkit import compare as comparing, dataset as datasets, natural, natural_report, report, runner
from tools.evalkit.bare import BareFts5Client
from tools.evalkit.chatstyle import chat_style
from tools.evalkit.replay import HttpClient, InProcessClient
from tools.evalkit.settings import parse_settings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_LOCOMO = data_paths.DEFAULT_LOCOMO
DEFAULT_SYNTHETIC = os.path.join(REPO, "fixtures", "synthetic-small.json")


def make_client(args: argparse.Namespace, workdir: str) -> Any:
    if args.baseline:
        if args.endpoint or args.set:
            raise SystemExit("eval: --baseline runs in-process, without --endpoint or --set")
        return BareFts5Client()
    if args.endpoint:
        if args.set:
            raise SystemExit("eval: --set applies in-process only; configure the server instead")
        return HttpClient(args.endpoint, args.api_key)
    flags = {"db": os.path.join(workdir, "eval.db")}
    flags.update(parse_settings(args.set))
    return InProcessClient(flowmem_config.load(flags, environ={}))


def run_dataset(args: argparse.Namespace, dataset: datasets.Dataset) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="flowmem-eval-") as workdir:
        client = make_client(args, workdir)
        try:
            run = runner.evaluate(dataset, client, args.top_k,
                                  progress=(lambda m: print(m, file=sys.stderr)) if args.verbose else None)
        finally:
            client.close()
    categories = datasets.category_order(dataset)
    groups = runner.groups(run, categories)
    timing = run.timing()
    print("# %s" % os.path.basename(dataset.name))
    print()
    print("%d questions scored over %d conversations (%d messages); %d skipped for invalid evidence%s" % (
        len(run.outcomes), len(dataset.conversations), run.messages, len(dataset.skipped),
        ": " + ", ".join(s["qid"] for s in dataset.skipped) if dataset.skipped else ""))
    mode = "baseline " + args.baseline if args.baseline else "HTTP " + args.endpoint if args.endpoint else "in-process"
    print("mode: %s; top_k %d; settings: %s" % (mode, args.top_k, " ".join(args.set) or "defaults"))
    print()
    for t in report.summary_tables(groups):
        print(t)
        print()
    updates = {category: runner.update_order(run, category) for category in runner.update_categories(dataset)}
    for category, found in updates.items():
        print("Updates, %s (%d with labelled old and new turns): new ranked before old %.3f; old still in"
              " the first 20 messages %.3f; both %.3f" % (category, found["n"], found["new_first"],
                                                          found["old_kept@20"], found["both"]))
        print()
    times = runner.time_resolution(dataset)
    if times:
        n = times["labelled"] or 1
        print("Relative times (%d labelled, %d vague): resolved to the right dates %.3f, to wrong ones %.3f,"
              " not resolved %.3f; vague ones resolved %d; resolutions nobody labelled %d" % (
                  times["labelled"], times["vague"], times["right"] / n, times["wrong"] / n, times["missed"] / n,
                  times["vague_resolved"], times["spurious"]))
        print()
    print("Index: %.1f s for %d messages (%.0f messages/s); search latency p50 %.1f ms, p95 %.1f ms" % (
        timing["index_seconds"], timing["messages"], timing["messages_per_second"],
        timing["search_p50_ms"], timing["search_p95_ms"]))
    print("Machine: %d CPUs, %s, Python %s, SQLite %s" % (os.cpu_count() or 0, platform.platform(),
                                                        platform.python_version(), sqlite3.sqlite_version))
    if args.out:
        runner.write_jsonl(run, args.out)
        print("per-question output: %s" % args.out)
    summary = {"dataset": dataset.name, "groups": groups, "timing": timing,
               "updates": updates.get("knowledge-update", {}), "updates_by_category": updates, "times": times,
               "skipped": dataset.skipped, "settings": args.set, "endpoint": args.endpoint}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
    return summary


def add_natural_parser(commands: Any) -> None:
    p = commands.add_parser("natural", help="the natural-question lives (tools/evalkit/natural.py, docs/natural.md)")
    p.add_argument("--split", choices=("tune", "report", "all"), default="tune", help="which lives (default: tune)")
    p.add_argument("--lives", choices=("natural", "changes"), default="natural",
                   help="the natural lives, or the change lives of issue 33 (tools/evalkit/changes)")
    p.add_argument("--haystack", type=int, default=10000, help="messages per user with filler (default: 10000)")
    p.add_argument("--sizes", default="own,filler", help="own, filler or both (default: own,filler)")
    p.add_argument("--no-reference", action="store_true", help="leave the small sentence model out")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a flowmem setting")
    p.add_argument("--out", help="per-question lines of flowmem's answers: OUT.own.jsonl, OUT.filler.jsonl")
    p.add_argument("--json", help="write the summary as JSON here")


def run_natural(args: argparse.Namespace) -> int:
    summary = natural_report.run(args.split, args.haystack, parse_settings(args.set), reference=not args.no_reference,
                                 sizes=args.sizes.split(","), out=args.out,
                                 directory=natural.HERE if args.lives == "natural" else natural.CHANGES)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="eval.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, default in (("locomo", DEFAULT_LOCOMO), ("synthetic", DEFAULT_SYNTHETIC)):
        p = commands.add_parser(name, help="evaluate on %s" % name)
        p.add_argument("path", nargs="?", default=default, help="dataset file (default: %(default)s)")
        p.add_argument("--endpoint", help="URL of a running flowmem server (default: in-process)")
        p.add_argument("--api-key", default=os.environ.get("FLOWMEM_API_KEY"), help="key for --endpoint")
        p.add_argument("--top-k", type=int, default=100, help="items per search (default: 100)")
        p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a flowmem setting")
        p.add_argument("--out", help="write one JSON line per question here")
        p.add_argument("--json", help="write the summary as JSON here")
        p.add_argument("--verbose", action="store_true", help="progress on stderr")
        p.add_argument("--style", choices=("written", "chat"), default="written",
                       help="chat: the turns recast as typed chat, bursts of short messages (chatstyle.py)")
        p.add_argument("--baseline", choices=("fts5",), help="score bare FTS5 instead of flowmem (bare.py)")
        if name == "locomo":
            p.add_argument("--haystack", type=int, metavar="N", help="make each user hold N messages: the other "
                           "conversations' sessions under its speakers' labels (dataset.with_haystack)")
    add_natural_parser(commands)
    p = commands.add_parser("compare", help="paired difference of two --out files (B - A)")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--category", help="only the questions of this category (e.g. temporal)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--compare"]:
        argv[0] = "compare"
    args = parser.parse_args(argv)

    if args.command == "compare":
        a, b = runner.read_jsonl(args.a), runner.read_jsonl(args.b)
        if args.category:
            a, b = ([q for q in run if q.get("category") == args.category] for run in (a, b))
        print("B = %s, A = %s; %d paired questions" % (args.b, args.a, len(comparing.paired(a, b))))
        print()
        print(comparing.compare_table(comparing.compare(a, b)))
        return 0
    if args.command == "natural":
        return run_natural(args)
    if args.command == "synthetic" and not os.path.isfile(args.path):
        print("error: synthetic suite not found: %s (python -m tools.synthetic --out PATH writes one)" % args.path,
              file=sys.stderr)
        return 1
    dataset = data_paths.load_locomo(args.path) if args.command == "locomo" else datasets.load_json(args.path)
    if getattr(args, "haystack", None):
        dataset = datasets.with_haystack(dataset, args.haystack)
    if args.style == "chat":
        dataset = chat_style(dataset)
    run_dataset(args, dataset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
