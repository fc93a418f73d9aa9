"""`stackwright.processes`: an exited, unreaped child is dead though `kill -0` works."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from stackwright.processes import gone, is_zombie


def test_an_exited_unreaped_child_is_a_zombie_and_a_running_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        assert not is_zombie(child.pid) and not gone(child.pid)
        assert child.stdin is not None
        child.stdin.close()  # it exits; nobody has waited for it yet
        deadline = time.monotonic() + 10
        while not is_zombie(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(child.pid, 0)  # still has a pid ...
        assert is_zombie(child.pid) and gone(child.pid)  # ... but is dead
    finally:
        child.wait()
    assert not is_zombie(child.pid), "reaped: no such process"
    assert gone(child.pid)
    assert not gone(os.getpid())


def test_a_pid_no_process_can_have_is_gone_not_an_error() -> None:
    """A pid read from a file's name or a record may be anything: one wider than the
    kernel's pid type made `os.kill` raise OverflowError; 0 and negatives address groups."""
    for pid in (99999999999, 2**31, 2**63, 2**64, 0, -1, -os.getpid()):
        assert gone(pid), pid
