"""A CustomResourceDefinition whose scope changes (Namespaced to Cluster) is replaced under its
name, with the objects of its kind: the objects made again after it must be sent where the
new CRD serves them, not where the run first learnt the kind was served."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

PROGRAM = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.apiextensions.v1.CustomResourceDefinition(
    "knobs",
    metadata={"name": "knobs.scoped.example.com"},
    spec={
        "group": "scoped.example.com",
        "scope": SCOPE,
        "names": {"plural": "knobs", "singular": "knob", "kind": "Knob"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
        }],
    },
)
k8s.apiextensions.CustomResource(
    "k1", api_version="scoped.example.com/v1", kind="Knob", metadata=METADATA, spec={"size": 1},
)
"""


def made_cluster_scoped(p: Any, cluster: LiveCluster, program: str) -> None:
    """`program` (PROGRAM's lines) up with the CRD Namespaced and k1 in the project's
    namespace, then with the CRD Cluster-scoped and k1 naming none: k1 went with the former
    CRD, and is made again where the new one serves it."""
    p.program(
        program.replace("SCOPE", '"Namespaced"').replace(
            "METADATA", '{"name": "k1", "namespace": NS}'
        )
    )
    p.up()
    p.program(program.replace("SCOPE", '"Cluster"').replace("METADATA", '{"name": "k1"}'))
    assert p.preview().changed() == {"knobs": "replace", "k1": "create"}
    assert p.up().changed() == {"knobs": "replace", "k1": "create"}
    assert "namespace" not in live(cluster, "knob.scoped.example.com", "k1")["metadata"]
    p.sw("preview", "--expect-no-changes")
    p.sw("destroy", "--yes")


def test_objects_of_a_crd_made_cluster_scoped_are_made_again_cluster_scoped(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Seen by hand beside the model test's CRDs: the objects' create failed with `the server
    # could not find the requested resource (namespaces.scoped.example.com/v1)`, the
    # provider's discovery still taking the kind as namespaced.
    made_cluster_scoped(new_project(), cluster, PROGRAM)


def test_objects_of_a_crd_through_another_provider_of_its_cluster_go_with_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    # The CRD through the stack's default provider, k1 through another provider of the same
    # cluster (with its own default namespace). k1's record was not taken as gone with the
    # former CRD (matched by provider, not cluster): k1 was replaced, and the delete of its
    # former object, its kind cluster-scoped by then, deleted the new one.
    second = f'b = k8s.Provider("b", kubeconfig={str(cluster.kubeconfig)!r}, namespace=NS)\n'
    through = 'spec={"size": 1}, opts=sw.ResourceOptions(provider=b),'
    made_cluster_scoped(
        new_project(), cluster, second + PROGRAM.replace('spec={"size": 1},', through)
    )
