"""What `stackwright preview` knows of objects it would create, through the CLI against the
local cluster: the values the program gives them, as Pulumi's preview shows its inputs; not
what the cluster decides (a Service's clusterIP, which the server's dry run does pick)."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import get, live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

NAMESPACE = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
"""
#: In the namespace already there, so the server dry-runs each create (and picks a
#: clusterIP for the Service's, which the up does not keep). The Service selects no pods:
#: its up waits for no endpoints.
CONFIG_AND_SERVICE = """
cm = k8s.core.v1.ConfigMap("cm", metadata={"namespace": NS}, data={"a": "1"})
svc = k8s.core.v1.Service("web", metadata={"namespace": NS}, spec={"ports": [{"port": 80}]})
k8s.core.v1.ConfigMap("reader", metadata={"name": "reader", "namespace": NS},
                      data={"a": cm.data["a"]})
sw.export("a", cm.data["a"])
sw.export("ip", svc.spec["clusterIP"])
sw.export("both", sw.Output.all(a=cm.data["a"], ip=svc.spec.cluster_ip))
"""


def test_a_preview_shows_what_the_program_gives_a_new_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(NAMESPACE)
    p.up()
    p.program(NAMESPACE + CONFIG_AND_SERVICE)

    shown = p.sw("preview").out
    planned = p.preview()

    assert '    a: "1"' in shown.splitlines(), shown
    assert "    ip: (known after apply)" in shown.splitlines(), shown
    assert planned.summary["outputs"] == {
        "a": "1",
        "ip": "(known after apply)",
        "both": {"a": "1", "ip": "(known after apply)"},
    }
    assert get(cluster, "configmap", "reader", p.ns) is None, "a preview changes nothing"

    outputs = p.up().summary["outputs"]
    service = live(cluster, "service", p.resources()["web"]["id"].rpartition("/")[2], p.ns)
    assert outputs == {
        "a": "1",
        "ip": service["spec"]["clusterIP"],
        "both": {"a": "1", "ip": service["spec"]["clusterIP"]},
    }
