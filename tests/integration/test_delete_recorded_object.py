"""A delete removes the object the state records and no other: one deleted and made again by
hand under its name (another uid, none of the stack's marks) is left in place, with a
warning, whether the program drops its resource or the stack is destroyed; one made again
with the resource's marks (restored from a backup, applied from a copy) is still the
stack's, and is deleted. The uid recorded rides on the DELETE as a precondition."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import create, get, live, restored_from_copy
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

PROGRAM = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
%s
"""
CONFIG_MAP = (
    'k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"})'
)


def warnings(result: Any) -> list[str]:
    return [e["message"] for e in result.of("diagnostic") if e["severity"] == "warning"]


def made_again_by_hand(p: Any, cluster: LiveCluster) -> None:
    """The stack's ConfigMap deleted with kubectl, and one of the same name made in its place."""
    cluster.kubectl("delete", "configmap", "cfg", "-n", p.ns)
    create(cluster, "ConfigMap", "cfg", p.ns, data={"theirs": "1"})


LEFT = "the object named {ns}/cfg is now another one, made outside this stack: left in place"


def test_dropped_resource_spares_an_object_made_again_by_hand(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Seen before: the delete went by kind, namespace and name, and took the user's object.
    left_in_place(new_project(), cluster, "dropped")


def test_destroy_spares_an_object_made_again_by_hand(
    new_project: Any, cluster: LiveCluster
) -> None:
    left_in_place(new_project(), cluster, "destroy")


def left_in_place(p: Any, cluster: LiveCluster, how: str) -> None:
    """The stack's ConfigMap made again by hand, then deleted by the stack (`how`: its
    resource dropped from the program, or `destroy`): the other object stays."""
    if how == "destroy":  # in a Namespace made by hand, which the destroy leaves
        cluster.kubectl("create", "namespace", p.ns)
        p.program(CONFIG_MAP)
    else:
        p.program(PROGRAM % CONFIG_MAP)
    p.up()
    made_again_by_hand(p, cluster)
    if how == "dropped":
        p.program(PROGRAM % "")
        done = p.up()
        assert done.ops() == {"cfg": "delete"}
        assert set(p.resources()) == {"ns"}
    else:
        done = p.sw("destroy", "--yes")  # as a person reads it
        assert p.resources() == {}
    found = get(cluster, "configmap", "cfg", p.ns)
    assert found is not None and found["data"] == {"theirs": "1"}, "their object survives"
    if how == "dropped":
        assert warnings(done) == [LEFT.format(ns=p.ns)]
    else:
        assert LEFT.format(ns=p.ns) in " ".join((done.out + done.err).split())
    if how == "destroy":
        cluster.kubectl("delete", "namespace", p.ns, "--wait=false")


def test_an_object_restored_with_its_marks_is_still_deleted(
    new_project: Any, cluster: LiveCluster
) -> None:
    # A backup restored (Velero) or a copy applied again: a new uid, the resource's marks.
    p = new_project()
    p.program(PROGRAM % CONFIG_MAP)
    p.up()
    restored_from_copy(cluster, "cfg", p.ns)
    p.program(PROGRAM % "")
    done = p.up()
    assert done.ops() == {"cfg": "delete"}
    assert warnings(done) == []
    assert get(cluster, "configmap", "cfg", p.ns) is None
    assert set(p.resources()) == {"ns"}


CRD = """
k8s.apiextensions.v1.CustomResourceDefinition(
    "knobs",
    metadata={"name": "knobs.uidscope.example.com"},
    spec={
        "group": "uidscope.example.com",
        "scope": "Namespaced",
        "names": {"plural": "knobs", "singular": "knob", "kind": "Knob"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
        }],
    },
)
"""
KNOB = """
k8s.apiextensions.CustomResource(
    "k1", api_version="uidscope.example.com/v1", kind="Knob",
    metadata={"name": "k1", "namespace": NS}, spec={"size": 1},
)
"""


def test_a_custom_object_whose_kind_was_made_cluster_scoped_outside_spares_the_other(
    new_project: Any, cluster: LiveCluster
) -> None:
    # The CRD made again Cluster-scoped with kubectl (scope is immutable: deleted, then
    # created), and a cluster-wide Knob named k1 made by hand. Dropping the recorded
    # `ns/k1` resolved the kind as cluster-scoped now and deleted that Knob.
    p = new_project()
    p.program(PROGRAM % (CRD + KNOB))
    p.up()
    crd = live(cluster, "customresourcedefinitions", "knobs.uidscope.example.com")
    crd["spec"]["scope"] = "Cluster"
    crd["metadata"] = {"name": crd["metadata"]["name"]}
    crd.pop("status", None)
    cluster.kubectl("delete", "customresourcedefinition", "knobs.uidscope.example.com")
    cluster.kubectl("create", "-f", "-", input=json.dumps(crd))
    theirs = {
        "apiVersion": "uidscope.example.com/v1",
        "kind": "Knob",
        "metadata": {"name": "k1"},
        "spec": {"size": 7},
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(theirs))
    p.program(PROGRAM % CRD)  # k1 dropped; the CRD's delete would take every Knob
    done = p.up()
    assert get(cluster, "knob", "k1") is not None, "their object survives"
    assert "k1" not in p.resources()
    assert warnings(done) == [
        f"the object named {p.ns}/k1 is now another one, made outside this stack: left in place"
    ]
    cluster.kubectl("delete", "customresourcedefinition", "knobs.uidscope.example.com")
