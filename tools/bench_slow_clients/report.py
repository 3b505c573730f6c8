"""The slow-client bench's Markdown report: each phase beside the baseline."""
from __future__ import annotations

import collections
from typing import Any, Dict, List, Optional, Sequence

from tools.benchkit.report import fmt, markdown, mib
from tools.benchkit.workload import ADD_SIZE


def ratio(value: Optional[float], base: Optional[float]) -> str:
    if value is None or base is None or value != value or base != base or base <= 0:
        return "-"
    return "%.2fx" % (value / base)


def _heading(figures: Dict[str, Any]) -> List[str]:
    """The heading: the command, the machine, the server, the memory prepared, the real client's load."""
    m, p, plan = figures["machine"], figures["params"], figures["plan"]
    out: List[str] = []
    add = out.append
    add("# flowmem: what slow and hostile clients cost a real client\n")
    add("command: `%s`  " % figures["command"])
    add("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    add("server: `%s` from %s; open files limit %s (this process: %s, raised from %s)  " % (
        figures["server"]["argv"], p["repo"], figures["server"]["open_files_limit"],
        figures["open_files"]["after"], figures["open_files"]["before"]))
    prep = figures["prepare"]
    add("memory: %d users x %d messages, added over HTTP in %d Adds (%d failed) in %.1f s  " % (
        plan["users"], plan["messages_per_user"], prep["adds"], prep["failed"], prep["seconds"]))
    add("real client per phase: %d Searches (top_k 100) and %d Adds (%d messages) on one keep-alive connection, "
        "%d Searches on a fresh connection each; timeout %.0f s; mode: %s\n" % (
            plan["searches"], plan["adds"], ADD_SIZE, plan["fresh"], p["timeout"], figures["mode"]))
    return out


def _real_client(figures: Dict[str, Any]) -> List[str]:
    """The real client's latencies phase by phase beside phase a's, and its errors."""
    plan = figures["plan"]
    out: List[str] = []
    add = out.append
    phases = figures["phases"]
    base = phases[0]["real"]["requests"] if phases and phases[0]["kind"] is None else None
    rows: List[Sequence[Any]] = [("phase", "request", "ok", "errors", "p50 ms", "p95 ms", "p99 ms",
                                  "p50 x", "p95 x", "p99 x")]
    for ph in phases:
        for kind, r in ph["real"]["requests"].items():
            lat = r["latency"]
            b = base[kind]["latency"] if base else {}
            rows.append(("%s %s" % (ph["key"], ph["label"]), kind, "%d/%d" % (r["ok"], r["sent"]),
                         sum(r["errors"].values()), fmt(lat["p50_ms"]), fmt(lat["p95_ms"]), fmt(lat["p99_ms"]),
                         ratio(lat["p50_ms"], b.get("p50_ms")), ratio(lat["p95_ms"], b.get("p95_ms")),
                         ratio(lat["p99_ms"], b.get("p99_ms"))))
    add("## The real client\n")
    add(markdown(rows))
    add("\nlatency over requests answered 200 (fresh connection: connect included); x = ratio to phase a, "
        "measured in this run (phase f against a shows the noise of the machine).\n")
    notes = []
    for ph in phases:
        for kind, r in ph["real"]["requests"].items():
            if r["errors"]:
                notes.append("- %s, %s: %s" % (ph["key"], kind, ", ".join(
                    "%s %d" % kv for kv in sorted(r["errors"].items(), key=lambda kv: -kv[1]))))
        if ph["real"]["stopped_early"]:
            notes.append("- %s: the real client stopped after its %.0f s budget" % (ph["key"],
                                                                                 plan["measure_budget_s"]))
        if ph["real"]["reconnects"]:
            notes.append("- %s: keep-alive reconnects: %s" % (ph["key"], ", ".join(
                "%s %d" % kv for kv in ph["real"]["reconnects"].items())))
    if notes:
        add("errors and reconnects of the real client:\n")
        add("\n".join(notes) + "\n")
    return out


def _server(figures: Dict[str, Any]) -> List[str]:
    """The server and the hostile connections phase by phase: closes, answers, threads, RSS, settling."""
    p = figures["params"]
    out: List[str] = []
    add = out.append
    phases = figures["phases"]
    rows: List[Sequence[Any]] = [
        ("phase", "hostile open / target", "closed by server", "closed after s (min / p50 / max)", "server answers",
         "threads before / at start / max / after", "RSS MiB before / max / after", "settle s", "server tracebacks")]
    for ph in phases:
        h = ph.get("hostile")
        hs = ph.get("hostile_at_start")
        if h:
            c = h["close_after_s"]
            answers = collections.Counter(h["close_status"])
            answers.update(h["answers_while_open"])
            opened = "%d / %d" % (hs["open"] if hs else h["open"], h["target"])
            closed = str(h["closed_by_server"])
            after = "%s / %s / %s" % (fmt(c["min"], "%.1f"), fmt(c["p50"], "%.1f"), fmt(c["max"], "%.1f"))
            answered = ", ".join("%s %d" % kv for kv in sorted(answers.items())) or "none"
        else:
            opened = closed = after = answered = "-"
        rows.append(("%s %s" % (ph["key"], ph["label"]), opened, closed, after, answered.replace("|", "/"),
                     "%s / %s / %s / %s" % (ph["threads_before"], ph["threads_at_measure"], ph["threads_max"],
                                            ph["threads_after"]),
                     "%s / %s / %s" % (mib(ph["rss_before_kib"], "%.1f"), mib(ph["rss_max_kib"], "%.1f"),
                                       mib(ph["rss_after_kib"], "%.1f")),
                     "%.1f%s" % (ph["settle_s"], "" if ph["settled"] else " (not quiet)"),
                     ph["log"]["tracebacks"]))
    add("## The server and the hostile connections\n")
    add(markdown(rows))
    add("\nhostile open: connections open when the real client started (target: kept open by reopening, %.0f s "
        "after the server closed one); closed by server: over the whole phase, reopened ones included; server "
        "answers: status lines the server sent on hostile connections (on closing them, or while they stayed "
        "open); threads and RSS from /proc/PID/status (at start: when the real client started; after: once the "
        "hostile connections were closed and the thread count came back, at most 30 s); settle: wait for the "
        "server's CPU and thread count to calm down before measuring.\n" % p["reopen_delay"])
    return out


def _ending(figures: Dict[str, Any]) -> List[str]:
    """What the hostile connections hit, the server log's exceptions, the total time and --check's verdict."""
    out: List[str] = []
    add = out.append
    phases = figures["phases"]
    notes = []
    for ph in phases:
        h = ph.get("hostile")
        if h and (h["failures"] or h.get("unread_bytes") is not None or h["drips_sent"]):
            bits = []
            if h["failures"]:
                bits.append("open failures: " + ", ".join("%s %d" % kv for kv in sorted(h["failures"].items())))
            if h["drips_sent"]:
                bits.append("%d drips sent" % h["drips_sent"])
            if h.get("unread_bytes") is not None:
                bits.append("%d answer bytes waiting unread on the client side at the end" % h["unread_bytes"])
            notes.append("- %s: %s" % (ph["key"], "; ".join(bits)))
        if ph["log"]["exceptions"]:
            notes.append("- %s: server log: %s" % (ph["key"], "; ".join(
                "%s (x%d)" % kv for kv in ph["log"]["exceptions"].items())))
        if not ph["server_alive"]:
            notes.append("- %s: THE SERVER EXITED" % ph["key"])
    if notes:
        add("\n".join(notes) + "\n")
    add("total time: %.0f s; server exit status after SIGTERM: %s" % (figures["total_s"],
                                                                     figures["server"].get("exit_status")))
    if figures.get("check") is not None:
        c = figures["check"]
        add("\n**%s**" % ("PASS" if not c else "FAIL: " + "; ".join(c)))
    return out


def report(figures: Dict[str, Any]) -> str:
    """The Markdown report of a run's `figures`."""
    return "\n".join(_heading(figures) + _real_client(figures) + _server(figures) + _ending(figures))
