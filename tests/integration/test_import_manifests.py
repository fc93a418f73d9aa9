"""Existing manifests and kustomizations, imported object by object, on a real local cluster.

Runs the CLI as a user would, against the module's cluster (tests/conftest.py), with the
test data in tests/data/manifests and tests/data/kustomize.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import sw

DATA = Path(__file__).resolve().parents[1] / "data"


def events(project: Path, *args: str) -> list[dict[str, Any]]:
    out = sw(project, *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def summary(found: list[dict[str, Any]]) -> dict[str, Any]:
    done = [e for e in found if e["event"] == "summary"]
    assert done, f"no summary event in {found}"
    return done[-1]


def project_with(tmp_path: Path, kubeconfig: str, program: str) -> Path:
    # The module's cluster shares one state home: a project name per test keeps stacks apart.
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "Stackwright.yaml").write_text(
        f"name: {tmp_path.name.replace('_', '-')[:40]}\nruntime: python\nmain: __main__.py\n"
    )
    (project / "Stackwright.dev.yaml").write_text(
        f"config:\n  kubernetes:kubeconfig: {json.dumps(kubeconfig)}\n"
    )
    (project / "__main__.py").write_text(program)
    sw(project, "stack", "init", "dev")
    return project


def get(cluster: Any, *args: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)
    return result


APP_OBJECTS = {
    "Namespace:storefront",
    "ConfigMap:storefront/storefront-settings",
    "Secret:storefront/storefront-db",
    "Deployment:storefront/storefront",
    "Service:storefront/storefront",
    "CustomResourceDefinition:promotions.shop.example.com",
    "Promotion:storefront/spring-sale",
}


def started(found: list[dict[str, Any]], *, changes_only: bool = False) -> dict[str, str]:
    """Child name → op of each step that started (only those that change something)."""
    return {
        e["name"]: e["op"]
        for e in found
        if e["event"] == "step-started" and not (changes_only and e["op"] == "same")
    }


def position(found: list[dict[str, Any]], event: str, name: str) -> int:
    return next(i for i, e in enumerate(found) if e["event"] == event and e.get("name") == name)


def test_a_multi_document_app_file(tmp_path: Path, cluster: Any) -> None:
    project = project_with(
        tmp_path,
        str(cluster.kubeconfig),
        'import stackwright.kubernetes as k8s\n\nk8s.yaml.ConfigFile("app", file="app.yaml")\n',
    )
    app = project / "app.yaml"
    shutil.copy(DATA / "manifests" / "app.yaml", app)

    preview = events(project, "preview")
    assert set(started(preview)) == APP_OBJECTS | {"app"}
    assert summary(preview)["counts"] == {"create": 8}
    with pytest.raises(AssertionError):
        get(cluster, "namespace", "storefront")  # preview changed nothing

    up = events(project, "up", "--yes")
    assert summary(up)["ok"] and summary(up)["counts"] == {"create": 8}
    namespace_done = position(up, "step-done", "Namespace:storefront")
    for name in APP_OBJECTS - {
        "Namespace:storefront",
        "CustomResourceDefinition:promotions.shop.example.com",
    }:
        assert position(up, "step-started", name) > namespace_done, f"{name} before its namespace"
    assert position(up, "step-started", "Promotion:storefront/spring-sale") > position(
        up, "step-done", "CustomResourceDefinition:promotions.shop.example.com"
    ), "the custom object waits for its CRD"
    assert get(cluster, "deploy", "storefront", "-n", "storefront")["status"]["readyReplicas"] == 2
    assert get(cluster, "promotions", "spring-sale", "-n", "storefront")["spec"]["discount"] == 15

    # One value changed in the file: exactly that object is updated.
    app.write_text(app.read_text().replace("LOG_LEVEL: info", "LOG_LEVEL: debug"))
    changed = events(project, "up", "--yes")
    assert summary(changed)["counts"] == {"update": 1, "same": 7}
    assert started(changed, changes_only=True) == {
        "ConfigMap:storefront/storefront-settings": "update"
    }
    settings = get(cluster, "configmap", "storefront-settings", "-n", "storefront")
    assert settings["data"]["LOG_LEVEL"] == "debug"

    # A document removed from the file: its object is deleted, nothing else changes.
    text = app.read_text()
    start = text.index("apiVersion: shop.example.com/v1")
    app.write_text(text[:start])
    removed = events(project, "up", "--yes")
    assert summary(removed)["counts"] == {"delete": 1, "same": 7}
    assert started(removed, changes_only=True) == {"Promotion:storefront/spring-sale": "delete"}
    assert (
        cluster.kubectl("get", "promotions", "-n", "storefront", "-o", "name").stdout.strip() == ""
    )

    destroyed = events(project, "destroy", "--yes")
    assert summary(destroyed)["ok"] and summary(destroyed)["counts"] == {"delete": 7}
    assert cluster.kubectl("get", "namespace", "storefront", check=False).returncode != 0
    assert cluster.kubectl("get", "crd", "promotions.shop.example.com", check=False).returncode != 0


def generated_config(cluster: Any, namespace: str) -> list[str]:
    found = get(cluster, "configmaps", "-n", namespace)["items"]
    return sorted(
        c["metadata"]["name"] for c in found if c["metadata"]["name"].startswith("catalog-config-")
    )


def test_a_kustomize_overlay(tmp_path: Path, cluster: Any) -> None:
    project = project_with(
        tmp_path,
        str(cluster.kubeconfig),
        "import stackwright.kubernetes as k8s\n\n"
        'k8s.kustomize.Directory("catalog", directory="kustomize/overlays/staging")\n',
    )
    shutil.copytree(DATA / "kustomize", project / "kustomize")
    expected = {
        "Namespace:catalog-staging",
        "ConfigMap:catalog-staging/catalog-monitoring",  # from the component
        "Service:catalog-staging/catalog",
        "Deployment:catalog-staging/catalog",
    }

    preview = events(project, "preview")
    names = set(started(preview)) - {"catalog"}
    config = [n for n in names if n.startswith("ConfigMap:catalog-staging/catalog-config-")]
    assert len(config) == 1, names
    assert names == expected | set(config)

    up = events(project, "up", "--yes")
    assert summary(up)["ok"] and summary(up)["counts"] == {"create": 6}
    deployment = get(cluster, "deploy", "catalog", "-n", "catalog-staging")
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    referenced = container["envFrom"][0]["configMapRef"]["name"]
    assert referenced != "catalog-config" and referenced.startswith("catalog-config-")
    assert generated_config(cluster, "catalog-staging") == [referenced]
    data = get(cluster, "configmap", referenced, "-n", "catalog-staging")["data"]
    assert data == {"FEATURE_SEARCH": "on", "PAGE_SIZE": "50", "ENVIRONMENT": "staging"}
    assert deployment["spec"]["replicas"] == 2  # strategic merge patch
    assert container["resources"] == {"limits": {"memory": "200Mi"}}  # JSON 6902 patch
    assert container["image"] == "nginx:1.28"  # images override
    assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"  # component
    assert deployment["status"]["readyReplicas"] == 2

    # A generator literal changed: a new ConfigMap, the Deployment rolls, the old one goes.
    overlay = project / "kustomize" / "overlays" / "staging" / "kustomization.yaml"
    overlay.write_text(overlay.read_text().replace("PAGE_SIZE=50", "PAGE_SIZE=75"))
    rolled = events(project, "up", "--yes")
    ops = started(rolled)
    assert summary(rolled)["counts"] == {"create": 1, "update": 1, "delete": 1, "same": 4}, ops
    assert ops[f"ConfigMap:catalog-staging/{referenced}"] == "delete"
    assert ops["Deployment:catalog-staging/catalog"] == "update"
    deployment = get(cluster, "deploy", "catalog", "-n", "catalog-staging")
    now = deployment["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"][
        "name"
    ]
    assert now != referenced
    assert generated_config(cluster, "catalog-staging") == [now]
    assert get(cluster, "configmap", now, "-n", "catalog-staging")["data"]["PAGE_SIZE"] == "75"
    assert position(rolled, "step-done", f"ConfigMap:catalog-staging/{now}") < position(
        rolled, "step-started", "Deployment:catalog-staging/catalog"
    ), "the new ConfigMap exists before the Deployment refers to it"

    assert summary(events(project, "destroy", "--yes"))["ok"]
    assert cluster.kubectl("get", "namespace", "catalog-staging", check=False).returncode != 0


def test_the_production_overlay_builds_differently(tmp_path: Path) -> None:
    """Both overlays build from the same base (the staging one is deployed above)."""
    from stackwright.kubernetes.kustomize import build
    from stackwright.kubernetes.yaml import parse

    built = {
        env: {
            (d.obj["kind"], d.obj["metadata"]["name"]): d.obj
            for d in parse(build(str(DATA / "kustomize" / "overlays" / env)), env)
        }
        for env in ("staging", "production")
    }
    production = built["production"]
    deployment = production[("Deployment", "catalog")]
    assert deployment["metadata"]["namespace"] == "catalog-production"
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    assert {k for k in production if k[0] == "ConfigMap"} != {
        k for k in built["staging"] if k[0] == "ConfigMap"
    }, "different literals give different hash suffixes"
