"""An object a killed `up` was creating stays that stack's: another stack may not import it.

A kill -9 while a create waits for its object to become ready leaves the step pending,
the object in the cluster marked as that stack's, and no record yet: the stack's next
operation settles the step and records the object. `stackwright import` from another
project took the object meanwhile (it read only the records), and both stacks owned it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crash_run import LiveCluster, Project

pytestmark = pytest.mark.integration

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
#: A container whose image names `notready` runs and never becomes Ready (the local
#: cluster's kubelet), so the create waits, reporting progress, until it is killed.
MAKER = """
import stackwright.kubernetes as k8s

k8s.apps.v1.Deployment(
    "web",
    metadata={"name": "pending-web"},
    spec={
        "selector": {"matchLabels": {"app": "pending-web"}},
        "template": {
            "metadata": {"labels": {"app": "pending-web"}},
            "spec": {"containers": [{"name": "web", "image": "example/notready:1"}]},
        },
    },
)
"""


def test_an_object_a_killed_up_was_creating_is_not_imported_by_another_stack(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    maker = Project(tmp_path / "maker", cluster, name="maker", stack="dev", program=MAKER)
    maker.sw("stack", "init", "dev")
    theirs = maker.urn(DEPLOYMENT, "web")
    # Killed once it waits for readiness: the object is made, and the step not ended.
    waiting = f'"event":"step-progress","urn":"{theirs}"'
    killed = maker.up(0, kill_after=60.0, kill_on=((waiting,), 0.0))
    assert killed.killed, killed.failure()
    state = json.loads(maker.sw("stack", "export").stdout)
    assert [(p["op"], p["resource"]["urn"]) for p in state["pending"]] == [("create", theirs)]
    assert state["resources"] == []
    made = cluster.kubectl("get", "deployment", "pending-web", "-n", "default", "-o", "json")
    assert json.loads(made.stdout)["metadata"]["annotations"]["stackwright.io/urn"] == theirs

    taker = Project(tmp_path / "taker", cluster, name="taker", stack="dev", program="")
    taker.sw("stack", "init", "dev")
    refused = taker.sw(
        "import", "--yes", DEPLOYMENT, "web", "default/pending-web", check=False, process=True
    )

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"error: cannot import default/pending-web: stack dev of project maker manages it as "
        f"{theirs}: a step of an earlier operation on it is still pending (interrupted, or "
        "its answer lost); run `stackwright refresh --stack dev` there to settle it, then "
        f"remove it from that stack first (`stackwright state delete {theirs} --stack dev` "
        "there keeps the object)"
    ]
    assert json.loads(taker.sw("stack", "export").stdout)["resources"] == []
    # What the message says settles it does: the maker records its object.
    maker.sw("refresh", "--yes")
    recorded = json.loads(maker.sw("stack", "export").stdout)
    assert recorded["pending"] == [] and [r["urn"] for r in recorded["resources"]] == [theirs]
    maker.sw("destroy", "--yes")  # the cluster is shared by the session's tests
