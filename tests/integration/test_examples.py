"""Every example in examples/ deploys to a real local cluster, reports its outputs and is destroyed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_in_process import sw

from stackwright.localcluster import lifecycle

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def summary(output: str) -> dict[str, Any]:
    events = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    found = [e for e in events if e["event"] == "summary"]
    assert found, f"no summary event in:\n{output}"
    return found[-1]


def deploy(tmp_path: Path, name: str, config: dict[str, str]) -> Path:
    project = tmp_path / name
    shutil.copytree(EXAMPLES / name, project)
    lines = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in config.items())
    (project / "Stackwright.dev.yaml").write_text(f"config:\n{lines}")
    sw(project, "stack", "init", "dev")
    return project


@pytest.fixture()
def kubeconfig(cluster: Any) -> str:
    return str(cluster.kubeconfig)


def test_webapp(tmp_path: Path, cluster: Any, kubeconfig: str) -> None:
    project = deploy(tmp_path, "webapp", {"kubernetes:kubeconfig": kubeconfig})
    done = summary(sw(project, "up", "--yes", "--json").stdout)
    assert done["ok"] and done["counts"] == {"create": 6}
    outputs = done["outputs"]
    assert outputs["namespace"] == "webapp"
    assert outputs["ready_replicas"] == 2
    assert outputs["service_ip"].startswith("10.96.")
    assert outputs["ingress_address"]["ingress"], (
        "the Ingress got an address once its class existed"
    )
    deployments = json.loads(cluster.kubectl("get", "deploy", "-n", "webapp", "-o", "json").stdout)[
        "items"
    ]
    assert [d["status"]["availableReplicas"] for d in deployments] == [2]
    again = summary(sw(project, "preview", "--json").stdout)
    assert again["counts"] == {"same": 6}
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]
    assert cluster.kubectl("get", "namespace", "webapp", check=False).returncode != 0


def test_yaml_webapp(tmp_path: Path, cluster: Any, kubeconfig: str) -> None:
    project = deploy(tmp_path, "yaml-webapp", {"kubernetes:kubeconfig": kubeconfig})
    done = summary(sw(project, "up", "--yes", "--json").stdout)
    assert done["ok"] and done["counts"] == {"create": 6}
    outputs = done["outputs"]
    assert outputs["namespace"] == "yaml-webapp" and outputs["ready_replicas"] == 2
    assert outputs["service_ip"].startswith("10.96.")
    assert outputs["url"] == "http://web.example.test/"
    maps = json.loads(
        cluster.kubectl("get", "configmap", "-n", "yaml-webapp", "-o", "json").stdout
    )["items"]
    page = [m["data"]["index.html"] for m in maps if "index.html" in (m.get("data") or {})]
    assert page == ["<h1>Hello from Stackwright, in YAML</h1>\n"]
    assert summary(sw(project, "preview", "--json").stdout)["counts"] == {"same": 6}
    sw(project, "config", "set", "greeting", "hi")
    changed = summary(sw(project, "up", "--yes", "--json").stdout)
    assert changed["ok"] and changed["counts"] == {
        "replace": 1,
        "update": 1,
        "same": 4,
        "delete-replaced": 1,
    }
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]
    assert cluster.kubectl("get", "namespace", "yaml-webapp", check=False).returncode != 0


def test_stateful(tmp_path: Path, cluster: Any, kubeconfig: str) -> None:
    project = deploy(tmp_path, "stateful", {"kubernetes:kubeconfig": kubeconfig})
    done = summary(sw(project, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    assert done["outputs"]["ready_replicas"] == 3
    assert done["outputs"]["backups_volume"].startswith("pvc-")
    claims = json.loads(cluster.kubectl("get", "pvc", "-n", "stateful", "-o", "json").stdout)[
        "items"
    ]
    assert sorted(c["metadata"]["name"] for c in claims) == [
        "backups",
        "data-db-0",
        "data-db-1",
        "data-db-2",
    ]
    assert {c["status"]["phase"] for c in claims} == {"Bound"}
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]


def test_crd_and_its_objects(tmp_path: Path, cluster: Any, kubeconfig: str) -> None:
    project = deploy(tmp_path, "crd", {"kubernetes:kubeconfig": kubeconfig})
    planned = summary(sw(project, "preview", "--json").stdout)
    assert planned["ok"] and planned["counts"] == {"create": 4}, (
        "a preview of a CRD and its objects does not fail"
    )
    done = summary(sw(project, "up", "--yes", "--json").stdout)
    assert done["ok"] and done["outputs"]["widgets"] == [
        "widget-red",
        "widget-green",
        "widget-blue",
    ]
    widgets = json.loads(cluster.kubectl("get", "widgets", "-n", "default", "-o", "json").stdout)[
        "items"
    ]
    assert sorted(w["spec"]["size"] for w in widgets) == [1, 2, 3]
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]
    assert cluster.kubectl("get", "crd", "widgets.example.com", check=False).returncode != 0


@pytest.fixture()
def second_cluster(cluster: Any) -> Iterator[str]:
    info, _ = lifecycle.start("examples-west")
    try:
        yield str(info.kubeconfig)
    finally:
        lifecycle.stop("examples-west")


def test_two_clusters(tmp_path: Path, cluster: Any, kubeconfig: str, second_cluster: str) -> None:
    project = deploy(
        tmp_path,
        "two-clusters",
        {
            "two-clusters:east_kubeconfig": kubeconfig,
            "two-clusters:west_kubeconfig": second_cluster,
        },
    )
    done = summary(sw(project, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    assert done["outputs"]["ready"] == {"east": 2, "west": 2}
    env = {**os.environ, "KUBECONFIG": second_cluster}
    west = subprocess.run(
        ["kubectl", "get", "configmaps", "-n", "default", "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    names = [c["metadata"]["name"] for c in json.loads(west.stdout)["items"]]
    assert any(n.startswith("west-settings-") for n in names)
    assert not any(n.startswith("east-settings-") for n in names), (
        "each resource lands in its own cluster"
    )
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]


def test_platform_and_app_linked_by_a_stack_reference(
    tmp_path: Path, cluster: Any, kubeconfig: str
) -> None:
    platform = deploy(tmp_path, "platform-app/platform", {"kubernetes:kubeconfig": kubeconfig})
    done = summary(sw(platform, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    assert done["outputs"] == {
        "namespace": "shop",
        "service_account": "deployer",
        "kubeconfig": "[secret]",
    }
    # What the token controller wrote into the Secret is no change to undo.
    assert summary(sw(platform, "preview", "--json").stdout)["counts"] == {"same": 5}
    # The app stack has no cluster settings of its own: all it knows comes from the reference.
    app = deploy(tmp_path, "platform-app/app", {"app:platform_stack": "platform/dev"})
    up = sw(app, "up", "--yes", "--json").stdout
    done = summary(up)
    assert done["ok"], done
    assert done["outputs"]["namespace"] == "shop" and done["outputs"]["ready"] == 2
    assert cluster.token not in up
    pods = cluster.kubectl("get", "deployments", "-n", "shop", "-o", "name").stdout
    assert "deployment.apps/shop-" in pods
    # The app deployed through the platform's kubeconfig, which is `deployer`'s: it may act
    # in its namespace (the context's) and nowhere else.
    scoped = tmp_path / "deployer.kubeconfig"
    scoped.write_text(sw(platform, "stack", "output", "kubeconfig", "--show-secrets").stdout)

    def as_deployer(*args: str) -> subprocess.CompletedProcess[str]:
        kubectl = ["kubectl", f"--kubeconfig={scoped}", *args]
        return subprocess.run(kubectl, capture_output=True, text=True)

    who = json.loads(as_deployer("auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"]["username"] == "system:serviceaccount:shop:deployer"
    assert "deployment.apps/shop-" in as_deployer("get", "deployments", "-o", "name").stdout
    assert as_deployer("get", "pods", "-n", "default").stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:shop:'
        'deployer" cannot list resource "pods" in API group "" in the namespace "default"'
    )
    assert cluster.token not in scoped.read_text()
    exported = sw(app, "stack", "export").stdout
    assert cluster.token not in exported and "@secret" in exported
    assert summary(sw(app, "destroy", "--yes", "--json").stdout)["ok"]
    assert summary(sw(platform, "destroy", "--yes", "--json").stdout)["ok"]


def test_platform_on_the_local_cluster_its_stack_names(
    tmp_path: Path, cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the README runs it, with only `kubernetes:cluster` set: the program read
    # ~/.stackwright's kubeconfig, not STACKWRIGHT_HOME's, and failed where that is not ~.
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", f"file://{tmp_path / 'state.db'}")
    platform = deploy(tmp_path, "platform-app/platform", {"kubernetes:cluster": cluster.info.name})
    done = summary(sw(platform, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    scoped = yaml.safe_load(sw(platform, "stack", "output", "kubeconfig", "--show-secrets").stdout)
    assert scoped["clusters"][0]["cluster"]["server"] == cluster.server
    assert summary(sw(platform, "destroy", "--yes", "--json").stdout)["ok"]


def test_external_secrets(
    tmp_path: Path, cluster: Any, kubeconfig: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "s.vault-token-from-the-environment"
    monkeypatch.setenv("VAULT_TOKEN", token)
    project = deploy(tmp_path, "external-secrets", {"kubernetes:kubeconfig": kubeconfig})
    up = sw(project, "up", "--yes", "--json").stdout
    done = summary(up)
    assert done["ok"], done
    assert done["outputs"] == {"external_secret": "db-password", "target_secret": "db-password"}
    found = json.loads(
        cluster.kubectl(
            "get", "externalsecrets.external-secrets.io", "db-password", "-n", "payments", "-o", "json"
        ).stdout
    )
    assert found["spec"]["data"][0]["remoteRef"] == {"key": "payments/db", "property": "password"}
    assert token not in up and token not in sw(project, "stack", "export").stdout
    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]
