"""A Deployment switched to `strategy.type: Recreate` past the `rollingUpdate` the API
server defaulted (the provider's merge patch, then its apply): what another manager owns,
and what an interrupted switch leaves, against the local cluster."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

BODY = textwrap.dedent(
    """
    k8s.core.v1.Namespace("ns", metadata={"name": NS})
    k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                           spec={**app_spec("web"), **STRATEGY})
    """
)
RECREATE = 'STRATEGY = {"strategy": {"type": "Recreate"}}\n'
DEFAULT = "STRATEGY = {}\n"


def _entries(cluster: LiveCluster, ns: str) -> set[tuple[str, str]]:
    deployment = live(cluster, "deployment", "web", ns)
    return {(m["manager"], m["operation"]) for m in deployment["metadata"]["managedFields"]}


def test_a_switch_interrupted_after_its_patch_converges_on_the_next_up(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A run killed between the strategy patch and the apply leaves the patch's Update
    entry (stackwright owning spec.strategy.type); the next up's apply then goes straight
    through, and must still drop that entry, or switching back keeps Recreate."""
    p = new_project()
    p.program(DEFAULT + BODY)
    p.up()
    patch = {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}}
    cluster.kubectl(
        "patch", "deployment", "web", "-n", p.ns, "--type=merge", "--field-manager=stackwright",
        "-p", json.dumps(patch),
    )  # fmt: skip
    assert ("stackwright", "Update") in _entries(cluster, p.ns)

    p.program(RECREATE + BODY)
    assert p.up().ops() == {"web": "update"}
    assert ("stackwright", "Update") not in _entries(cluster, p.ns)

    p.program(DEFAULT + BODY)
    p.up()
    assert live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]["type"] == "RollingUpdate"


def test_a_rolling_update_another_manager_owns_is_not_patched_away(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The patch is for the rollingUpdate no manager owns; one another manager set is theirs:
    the switch is refused naming it, and the field stays."""
    p = new_project()
    p.program(DEFAULT + BODY)
    p.up()
    theirs = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": p.ns},
        "spec": {"strategy": {"rollingUpdate": {"maxSurge": 2}}},
    }
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=tuner", "-f", "-", input=json.dumps(theirs)
    )
    p.program(RECREATE + BODY)
    for failed in (p.preview(rc=None), p.up(rc=1)):
        assert failed.rc != 0
        assert "rollingUpdate, which manager tuner set" in failed.out, failed.out
    strategy = live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxSurge"] == 2

    assert p.up("--force-conflicts").ops() == {"web": "update"}
    assert live(cluster, "deployment", "web", p.ns)["spec"]["strategy"] == {"type": "Recreate"}
