"""Kill -9 between a delete-first replacement of an object and its Patch's step (`crash_run`):
the new object holds none of the Patch's fields, and the Patch's record is as it was, so
the next run found it `same` and the fields stayed lost until an `up --refresh`. The next
run applies it again: its record names the object it was applied to (its uid), another
than the one the object's record names now.

The Patch waits for a Job that runs a few seconds (`depends_on`), so the kill, aimed just
after the object's replacement is done, lands before the Patch's step begins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crash_run import Project

pytestmark = pytest.mark.integration

LiveCluster = Any
NS = "crash-patch-remade"
PROGRAM = f"""\
import stackwright as sw
import stackwright.kubernetes as k8s

gen = str(sw.Config().get_int("gen") or 0)
ns = k8s.core.v1.Namespace("ns", metadata={{"name": "{NS}"}})
k8s.core.v1.ConfigMap("cfg", metadata={{"name": "cfg", "namespace": "{NS}"}}, data={{"gen": gen}},
                      opts=sw.ResourceOptions(replace_on_changes=["data"], depends_on=[ns]))
# Its pod template changes with `gen`: replaced, then waited for until it completes
# (`sleep 60`: 60 of the local cluster's kubelet seconds, a few real ones).
slow = k8s.batch.v1.Job("slow", metadata={{"name": "slow", "namespace": "{NS}"}}, spec={{
    "template": {{"spec": {{"restartPolicy": "Never", "containers": [{{
        "name": "task", "image": "busybox:1.36", "command": ["sleep", "60"],
        "env": [{{"name": "GEN", "value": gen}}]}}]}}}}}},
    opts=sw.ResourceOptions(depends_on=[ns]))
k8s.core.v1.ConfigMapPatch("extra", metadata={{"name": "cfg", "namespace": "{NS}"}},
                           data={{"extra": "1"}}, opts=sw.ResourceOptions(depends_on=[slow]))
"""


def _data(cluster: LiveCluster) -> dict[str, str]:
    found = json.loads(cluster.kubectl("get", "configmap", "cfg", "-n", NS, "-o", "json").stdout)
    return dict(found.get("data") or {})


def test_kill_9_after_an_object_is_made_anew_before_its_patch_applies(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    project = Project(tmp_path / "p", cluster, name="crashremade", stack="dev", program=PROGRAM)
    project.sw("stack", "init", "dev")
    first = project.up(0)
    assert first.returncode == 0, first.failure()
    assert _data(cluster) == {"gen": "0", "extra": "1"}

    cfg = project.urn("kubernetes:core/v1:ConfigMap", "cfg")
    replaced = f'"event":"step-done","op":"replace","urn":"{cfg}"'
    run = project.up(1, kill_after=60.0, kill_on=((replaced,), 0.2))
    assert run.killed, run.failure()
    patch = project.urn("kubernetes:core/v1:ConfigMapPatch", "extra")
    assert [e["op"] for e in run.events if e.get("urn") == patch] == [], "the kill came late"
    assert _data(cluster) == {"gen": "1"}, "the new object holds none of the Patch's fields"

    after = project.up(1)
    assert after.returncode == 0, after.failure()
    assert _data(cluster) == {"gen": "1", "extra": "1"}, "the fields stay lost"
    steps = {e["name"]: e["op"] for e in after.events if e["event"] == "step-started"}
    assert steps["extra"] == "update", steps
