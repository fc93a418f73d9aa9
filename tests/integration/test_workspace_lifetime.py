"""A workspace holds its state store open only while it is used: a script (or the CLI) that
opens workspaces again and again, its operations failing (a bad program, a locked stack),
holds no more connections or file handles afterwards than before.

The garbage collector is off while the commands run: a failure's traceback puts the
workspace in a reference cycle, which only a collection would free; what is closed must
be closed without one.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster, new_project

from stackwright.automation import Workspace
from stackwright.errors import StackLocked, UsageError
from stackwright.state import open_backend

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

ROUNDS = 10
BAD_PROGRAM = "raise ValueError('the program is broken')\n"
PROGRAM = """
ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.core.v1.ConfigMap("cm", metadata={"namespace": ns.metadata["name"]}, data={"a": "b"})
"""


def open_files() -> dict[str, str]:
    """This process's open file descriptors: number → what each is open on."""
    found: dict[str, str] = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the descriptor listdir itself used
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return found


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextlib.contextmanager
def locked(project: str, stack: str) -> Iterator[None]:
    """The stack locked by another operation for as long as the block runs."""
    with (
        contextlib.closing(open_backend()) as backend,
        backend.begin_operation(project, stack, kind="update"),
    ):
        yield


def assert_nothing_more_open(before: dict[str, str], after: dict[str, str]) -> None:
    def state_files(files: dict[str, str]) -> list[str]:
        return sorted(path for path in files.values() if "state.db" in path)

    assert state_files(after) == state_files(before)
    assert len(after) <= len(before), set(after.values()) - set(before.values())


def test_a_script_that_fails_again_and_again_keeps_no_file_open(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(PROGRAM)
    main = (p.root / "__main__.py").read_text()

    with no_collection():
        before = open_files()
        for _ in range(ROUNDS):
            (p.root / "__main__.py").write_text(BAD_PROGRAM)
            with pytest.raises(UsageError), Workspace.open(p.root, "dev") as ws:
                ws.up(lambda event: None)
            (p.root / "__main__.py").write_text(main)
            with (
                locked(p.name, "dev"),
                pytest.raises(StackLocked),
                Workspace.open(p.root, "dev") as ws,
            ):
                ws.up(lambda event: None)
            with Workspace.open(p.root, "dev") as ws:
                assert ws.history(limit=1)
        after = open_files()
    assert_nothing_more_open(before, after)


def test_the_cli_closes_what_a_failed_command_opened(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(PROGRAM)
    main = (p.root / "__main__.py").read_text()
    p.up()  # the cluster's client and the program's modules, loaded once

    with no_collection():
        before = open_files()
        for _ in range(ROUNDS):
            (p.root / "__main__.py").write_text(BAD_PROGRAM)
            assert "the program is broken" in p.sw("up", "--yes", rc=2).err
            (p.root / "__main__.py").write_text(main)
            with locked(p.name, "dev"):
                assert "locked" in p.sw("up", "--yes", rc=4).err
            p.sw("config", "get", "nothing-here", rc=2)
            p.sw("stack", "select", "no-such-stack", rc=2)
            p.up()
        after = open_files()
    assert_nothing_more_open(before, after)


PROBE = """
import os, sys
from stackwright.cli.main import main

try:
    main(sys.argv[1:])
finally:  # as the command is about to exit, before the interpreter's own clean-up
    fds = os.listdir("/proc/self/fd")
    print("OPEN", sorted(os.readlink(f"/proc/self/fd/{fd}") for fd in fds
                         if os.path.exists(f"/proc/self/fd/{fd}")), file=sys.stderr)
"""


def test_an_up_run_as_its_own_process_leaves_nothing_open(
    new_project: Any, cluster: LiveCluster
) -> None:
    """What a real `stackwright up` holds open as it exits: its standard streams only,
    nothing of the state store (its WAL), the cluster or the program."""
    p = new_project()
    p.program(PROGRAM)
    for program in (p.root / "__main__.py").read_text(), BAD_PROGRAM:
        (p.root / "__main__.py").write_text(program)
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "up", "--yes"],
            cwd=p.root,
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, "STACKWRIGHT_STACK": "dev"},
        )
        assert done.returncode in (0, 2), done.stderr
        (line,) = [x for x in done.stderr.splitlines() if x.startswith("OPEN ")]
        held = [f for f in ast.literal_eval(line.removeprefix("OPEN ")) if f.startswith("/")]
        # The standard streams are pipes; /dev/null and the like are the interpreter's.
        assert [f for f in held if not f.startswith("/dev/")] == [], done.stderr
