"""A process's memory and CPU, as the benches report them: /proc on Linux, getrusage elsewhere.

RSS figures in KiB; None (or {}) where the platform does not say, so a report prints "-"
rather than a wrong number.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Any, Callable, Dict, Optional

try:
    import resource
except ImportError:  # not on Windows; peak RSS then comes from /proc or not at all
    resource = None  # type: ignore[assignment]


def proc_status(pid: Optional[int]) -> Dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem (KiB) and Threads of a live process (/proc/PID/status).

    {} where unknown. RssAnon is the process's own heap and stacks; RssFile and RssShmem are
    mapped files (libraries, SQLite's WAL index), which grow with the files, not with leaks.
    """
    out: Dict[str, int] = {}
    if pid is None:
        return out
    try:
        with open("/proc/%d/status" % pid, encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads"):
                    out[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return out


def proc_cpu_s(pid: Optional[int]) -> Optional[float]:
    """User + system CPU seconds a live process has used (/proc/PID/stat), or None."""
    if pid is None:
        return None
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_open_files_limit(pid: Optional[int]) -> Optional[str]:
    """The soft limit on open files of a live process (/proc/PID/limits), as text."""
    if pid is None:
        return None
    try:
        with open("/proc/%d/limits" % pid, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Max open files"):
                    return line.split()[3]
    except OSError:
        pass
    return None


def ru_maxrss_kib() -> Optional[int]:
    """getrusage's peak resident set size of this process in KiB (it is bytes on macOS)."""
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def peak_rss_kib() -> Optional[int]:
    """This process's peak RSS in KiB: VmHWM where Linux has it, else ru_maxrss.

    In a process started by fork and exec (every phase here), Linux's ru_maxrss
    starts from the parent's RSS at the fork; VmHWM belongs to the new program only.
    """
    hwm = vm_hwm_kib("self")
    return hwm if hwm is not None else ru_maxrss_kib()


def rss_figures() -> Dict[str, Optional[int]]:
    """The peak RSS figures of this process, for a phase's result."""
    return {"peak_rss_kib": peak_rss_kib(), "ru_maxrss_kib": ru_maxrss_kib()}


def vm_hwm_kib(pid: Any) -> Optional[int]:
    """Peak RSS of a live process (a pid, or "self") from /proc/<pid>/status (Linux only), in KiB."""
    try:
        with open("/proc/%s/status" % pid, encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run_phase(fn: Callable[..., Dict[str, Any]], *args: Any) -> Dict[str, Any]:
    """Run fn(*args) in a fresh Python process and return its result.

    A fresh process per phase makes its peak RSS that phase's own (a process-wide
    peak would only ever show the largest phase so far), and keeps a cold build's
    generated text out of the measuring process.
    """
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(fn, args)
