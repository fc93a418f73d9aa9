"""Facts about other processes on this host: whether one has ended (`kill -0`, which sends
nothing, and what it does not tell: a zombie).

Shared by the state store (is a lock holder dead?), the local cluster (has the server
exited?) and the rendering provider (was a temporary file's writer killed?), which may
import nothing else of each other. Must never signal, wait for or otherwise change a
process: it only asks the kernel whether the pid exists, and reads /proc.
"""

from __future__ import annotations

import os

__all__ = ["gone", "is_zombie"]


def gone(pid: int) -> bool:
    """Whether process `pid` of this host has ended (exited, killed, crashed): no such pid,
    or only its zombie. Another user's process is not gone; a pid reused by another process
    looks alive: never a wrong "gone". A pid no process can have (not positive, or wider
    than the kernel's pid type, as a file name may say) is gone: never an error."""
    if pid <= 0:  # `kill` would address a process group, or every process, not one
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: wider than a pid_t
        return True
    except PermissionError:
        return False
    return is_zombie(pid)


def is_zombie(pid: int) -> bool:
    """Whether `pid` has exited but is not yet reaped by its parent: it still has a pid, and
    `kill -0` succeeds, yet it is dead all the same. False where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[:1] == ["Z"]
    except OSError:
        return False
