"""What a bench's report is made of: Markdown tables, number cells, progress lines, the machine.

Progress goes to stderr and the report to stdout, so `> out.md` keeps only the report.
"""
from __future__ import annotations

import json
import math
import os
import platform
import shlex
import shutil
import sqlite3
import sys
from typing import Any, Dict, Optional, Sequence


def markdown(rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table: first row the header, first column left-aligned, the rest right."""
    align = ["---"] + ["---:"] * (len(rows[0]) - 1)
    lines = [rows[0], align] + list(rows[1:])
    return "\n".join("| %s |" % " | ".join(str(c) for c in line) for line in lines)


def fmt(value: Optional[float], spec: str = "%.2f") -> str:
    """A number for a table cell; "-" when there is none."""
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else spec % value


def mib(kib: Optional[int], spec: str = "%.0f") -> str:
    """KiB as MiB for a table cell: a whole number unless `spec` asks for decimals ("%.1f")."""
    return fmt(None if kib is None else kib / 1024.0, spec)


def log(message: str) -> None:
    """Progress goes to stderr, so stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


def machine() -> Dict[str, Any]:
    """The machine a figure was measured on: cores, platform, Python and SQLite versions."""
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }


def command_line() -> str:
    """The command as run (`python -m tools.NAME ...` for a module), for the report, with an API key's value hidden."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    module = spec.name if spec is not None else None
    if module and module.endswith(".__main__"):  # a package run with -m: its name, as typed
        module = module[:-len(".__main__")]
    argv, hide = (["-m", module] if module else sys.argv[:1]), False
    for a in sys.argv[1:]:
        if hide:
            a, hide = "***", False
        elif a == "--api-key":
            hide = True
        elif a.startswith("--api-key="):
            a = "--api-key=***"
        argv.append(a)
    return " ".join(shlex.quote(a) for a in ["python"] + argv)


def json_safe(value: Any) -> Any:
    """NaN and infinities as None, so the JSON report is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def finish(text: str, figures: Dict[str, Any], out: Optional[str], workdir: str, keep: bool, tool: str) -> None:
    """Print the report, write the figures as JSON to `out` if given, and remove `workdir` unless kept."""
    print(text)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(json_safe(figures), f, indent=2, sort_keys=True)
    if keep:
        log("[%s] kept %s" % (tool, workdir))
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def human(n: int) -> str:
    """1000000 -> 1M, 50000 -> 50k."""
    if n >= 1000000 and n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    return "%dk" % (n // 1000) if n >= 1000 else str(n)
