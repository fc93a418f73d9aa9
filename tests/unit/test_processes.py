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
