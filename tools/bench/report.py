"""The speed benchmark's Markdown tables: Adds, Searches beside bare FTS5, memory and disk."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from tools.bench.plan import ADD_SIZE
from tools.benchkit.report import fmt, markdown, mib


def add_table(adds: Sequence[Dict[str, Any]]) -> str:
    """The Add throughput table."""
    rows: List[List[Any]] = [["setting", "Adds", "messages", "wall s", "msgs/s", "Add p50 ms", "p95 ms", "p99 ms",
                              "errors"]]
    for a in adds:
        lat = a["latency"]
        rows.append([a["setting"], a["adds"], a["messages"], fmt(a["wall_s"], "%.1f"), fmt(a["msgs_per_s"], "%.0f"),
                     fmt(lat["p50_ms"]), fmt(lat["p95_ms"]), fmt(lat["p99_ms"]), a["errors"]])
    return markdown(rows)


def search_table(searches: Sequence[Dict[str, Any]]) -> str:
    """The Search latency table, flowmem beside bare FTS5."""
    rows: List[List[Any]] = [["store", "samples"]]
    for p in ("p50", "p95", "p99"):
        rows[0] += ["flowmem %s ms" % p, "bare FTS5 %s ms" % p, "ratio"]
    rows[0] += ["hits/query"]
    for s in searches:
        row = [s["store"], "%d x %d" % (s["queries"], s["rounds"])]
        for p in ("p50", "p95", "p99"):
            row += [fmt(s["flowmem"][p + "_ms"]), fmt(s["bare_fts5"][p + "_ms"]), fmt(s["ratio"][p], "%.1fx")]
        row.append(fmt(s["mean_hits"], "%.1f"))
        rows.append(row)
    return markdown(rows)


def add_resources_table(adds: Sequence[Dict[str, Any]]) -> str:
    """Peak RSS and file sizes of the Add settings."""
    rows: List[List[Any]] = [["Add setting", "peak RSS MiB", "server peak RSS MiB", "DB MB", "WAL MB",
                              "bytes/msg (DB+WAL)", "bytes/msg after close"]]
    for a in adds:
        live, closed, n = a["files_live"], a["files_closed"], a["messages"]
        rows.append([a["setting"], mib(a["peak_rss_kib"]), mib(a.get("server_peak_rss_kib")),
                     fmt(live["db"] / 1e6, "%.1f"), fmt(live["wal"] / 1e6, "%.1f"),
                     fmt((live["db"] + live["wal"]) / n, "%.0f"), fmt((closed["db"] + closed["wal"]) / n, "%.0f")])
    return markdown(rows)


def store_resources_table(builds: Sequence[Dict[str, Any]], searches: Sequence[Dict[str, Any]]) -> str:
    """Size and peak RSS (build, search) of each searched store."""
    rows: List[List[Any]] = [["store", "messages", "views", "DB+WAL MB", "bytes/msg", "build peak RSS MiB",
                              "search peak RSS MiB"]]
    for build, s in zip(builds, searches):
        size = s["files"]["db"] + s["files"]["wal"]
        rows.append([s["store"], s["db_messages"], s["db_views"], fmt(size / 1e6, "%.1f"),
                     fmt(size / s["db_messages"], "%.0f"), mib(build["peak_rss_kib"]), mib(s["peak_rss_kib"])])
    return markdown(rows)


def print_report(figures: Dict[str, Any]) -> None:
    """All tables and notes, as Markdown on stdout."""
    m = figures["machine"]
    print("# flowmem speed benchmark\n")
    print("command: `%s`  " % figures["command"])
    print("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    print("mode: %s\n" % figures["mode"])

    print("## Add throughput (Adds of %d messages, synchronous FULL)\n" % ADD_SIZE)
    print(add_table(figures["add"]))
    print("\nmsgs/s = messages / wall time of the whole setting; HTTP clients share the machine's CPUs "
          "with the server.\n")

    print("## Search latency (top_k=%d, warm) beside a bare FTS5 bm25() query\n" % figures["top_k"])
    print(search_table(figures["search"]))
    print("\nsamples = queries x timed rounds (after one warm-up pass); ratio = flowmem / bare FTS5 "
          "(`SELECT rowid, bm25(..) .. MATCH '\"<key>_<term>\" OR ..' ORDER BY bm25(..) LIMIT %d` on its own "
          "connection).  " % figures["top_k"])
    for s in figures["search"]:
        a, n = s["agreement"], s["queries"]
        # On a shared database FTS5's bm25() uses every user's statistics, so scores differ by design.
        note = "" if s["db_users"] == 1 else " (differ by design: FTS5 uses all %d users' statistics)" % s["db_users"]
        print("- %s: same hit count as FTS5 on %d/%d queries; same top-%d scores as FTS5's bm25() on %d/%d%s  "
              % (s["store"], a["same_hit_count"], n, figures["top_k"], a["same_scores"], n, note))
    print("\n## Memory and disk\n")
    print(add_resources_table(figures["add"]))
    print()
    print(store_resources_table(figures["builds"], figures["search"]))
    print("\npeak RSS: each phase runs in its own process (VmHWM of /proc/self, ru_maxrss where there is no "
          "/proc); server: VmHWM of the `flowmem serve` child just before it was stopped. Add DB and WAL: at the "
          "end of the Adds, database still open; after close: WAL checkpointed and truncated. Stores: as cached "
          "(closed).  ")
    for build, s in zip(figures["builds"], figures["search"]):
        print("- %s: %s in %.0f s (%.0f msg/s, synchronous OFF)  " % (
            s["store"], "cached, built" if build["reused"] else "built", build["build_s"],
            build["build_msgs_per_s"]))
    print("\ntotal time: %.0f s (phases: %s)" % (
        figures["total_s"], ", ".join("%s %.0f s" % kv for kv in figures["phase_s"].items())))
