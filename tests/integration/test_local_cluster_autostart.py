"""A preview or up of a project naming a local cluster starts it when it is not running, and
says how to stop it: the server outlives the command (a CI job would leave it behind)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_in_process import run_cli

from stackwright.localcluster import lifecycle

pytestmark = pytest.mark.integration


def test_a_started_local_cluster_is_named_with_the_command_that_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKWRIGHT_")}
    env["STACKWRIGHT_HOME"] = str(tmp_path / "home")
    made = run_cli(["new", "kubernetes-python", "app"], cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    app = tmp_path / "app"
    assert (
        run_cli(["config", "set", "kubernetes:cluster", "ci-job"], cwd=app, env=env).returncode == 0
    )
    try:
        preview = run_cli(["preview", "--json"], cwd=app, env=env)
        assert preview.returncode == 0, preview.stderr
        notes = [
            e["message"]
            for e in map(json.loads, preview.stdout.splitlines())
            if e["event"] == "diagnostic"
        ]
        assert any(
            n.startswith("started the local cluster ci-job at https://127.0.0.1:")
            and n.endswith(
                "it keeps running after this command "
                "(`stackwright cluster stop --name ci-job` stops it)"
            )
            for n in notes
        ), notes
        again = run_cli(["preview", "--json"], cwd=app, env=env)  # running: nothing to say
        assert "started the local cluster" not in again.stdout
        stopped = run_cli(["cluster", "stop", "--name", "ci-job"], cwd=app, env=env)
        assert stopped.returncode == 0, stopped.stderr
    finally:
        monkeypatch.setenv("STACKWRIGHT_HOME", env["STACKWRIGHT_HOME"])
        lifecycle.stop("ci-job")  # whatever failed above: no server left running
