"""A CustomResourceDefinition dropped from a program that still declares objects of its
kind: deleting it would delete them with it (the cluster removes every object of a kind
with its CRD), while the preview called them `same`. The run is refused before any change."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

CRD = """
crd = k8s.apiextensions.v1.CustomResourceDefinition(
    "gizmos",
    metadata={"name": "gizmos.dropped.example.com"},
    spec={
        "group": "dropped.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}},
        }],
    },
    opts=sw.ResourceOptions(retain_on_delete=RETAIN),
)
"""

GIZMO = """
k8s.apiextensions.CustomResource(
    "g1", api_version="dropped.example.com/v1", kind="Gizmo",
    metadata={"name": "g1", "namespace": NS}, spec={"size": 1},
)
"""

NAMESPACE = 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'


def test_dropping_a_crd_whose_objects_the_program_still_declares_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(NAMESPACE + "RETAIN = False\n" + CRD + GIZMO)
    p.up()
    uid = live(cluster, "gizmos.dropped.example.com", "g1", p.ns)["metadata"]["uid"]

    p.program(NAMESPACE + GIZMO)
    for command in ("preview", "up"):
        done = p.sw(command, *(["--yes"] if command == "up" else []), rc=2)
        (line,) = done.err.strip().splitlines()
        assert "__main__.py:" in line and "kubernetes:dropped.example.com/v1:Gizmo g1: " in line
        assert "CustomResourceDefinition gizmos.dropped.example.com" in line, line
        assert "delete every Gizmo in the cluster" in line and "retain_on_delete" in line, line
        assert "Traceback" not in done.err
    # Nothing changed: the CRD and its object are still there.
    assert live(cluster, "gizmos.dropped.example.com", "g1", p.ns)["metadata"]["uid"] == uid

    # Dropping the objects with their CRD is what the program asks for: no refusal.
    p.program(NAMESPACE)
    assert p.preview().changed() == {"gizmos": "delete", "g1": "delete"}

    # Retained, the CRD may leave the program: its object stays, with its kind served.
    p.program(NAMESPACE + "RETAIN = True\n" + CRD + GIZMO)
    p.up()
    p.program(NAMESPACE + GIZMO)
    assert p.up().summary["counts"] == {"same": 2, "delete": 1}
    assert live(cluster, "gizmos.dropped.example.com", "g1", p.ns)["metadata"]["uid"] == uid
    p.sw("destroy", "--yes")
    cluster.kubectl("delete", "crd", "gizmos.dropped.example.com", "--wait=false", check=False)


def _two_versions(storage: str, versions: tuple[str, ...]) -> str:
    schema = '{"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}'
    listed = ", ".join(
        f'{{"name": "{v}", "served": True, "storage": {v == storage}, "schema": {schema}}}'
        for v in versions
    )
    return f"""
k8s.apiextensions.v1.CustomResourceDefinition(
    "widgets",
    metadata={{"name": "widgets.stored.example.com"}},
    spec={{
        "group": "stored.example.com", "scope": "Namespaced",
        "names": {{"plural": "widgets", "singular": "widget", "kind": "Widget"}},
        "versions": [{listed}],
    }},
)
"""


def test_a_version_objects_may_still_be_stored_in_cannot_leave_the_crd(
    new_project: Any, cluster: LiveCluster
) -> None:
    """As the API server: a version in status.storedVersions must stay in spec.versions
    (the local cluster took the CRD, and the preview said nothing)."""
    p = new_project()
    p.program(_two_versions("v1", ("v1beta1", "v1")))
    p.up()
    p.program(_two_versions("v1beta1", ("v1beta1",)))
    done = p.preview(rc=2)
    (failure,) = done.summary["failures"]
    assert 'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions' in failure
    crd = live(cluster, "customresourcedefinitions", "widgets.stored.example.com")
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1beta1", "v1"]
    # Changing the storage version while keeping the old one is fine: both are recorded.
    p.program(_two_versions("v1beta1", ("v1beta1", "v1")))
    p.up()
    crd = live(cluster, "customresourcedefinitions", "widgets.stored.example.com")
    assert crd["status"]["storedVersions"] == ["v1", "v1beta1"]
    p.sw("destroy", "--yes")
