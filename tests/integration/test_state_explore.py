"""The state store against the real local cluster where the fake cluster cannot stand in.

After `stackwright state move`, the moved object still carries the source stack's marks
until the destination's next `up`; the source stack must neither take it back (its
creates find objects by listing the kind and reading their marks) nor leave it behind.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from test_cli_lifecycle import get, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)
CM = "kubernetes:core/v1:ConfigMap"


def test_a_moved_object_stays_with_the_stack_it_moved_to(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    (p.root / "Stackwright.prod.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(cluster.kubeconfig)}})
    )
    p.sw("stack", "init", "prod")
    p.sw("stack", "select", "dev")
    p.program('k8s.core.v1.ConfigMap("b", metadata={"namespace": NS}, data={"n": "b"})\n')
    p.up()
    (row,) = p.state()["resources"]
    name = row["id"].rpartition("/")[2]
    dev_urn, prod_urn = p.urn(CM, "b"), p.urn(CM, "b").replace("urn:sw:dev::", "urn:sw:prod::")

    p.sw("state", "move", "--yes", dev_urn, "--dest", "prod")

    # dev's program still declares it: its name (derived from dev's URN) is taken by an
    # object marked as dev's own, which prod now records.
    refused = p.up(rc=1)
    assert f"ConfigMap {p.ns}/{name} already exists: stack prod records it" in refused.out
    assert p.state()["resources"] == []
    assert get(cluster, "configmap", name, p.ns) is not None

    p.up("--stack", "prod")
    marks = get(cluster, "configmap", name, p.ns)["metadata"]["annotations"]  # type: ignore[index]
    assert marks["stackwright.io/urn"] == prod_urn and marks["stackwright.io/stack"] == "prod"

    p.sw("destroy", "--yes")  # dev: nothing of its own to delete
    assert get(cluster, "configmap", name, p.ns) is not None
    p.sw("destroy", "--yes", "--stack", "prod")
    assert get(cluster, "configmap", name, p.ns) is None
    assert one_line(p.sw("state", "delete", "--yes", dev_urn, rc=2)).startswith(
        "error: no resource"
    )
