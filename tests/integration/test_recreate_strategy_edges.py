"""A Deployment switched to `strategy.type: Recreate` past the `rollingUpdate` the API
server defaulted (the provider's merge patch, then its apply): what another manager owns,
and what an interrupted switch leaves, against the local cluster."""

from __future__ import annotations

import contextlib
import json
import textwrap
from dataclasses import replace
from typing import Any

import pytest
from test_cli_lifecycle import STACK, live
from test_cli_lifecycle import new_project as new_project  # the fixture

from stackwright.model import Op
from stackwright.state import open_backend

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


def test_adopting_a_deployment_and_switching_it_to_recreate_in_one_step(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The adoption forces Stackwright's marks over Helm's (a retry with force); the switch
    patches the defaulted rollingUpdate away and applies again: that apply must be forced
    over the marks as well, or the step fails on the conflict the first retry got past."""
    p = new_project()
    p.program(DEFAULT + 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    made = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": p.ns,
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.29"}]},
            },
        },
    }
    # Applied server-side (as Helm 4 does): the defaulted strategy is no manager's.
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=helm", "-f", "-", input=json.dumps(made)
    )
    p.program(
        RECREATE
        + BODY.replace(
            "**STRATEGY})", '**STRATEGY},\n    opts=sw.ResourceOptions(import_=f"{NS}/web"))'
        )
    )
    assert p.preview().changed() == {"web": "import"}
    assert p.up().ops()["web"] == "import"
    deployment = live(cluster, "deployment", "web", p.ns)
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    assert ("stackwright", "Update") not in _entries(cluster, p.ns)


#: What a program back from Recreate may say of the strategy: nothing (the default), the
#: default's parameters alone, or its type and parameters.
BACK = {
    "default": DEFAULT,
    "parameters": 'STRATEGY = {"strategy": {"rollingUpdate": {"maxSurge": 2}}}\n',
    "typed": 'STRATEGY = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}}\n',
}


@pytest.mark.parametrize("back", BACK)
def test_killed_switch_then_back(
    new_project: Any, cluster: LiveCluster, back: str
) -> None:
    """A run killed between the strategy patch and the apply leaves the update pending and
    the patch's Update entry owning `type: Recreate`; the program then goes back to the
    default strategy. The next up applies again (the update may have landed), and the type
    the patch set goes back to RollingUpdate with the entry: unowned by any apply (the
    default), refused beside a `rollingUpdate` (parameters), or a conflict with the
    patch's own manager (typed) as it was, the program's strategy never applied."""
    p = new_project()
    p.program(DEFAULT + BODY)
    p.up()
    # What the kill leaves: the update journaled, never ended, and the patch sent.
    with contextlib.closing(open_backend()) as backend:
        (recorded,) = [r for r in backend.load(p.name, STACK).resources if r.urn.endswith("::web")]
        inputs = {
            **recorded.inputs,
            "spec": {**recorded.inputs["spec"], "strategy": {"type": "Recreate"}},
        }
        with backend.begin_operation(p.name, STACK, kind="up") as operation:
            operation.begin(1, Op.UPDATE, replace(recorded, inputs=inputs))
    patch = {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}}
    cluster.kubectl(
        "patch", "deployment", "web", "-n", p.ns, "--type=merge", "--field-manager=stackwright",
        "-p", json.dumps(patch),
    )  # fmt: skip

    p.program(BACK[back] + BODY)
    assert p.preview().changed() == {"web": "update"}
    assert p.up().ops() == {"web": "update"}
    strategy = live(cluster, "deployment", "web", p.ns)["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxSurge"] == (2 if back != "default" else "25%")
    assert ("stackwright", "Update") not in _entries(cluster, p.ns)
    assert p.up().changed() == {}
