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
