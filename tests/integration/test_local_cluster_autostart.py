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

ENVIRONMENTS = "stackwright:environments"


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


def test_a_local_cluster_mapped_to_production_is_refused_before_it_is_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment check is made before anything changes: a stack not tagged
    production whose local cluster (never started, so no kubeconfig yet) is mapped to
    production is refused from the context the cluster will have, without starting it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKWRIGHT_")}
    env["STACKWRIGHT_HOME"] = str(tmp_path / "home")
    monkeypatch.setenv("STACKWRIGHT_HOME", env["STACKWRIGHT_HOME"])
    assert run_cli(["new", "kubernetes-python", "app"], cwd=tmp_path, env=env).returncode == 0
    app = tmp_path / "app"
    for args in (
        ["config", "set", "kubernetes:cluster", "prod-box"],
        ["config", "set", "--path", f"{ENVIRONMENTS}.stackwright-prod-box", "production"],
    ):
        assert run_cli(args, cwd=app, env=env).returncode == 0
    try:
        for tag in (None, "dev"):
            if tag:
                tagged = run_cli(["stack", "tag", "set", "env", tag], cwd=app, env=env)
                assert tagged.returncode == 0, tagged.stderr
            preview = run_cli(["preview"], cwd=app, env=env)
            assert preview.returncode == 2, preview.stderr
            assert "'stackwright-prod-box' belongs to environment production" in preview.stderr
            assert "started the local cluster" not in preview.stderr + preview.stdout
            assert lifecycle.list_clusters() == [], "refused: no server left running"
    finally:
        if lifecycle.list_clusters():  # one started above: no server left running
            lifecycle.stop("prod-box")
