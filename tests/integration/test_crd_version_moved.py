"""An object the program moves to another version its CRD serves is the same object: the
preview says update (the apiVersion changes), not a create beside a delete, and `up` keeps
the object (same uid) while its record moves to the new URN."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

SCHEMA = '{"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}'

PROGRAM = f"""
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
crd = k8s.apiextensions.v1.CustomResourceDefinition(
    "databases",
    metadata={{"name": "databases.moved.example.com"}},
    spec={{
        "group": "moved.example.com", "scope": "Namespaced",
        "names": {{"plural": "databases", "singular": "database", "kind": "Database"}},
        "versions": [
            {{"name": "v1beta1", "served": True, "storage": False, "schema": {SCHEMA}}},
            {{"name": "v1", "served": True, "storage": True, "schema": {SCHEMA}}},
        ],
    }},
)
k8s.apiextensions.CustomResource(
    "db", api_version="moved.example.com/VERSION", kind="Database",
    metadata={{"name": "db", "namespace": NS}}, spec={{"size": "1Gi"}},
    opts=sw.ResourceOptions(depends_on=[crd]),
)
"""

OLD = "kubernetes:moved.example.com/v1beta1:Database"
NEW = "kubernetes:moved.example.com/v1:Database"


def db_types(p: Any) -> list[str]:
    return [r["type"] for r in p.state()["resources"] if r["urn"].endswith("::db")]


def test_a_new_version_of_a_custom_kind_is_an_update_of_the_same_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(PROGRAM.replace("VERSION", "v1beta1"))
    p.up()
    uid = live(cluster, "databases.moved.example.com", "db", p.ns)["metadata"]["uid"]
    assert db_types(p) == [OLD]

    p.program(PROGRAM.replace("VERSION", "v1"))
    planned = p.preview()
    assert [(e["op"], e["type"]) for e in planned.of("step-started") if e["name"] == "db"] == [
        ("update", NEW)
    ]
    assert planned.summary["counts"] == {"same": 2, "update": 1}
    (moved,) = planned.of("diagnostic")
    assert (
        "(apiVersion moved.example.com/v1beta1 → moved.example.com/v1, same object)"
        in (moved["message"])
    )
    shown = p.sw("preview", "--diff").out
    assert '~ apiVersion: "moved.example.com/v1beta1" → "moved.example.com/v1"' in shown
    assert "delete" not in shown and "create" not in shown

    done = p.up()

    assert done.summary["counts"] == {"same": 2, "update": 1}
    assert all(e["op"] != "delete" for e in done.of("step-started"))
    assert live(cluster, "databases.moved.example.com", "db", p.ns)["metadata"]["uid"] == uid
    assert db_types(p) == [NEW]
    assert p.up().summary["counts"] == {"same": 3}
    p.sw("destroy", "--yes")
