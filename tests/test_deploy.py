"""deploy/: the systemd unit and the Containerfile say what they must, and what they run works.

Neither is run by its engine here (no systemd as PID 1, no container engine): the unit is
checked by `systemd-analyze verify` and `security --offline` (where installed; required
when CI is set), and both are read for their essentials. Then what each would start is
started: the unit's ExecStart with its Environment= (paths moved into a temporary
directory, the key in a credentials directory as LoadCredential= makes it), stopped with
its KillSignal; the container's ENTRYPOINT and CMD with its ENV, probed by its own
HEALTHCHECK command.
"""
import http.client
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import unittest

from flowmem.config import Config
from tests.components import program
from tests.server import ROOT, free_port, start_server, stop_server
from tools import build_pyz

UNIT = os.path.join(ROOT, "deploy", "flowmem.service")
CONTAINERFILE = os.path.join(ROOT, "deploy", "Containerfile")


def unit_entries(path=UNIT):
    """[(section, key, value)] of a unit file, in order (a key may repeat)."""
    entries, section = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
            else:
                key, _, value = line.partition("=")
                entries.append((section, key.strip(), value.strip()))
    return entries


def instructions(path=CONTAINERFILE):
    """[(INSTRUCTION, arguments)] of a Containerfile, continuation lines joined."""
    out, pending = [], ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            text = pending + stripped
            pending = ""
            word, _, rest = text.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def status(port, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("POST" if body else "GET", path, json.dumps(body) if body else None,
                     dict({"Content-Type": "application/json"}, **(headers or {})))
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


class SystemdUnitTest(unittest.TestCase):
    def setUp(self):
        self.entries = unit_entries()
        self.service = {k: v for s, k, v in self.entries if s == "Service"}
        self.environment = dict(v.split("=", 1) for s, k, v in self.entries if s == "Service" and k == "Environment")

    def test_it_runs_hardened_as_its_own_user_writing_only_its_state_directory(self):
        s = self.service
        self.assertNotIn(s.get("User", "root"), ("root", "0"))
        state = "/var/lib/" + s["StateDirectory"]
        self.assertEqual(s["ReadWritePaths"], state)
        self.assertEqual(os.path.dirname(self.environment["FLOWMEM_DB"]), state)
        for key, value in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("PrivateTmp", "yes"),
                           ("ProtectHome", "yes"), ("Restart", "on-failure"), ("KillSignal", "SIGTERM")):
            self.assertEqual(s[key], value, key)
        self.assertGreater(int(s["TimeoutStopSec"]), Config().shutdown_timeout_s)  # SIGKILL only after flowmem's own

    def test_the_key_comes_from_a_credential_never_the_command_line_or_the_unit(self):
        name, _, source = self.service["LoadCredential"].partition(":")
        self.assertTrue(source.startswith("/etc/"))
        self.assertEqual(self.environment["FLOWMEM_API_KEY_FILE"], "%d/" + name)
        self.assertNotIn("FLOWMEM_API_KEY", self.environment)
        self.assertNotIn("--api-key ", self.service["ExecStart"] + " ")

    def test_systemd_analyze_verifies_it_and_rates_it_well_hardened(self):
        analyze = program(self, "systemd-analyze")
        result = subprocess.run([analyze, "verify", UNIT], capture_output=True, text=True, timeout=60)
        self.assertEqual((result.returncode, result.stderr.strip()), (0, ""), result.stdout)
        result = subprocess.run([analyze, "security", "--offline=yes", UNIT], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        exposure = float(re.search(r"Overall exposure level for \S+: ([\d.]+)", result.stdout).group(1))
        self.assertLessEqual(exposure, 2.0, result.stdout)  # "OK"; a unit with no hardening rates 9.2 here

    def test_its_command_serves_with_the_credential_key_and_stops_cleanly_on_its_kill_signal(self):
        with tempfile.TemporaryDirectory(prefix="flowmem-unit-") as tmp:
            pyz = build_pyz.build(os.path.join(tmp, "flowmem.pyz"))
            state, credentials = os.path.join(tmp, "state"), os.path.join(tmp, "credentials")
            os.mkdir(state)
            os.mkdir(credentials)
            with open(os.path.join(credentials, self.service["LoadCredential"].split(":")[0]), "w") as f:
                f.write("unit-key-123\n")
            env = {k: v.replace("%d", credentials).replace("/var/lib/flowmem", state)
                   for k, v in self.environment.items()}
            env.update(FLOWMEM_PORT="0", PATH=os.environ.get("PATH", ""))
            argv = shlex.split(self.service["ExecStart"])
            self.assertEqual(argv[1], "/opt/flowmem/flowmem.pyz")
            proc, port, log = start_server([sys.executable, pyz] + argv[2:], env, state)
            try:
                body = {"query": "x", "user_id": "u", "top_k": 1}
                self.assertEqual(status(port, "/search", body), 401)
                self.assertEqual(status(port, "/search", body, {"X-Api-Key": "unit-key-123"}), 200)
                self.assertEqual(status(port, "/health"), 200)
            finally:
                code = stop_server(proc, getattr(signal, self.service["KillSignal"]))
            self.assertEqual(code, 0, "".join(log))
            self.assertIn("stopped; database closed", "".join(log))
            self.assertTrue(os.path.exists(os.path.join(state, "flowmem.db")))


class ContainerfileTest(unittest.TestCase):
    def setUp(self):
        self.steps = instructions()
        self.env = {}
        for word, args in self.steps:
            if word == "ENV":
                self.env.update(item.split("=", 1) for item in shlex.split(args))

    def value(self, word):
        found = [args for w, args in self.steps if w == word]
        self.assertTrue(found, "no %s" % word)
        return found[-1]

    def test_it_runs_the_package_as_a_non_root_user_with_the_database_on_a_volume(self):
        self.assertEqual(self.steps[0], ("FROM", "python:3.11-slim"))
        self.assertNotIn(self.value("USER"), ("root", "0"))
        words = [w for w, _ in self.steps]
        self.assertLess(words.index("USER"), words.index("ENTRYPOINT"))
        self.assertIn(os.path.dirname(self.env["FLOWMEM_DB"]), json.loads(self.value("VOLUME")))
        self.assertEqual(self.value("EXPOSE"), self.env["FLOWMEM_PORT"])
        self.assertEqual(self.env["FLOWMEM_HOST"], "0.0.0.0")  # reachable through the published port
        self.assertEqual(self.value("STOPSIGNAL"), "SIGTERM")
        self.assertLess(float(self.env["FLOWMEM_SHUTDOWN_TIMEOUT_S"]), 10)  # inside the engines' default grace
        for args in (a for w, a in self.steps if w == "COPY"):
            self.assertTrue(os.path.exists(os.path.join(ROOT, shlex.split(args)[0])), args)
        self.assertNotIn("FLOWMEM_API_KEY", self.env)

    def test_the_build_context_leaves_out_databases_locomo_data_and_compiled_files(self):
        with open(os.path.join(ROOT, ".dockerignore"), encoding="utf-8") as f:
            patterns = {line.strip() for line in f if line.strip() and not line.startswith("#")}
        self.assertLessEqual({"*.db", "*.db-wal", "data/", "**/__pycache__", ".git"}, patterns)

    def test_its_healthcheck_passes_against_what_it_starts_and_fails_without_it(self):
        healthcheck = self.value("HEALTHCHECK")
        self.assertRegex(healthcheck, r"--interval=\S+ --timeout=\S+")
        probe = json.loads(healthcheck.split(" CMD ", 1)[1])
        self.assertEqual(probe[:2], ["python", "-c"])
        self.assertIn("/health", probe[2])
        with tempfile.TemporaryDirectory(prefix="flowmem-container-") as data:
            env = dict(self.env, PYTHONPATH=ROOT, FLOWMEM_DB=os.path.join(data, "flowmem.db"),
                       FLOWMEM_HOST="127.0.0.1", FLOWMEM_PORT=str(free_port()), PATH=os.environ.get("PATH", ""))
            command = json.loads(self.value("ENTRYPOINT")) + json.loads(self.value("CMD"))
            self.assertEqual(command, ["python", "-m", "flowmem", "serve"])
            proc, port, log = start_server([sys.executable] + command[1:], env, data)
            try:
                self.assertEqual(port, int(env["FLOWMEM_PORT"]))
                check = subprocess.run([sys.executable] + probe[1:], env=env, capture_output=True, timeout=30)
                self.assertEqual(check.returncode, 0, check.stderr)
            finally:
                self.assertEqual(stop_server(proc, getattr(signal, self.value("STOPSIGNAL"))), 0, "".join(log))
            check = subprocess.run([sys.executable] + probe[1:], env=env, capture_output=True, timeout=30)
            self.assertNotEqual(check.returncode, 0)


if __name__ == "__main__":
    unittest.main()
