"""Custom objects whose status nobody but a person sets (`kubectl patch --subresource=status`,
no controller): `stackwright.io/wait-for` with a JSONPath waits for it, and `stackwright
import` of such an object prints code that adopts it with no change on the next up (the
status, which is not the program's, left out)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

PLURAL = "valves.status.example.com"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": PLURAL},
    "spec": {
        "group": "status.example.com",
        "scope": "Namespaced",
        "names": {"plural": "valves", "singular": "valve", "kind": "Valve"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer"},
                                    "mode": {"type": "string", "default": "slow"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"phase": {"type": "string"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}

NAMESPACE = 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'


def _valve(timeout: int) -> str:
    return f"""
k8s.apiextensions.CustomResource(
    "v1", api_version="status.example.com/v1", kind="Valve",
    metadata={{"name": "v1", "namespace": NS, "annotations": {{
        "stackwright.io/wait-for": "jsonpath={{.status.phase}}=Open",
        "stackwright.io/timeout-seconds": "{timeout}",
    }}}},
    spec={{"size": 1}},
)
"""


def _set_phase(cluster: LiveCluster, ns: str, phase: str) -> None:
    cluster.kubectl(
        "patch", "valve", "v1", "-n", ns, "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": {"phase": phase}}),
    )  # fmt: skip


def _exists(cluster: LiveCluster, ns: str) -> bool:
    found = cluster.kubectl("get", "valve", "v1", "-n", ns, "-o", "name", check=False)
    return found.returncode == 0


def test_wait_for_a_jsonpath_on_a_status_set_by_hand(
    new_project: Any, cluster: LiveCluster
) -> None:
    cluster.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    p = new_project()
    # Nobody opens it: the wait fails after its own timeout, saying what it waited for.
    p.program(NAMESPACE + _valve(timeout=1))
    failed = p.up(rc=1)
    (failure,) = failed.summary["failures"]
    assert "not ready after 1s" in failure and "jsonpath={.status.phase}=Open" in failure, failure

    # Someone opens it while `up` waits: the wait ends then, and the up succeeds.
    p.program(NAMESPACE + _valve(timeout=60))
    _set_phase(cluster, p.ns, "Closed")
    opened: list[float] = []

    def open_later() -> None:
        time.sleep(1.5)
        opened.append(time.monotonic())  # before: `up` may end while kubectl returns
        _set_phase(cluster, p.ns, "Open")

    opener = threading.Thread(target=open_later)
    opener.start()
    try:
        done = p.up()
        finished = time.monotonic()
    finally:
        opener.join()
    assert done.summary["ok"] and opened and opened[0] <= finished  # not ready before
    # The status set by hand is no drift of the program's: the next run changes nothing.
    assert p.preview().changed() == {}
    assert live(cluster, PLURAL, "v1", p.ns)["status"] == {"phase": "Open"}
    p.sw("destroy", "--yes")


def test_import_of_a_custom_object_with_a_status_set_by_hand(
    new_project: Any, cluster: LiveCluster
) -> None:
    cluster.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    p = new_project()
    p.program(NAMESPACE)
    p.up()
    valve = {
        "apiVersion": "status.example.com/v1",
        "kind": "Valve",
        "metadata": {"name": "v1", "namespace": p.ns},
        "spec": {"size": 2},
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(valve))
    assert _exists(cluster, p.ns)
    _set_phase(cluster, p.ns, "Open")
    before = live(cluster, PLURAL, "v1", p.ns)

    done = p.sw("import", "--yes", "kubernetes:status.example.com/v1:Valve", "v1", f"{p.ns}/v1")
    code = done.out.split("Add this to your program:", 1)[1].strip()
    assert "phase" not in code and "'mode': 'slow'" in code, code  # the server's default kept

    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    after = live(cluster, PLURAL, "v1", p.ns)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["spec"] == {"size": 2, "mode": "slow"} and after["status"] == {"phase": "Open"}
    p.sw("state", "unprotect", "--yes", p.urn("kubernetes:status.example.com/v1:Valve", "v1"))
    p.sw("destroy", "--yes")
