"""A stack whose kubeconfig names a cluster that does not answer: one line, exit code 1, soon.

Each of the example's steps once retried the unanswered server on its own (the cluster's
identity, then discovery for each kind, a skipped step's plan too): 42 connections and
about 20 s before the same failure, said twice. The server is a local port that accepts
and closes each connection (counted), or one nothing listens on.
"""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_in_process import sw

from stackwright.providers.kubernetes import RetryPolicy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Hangup:
    """A TCP port that accepts each connection and closes it at once, counting them."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:  # closed: the test is over
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.socket.close()
        self._thread.join(5)


@pytest.fixture()
def hangup() -> Iterator[Hangup]:
    server = Hangup()
    try:
        yield server
    finally:
        server.close()


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def webapp_on(tmp_path: Path, port: int) -> tuple[Path, Path]:
    """The webapp example, its stack's kubeconfig naming https://127.0.0.1:`port`."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "down", "cluster": {"server": f"https://127.0.0.1:{port}"}},
                ],
                "users": [{"name": "me", "user": {"token": "t"}}],
                "contexts": [{"name": "down", "context": {"cluster": "down", "user": "me"}}],
                "current-context": "down",
            }
        )
    )
    project = tmp_path / "webapp"
    shutil.copytree(EXAMPLES / "webapp", project)
    (project / "Stackwright.dev.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(kubeconfig)}})
    )
    return project, kubeconfig


def test_a_cluster_that_closes_every_connection_stops_preview_after_a_few(
    tmp_path: Path, hangup: Hangup
) -> None:
    project, kubeconfig = webapp_on(tmp_path, hangup.port)
    env = {"STACKWRIGHT_HOME": str(tmp_path / "home"), "STACKWRIGHT_CONFIG_PASSPHRASE": "x"}
    sw(project, "stack", "init", "dev", env=env)

    for command in ("preview", "up"):
        before = hangup.connections
        result = sw(project, command, *(["--yes"] if command == "up" else []), env=env, check=False)

        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(
            f"error: {command}: cannot reach the API server at https://127.0.0.1:{hangup.port} "
            f"(context 'down' (kubeconfig {kubeconfig})): "
        )
        assert f", {RetryPolicy().first_contact_attempts} attempts over " in line
        assert line.endswith(
            "; check that the cluster is running and that this is the context meant "
            "(`kubectl config get-contexts` lists them), then retry"
        )
        # The first contact's attempts only: no step asked again.
        assert hangup.connections - before == RetryPolicy().first_contact_attempts


def test_a_port_nothing_listens_on_is_said_refused(tmp_path: Path) -> None:
    port = closed_port()
    project, kubeconfig = webapp_on(tmp_path, port)
    env = {"STACKWRIGHT_HOME": str(tmp_path / "home"), "STACKWRIGHT_CONFIG_PASSPHRASE": "x"}
    sw(project, "stack", "init", "dev", env=env)

    result = sw(project, "preview", env=env, check=False)

    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"error: preview: cannot reach the API server at https://127.0.0.1:{port} "
        f"(context 'down' (kubeconfig {kubeconfig})): connection refused, "
    )
