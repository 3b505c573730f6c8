"""The speed benchmark as a command: its arguments, its phases each in a fresh process, its figures."""
from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any, Callable, Dict, Optional, Sequence

import tools.bench as package
from tools.bench.add import measure_add_http, measure_add_inprocess
from tools.bench.plan import FULL, QUICK, store_specs
from tools.bench.report import print_report
from tools.bench.search import measure_search
from tools.benchkit.process import ru_maxrss_kib, run_phase
from tools.benchkit.report import command_line, human, log, machine
from tools.benchkit.stores import build_store

# --help shows what the package's docstring says: what the command does and how it is run.
DOC = package.__doc__ or ""


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m tools.bench", description=DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=DOC)
    p.add_argument("--quick", action="store_true",
                   help="small run: %d messages per Add setting, stores of %s messages, %s others; under 2 minutes"
                   % (QUICK.add_messages, "/".join(human(n) for n in QUICK.store_sizes),
                      human(QUICK.other_users * QUICK.messages_per_other)))
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--workdir", default="/tmp/flowmem-bench", help="cached databases and scratch files")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached stores even if they match")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vocabulary", type=int, default=5000, help="pseudo-words besides the common words (5000)")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    os.makedirs(args.workdir, exist_ok=True)
    started = time.perf_counter()
    phase_s: Dict[str, float] = {}

    def timed(name: str, fn: Callable[..., Dict[str, Any]], *fn_args: Any) -> Dict[str, Any]:
        t0 = time.perf_counter()
        result = run_phase(fn, *fn_args)
        phase_s[name] = phase_s.get(name, 0.0) + time.perf_counter() - t0
        return result

    log("[add] in-process, %d messages" % plan.add_messages)
    adds = [timed("add", measure_add_inprocess, plan, args.workdir, args.seed, args.vocabulary)]
    for n in plan.threads:
        log("[add] HTTP, %d client thread(s)" % n)
        adds.append(timed("add", measure_add_http, n, plan, args.workdir, args.seed, args.vocabulary))

    builds, searches = [], []
    for spec in store_specs(plan, args.workdir, args.seed):
        log("[store] %s: %s" % (spec.label, spec.path))
        builds.append(timed("build", build_store, spec, args.seed, args.vocabulary, args.rebuild))
        searches.append(timed("search", measure_search, spec, plan, args.seed, args.vocabulary, args.top_k))

    others = human(plan.other_users * plan.messages_per_other)
    mode = ("full" if not args.quick else
            "quick (%d messages per Add setting; stores of %s messages; the others database holds %s messages of "
            "%d users, not 1M of 1,000)" % (plan.add_messages, ", ".join(human(n) for n in plan.store_sizes),
                                             others, plan.other_users))
    figures = {
        "command": command_line(),
        "machine": machine(),
        "mode": mode,
        "plan": plan._asdict(),
        "params": vars(args),
        "top_k": args.top_k,
        "add": adds,
        "builds": builds,
        "search": searches,
        "phase_s": phase_s,
        "total_s": time.perf_counter() - started,
        "orchestrator_ru_maxrss_kib": ru_maxrss_kib(),
    }
    print_report(figures)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
    bad = [a["setting"] for a in adds if a["errors"] or a.get("stored_messages", a["messages"]) != a["messages"]
           or a.get("server_exit_code", 0) != 0]
    for setting in bad:
        print("FAIL: %s: some Adds failed or were not stored, or the server did not stop cleanly" % setting)
    return 1 if bad else 0
