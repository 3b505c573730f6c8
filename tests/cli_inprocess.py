"""`flowmem ...` run inside the test's own process: flowmem.cli.main with its own stdin, stdout,
stderr, environment and working directory, as a child process would have them.

What a command prints, its exit status and the one-line errors are the same whether main()
runs here or in `python -m flowmem`, and here a check costs milliseconds rather than an
interpreter's start. tests/test_cli_process.py keeps the checks a real process is the
point of (the module entry point, a server, a real pipe and environment).
"""
import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Dict, NamedTuple, Optional
from unittest import mock

from flowmem.cli import main
from tests.helpers import CliMixin


class Result(NamedTuple):
    """What a command left: as subprocess.CompletedProcess names them."""

    returncode: int
    stdout: str
    stderr: str


def run_main(*args: str, stdin: Optional[str] = None, env: Optional[Dict[str, str]] = None,
             cwd: Optional[str] = None) -> Result:
    """Run `flowmem ARGS` in this process, `stdin` its standard input, `env` its only FLOWMEM_ variables."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
    environ.update(env or {})
    out, err = io.StringIO(), io.StringIO()
    stdin_file = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with mock.patch.dict(os.environ, environ, clear=True), mock.patch.object(sys, "stdin", stdin_file), \
                redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as e:  # argparse's --help, --version and usage errors
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
    return Result(status, out.getvalue(), err.getvalue())


class InProcessCli(CliMixin):
    """CliMixin's run_cli, in this process (run_main) from `self.cli_dir`."""

    def run_cli(self, *args: str, stdin: Optional[str] = None,
                env: Optional[Dict[str, str]] = None) -> Result:
        return run_main(*args, stdin=stdin, env=env, cwd=self.cli_dir)
