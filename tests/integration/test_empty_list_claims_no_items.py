"""A list the program declares empty claims none of the items other managers add to it when
server-side apply merges it item by item (finalizers, a container's env): those are not
drift. An atomic list (a Role's rules) declared empty and filled by someone is."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_an_empty_list_claims_none_of_the_items_others_add(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("c", metadata={"name": "c", "namespace": NS, "finalizers": []},
                              data={"k": "v"})
        k8s.rbac.v1.Role("r", metadata={"name": "r", "namespace": NS}, rules=[])
        """
    )
    p.up()
    cluster.kubectl(
        "patch", "configmap", "c", "-n", p.ns, "--type=merge", "--field-manager=controller",
        "-p", '{"metadata":{"finalizers":["example.com/controller"]}}',
    )  # fmt: skip
    cluster.kubectl(
        "patch", "role", "r", "-n", p.ns, "--type=merge", "--field-manager=admin",
        "-p", '{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}',
    )  # fmt: skip
    try:
        refreshed = p.sw("refresh", "--yes", "--json")
        drifts = {e["urn"].rpartition("::")[2]: e["fields"] for e in refreshed.of("drift")}
        assert set(drifts) == {"r"}, drifts
        assert [f["path"] for f in drifts["r"]] == ["rules"]
    finally:
        cluster.kubectl(
            "patch", "configmap", "c", "-n", p.ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}',
        )  # fmt: skip
