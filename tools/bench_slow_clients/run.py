"""The slow-client bench as a command: its plan, its phases, the server it starts, its figures."""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import tools.bench_slow_clients as package
from tools.bench_slow_clients.hostile import Hostiles, HostileSettings
from tools.bench_slow_clients.plan import ALL_PHASES, FULL, QUICK, PhaseSpec, Plan
from tools.bench_slow_clients.real import RealClient, Sampler, log_slice_problems, raise_open_files, settle
from tools.bench_slow_clients.report import report
from tools.benchkit.client import KeepAliveClient
from tools.benchkit.process import proc_open_files_limit, proc_status
from tools.benchkit.report import command_line, finish, fmt, log, machine
from tools.benchkit.server import REPO_ROOT, ServerProcess, auth_headers, wait_healthy
from tools.benchkit.workload import Conversations, check_add

# --help shows what the package's docstring says: what the command does and how it is run.
DOC = package.__doc__ or ""


def prepare(host: str, port: int, headers: Dict[str, str], plan: Plan, seed: int
            ) -> Tuple[Conversations, List[Dict[str, Any]], Dict[str, Any]]:
    """Users with messages over HTTP, the real client's questions, and how long it took."""
    convo = Conversations(plan.users + 1, seed, "sc%04x" % (int(time.time()) % 0xFFFF))  # the last: the writer
    rng = random.Random("prepare-%d" % seed)
    client = KeepAliveClient(host, port, 60.0, headers)
    t0 = time.perf_counter()
    adds = failed = 0
    for user in convo.users[:-1]:
        while user.messages < plan.messages_per_user:
            body, marker, texts = convo.next_add(user, rng)
            out = client.request("POST", "/add", json.dumps(body).encode("utf-8"))
            adds += 1
            if out.error_kind is None and check_add(body, out.payload) is None:
                convo.acknowledged(user, marker, texts)
            else:
                failed += 1
    client.close()
    qrng = random.Random("questions-%d" % seed)
    questions = []
    for i in range(200):
        body, _ = convo.question(convo.users[i % plan.users], qrng)
        body["top_k"] = 100
        body.pop("options", None)
        questions.append(body)
    return convo, questions, {"adds": adds, "failed": failed, "seconds": time.perf_counter() - t0,
                              "messages": sum(u.messages for u in convo.users[:-1])}


def nonreader_payload(questions: List[Dict[str, Any]], n: int, api_key: Optional[str]) -> bytes:
    """`n` complete Search requests, pipelined, for questions with many answers."""
    out = []
    for i in range(n):
        body = json.dumps(dict(questions[i % len(questions)], top_k=100)).encode("utf-8")
        auth = b"Authorization: Bearer %s\r\n" % api_key.encode() if api_key else b""
        out.append(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + auth
                   + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return b"".join(out)


def run_phase(spec: PhaseSpec, args: argparse.Namespace, plan: Plan, server: ServerProcess, real: RealClient,
              payload: bytes) -> Dict[str, Any]:
    pid = server.pid
    phase: Dict[str, Any] = {"key": spec.key, "label": spec.label, "kind": spec.kind, "count": spec.count}
    log_offset = len(server.log_text())
    before = proc_status(pid)
    phase["threads_before"], phase["rss_before_kib"] = before.get("Threads"), before.get("VmRSS")
    t0 = time.perf_counter()
    hostiles = None
    if spec.kind:
        auth = b"Authorization: Bearer %s\r\n" % args.api_key.encode() if args.api_key else b""
        hostiles = Hostiles(HostileSettings(server.host, server.port, spec.kind, spec.count, args.drip_interval,
                                            args.reopen_delay, 10.0, payload, auth))
        # Wait until all are open (or 30 s), then until the server is quiet again.
        deadline = time.perf_counter() + 30
        while True:
            st = hostiles.stats()
            # Every connection opened once (some may already have been closed and wait to reopen).
            if st["open"] >= spec.count or st["opened_total"] >= spec.count or time.perf_counter() > deadline:
                break
            time.sleep(0.25)
        phase["hostile_at_start"] = st
        log("[%s] %d of %d %s connections open after %.1f s" % (spec.key, st["open"], spec.count, spec.kind,
                                                                  time.perf_counter() - t0))
    phase["settle_s"], phase["settled"] = settle(pid)
    sampler = Sampler(pid)
    at = proc_status(pid)
    phase["threads_at_measure"], phase["rss_at_measure_kib"] = at.get("Threads"), at.get("VmRSS")
    phase["real"] = real.measure(plan.measure_budget_s)
    if hostiles:
        while time.perf_counter() - t0 < plan.hold_s and server.alive():
            time.sleep(0.25)
        phase["hostile"] = hostiles.stop()
    phase["seconds"] = time.perf_counter() - t0
    sampler.stop()
    phase["threads_max"], phase["rss_max_kib"] = sampler.max_threads, sampler.max_rss
    # Let the server clean up before the next phase: threads back near where they were.
    t1 = time.perf_counter()
    while server.alive() and time.perf_counter() - t1 < 30:
        now = proc_status(pid).get("Threads")
        if now is None or before.get("Threads") is None or now <= before["Threads"] + 2:
            break
        time.sleep(0.25)
    after = proc_status(pid)
    phase["threads_after"], phase["rss_after_kib"] = after.get("Threads"), after.get("VmRSS")
    phase["recovery_s"] = time.perf_counter() - t1
    phase["server_alive"] = server.alive()
    phase["log"] = log_slice_problems(server.log_text()[log_offset:])
    r = phase["real"]["requests"]
    log("[%s] %s: search p50 %s ms, %d errors; server threads max %s" % (
        spec.key, spec.label, fmt(r["search"]["latency"]["p50_ms"]),
        sum(sum(v["errors"].values()) for v in r.values()), phase["threads_max"]))
    return phase


def phase_specs(args: argparse.Namespace) -> List[PhaseSpec]:
    specs = {
        "a": PhaseSpec("a", "baseline", None, 0),
        "b": PhaseSpec("b", "slowloris", "slowloris", args.slowloris),
        "c": PhaseSpec("c", "stalled bodies", "stalled_body", args.stalled),
        "d": PhaseSpec("d", "idle connections", "idle", args.idle),
        "e": PhaseSpec("e", "non-readers", "nonreader", args.nonreaders),
        "f": PhaseSpec("f", "baseline again", None, 0),
    }
    return [specs[k] for k in ALL_PHASES if k in args.phases and (specs[k].kind is None or specs[k].count > 0)]


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m tools.bench_slow_clients", description=DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=DOC)
    p.add_argument("--quick", action="store_true", help="about a minute: %d/%d/%d real requests per phase, "
                   "hostile phases of at least %.0f s" % (QUICK.searches, QUICK.adds, QUICK.fresh, QUICK.hold_s))
    p.add_argument("--phases", default=ALL_PHASES, help="which phases, in order a-f (%s); a first makes the "
                                                        "ratios" % ALL_PHASES)
    p.add_argument("--slowloris", type=int, default=1000, help="connections in phase b (1000)")
    p.add_argument("--stalled", type=int, default=520, help="connections in phase c (520)")
    p.add_argument("--idle", type=int, default=1000, help="connections in phase d (1000)")
    p.add_argument("--nonreaders", type=int, default=200, help="connections in phase e (200; 0 skips it)")
    p.add_argument("--nonreader-requests", type=int, default=2, help="Searches each non-reader sends at once (2)")
    p.add_argument("--drip-interval", type=float, default=5.0, help="seconds between a slowloris' drips (5)")
    p.add_argument("--reopen-delay", type=float, default=1.0, help="seconds before a closed hostile connection is "
                                                                    "reopened (1)")
    p.add_argument("--hold", type=float, help="a hostile phase lasts at least this many seconds (30; quick 12)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds before a real request counts as timed out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--api-key", help="start the server with this key and send it")
    p.add_argument("--repo", default=REPO_ROOT, help="the flowmem checkout whose server is started (this one)")
    p.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `flowmem serve` (repeatable), e.g. --serve-arg=--workers=32")
    p.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--check", action="store_true", help="exit 1 on any real-client error or a p99 ratio above "
                                                        "--max-ratio")
    p.add_argument("--max-ratio", type=float, default=3.0)
    p.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    args = p.parse_args(argv)
    if set(args.phases) - set(ALL_PHASES):
        p.error("--phases takes letters from %s" % ALL_PHASES)
    return args


def run_phases(server: ServerProcess, args: argparse.Namespace, plan: Plan, specs: List[PhaseSpec],
               headers: Dict[str, str], phases: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], bytes]:
    """Prepare the users, warm the real client, then run each phase into `phases`; (preparation, payload)."""
    log("[slow] server pid %d on port %d; preparing %d users x %d messages" % (
        server.pid, server.port, plan.users, plan.messages_per_user))
    convo, questions, prep = prepare(server.host, server.port, headers, plan, args.seed)
    payload = nonreader_payload(questions, args.nonreader_requests, args.api_key)
    real = RealClient(server.host, server.port, args.timeout, headers, convo, questions, plan, args.seed)
    real.measure(plan.measure_budget_s, 0.5)  # warm-up: caches, connections; not reported
    for spec in specs:
        if not server.alive():
            log("[slow] the server exited; stopping")
            break
        log("[%s] %s%s" % (spec.key, spec.label, " (%d %s connections)" % (spec.count, spec.kind)
                            if spec.kind else ""))
        phases.append(run_phase(spec, args, plan, server, real, payload))
    return prep, payload


def checked(phases: List[Dict[str, Any]], max_ratio: float) -> List[str]:
    """`--check`'s failures: a request's errors, a p99 over `max_ratio` times the baseline's, a server gone."""
    check = []
    base = phases[0]["real"]["requests"] if phases and phases[0]["kind"] is None else None
    for ph in phases:
        for kind, r in ph["real"]["requests"].items():
            if r["errors"]:
                check.append("%s %s: %d errors" % (ph["key"], kind, sum(r["errors"].values())))
            b = base[kind]["latency"]["p99_ms"] if base else None
            v = r["latency"]["p99_ms"]
            if b and v == v and b == b and v / b > max_ratio:
                check.append("%s %s: p99 %.1fx baseline" % (ph["key"], kind, v / b))
        if not ph["server_alive"]:
            check.append("%s: the server exited" % ph["key"])
    return check


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the phases against a server started here; the exit status (1: --check failed, 2: no server)."""
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.hold is not None:
        plan = plan._replace(hold_s=args.hold)
    specs = phase_specs(args)
    need = max([s.count for s in specs] + [0]) + 512
    open_files = raise_open_files(need)
    if open_files["enough"] is False:
        log("[slow] warning: open files limited to %s (hard limit), %d wanted; some hostile connections will fail"
            % (open_files["after"], need))
    started = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix="flowmem-slow-")
    headers = auth_headers(args.api_key)
    try:
        server = ServerProcess(os.path.join(workdir, "slow.db"), os.path.join(workdir, "serve.log"), args.repo,
                               args.api_key, args.serve_arg)
        wait_healthy(server.host, server.port)
    except (RuntimeError, OSError) as e:
        log("[slow] cannot start the server: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 2
    phases: List[Dict[str, Any]] = []
    figures: Dict[str, Any] = {}
    try:
        prep, payload = run_phases(server, args, plan, specs, headers, phases)
        figures["server"] = {"argv": " ".join(shlex.quote(a) for a in ["python"] + server.argv[1:]),
                             "pid": server.pid, "open_files_limit": proc_open_files_limit(server.pid)}
    finally:
        exit_status = server.stop()
    figures["server"] = dict(figures.get("server") or {"argv": " ".join(server.argv), "open_files_limit": None},
                             exit_status=exit_status)
    figures.update({
        "command": command_line(),
        "machine": machine(),
        "mode": "quick" if args.quick else "full",
        "params": {k: v for k, v in vars(args).items() if k != "api_key"},
        "plan": plan._asdict(),
        "open_files": open_files,
        "prepare": prep,
        "response_bytes_nonreader_payload": len(payload),
        "phases": phases,
        "total_s": time.perf_counter() - started,
    })
    figures["check"] = checked(phases, args.max_ratio) if args.check else None
    check = figures["check"]
    finish(report(figures), figures, args.json, workdir, args.keep, "slow")
    return 1 if check else 0
