"""What a Pulumi user expects of a program, checked against the real local cluster: a live
Service's clusterIP read by snake_case attribute, a preview of an update that knows it
from the server's dry run, and an object's id."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_a_services_cluster_ip_feeds_a_config_map_and_a_relabel_leaves_it_alone(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    body = """
        ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        svc = k8s.core.v1.Service(
            "web",
            metadata={{"namespace": ns.metadata["name"], "labels": {{"v": "{v}"}},
                      "annotations": {{"stackwright.io/skip-await": "true"}}}},
            spec={{"selector": {{"app": "web"}}, "ports": [{{"port": 80}}]}},
        )
        token = k8s.core.v1.Secret(
            "token", metadata={{"namespace": ns.metadata["name"], "labels": {{"v": "{v}"}}}},
            string_data={{"token": "s3cret-token"}},
        )
        k8s.core.v1.ConfigMap("reader", metadata={{"name": "reader", "namespace": NS}},
                              data={{"ip": svc.spec.cluster_ip,
                                    "token": token.string_data["token"]}})
        sw.export("id", svc.id)
    """
    p.program(body.format(v="1"))
    up = p.up()
    ip = live(cluster, "service", up.summary["outputs"]["id"].split("/")[1], p.ns)["spec"][
        "clusterIP"
    ]
    assert up.summary["outputs"]["id"].startswith(f"{p.ns}/web-")
    assert live(cluster, "configmap", "reader", p.ns)["data"] == {"ip": ip, "token": "s3cret-token"}

    p.program(body.format(v="2"))
    planned = p.preview()

    # The reader reads the same clusterIP and token from the server's dry runs.
    assert planned.changed() == {"web": "update", "token": "update"}
    assert p.up().changed() == {"web": "update", "token": "update"}
    p.sw("destroy", "--yes")
