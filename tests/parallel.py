"""`make test`'s runner: the fast tier's modules split over one unittest process per core.

The fast tier is some 850 in-process tests whose time is spread over all of them (no test
takes more than a few seconds), so one process took about a minute here; two take about
half. Each process is plain `python -m unittest MODULES` on its share, the modules dealt
round-robin in the order given (the Makefile's, sorted), so a run is the same every time.
Each share's output is printed whole once it ends, then one closing line for all:
`N passed, N failed` (errors and failures together), and the exit status is 1 if any share
failed. Standard library only, as the tier itself.

    python3 -m tests.parallel tests.test_add tests.test_store ...   [--jobs N]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from typing import List, Tuple

_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_FAILED = re.compile(r"^FAILED \((.*)\)$", re.M)


# Modules that measure what their own process allocates (tracemalloc): what else the process
# imported (strings already interned by another module's constants) moves their figures, so
# each runs in a process of its own, after the shares.
ALONE = ("tests.test_cache_bytes",)


def shares(modules: List[str], jobs: int) -> List[List[str]]:
    """`modules` dealt round-robin into at most `jobs` non-empty shares, each of ALONE in one of its own."""
    dealt = [m for m in modules if m not in ALONE]
    return [share for share in (dealt[i::jobs] for i in range(jobs)) if share] + [[m] for m in modules if m in ALONE]


def counts(output: str) -> Tuple[int, int]:
    """(tests run, failures and errors) from one unittest run's output."""
    ran = sum(int(n) for n in _RAN.findall(output))
    failed = 0
    for summary in _FAILED.findall(output):
        failed += sum(int(n) for kind, n in re.findall(r"(\w+)=(\d+)", summary) if kind in ("failures", "errors"))
    return ran, failed


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="+")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    runs = [subprocess.Popen([sys.executable, "-m", "unittest", *share], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
            for share in shares(args.modules, max(1, args.jobs))]
    ran = failed = 0
    status = 0
    for run in runs:
        output, _ = run.communicate()
        sys.stdout.write(output)
        share_ran, share_failed = counts(output)
        if run.returncode:
            status = 1
            share_failed = max(share_failed, 1)  # a share that died before unittest's summary still fails
        ran, failed = ran + share_ran, failed + share_failed
    print("%d passed, %d failed" % (ran - min(failed, ran), failed))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
