"""An exec credential plugin (EKS's `aws eks get-token`, GKE's `gke-gcloud-auth-plugin`) is
run once per command while its token is valid, as client-go's process-wide cache of exec
authenticators does: such plugins take from a tenth of a second to seconds each."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from scoped_credentials import program, scoped_up

pytestmark = pytest.mark.integration


def exec_kubeconfig(cluster: Any, tmp_path: Path, counter: Path) -> Path:
    """The cluster's kubeconfig with its user's credential given by a plugin that counts
    its runs in `counter` and prints the cluster's token, valid for an hour."""
    plugin = tmp_path / "get-token"
    plugin.write_text(
        f"#!{sys.executable}\n"
        "import json\n"
        f"open({str(counter)!r}, 'a').write('x')\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1', "
        f"'kind': 'ExecCredential', 'status': {{'token': {cluster.token!r}, "
        f"'expirationTimestamp': '2999-01-01T00:00:00Z'}}}}))\n"
    )
    plugin.chmod(0o755)
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for user in config["users"]:
        user["user"] = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": str(plugin),
                "interactiveMode": "Never",
            }
        }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    os.chmod(path, 0o600)
    return path


def test_an_up_runs_the_exec_plugin_once(cluster: Any, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    kubeconfig = exec_kubeconfig(cluster, tmp_path, counter)
    done = scoped_up(
        tmp_path,
        kubeconfig,
        program("plugged", namespace="default", settings=("ConfigMap", {"data": {"a": "1"}})),
    )
    assert done.returncode == 0, done.stderr
    answered = cluster.kubectl("get", "configmap", "settings", "-o", "json")
    assert json.loads(answered.stdout)["data"] == {"a": "1"}
    assert counter.read_text() == "x"  # one run for the whole `up`, its checks included
