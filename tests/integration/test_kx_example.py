"""examples/kx-webapp on the local cluster: up, a ConfigMap change rolls the Deployment, destroy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from cli_in_process import sw

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kx-webapp"


def summary(output: str) -> dict[str, Any]:
    events = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    found = [e for e in events if e["event"] == "summary"]
    assert found, f"no summary event in:\n{output}"
    return found[-1]


def configure(project: Path, kubeconfig: str, greeting: str) -> None:
    (project / "Stackwright.dev.yaml").write_text(
        f"config:\n  kubernetes:kubeconfig: {json.dumps(kubeconfig)}\n  kx-webapp:greeting: {greeting}\n"
    )


def items(cluster: Any, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(cluster.kubectl("get", kind, "-o", "json").stdout)[
        "items"
    ]
    return [i for i in found if "stackwright.io/urn" in (i["metadata"].get("annotations") or {})]


def test_kx_webapp_up_roll_and_destroy(tmp_path: Path, cluster: Any) -> None:
    project = tmp_path / "kx-webapp"
    shutil.copytree(EXAMPLE, project)
    configure(project, str(cluster.kubeconfig), "hello")
    sw(project, "stack", "init", "dev")
    sw(project, "config", "set", "--secret", "api_token", "t0ken-of-the-app")

    up = sw(project, "up", "--yes", "--json").stdout
    # The example reads its token as a secret: no warning that it is read as plain.
    assert "reads it as a plain value" not in up and "t0ken-of-the-app" not in up
    done = summary(up)
    assert done["ok"], done
    first = done["outputs"]["config_map"]
    assert first.startswith("web-settings-")
    assert done["outputs"]["service_ip"]
    assert [c["metadata"]["name"] for c in items(cluster, "configmap")] == [first]
    (deployment,) = items(cluster, "deployment")
    assert deployment["status"]["availableReplicas"] == 2
    generation = deployment["metadata"]["generation"]
    (service,) = items(cluster, "service")
    assert service["spec"]["selector"] == {"app": "web"}
    assert summary(sw(project, "preview", "--json").stdout)["counts"] == {"same": 9}

    sw(project, "config", "set", "greeting", "bonjour")
    output = sw(project, "up", "--yes", "--json").stdout
    rolled = summary(output)
    done_ops = [
        (e["op"], e["type"])
        for e in map(json.loads, filter(lambda line: line.startswith("{"), output.splitlines()))
        if e["event"] == "step-done"
    ]
    order = [op for op, type_ in done_ops if op != "same"]
    assert order == ["replace", "update", "delete-replaced"], done_ops
    assert rolled["ok"], rolled
    assert rolled["counts"] == {"replace": 1, "update": 1, "delete-replaced": 1, "same": 7}, rolled
    second = rolled["outputs"]["config_map"]
    assert second != first
    assert [c["metadata"]["name"] for c in items(cluster, "configmap")] == [second], (
        "the old ConfigMap is gone"
    )
    (deployment,) = items(cluster, "deployment")
    assert deployment["metadata"]["generation"] > generation
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[0]["valueFrom"]["configMapKeyRef"]["name"] == second

    assert summary(sw(project, "destroy", "--yes", "--json").stdout)["ok"]
    assert items(cluster, "configmap") == [] and items(cluster, "deployment") == []
    assert items(cluster, "pvc") == [] and items(cluster, "service") == []
