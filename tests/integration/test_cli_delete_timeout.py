"""`custom_timeouts.delete` against the local cluster: a destroy, which runs no program,
waits for a delete as long as the program said when it last ran (the state records it),
not the provider's default of ten minutes."""

from __future__ import annotations

import textwrap
import time
from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_cli_lifecycle import release_configmaps
from test_resource_options_cli import yaml_project

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
        (done,) = [e for e in failed.of("step-done") if not e["ok"]]
        assert done["elapsed"] >= 2, done  # the failed step's own time, as a success's
        error = done["error"]
        assert "held: still present 2s after its deletion" in error, error
        assert "example.com/never" in error, error
        # ... and which setting set that limit, and how to change it, on the same line.
        assert (
            "(the limit is the resource's custom_timeouts.delete; raise it, or set the "
            "object's stackwright.io/timeout-seconds annotation, to wait longer)"
        ) in error, error
        assert "\n" not in error, error
    finally:
        release_configmaps(cluster, p.ns, "held")
    assert p.sw("destroy", "--yes", "--json").rc == 0


def test_a_yaml_programs_delete_that_runs_out_names_customtimeouts_as_it_writes_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The limit's message names the option as a YAML program writes it."""
    p = new_project()
    yaml_project(
        p,
        f"""
        held:
          type: kubernetes:core/v1:ConfigMap
          properties:
            metadata: {{name: held, namespace: {p.ns}, finalizers: [example.com/never]}}
            data: {{k: v}}
          options: {{customTimeouts: {{delete: 2s}}}}
        """,
    )
    cluster.kubectl("create", "namespace", p.ns, check=False)
    p.up()
    try:
        failed = p.sw("destroy", "--yes", "--json", rc=1, process=True, timeout=60)
        (done,) = [e for e in failed.of("step-done") if not e["ok"]]
        assert "(the limit is the resource's customTimeouts.delete; raise it" in done["error"]
    finally:
        release_configmaps(cluster, p.ns, "held")
    assert p.sw("destroy", "--yes", "--json").rc == 0


def test_a_replaced_objects_record_keeps_the_delete_timeout_its_delete_uses(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A replacement created first deletes the old object with the timeout the program says
    now. When that delete does not run (another step failed), the old object's record must
    say so too: a later `destroy`, which runs no program, deletes it by the record."""
    p = new_project()
    body = textwrap.dedent(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap(
            "held",
            metadata={"name": NAME, "namespace": ns.metadata["name"],
                      "finalizers": ["example.com/never"]},
            opts=sw.ResourceOptions(custom_timeouts=sw.CustomTimeouts(delete=DELETE)),
        )
        """
    )
    p.program('NAME, DELETE = "held-1", "120s"\n' + body)
    p.up()
    refused = 'k8s.core.v1.ConfigMap("bad", metadata={"name": "Bad", "namespace": NS})\n'
    p.program('NAME, DELETE = "held-2", "2s"\n' + body + refused)
    try:
        failed = p.up(rc=1)
        assert failed.ops()["held"] == "replace", failed.out
        (old,) = [r for r in p.state()["resources"] if r["deletePending"]]
        assert old["id"].endswith("/held-1") and old["deleteTimeout"] == 2, old
        started = time.monotonic()
        destroyed = p.sw("destroy", "--yes", "--json", rc=1, process=True, timeout=60)
        assert time.monotonic() - started < 30
        assert "held-1: still present 2s after its deletion" in destroyed.out, destroyed.out
    finally:
        release_configmaps(cluster, p.ns, "held-1", "held-2")
