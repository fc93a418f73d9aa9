"""Kill -9 while Patches give their fields up (`crash_run`): whatever instant the kill lands
at, the next run converges — a run still declaring the Patches finds every field on its
object, a destroy leaves none — and no object is made or deleted by a Patch.

A Patch's giving up is one empty server-side apply: a kill after it landed and before its
step was journaled as done left the Patch recorded as it was, so a next run declaring it
found it `same` and never applied its fields again. Set STACKWRIGHT_CRASH_SEED to replay
(it is printed).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from crash_run import Project, started

pytestmark = pytest.mark.integration

LiveCluster = Any
SEED = int(os.environ.get("STACKWRIGHT_CRASH_SEED", "20261126"))
NS = "crash-patches"
COUNT = 12
KILLS = 6
PROGRAM = f"""\
import stackwright as sw
import stackwright.kubernetes as k8s

if (sw.Config().get_int("gen") or 0) == 0:
    for i in range({COUNT}):
        k8s.core.v1.ConfigMapPatch(f"p{{i}}", metadata={{"name": f"cm{{i}}", "namespace": "{NS}"}},
                                   data={{"patched": str(i)}})
"""


def _data(cluster: LiveCluster) -> dict[str, dict[str, str]]:
    listed = json.loads(cluster.kubectl("get", "configmaps", "-n", NS, "-o", "json").stdout)
    return {
        item["metadata"]["name"]: item.get("data") or {}
        for item in listed["items"]
        if item["metadata"]["name"].startswith("cm")
    }


def test_kill_9_while_patches_give_their_fields_up(cluster: LiveCluster, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    print(f"\nseed {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    cluster.kubectl("create", "namespace", NS)
    for i in range(COUNT):
        manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": f"cm{i}", "namespace": NS}, "data": {"own": "x"}}  # fmt: skip
        cluster.kubectl("create", "-f", "-", input=json.dumps(manifest))
    project = Project(tmp_path / "p", cluster, name="crashpatch", stack="dev", program=PROGRAM)
    project.sw("stack", "init", "dev")
    declared = {f"cm{i}": {"own": "x", "patched": str(i)} for i in range(COUNT)}
    given_up = {f"cm{i}": {"own": "x"} for i in range(COUNT)}
    markers = tuple(
        started("delete", project.urn("kubernetes:core/v1:ConfigMapPatch", f"p{i}"))
        for i in range(COUNT)
    )
    assert project.up(0).returncode == 0
    killed = 0
    for attempt in range(KILLS):
        # Drop the Patches, killed a few milliseconds after a giving up began; then either
        # declare them again or destroy: each must converge.
        run = project.up(1, kill_after=30.0, kill_on=(markers, rng.uniform(0.0, 0.012)))
        killed += run.killed
        if attempt % 2:
            assert project.up(0).returncode == 0
            assert _data(cluster) == declared, f"kill {attempt}: fields lost"
        else:
            assert project.destroy().returncode == 0
            assert _data(cluster) == given_up, f"kill {attempt}: fields left"
            assert project.up(0).returncode == 0
    assert killed, "no run was killed: the markers were never printed"
    assert project.destroy().returncode == 0
    assert _data(cluster) == given_up
