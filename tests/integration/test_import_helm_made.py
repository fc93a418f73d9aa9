"""Adopting objects Helm made: Helm 3 writes them as its `helm` field manager (an `Update`),
with the label `app.kubernetes.io/managed-by: Helm`. Stackwright's own mark is that label
with the value `stackwright`, so its first apply conflicts with Helm over it; the adoption
takes its marks over (the object's other fields keep their values and owners), as
`stackwright import`, the `import_` option and the README's "Adopting an app made with
kubectl or Helm" promise, instead of failing with advice to use a flag `import` lacks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_import_declared_only import NAMESPACE, imported, with_namespace

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def helm_made(cluster: LiveCluster, ns: str, name: str) -> None:
    """A ConfigMap as `helm install` (v3) writes it: its chart's labels, its release's
    annotations, all owned by the `helm` manager's Update."""
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {
                "app.kubernetes.io/managed-by": "Helm",
                "app.kubernetes.io/name": "shop",
                "helm.sh/chart": "shop-1.2.0",
            },
            "annotations": {
                "meta.helm.sh/release-name": "shop",
                "meta.helm.sh/release-namespace": ns,
            },
        },
        "data": {"mode": "fast"},
    }
    cluster.kubectl("create", "--field-manager=helm", "-f", "-", input=json.dumps(manifest))


def owner_of_managed_by(obj: dict[str, Any]) -> list[str]:
    """The field managers that own the object's managed-by label."""
    return [
        m["manager"]
        for m in obj["metadata"]["managedFields"]
        if "f:app.kubernetes.io/managed-by" in json.dumps(m.get("fieldsV1"))
    ]


def test_stackwright_import_of_an_object_helm_made(new_project: Any, cluster: LiveCluster) -> None:
    p = with_namespace(new_project)
    helm_made(cluster, p.ns, "shop")
    before = live(cluster, "configmap", "shop", p.ns)

    code = imported(p, "kubernetes:core/v1:ConfigMap", "shop", "shop")
    assert "'helm.sh/chart': 'shop-1.2.0'" in code and "meta.helm.sh/release-name" in code, code
    assert "managed-by" not in code, code
    adopted = live(cluster, "configmap", "shop", p.ns)
    assert adopted["metadata"]["uid"] == before["metadata"]["uid"]
    assert adopted["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    assert owner_of_managed_by(adopted) == ["stackwright"], adopted["metadata"]["managedFields"]
    assert adopted["data"] == {"mode": "fast"}

    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}


def test_import_option_of_an_object_helm_made(new_project: Any, cluster: LiveCluster) -> None:
    p = with_namespace(new_project)
    helm_made(cluster, p.ns, "shop")
    p.program(
        NAMESPACE + 'k8s.core.v1.ConfigMap("shop", metadata={"name": "shop", "namespace": NS}, '
        'data={"mode": "fast"}, opts=sw.ResourceOptions(import_=f"{NS}/shop"))\n'
    )
    assert p.preview().changed() == {"shop": "import"}
    assert p.up().ops()["shop"] == "import"
    adopted = live(cluster, "configmap", "shop", p.ns)
    assert adopted["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    assert p.up().summary["counts"] == {"same": 2}
