"""Waiting for an Ingress against the local cluster, whose controller admits Ingresses of
an IngressClass that exists: a misspelt class fails within seconds, not after ten minutes,
and one naming no class where none is the default says why it waits."""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_an_ingress_of_a_class_that_does_not_exist_fails_in_seconds(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        nginx = k8s.networking.v1.IngressClass(
            "nginx", metadata={"name": NS + "-nginx"}, spec={"controller": "k8s.io/ingress-nginx"}
        )
        backend = {"service": {"name": "web", "port": {"number": 80}}}
        k8s.networking.v1.Ingress(
            "typo", metadata={"namespace": NS},
            spec={"ingressClassName": NS + "-ngnix", "defaultBackend": backend},
            opts=sw.ResourceOptions(depends_on=[ns, nginx]),
        )
        k8s.networking.v1.Ingress(
            "unset", metadata={"namespace": NS,
                               "annotations": {"stackwright.io/timeout-seconds": "2"}},
            spec={"defaultBackend": backend}, opts=sw.ResourceOptions(depends_on=[ns, nginx]),
        )
        """
    )
    started = time.monotonic()
    failed = p.up(rc=1)
    assert time.monotonic() - started < 60
    errors = {e["name"]: e["error"] for e in failed.of("step-done") if not e["ok"]}
    assert errors["typo"].endswith(
        f"IngressClass {p.ns}-ngnix does not exist (the cluster has {p.ns}-nginx); fix "
        "spec.ingressClassName, or create the class with its ingress controller"
    )
    assert errors["unset"].startswith(
        f"{errors['unset'].split(':')[0]}: not ready after 2s — waiting for an ingress "
        "controller to admit it, but spec.ingressClassName is unset and no IngressClass is "
        f"the default (the cluster has {p.ns}-nginx)"
    )
