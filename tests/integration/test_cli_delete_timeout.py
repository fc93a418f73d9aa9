"""`custom_timeouts.delete` against the local cluster: a destroy, which runs no program,
waits for a delete as long as the program said when it last ran (the state records it),
not the provider's default of ten minutes."""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_a_destroy_held_by_a_finalizer_gives_up_at_the_custom_delete_timeout(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap(
            "held",
            metadata={"name": "held", "namespace": ns.metadata["name"],
                      "finalizers": ["example.com/never"]},
            data={"k": "v"},
            opts=sw.ResourceOptions(custom_timeouts=sw.CustomTimeouts(delete="2s")),
        )
        """
    )
    p.up()
    try:
        started = time.monotonic()
        failed = p.sw("destroy", "--yes", "--json", rc=1, process=True, timeout=60)
        assert time.monotonic() - started < 30
        (error,) = [e["error"] for e in failed.of("step-done") if not e["ok"]]
        assert "held: still present 2s after its deletion" in error, error
        assert "example.com/never" in error, error
        # ... and which setting set that limit, and how to change it, on the same line.
        assert (
            "(the limit is the resource's custom_timeouts.delete; raise it, or set the "
            "object's stackwright.io/timeout-seconds annotation, to wait longer)"
        ) in error, error
        assert "\n" not in error, error
    finally:
        cluster.kubectl(
            "patch", "configmap", "held", "-n", p.ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}',
        )  # fmt: skip
    assert p.sw("destroy", "--yes", "--json").rc == 0
