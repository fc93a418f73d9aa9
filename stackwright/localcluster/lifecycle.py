"""Starting, stopping and finding local clusters on this machine.

A cluster named N lives in `$STACKWRIGHT_HOME/clusters/N/`: its settings
(`cluster.json`: port, nodes, speed), its store, its credentials, its kubeconfig,
the client-certificate kubeconfigs handed out (`users/`) and, while it runs, `server.pid` and `server.log`. `start` launches the server
as a detached process and returns once it answers `/readyz`; the port chosen at
first start is kept so a kubeconfig stays valid across restarts.

Must never: leave a half-started server behind on failure, or print the token.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from stackwright.errors import StackwrightError, UsageError
from stackwright.files import private_folder
from stackwright.localcluster import DEFAULT_NAME
from stackwright.processes import is_zombie


def home() -> Path:
    return Path(os.environ.get("STACKWRIGHT_HOME") or Path.home() / ".stackwright")


def cluster_dir(name: str) -> Path:
    return home() / "clusters" / name


@dataclass(frozen=True)
class ClusterInfo:
    name: str
    port: int
    nodes: int
    speed: float
    running: bool
    pid: int | None
    kubeconfig: Path
    folder: Path

    @property
    def context(self) -> str:
        return f"stackwright-{self.name}"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "context": self.context,
            "server": self.server,
            "running": self.running,
            "pid": self.pid,
            "nodes": self.nodes,
            "speed": self.speed,
            "kubeconfig": str(self.kubeconfig),
        }


def _check_name(name: str) -> None:
    import re

    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?", name):
        raise UsageError(
            f"cluster name {name!r} is not valid: use lower-case letters, digits and '-' (at most 40), "
            "starting and ending with a letter or digit"
        )


def _settings(name: str) -> dict[str, object] | None:
    path = cluster_dir(name) / "cluster.json"
    if not path.exists():
        return None
    data: dict[str, object] = json.loads(path.read_text())
    return data


def _pid(name: str) -> int | None:
    """The server's pid, if that process is alive and is our server."""
    pid_file = cluster_dir(name) / "server.pid"
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return None
        return pid
    return pid if b"stackwright.localcluster.server" in cmdline else None


def info(name: str = DEFAULT_NAME) -> ClusterInfo:
    _check_name(name)
    settings = _settings(name)
    if settings is None:
        raise _no_cluster(name)
    pid = _pid(name)
    folder = cluster_dir(name)
    return ClusterInfo(
        name=name,
        port=int(str(settings["port"])),
        nodes=int(str(settings.get("nodes", 1))),
        speed=float(str(settings.get("speed", 1.0))),
        running=pid is not None,
        pid=pid,
        kubeconfig=folder / "kubeconfig",
        folder=folder,
    )


def _no_cluster(name: str) -> UsageError:
    # A user with clusters `a` and `b` who leaves out --name is told which there are.
    others = ", ".join(_names())
    there = f" (there are: {others})" if others else ""
    return UsageError(
        f"no local cluster named {name!r}{there}: start one with "
        f"`stackwright cluster start --name {name}`"
    )


def _names() -> list[str]:
    root = home() / "clusters"
    if not root.exists():
        return []
    return [p.name for p in sorted(root.iterdir()) if (p / "cluster.json").exists()]


def list_clusters() -> list[ClusterInfo]:
    return [info(name) for name in _names()]


_MAX_PORT = 65535


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def start(
    name: str = DEFAULT_NAME,
    *,
    nodes: int | None = None,
    port: int | None = None,
    speed: float | None = None,
    timeout: float = 60.0,
) -> tuple[ClusterInfo, bool]:
    """Start cluster `name` in the background; returns (info, started) — started is False if it already ran."""
    _check_name(name)
    # Checked first: a running cluster's refusal would name a value no start takes.
    if nodes is not None and nodes < 1:
        raise UsageError(f"--nodes must be at least 1 (got {nodes})")
    if speed is not None and speed <= 0:
        raise UsageError(f"--speed must be greater than 0 (got {speed})")
    if port is not None and not 0 <= port <= _MAX_PORT:
        raise UsageError(f"--port must be from 1 to {_MAX_PORT}, or 0 for a free one (got {port})")
    if _pid(name) is not None:
        return _running_as_asked(name, nodes, port, speed), False
    made = not cluster_dir(name).exists()
    try:
        with _starting(name):
            if _pid(name) is not None:  # another process started it while this one waited
                return _running_as_asked(name, nodes, port, speed), False
            return _start(name, nodes, port, speed, timeout), True
    except BaseException:
        # A first start refused before it wrote anything (its port taken) leaves no folder
        # behind, which `cluster list` would not show and `cluster delete` would find.
        if made and _settings(name) is None:
            shutil.rmtree(cluster_dir(name), ignore_errors=True)
        raise


def _running_as_asked(
    name: str, nodes: int | None, port: int | None, speed: float | None
) -> ClusterInfo:
    """The running cluster, refused when the start asked for settings it does not run with:
    they take effect only as a server starts, and `start` of a running one did nothing, so
    `--nodes 3` went unheeded with "nothing to do"."""
    running = info(name)
    asked = {
        "--nodes": (nodes, running.nodes),
        "--port": (port or None, running.port),
        "--speed": (speed, running.speed),
    }
    differ = [f"{flag} {want}" for flag, (want, has) in asked.items() if want not in (None, has)]
    if differ:
        takes = "takes" if len(differ) == 1 else "take"
        raise UsageError(
            f"cluster {name} is running with {running.nodes} node(s) on port {running.port} at "
            f"speed {running.speed:g}; {', '.join(differ)} {takes} effect only as it starts: "
            f"`stackwright cluster stop --name {name}`, then `stackwright cluster start "
            f"--name {name} {' '.join(differ)}`"
        )
    return running


@contextlib.contextmanager
def _starting(name: str) -> Iterator[None]:
    """One start of a cluster at a time on this machine. Concurrent ones (the `up`s of
    several stacks on one stopped local cluster, run in parallel) each launched a server:
    one bound the port, and the pid file named another, which had failed to, so the cluster
    showed as stopped with its server running on, out of reach of `cluster stop`."""
    import fcntl

    folder = cluster_dir(name)
    private_folder(folder)  # its store holds every Secret of the cluster
    with open(folder / "start.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
        yield


def _start(
    name: str, nodes: int | None, port: int | None, speed: float | None, timeout: float
) -> ClusterInfo:
    settings = _settings(name) or {}
    chosen_port = port or int(str(settings.get("port", 0))) or _free_port()
    if not _port_free(chosen_port):
        raise UsageError(
            f"port {chosen_port} on 127.0.0.1 is in use: stop what uses it, or start with `--port` another port"
        )
    folder = cluster_dir(name)
    private_folder(folder)  # its store holds every Secret of the cluster
    settings.update(
        name=name,
        port=chosen_port,
        nodes=nodes if nodes is not None else settings.get("nodes", 1),
        speed=speed if speed is not None else settings.get("speed", 1.0),
    )
    (folder / "cluster.json").write_text(json.dumps(settings, indent=2) + "\n")
    # Imported only to start a server: `up` asks start() on every run, and a running
    # cluster needs no certificates made (cryptography.x509 costs ~30 ms to import).
    from stackwright.localcluster.credentials import ensure_credentials, write_kubeconfig

    creds = ensure_credentials(folder)
    write_kubeconfig(folder / "kubeconfig", name=name, port=chosen_port, creds=creds)
    log_path = folder / "server.log"
    with open(log_path, "ab") as log:
        # -P: `-m` would put the working folder first on the path, so a start from a folder
        # holding a `stackwright` package (a checkout, a project's own) ran that code.
        process = subprocess.Popen(
            [
                sys.executable, "-P", "-m", "stackwright.localcluster.server",
                "--dir", str(folder), "--port", str(chosen_port),
                "--nodes", str(settings["nodes"]), "--speed", str(settings["speed"]),
            ],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
    (folder / "server.pid").write_text(f"{process.pid}\n")
    try:
        _wait_ready(chosen_port, creds.ca_cert, process, timeout)
    except BaseException:
        _terminate(process.pid)
        (folder / "server.pid").unlink(missing_ok=True)
        raise
    return info(name)


def _wait_ready(port: int, ca: Path, process: subprocess.Popen[bytes], timeout: float) -> None:
    import ssl  # here, with urllib, as only `cluster start` waits (~5 ms the others skip)
    import urllib.request

    context = ssl.create_default_context(cafile=str(ca))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StackwrightError(
                f"the local cluster's server exited with code {process.returncode} while starting; "
                f"see {ca.parent / 'server.log'}"
            )
        try:
            with urllib.request.urlopen(
                f"https://127.0.0.1:{port}/readyz", context=context, timeout=1
            ) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise StackwrightError(
        f"the local cluster did not answer within {timeout:.0f}s; see {ca.parent / 'server.log'}"
    )


def _terminate(pid: int, grace: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
            if waited == pid:
                return
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if is_zombie(pid):  # exited, not yet reaped (its parent is gone)
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


#: The longest common name a certificate holds (RFC 5280's ub-common-name).
_MAX_USER = 64


def _plain_name(text: str) -> bool:
    """A user or group name RBAC bindings can match as typed: " alice" is not "alice"."""
    return bool(text) and text == text.strip() and text.isprintable()


def user_kubeconfig(name: str, user: str, groups: Sequence[str] = ()) -> tuple[Path, str]:
    """Write a kubeconfig (0600) whose credential is a client certificate for `user` in
    `groups`, signed by cluster `name`'s client CA; returns its path and context. RBAC
    decides what the user may do (`system:masters` among the groups: everything)."""
    current = info(name)
    if not _plain_name(user) or len(user) > _MAX_USER:
        raise UsageError(
            f"--user {user!r} is not a user name: give 1 to {_MAX_USER} printable characters, "
            "no blanks at either end, e.g. --user alice"
        )
    for group in groups:
        if not _plain_name(group):
            raise UsageError(
                f"--group {group!r} is not a group name: give printable characters, no blanks "
                "at either end, e.g. --group developers"
            )
    if current.running and not (current.folder / "client-ca.crt").exists():
        raise UsageError(
            f"cluster {name} was started before it had a client CA, so it would refuse the "
            f"certificate: restart it (`stackwright cluster stop --name {name}` then "
            f"`stackwright cluster start --name {name}`), then run this again"
        )
    from stackwright.localcluster.credentials import ensure_credentials, write_user_kubeconfig

    with _starting(name):  # one writer of the client CA at a time
        creds = ensure_credentials(current.folder)
        folder = current.folder / "users"
        private_folder(folder)
        path = folder / f"{quote(user, safe='@._-')}.kubeconfig"
        context = write_user_kubeconfig(
            path, name=name, port=current.port, creds=creds, user=user, groups=groups
        )
    return path, context


def stop(name: str = DEFAULT_NAME) -> bool:
    """Stop cluster `name`; returns False when it was not running. Its data stays."""
    current = info(name)
    if current.pid is None:
        return False
    _terminate(current.pid)
    (current.folder / "server.pid").unlink(missing_ok=True)
    return True


def delete(name: str = DEFAULT_NAME) -> None:
    """Stop cluster `name` and remove every trace of it; a name no cluster has is refused
    (a misspelt one said "deleted" while the cluster meant stayed)."""
    _check_name(name)
    if _settings(name) is not None:
        stop(name)
    folder = cluster_dir(name)
    if not folder.exists():
        raise _no_cluster(name)
    shutil.rmtree(folder)
