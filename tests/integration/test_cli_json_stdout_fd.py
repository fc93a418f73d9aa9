"""`--json` and a JSON report keep stdout for the machine reading it, as the command's own
process: what a program's subprocesses, C libraries and `sys.__stdout__` write goes to
stderr, as its `print` does, not between the events a CI job parses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import new_project

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

#: A program that writes to stdout by every way but `print`.
NOISY = """
import os, subprocess, sys
subprocess.run(["echo", "from a subprocess"], check=True)
os.write(1, b"to file descriptor 1\\n")
print("to sys.__stdout__", file=sys.__stdout__, flush=True)
print("by print")
k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"})
"""
WRITTEN = ("from a subprocess", "to file descriptor 1", "to sys.__stdout__", "by print")


def test_what_a_program_runs_writes_goes_to_stderr_not_between_the_events(
    new_project: Any,
) -> None:
    p = new_project(process=True)
    p.program(NOISY)

    for args in (("preview", "--json"), ("up", "--yes", "--json")):
        done = p.sw(*args)

        events = [json.loads(line) for line in done.out.splitlines()]  # every line JSON
        assert events[-1]["event"] == "summary" and events[-1]["ok"], done.out
        for text in WRITTEN:
            assert text in done.err, (args, done.err)

    report = p.sw("policy", "check", ".", "--config", "Stackwright.dev.yaml", "--format", "json")
    assert json.loads(report.out)["checked"] == 1
    for text in WRITTEN:
        assert text in report.err, report.err

    # A person's output still holds them, where they were written.
    plain = p.sw("preview")
    for text in WRITTEN:
        assert text in plain.out + plain.err
