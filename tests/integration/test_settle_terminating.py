"""Settling an interrupted delete whose object is still being deleted: a Namespace kept
Terminating by a finalizer (with objects riding on it, `deleted_with`), and a ConfigMap held
by a finalizer. A run killed while its delete waits leaves the step pending; the next `up`
or `destroy` must wait for the object to go, as the delete step would, and settle the delete
as done (its record and its riders' records removed), not keep records of objects the
cluster is removing. A real cluster keeps a Namespace Terminating for seconds to minutes;
the local one empties it in ~0.1 s, so a finalizer of the test's own holds it here.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from crash_run import (
    LiveCluster,
    Project,
    Wanted,
    check_agrees,
    check_converged,
    live_objects,
    started,
)

pytestmark = pytest.mark.integration

NAMESPACE = "kubernetes:core/v1:Namespace"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
HOLD = "example.com/hold"

PROGRAM = """
import stackwright as sw
import stackwright.kubernetes as k8s

ns = k8s.core.v1.Namespace("ns", metadata={"name": "NS"})
rides = sw.ResourceOptions(deleted_with=ns)
for i in range(3):
    k8s.core.v1.ConfigMap(f"rider-{i}", metadata={"namespace": ns.metadata["name"]},
                          data={"i": str(i)}, opts=rides)
k8s.core.v1.ConfigMap("own", metadata={"namespace": ns.metadata["name"]}, data={"k": "v"})
k8s.core.v1.ConfigMap("held", metadata={"name": "HELD", "namespace": "default"}, data={"k": "v"})
"""


def make_project(
    tmp_path_factory: pytest.TempPathFactory, cluster: LiveCluster, name: str
) -> Project:
    program = PROGRAM.replace('"NS"', f'"{name}"').replace('"HELD"', f'"{name}-held"')
    project = Project(
        tmp_path_factory.mktemp(name), cluster, name=name, stack="dev", program=program
    )
    project.sw("stack", "init", "dev")
    return project


def declared(project: Project) -> dict[str, Wanted]:
    ns = project.name
    out = {
        project.urn(NAMESPACE, "ns"): Wanted("Namespace", None, ns),
        project.urn(CONFIGMAP, "own"): Wanted("ConfigMap", ns, None),
        project.urn(CONFIGMAP, "held"): Wanted("ConfigMap", "default", f"{ns}-held"),
    }
    for i in range(3):
        out[project.urn(CONFIGMAP, f"rider-{i}")] = Wanted("ConfigMap", ns, None)
    return out


def held(project: Project) -> list[tuple[str, ...]]:
    """kubectl's address of the Namespace and of the held ConfigMap."""
    return [
        ("namespace", project.name),
        ("configmap", f"{project.name}-held", "-n", "default"),
    ]


def set_finalizers(project: Project, finalizers: list[str] | None) -> None:
    patch = json.dumps({"metadata": {"finalizers": finalizers}})
    for address in held(project):
        project.cluster.kubectl("patch", *address, "--type=merge", "-p", patch)


def deletion_started(project: Project) -> list[bool]:
    """For each held object: whether it exists with a deletionTimestamp."""
    found = []
    for address in held(project):
        got = project.cluster.kubectl("get", *address, "-o", "json", check=False)
        meta = json.loads(got.stdout)["metadata"] if got.returncode == 0 else {}
        found.append(bool(meta.get("deletionTimestamp")))
    return found


def interrupt_destroy(project: Project) -> None:
    """Deploy, hold the Namespace and the ConfigMap with a finalizer, and kill -9 a destroy
    while it waits for them to go: their deletes are left pending, the riders' records kept
    (they go only once their carrier is gone), the other objects' deletes done."""
    assert project.up(0).returncode == 0
    set_finalizers(project, [HOLD])
    marker = started("delete", project.urn(NAMESPACE, "ns"))
    killed = project.destroy(kill_after=60.0, kill_on=((marker,), 1.0))
    assert killed.killed, f"the destroy was meant to hang on the finalizers:\n{killed.failure()}"
    assert deletion_started(project) == [True, True]
    state = json.loads(project.sw("stack", "export").stdout)
    pending = sorted((p["op"], p["resource"]["urn"]) for p in state["pending"])
    assert pending == [
        ("delete", project.urn(CONFIGMAP, "held")),
        ("delete", project.urn(NAMESPACE, "ns")),
    ]
    riders = {project.urn(CONFIGMAP, f"rider-{i}") for i in range(3)}
    assert riders <= {r["urn"] for r in state["resources"]}


def release_later(project: Project, delay: float) -> threading.Thread:
    """Remove the finalizers after `delay` seconds, in the background."""

    def release() -> None:
        time.sleep(delay)
        set_finalizers(project, None)

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_up_waits_for_a_terminating_namespace_then_makes_it_anew(
    tmp_path_factory: pytest.TempPathFactory, cluster: LiveCluster
) -> None:
    project = make_project(tmp_path_factory, cluster, "hold-up")
    interrupt_destroy(project)
    releaser = release_later(project, 1.0)
    run = project.up(0)
    releaser.join()
    assert run.returncode == 0, run.failure()
    assert sorted(run.settled()) == ["delete", "delete"]
    assert run.elapsed >= 1.0, "the up settled the deletes before the objects were gone"
    created = sorted(
        e["urn"].rsplit("::", 1)[1]
        for e in run.events
        if e["event"] == "step-started" and e["op"] == "create"
    )
    assert created == ["held", "ns", "own", "rider-0", "rider-1", "rider-2"]
    check_converged(project, declared(project), "up after a destroy killed mid-delete")


def test_destroy_waits_for_a_terminating_namespace(
    tmp_path_factory: pytest.TempPathFactory, cluster: LiveCluster
) -> None:
    project = make_project(tmp_path_factory, cluster, "hold-destroy")
    interrupt_destroy(project)
    releaser = release_later(project, 1.0)
    run = project.destroy()
    releaser.join()
    assert run.returncode == 0, run.failure()
    assert sorted(run.settled()) == ["delete", "delete"]
    # Settled as done, with the riders' records: no second delete (none is needed; a
    # server before Kubernetes 1.17 refused one for a Namespace still emptying, 409
    # Conflict; later ones answer 200 with it), nothing left to delete.
    steps = [(e["op"], e["urn"]) for e in run.events if e["event"] == "step-started"]
    assert steps == [], f"the destroy deleted again what was being deleted: {steps}"
    left = live_objects(cluster, f"urn:sw:{project.stack}::{project.name}::")
    assert left == [], f"objects of the stack left after destroy: {left}"
    assert deletion_started(project) == [False, False]
    assert project.cluster.kubectl("get", *held(project)[0], check=False).returncode != 0
    recorded, _ = check_agrees(project, "destroy after a destroy killed mid-delete")
    assert recorded == {}, f"the state still records {sorted(recorded)}"


def test_a_settle_that_waits_too_long_fails_and_stays_pending(
    tmp_path_factory: pytest.TempPathFactory, cluster: LiveCluster
) -> None:
    """The wait has a delete step's timeout (the provider's `timeout`); past it, the run
    fails naming what holds the object, and the delete stays pending for the next run."""
    project = make_project(tmp_path_factory, cluster, "hold-timeout")
    interrupt_destroy(project)
    config = project.folder / f"Stackwright.{project.stack}.yaml"
    config.write_text(config.read_text() + "  kubernetes:timeout: 1\n")
    run = project.up(-1)
    assert run.returncode == 1, run.failure()
    assert HOLD in run.failure(), run.failure()
    assert run.elapsed < 30
    state = json.loads(project.sw("stack", "export").stdout)
    assert sorted(p["resource"]["urn"] for p in state["pending"]) == [
        project.urn(CONFIGMAP, "held"),
        project.urn(NAMESPACE, "ns"),
    ]
    set_finalizers(project, None)
    run = project.up(0)
    assert run.returncode == 0, run.failure()
    check_converged(project, declared(project), "up after a settle timed out")
