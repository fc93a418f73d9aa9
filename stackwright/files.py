"""Files and folders only their owner may read: the local cluster's data (its store holds
every Secret of the cluster), the state store, keys, tokens and kubeconfigs.

Shared by the state store and the local cluster, which may import nothing else of each
other. Must never loosen a mode, or write a secret through a file others could read
first (a mode set after the write leaves a window).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["private_file", "private_folder", "write_private"]


def private_folder(path: Path) -> None:
    """Make `path` (and missing parents) and let only its owner in (0700), whatever mode a
    folder made earlier had."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


def private_file(path: Path | str) -> None:
    """Make `path` empty with mode 0600 if it is missing, before a database opens it: SQLite
    gives its WAL and shared-memory files the mode of the database file."""
    with contextlib.suppress(OSError):  # there already; or a folder the database reports
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def write_private(path: Path | str, data: bytes) -> None:
    """Write `data` to `path`, readable and writable by its owner only (0600), also when the
    file was there before with a looser mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
