"""A CI job that runs its steps in a terminal (Buildkite, CircleCI, `docker run -t`): the
command is its own process whose stdin and stdout are a pseudo-terminal, as there, with
`CI=true` in its environment. No one is at that terminal: a question waits until the job's
timeout, and a live display's cursor movements garble the log.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from test_cli_lifecycle import CLI, new_project

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

#: Longer than a refusal takes; a command still running then is waiting for an answer.
PATIENCE = 30.0


def at_a_terminal(
    root: Path, *args: str, env: dict[str, str], until: str = ""
) -> tuple[int | None, str]:
    """`stackwright ARGS` with a pseudo-terminal for stdin, stdout and stderr, nobody
    typing: its exit code (None: still running after PATIENCE, or once the terminal showed
    `until`, then killed) and what the terminal showed."""
    ours, theirs = pty.openpty()
    shown = b""
    try:
        process = subprocess.Popen(
            [*CLI, *args],
            cwd=root,
            stdin=theirs,
            stdout=theirs,
            stderr=theirs,
            env={**os.environ, **env},  # no CI variable but env's (tests/conftest.py)
        )
        os.close(theirs)
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            ready, _, _ = select.select([ours], [], [], 0.1)
            if ready:
                try:
                    shown += os.read(ours, 65536)
                except OSError:  # the terminal's other end closed: the process is done
                    process.wait(PATIENCE)
                    break
            if (process.poll() is not None and not ready) or (until and until in shown.decode()):
                break
        code = process.poll()
        if code is None:
            process.kill()
            process.wait()
    finally:
        os.close(ours)
    return code, shown.decode(errors="replace")


def test_up_without_yes_in_a_ci_jobs_terminal_refuses_instead_of_waiting_for_an_answer(
    new_project: Any,
) -> None:
    p = new_project()
    p.program('k8s.core.v1.ConfigMap("cm", data={"a": "b"})')

    code, shown = at_a_terminal(p.root, "up", env={"CI": "true"})

    assert code == 2, f"up waited for an answer no one gives: {shown!r}"
    assert shown.strip() == (
        "error: `stackwright up` asks for confirmation: pass --yes to run it in CI (CI=true is "
        "set), or see what it would change with `stackwright preview`"
    )
    assert p.state()["resources"] == []

    # A CI system that does not set CI, by its own variable; the person at a terminal
    # (CI unset, or CI=false) is still asked.
    code, shown = at_a_terminal(p.root, "destroy", env={"TF_BUILD": "True"})
    assert code == 2 and "pass --yes to run it in CI (TF_BUILD=True is set)" in shown
    asked = "Do you want to perform this update?"
    code, shown = at_a_terminal(p.root, "up", env={"CI": "false"}, until=asked)
    assert code is None and asked in shown, shown


def test_config_set_without_a_value_in_a_ci_jobs_terminal_refuses_instead_of_prompting(
    new_project: Any,
) -> None:
    p = new_project()
    before = (p.root / "Stackwright.dev.yaml").read_text()

    code, shown = at_a_terminal(p.root, "config", "set", "--secret", "token", env={"CI": "1"})

    assert code == 2, f"config set prompted: {shown!r}"
    assert shown.strip() == (
        "error: config set --secret token: no VALUE was given, and it cannot be asked for in "
        "CI (CI=1 is set): pass the value (`stackwright config set --secret token VALUE`), or "
        "pipe it in (`… | stackwright config set --secret token`)"
    )
    assert (p.root / "Stackwright.dev.yaml").read_text() == before


def test_a_preview_in_a_ci_jobs_terminal_prints_plain_lines(new_project: Any) -> None:
    p = new_project()
    p.program('k8s.core.v1.ConfigMap("cm", data={"a": "b"})')

    code, at_a_desk = at_a_terminal(p.root, "preview", env={})
    assert code == 0 and "\x1b[" in at_a_desk, "a person's terminal shows the live display"

    code, in_ci = at_a_terminal(p.root, "preview", env={"CI": "true"})

    assert code == 0, in_ci
    assert "\x1b" not in in_ci, in_ci
    assert "+ create  kubernetes:core/v1:ConfigMap  cm\r\n" in in_ci
    assert "    + 1 to create\r\n" in in_ci
