"""The soak as a command: its arguments, the server it loads, the figures it keeps, why it fails."""
from __future__ import annotations

import argparse
import collections
import os
import shlex
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

import tools.soak as package
from tools.benchkit.process import proc_open_files_limit, proc_status
from tools.benchkit.report import command_line, finish, log, machine
from tools.benchkit.server import REPO_ROOT, ServerProcess, log_problems, parse_endpoint, wait_healthy
from tools.benchkit.workload import ADD_SIZE
from tools.soak.figures import endpoint_rows, memory_figures, over_time, report
from tools.soak.load import Soak

# --help shows what the package's docstring says: what the command does and how it is run.
DOC = package.__doc__ or ""


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m tools.soak", description=DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=DOC)
    p.add_argument("--duration", type=float, default=600.0, help="seconds of load (600)")
    p.add_argument("--clients", type=int, default=64, help="client threads, one keep-alive connection each (64)")
    p.add_argument("--users", type=int, default=50, help="users the clients write and ask for (50)")
    p.add_argument("--preload", type=int, default=0, metavar="MESSAGES",
                   help="before the clock starts, add this many messages to every user (0); with a small "
                        "--add-share this gives a steady state, where RSS should stop growing")
    p.add_argument("--add-share", type=float, default=0.2, help="fraction of requests that are Adds (0.2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", "--json", dest="out", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--api-key", help="send it as Authorization: Bearer; a server started here is given it "
                                     "(FLOWMEM_API_KEY)")
    p.add_argument("--endpoint", help="soak this running server instead of starting one (http://HOST:PORT)")
    p.add_argument("--pid", type=int, help="with --endpoint: the server's process id, for its RSS and threads")
    p.add_argument("--repo", default=REPO_ROOT, help="the flowmem checkout whose server is started (this one)")
    p.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `flowmem serve` (repeatable), e.g. --serve-arg=--synchronous=NORMAL")
    p.add_argument("--warmup", type=float, help="seconds of warm-up before the RSS baseline "
                                                "(10%% of the run, at least 30 s, at most half of it)")
    p.add_argument("--max-rss-growth", type=float, default=10.0, help="percent RSS may grow after warm-up (10)")
    p.add_argument("--sample-interval", type=float, default=2.0, help="seconds between RSS samples (2)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take before it counts as a "
                                                               "connection error (60)")
    p.add_argument("--slices", type=int, default=10, help="rows of the over-time table (10)")
    p.add_argument("--progress-interval", type=float, default=30.0, help="seconds between progress lines (30)")
    p.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    args = p.parse_args(argv)
    if not 0.0 <= args.add_share <= 1.0:
        p.error("--add-share must be between 0 and 1")
    if args.duration <= 0 or args.clients < 1 or args.users < 1:
        p.error("--duration, --clients and --users must be positive")
    if args.pid is not None and not args.endpoint:
        p.error("--pid goes with --endpoint")
    return args


def start(args: argparse.Namespace, workdir: str) -> Tuple[str, int, Optional[int], Optional[ServerProcess],
                                                            Dict[str, Any]]:
    """The server to soak: `--endpoint`'s, or one started here; (host, port, pid, process, its figures)."""
    server: Optional[ServerProcess] = None
    srv: Dict[str, Any] = {}
    try:
        if args.endpoint:
            host, port = parse_endpoint(args.endpoint)
            pid = args.pid
            srv["description"] = "%s (running; %s)" % (
                args.endpoint, "pid %d" % pid if pid else "no --pid, so no RSS figures")
        else:
            db = os.path.join(workdir, "soak.db")
            log("[soak] starting flowmem serve on %s" % db)
            server = ServerProcess(db, os.path.join(workdir, "serve.log"), args.repo, args.api_key, args.serve_arg)
            host, port, pid = server.host, server.port, server.pid
            srv["description"] = "started here: `%s` from %s, pid %d, %s" % (
                " ".join(shlex.quote(a) for a in ["python"] + server.argv[1:]), args.repo, pid, server.endpoint)
        srv["health"] = wait_healthy(host, port)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    srv["open_files_limit"] = proc_open_files_limit(pid)
    return host, port, pid, server, srv


def after_run(args: argparse.Namespace, host: str, port: int, pid: Optional[int], server: Optional[ServerProcess],
              srv: Dict[str, Any], workdir: str) -> None:
    """The server's figures once the load stopped: peak RSS, health, exit status, log problems, file sizes."""
    srv["vmhwm_kib"] = proc_status(pid).get("VmHWM")
    try:
        wait_healthy(host, port, 10)
        srv["healthy_at_end"] = True
    except RuntimeError:
        srv["healthy_at_end"] = False
    if server is not None:
        srv["exit_status"] = server.stop()
        srv["log_problems"] = log_problems(server.log_text())
        db = os.path.join(workdir, "soak.db")
        srv["db_bytes"] = os.path.getsize(db) if os.path.exists(db) else 0
        srv["wal_bytes"] = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
        srv["log_path"] = server.log_path if args.keep else None


def collect(args: argparse.Namespace, soak: Soak, result: Dict[str, Any], srv: Dict[str, Any],
            warmup_s: float) -> Tuple[Dict[str, Any], "collections.Counter[Tuple[str, str, str]]", int]:
    """Every figure of the run (the JSON report), its errors by (endpoint, kind, detail), requests answered."""
    rows = sorted((r for rec in soak.records for r in rec.rows), key=lambda r: r[0])
    errors: "collections.Counter[Tuple[str, str, str]]" = collections.Counter()
    examples: List[Dict[str, Any]] = []
    for rec in soak.records:
        errors.update(rec.errors)
        examples.extend(rec.examples)
    examples.sort(key=lambda e: e["t_s"])
    wall_s = result["wall_s"]
    reconnects: "collections.Counter[str]" = collections.Counter()
    for c in soak.clients:
        reconnects.update(c.reconnects)
    users = soak.convo.users
    # What was acknowledged: Adds counted by the users' state include ones that failed; count the 200s.
    acked_adds = sum(1 for r in rows if r[1] == "add" and r[3])
    figures: Dict[str, Any] = {
        "command": command_line(),
        "machine": machine(),
        "params": {k: v for k, v in vars(args).items() if k != "api_key"},
        "warmup_s": warmup_s,
        "wall_s": wall_s,
        "server": srv,
        "endpoints": endpoint_rows(rows, errors, wall_s),
        "errors": [{"endpoint": e, "kind": k, "detail": d, "count": n}
                   for (e, k, d), n in sorted(errors.items(), key=lambda kv: -kv[1])],
        "error_examples": examples[:20],
        "memory": memory_figures(soak.samples, warmup_s, result["start_sample"], result["end_sample"],
                                 ADD_SIZE * sum(1 for r in rows if r[1] == "add" and r[3] and r[0] >= warmup_s)),
        "over_time": over_time(rows, soak.samples, wall_s, max(1, args.slices)),
        "samples": soak.samples,
        "data": {
            "adds_acknowledged": acked_adds,
            "messages_acknowledged": acked_adds * ADD_SIZE,
            "sessions": sum(u.sessions for u in users),
            "marker_searches": sum(rec.marker_searches for rec in soak.records),
        },
        "cpu": {"server_s": result["server_cpu_s"], "client_s": result["client_cpu_s"]},
        "preload": result["preload"],
        "connections": {"connects": sum(c.connects for c in soak.clients), "reconnects": dict(reconnects)},
        "aborted": soak.aborted,
    }
    return figures, errors, len(rows)


def failures(args: argparse.Namespace, figures: Dict[str, Any], errors: "collections.Counter[Tuple[str, str, str]]",
             answered: int, started_here: bool) -> List[str]:
    """Why the run fails, one line a reason; none when it passed."""
    out = []
    if figures["aborted"]:
        out.append(figures["aborted"])
    n_errors = sum(errors.values())
    if n_errors:
        by_kind: "collections.Counter[str]" = collections.Counter()
        for (_, k, _), n in errors.items():
            by_kind[k] += n
        out.append("%d errors (%s)" % (n_errors, ", ".join("%s %d" % kv for kv in sorted(by_kind.items()))))
    growth = figures["memory"].get("growth_after_warmup_pct")
    if growth is not None and growth > args.max_rss_growth:
        out.append("RSS grew %.1f%% from after warm-up to the end (limit %.0f%%)" % (growth, args.max_rss_growth))
    srv = figures["server"]
    if not srv.get("healthy_at_end"):
        out.append("GET /health failed after the run")
    if started_here and srv.get("exit_status") != 0:
        out.append("the server's exit status after SIGTERM was %s" % srv.get("exit_status"))
    if not answered:
        out.append("no request was answered")
    preload = figures["preload"]
    if preload and preload["failed"]:
        out.append("%d preload Adds failed (%s)" % (preload["failed"], "; ".join(preload["failures"])))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Soak a server with the arguments in `argv`; the exit status (0 passed, 1 failed, 2 no server)."""
    args = parse_args(argv)
    warmup_s = args.warmup if args.warmup is not None else min(max(0.1 * args.duration, 30.0), args.duration / 2)
    workdir = tempfile.mkdtemp(prefix="flowmem-soak-")
    try:
        host, port, pid, server, srv = start(args, workdir)
    except (RuntimeError, ValueError, OSError) as e:
        log("[soak] cannot start: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 2
    log("[soak] %.0f s, %d clients, %d users, add share %.2f against %s:%d" % (
        args.duration, args.clients, args.users, args.add_share, host, port))
    soak = Soak(args, host, port, pid, server)
    result = soak.run()
    after_run(args, host, port, pid, server, srv, workdir)
    figures, errors, answered = collect(args, soak, result, srv, warmup_s)
    figures["failures"] = failures(args, figures, errors, answered, server is not None)
    figures["passed"] = not figures["failures"]
    finish(report(figures), figures, args.out, workdir, args.keep, "soak")
    return 0 if figures["passed"] else 1
