"""The soak's figures and its Markdown report: latencies by endpoint, memory over the run, errors."""
from __future__ import annotations

import collections
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.benchkit.report import fmt, markdown, mib
from tools.benchkit.stats import percentile, summary
from tools.benchkit.workload import ADD_SIZE


def endpoint_rows(rows: Sequence[Tuple[float, str, Optional[float], bool]],
                  errors: Dict[Tuple[str, str, str], int], wall_s: float) -> List[Dict[str, Any]]:
    """Per endpoint: requests sent, errors, latency of the answered ones, answered requests per second."""
    def group(name: str) -> str:
        return "search" if name.startswith("search") else name

    attempts: Dict[str, int] = collections.Counter()
    latencies: Dict[str, List[float]] = collections.defaultdict(list)
    for _, endpoint, ms, _ in rows:
        for name in {endpoint, group(endpoint), "all"}:
            attempts[name] += 1
            if ms is not None:
                latencies[name].append(ms)
    err_by: Dict[str, int] = collections.Counter()
    for (endpoint, _, _), count in errors.items():
        for name in {endpoint, group(endpoint), "all"}:
            err_by[name] += count
    order = ["add", "search", "search top_k=100", "search top_k=10"]
    out = []
    for name in order + sorted(set(attempts) - set(order) - {"all"}) + ["all"]:
        if not attempts.get(name) and not err_by.get(name):
            continue
        lat = latencies.get(name, [])
        out.append({"endpoint": name, "requests": attempts.get(name, 0), "answered": len(lat),
                    "errors": err_by.get(name, 0), "latency": summary(lat),
                    "throughput_per_s": len(lat) / wall_s if wall_s else float("nan")})
    return out


def sample_at(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The first sample with an RSS figure at or after t_s (else the last one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    for s in with_rss:
        if s["t_s"] >= t_s:
            return s
    return with_rss[-1] if with_rss else None


def sample_before(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The last sample with an RSS figure at or before t_s (else the first one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    before = [s for s in with_rss if s["t_s"] <= t_s + 1e-6]
    return before[-1] if before else (with_rss[0] if with_rss else None)


def memory_figures(samples: Sequence[Dict[str, Any]], warmup_s: float, start: Dict[str, Any],
                   end: Dict[str, Any], messages_after_warmup: int) -> Dict[str, Any]:
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    if not with_rss:
        return {"available": False}
    warm = sample_at(samples, warmup_s)
    peak = max(with_rss, key=lambda s: s["rss_kib"])
    threads = [s["threads"] for s in with_rss if s.get("threads") is not None]
    end = end if end.get("rss_kib") is not None else with_rss[-1]
    start = start if start.get("rss_kib") is not None else with_rss[0]
    growth = anon_growth = per_message = None
    if warm and warm["rss_kib"]:
        growth = (end["rss_kib"] - warm["rss_kib"]) * 100.0 / warm["rss_kib"]
        if messages_after_warmup:
            per_message = (end["rss_kib"] - warm["rss_kib"]) * 1024.0 / messages_after_warmup
    if warm and warm.get("anon_kib") and end.get("anon_kib") is not None:
        anon_growth = (end["anon_kib"] - warm["anon_kib"]) * 100.0 / warm["anon_kib"]
    return {
        "available": True,
        "start": start, "after_warmup": warm, "end": end, "max": peak,
        "max_threads": max(threads) if threads else None,
        "growth_after_warmup_pct": growth,
        "anon_growth_after_warmup_pct": anon_growth,
        "messages_after_warmup": messages_after_warmup,
        "growth_bytes_per_message_added": per_message,
        "samples": len(with_rss),
    }


def over_time(rows: Sequence[Tuple[float, str, Optional[float], bool]], samples: Sequence[Dict[str, Any]],
              wall_s: float, slices: int) -> List[Dict[str, Any]]:
    """The run cut into equal slices: requests/s, latency and errors per slice, RSS at its end."""
    width = wall_s / slices if wall_s > 0 else 1.0
    out = []
    for i in range(slices):
        lo, hi = i * width, (i + 1) * width
        part = [r for r in rows if lo <= r[0] < hi or (i == slices - 1 and r[0] >= hi)]
        adds = [ms for _, e, ms, _ in part if e == "add" and ms is not None]
        searches = [ms for _, e, ms, _ in part if e.startswith("search") and ms is not None]
        s = sample_before(samples, hi) if samples else None
        out.append({
            "from_s": lo, "to_s": hi, "requests": len(part), "req_per_s": len(part) / width,
            "failed": sum(1 for r in part if not r[3]),
            "add_p50_ms": percentile(adds, 50), "add_p99_ms": percentile(adds, 99),
            "search_p50_ms": percentile(searches, 50), "search_p99_ms": percentile(searches, 99),
            "rss_kib": s["rss_kib"] if s else None, "threads": s.get("threads") if s else None,
        })
    return out


def _summary(figures: Dict[str, Any]) -> List[str]:
    """The heading, the command, the machine, the load, and the latency table."""
    p = figures["params"]
    out: List[str] = []
    add = out.append

    m = figures["machine"]
    add("# flowmem soak\n")
    add("command: `%s`  " % figures["command"])
    add("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    add("server: %s  " % figures["server"]["description"])
    add("load: %.0f s (ran %.1f s), %d keep-alive clients, %d users, add share %.2f (Adds of %d messages), "
        "seed %d, warm-up %.0f s  \n" % (p["duration"], figures["wall_s"], p["clients"], p["users"], p["add_share"],
                                         ADD_SIZE, p["seed"], figures["warmup_s"]))
    rows: List[Sequence[Any]] = [("endpoint", "requests", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms", "req/s")]
    for e in figures["endpoints"]:
        lat = e["latency"]
        rows.append((e["endpoint"], e["requests"], e["errors"], fmt(lat["p50_ms"]), fmt(lat["p95_ms"]),
                     fmt(lat["p99_ms"]), fmt(lat["max_ms"], "%.1f"), fmt(e["throughput_per_s"], "%.1f")))
    add(markdown(rows))
    add("\nlatency: request sent to answer read, over answered requests (any status); req/s: answered requests "
        "per second of the run; clients and server share the machine's CPUs.\n")
    return out


def _memory(figures: Dict[str, Any]) -> List[str]:
    """The server's RSS and threads at the start, after warm-up, at the end and at most."""
    p = figures["params"]
    out: List[str] = []
    add = out.append
    rows: List[Sequence[Any]]

    mem = figures["memory"]
    if mem.get("available"):
        rows = [("server", "t s", "RSS MiB", "of it anonymous MiB", "threads")]
        for label, key in (("start", "start"), ("after warm-up", "after_warmup"), ("end", "end")):
            s = mem.get(key) or {}
            rows.append((label, fmt(s.get("t_s"), "%.0f"), mib(s.get("rss_kib"), "%.1f"),
                         mib(s.get("anon_kib"), "%.1f"), fmt(s.get("threads"), "%d")))
        rows.append(("max (RSS at %s s; threads)" % fmt(mem["max"].get("t_s"), "%.0f"), "-",
                     mib(mem["max"].get("rss_kib"), "%.1f"), mib(mem["max"].get("anon_kib"), "%.1f"),
                     fmt(mem.get("max_threads"), "%d")))
        add(markdown(rows))
        add("\nRSS change from after warm-up to end: **%s** (limit %+.0f%%; anonymous memory %s), while %d messages "
            "were added: %s bytes of RSS per message added. VmHWM at end %s MiB; %d samples, every %.0f s.\n" % (
                fmt(mem["growth_after_warmup_pct"], "%+.1f%%"), p["max_rss_growth"],
                fmt(mem["anon_growth_after_warmup_pct"], "%+.1f%%"), mem["messages_after_warmup"],
                fmt(mem["growth_bytes_per_message_added"], "%.0f"), mib(figures["server"].get("vmhwm_kib"), "%.1f"),
                mem["samples"], p["sample_interval"]))
    else:
        add("server RSS: not measured (give `--pid` of the server process with `--endpoint`; Linux only).\n")
    return out


def _errors(figures: Dict[str, Any]) -> List[str]:
    """The errors by kind, with a few examples."""
    out: List[str] = []
    add = out.append
    rows: List[Sequence[Any]]

    errs = figures["errors"]
    if errs:
        rows = [("errors", "kind", "detail", "count")]
        for e in errs:
            rows.append((e["endpoint"], e["kind"], e["detail"].replace("|", "/"), e["count"]))
        add(markdown(rows))
        add("")
        for ex in figures["error_examples"][:5]:
            add("- example at %.1f s: %s %s %s: %s  " % (ex["t_s"], ex["endpoint"], ex["kind"], ex["detail"],
                                                         ex["body"][:200].replace("\n", " ")))
        add("")
    else:
        add("errors: none (no 5xx, no other non-200, no malformed answer, no lost write, no connection error).\n")
    return out


def _over_time(figures: Dict[str, Any]) -> List[str]:
    """Requests, latencies and RSS slice by slice, then what was stored, CPU, connections and the log."""
    p = figures["params"]
    out: List[str] = []
    add = out.append
    rows: List[Sequence[Any]]

    rows = [("time s", "req/s", "failed", "add p50 ms", "add p99 ms", "search p50 ms", "search p99 ms", "RSS MiB",
             "threads")]
    for s in figures["over_time"]:
        span = "%.0f-%.0f" if figures["wall_s"] >= 10 * len(figures["over_time"]) else "%.1f-%.1f"
        rows.append((span % (s["from_s"], s["to_s"]), fmt(s["req_per_s"], "%.1f"), s["failed"],
                     fmt(s["add_p50_ms"]), fmt(s["add_p99_ms"]), fmt(s["search_p50_ms"]), fmt(s["search_p99_ms"]),
                     mib(s["rss_kib"], "%.1f"), fmt(s["threads"], "%d")))
    add(markdown(rows))
    d = figures["data"]
    c = figures["connections"]
    add("\ndata: %d Adds acknowledged (%d messages) in %d sessions of %d users; %d Searches checked for an "
        "acknowledged Add's unique word  " % (d["adds_acknowledged"], d["messages_acknowledged"], d["sessions"],
                                              p["users"], d["marker_searches"]))
    if figures.get("preload"):
        pre = figures["preload"]
        add("preload: %d messages per user before the clock, %d Adds (%d failed) in %.0f s  " % (
            pre["messages_per_user"], pre["adds"], pre["failed"], pre["seconds"]))
    cpu = figures["cpu"]
    add("CPU during the load: server %s s (%s cores on average), soak clients %.0f s (%.2f cores)  " % (
        fmt(cpu["server_s"], "%.0f"), fmt(None if cpu["server_s"] is None else cpu["server_s"] / figures["wall_s"]),
        cpu["client_s"], cpu["client_s"] / figures["wall_s"]))
    add("connections: %d opened by %d clients; reconnects: %s  " % (
        c["connects"], p["clients"], ", ".join("%s %d" % kv for kv in sorted(c["reconnects"].items())) or "none"))
    srv = figures["server"]
    if srv.get("log_problems") is not None:
        lp = srv["log_problems"]
        add("server log: %d tracebacks, %d ERROR lines, %d logged 5xx; exit status after SIGTERM: %s  " % (
            lp["tracebacks"], lp["error_lines"], lp["logged_5xx"], srv.get("exit_status")))
    if srv.get("db_bytes") is not None:
        add("database: %.1f MB (+ WAL %.1f MB) at the end  " % (srv["db_bytes"] / 1e6, srv["wal_bytes"] / 1e6))
    return out


def report(figures: Dict[str, Any]) -> str:
    """The Markdown report of a soak's `figures`, ending in PASS or FAIL and why."""
    out = _summary(figures) + _memory(figures) + _errors(figures) + _over_time(figures)
    out.append("\n**%s**" % ("PASS" if figures["passed"] else "FAIL: " + "; ".join(figures["failures"])))
    return "\n".join(out)
