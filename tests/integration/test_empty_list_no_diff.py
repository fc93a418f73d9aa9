"""A program's empty lists, which the API server does not store (`env: []`, `finalizers: []`,
as Go's omitempty drops them) or returns as null (a Role's `rules: []`): the object read back
lacks what was declared, and that is no change: `up` again, `preview`, `refresh` find none."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

PROGRAM = """
ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
spec = app_spec("web")
container = spec["template"]["spec"]["containers"][0]
container.update(env=[], ports=[], volumeMounts=[], command=[])
spec["template"]["spec"].update(volumes=[], imagePullSecrets=[])
k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS, "finalizers": []}, spec=spec,
                       opts=sw.ResourceOptions(depends_on=[ns]))
k8s.core.v1.ConfigMap("settings", opts=sw.ResourceOptions(depends_on=[ns]),
                      metadata={"namespace": NS, "finalizers": [], "ownerReferences": []})
k8s.rbac.v1.Role("none", metadata={"name": "none", "namespace": NS}, rules=[],
                 opts=sw.ResourceOptions(depends_on=[ns]))
"""


def test_declared_empty_lists_are_no_perpetual_diff(new_project: Any, cluster: Any) -> None:
    p = new_project()
    p.program(PROGRAM)
    p.up()
    out = cluster.kubectl("get", "role", "none", "-n", p.ns, "-o", "jsonpath={.rules}")
    assert out.stdout == "null", out.stdout  # the API server does not keep `[]`
    out = cluster.kubectl("get", "deployment", "web", "-n", p.ns, "-o", "json")
    assert "[]" not in out.stdout, out.stdout
    assert p.up().changed() == {}
    assert p.preview().changed() == {}
    p.sw("refresh", "--yes", "--expect-no-changes")
    p.preview("--refresh", "--expect-no-changes")
