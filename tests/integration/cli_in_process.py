"""Run the `stackwright` command in the test's own process, as its own process would run it.

A `stackwright` process spends ~0.4 s starting Python and importing before it does
anything: most of the time of the end-to-end tests that run a few hundred commands. A
test about what a command does (its output, exit code, state, cluster) runs it here, with
the arguments, working folder, environment, stdin, stdout and stderr a process would
have, and an uncaught exception printed and exit code 1, as Python does. What depends on
the process itself (signals, kill -9, a lock whose holder dies, the entry point) runs the
real command: `process=True` in the helpers that offer it.

Must never: leave the test's working folder, environment or process-wide memory of
secret values changed by a command it ran, nor an object it dropped alive.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

from stackwright.cli.main import main
from stackwright.errors import forget_secrets
from stackwright.localcluster import lifecycle


def run_cli(
    args: Sequence[str], *, cwd: Path | str, env: Mapping[str, str], input: str = ""
) -> subprocess.CompletedProcess[str]:
    """`stackwright ARGS` run in `cwd` with exactly `env` as its environment; what
    `subprocess.run(..., capture_output=True, text=True)` would return."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    code: int
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin = io.StringIO(input)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
                code = 0
            except SystemExit as exit_:
                if exit_.code is None or isinstance(exit_.code, int):
                    code = exit_.code or 0
                else:  # sys.exit("message"): printed, exit code 1
                    print(exit_.code, file=sys.stderr)
                    code = 1
            except Exception:  # what the interpreter prints for an uncaught exception
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        # A process remembers the secret values it saw only while it runs. (What a command
        # opened, it closes as it ends, however it ends: no collection is needed here.)
        forget_secrets()
    return subprocess.CompletedProcess(["stackwright", *args], code, out.getvalue(), err.getvalue())


def sw(
    project: Path, *args: str, env: Mapping[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`stackwright --cwd PROJECT ARGS` on stack `dev` (and `env` over this environment);
    unless not `check`, a failure raises with what the command printed."""
    result = run_cli(
        ["--cwd", str(project), *args],
        cwd=project,
        env={**os.environ, "STACKWRIGHT_STACK": "dev", **(env or {})},
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"stackwright {' '.join(args)} failed ({result.returncode}):\n"
            f"{result.stdout}\n{result.stderr}"
        )
    return result


def stop_clusters(home: Path) -> None:
    """Stop every local cluster under the STACKWRIGHT_HOME `home`: those a command a test
    ran started on its own (`up`, `state delete` of a stack whose provider is one)."""
    old = os.environ.get("STACKWRIGHT_HOME")
    os.environ["STACKWRIGHT_HOME"] = str(home)
    try:
        for cluster in lifecycle.list_clusters():
            lifecycle.stop(cluster.name)
    finally:
        if old is None:
            os.environ.pop("STACKWRIGHT_HOME", None)
        else:
            os.environ["STACKWRIGHT_HOME"] = old
