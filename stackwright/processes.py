"""Facts about other processes on this host that `kill -0` does not tell.

Shared by the state store (is a lock holder dead?) and the local cluster (has the
server exited?), which may import nothing else of each other. Must never signal,
wait for or otherwise change a process: it only reads /proc.
"""

from __future__ import annotations

__all__ = ["is_zombie"]


def is_zombie(pid: int) -> bool:
    """Whether `pid` has exited but is not yet reaped by its parent: it still has a pid, and
    `kill -0` succeeds, yet it is dead all the same. False where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[:1] == ["Z"]
    except OSError:
        return False
