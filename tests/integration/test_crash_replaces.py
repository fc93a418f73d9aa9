"""Crash safety of replacements, updates and deletes in one `up`: kill -9 the engine at
seeded random instants of an `up` that, at once,

- replaces auto-named objects whose immutable fields change (ConfigMaps and Secrets with
  `immutable: true`, a Job's pod template; a Namespace by `replace_on_changes`, whose
  objects move to the new one): create-before-delete, the old object deleted after its
  replacement is made;
- replaces explicitly named objects with `delete_before_replace` (a ConfigMap by
  `replace_on_changes`, an immutable Secret, a Namespace with objects in it, which are
  deleted with its old object and made anew in the new one): the old object deleted first;
- updates objects in place (some to name a replaced object's successor);
- deletes resources dropped from the program, among them a Namespace with objects in it
  (the program's, a Job's pods, the cluster's own `default` ServiceAccount);

and creates their successors (a generation counter flips which Namespace is declared).
After each kill the next `up` (let finish, sometimes after being killed too) converges:
nothing pending, no orphan (an object labelled as the stack's that the state does not
record), no duplicate (two objects of one URN), nothing recorded that is absent, every
declared object where the program puts it, the old object of every replaced resource gone,
and a second `up` changes nothing. Set STACKWRIGHT_CRASH_SEED to replay (it is printed).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest
from crash_run import (
    LiveCluster,
    Project,
    Run,
    Wanted,
    check_converged,
    managed_metadata,
    started,
    urn_of,
)

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("STACKWRIGHT_CRASH_SEED", "20261126"))
KILLS = 12
PROJECT, STACK = "crashrep", "dev"
NAMESPACE = "kubernetes:core/v1:Namespace"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
JOB = "kubernetes:batch/v1:Job"

PROGRAM = """
import stackwright as sw
import stackwright.kubernetes as k8s

gen = sw.Config().get_int("gen") or 0
side = gen % 2

keep = k8s.core.v1.Namespace("ns-keep", metadata={"name": "crashrep-keep"})
ns = keep.metadata["name"]
sealed = [  # immutable, auto-named: replaced (create-before-delete) every generation
    k8s.core.v1.ConfigMap(
        f"sealed-cm-{i}", metadata={"namespace": ns}, immutable=True,
        data={"i": str(i), "gen": str(gen)},
    )
    for i in range(6)
]
sealed_secrets = [
    k8s.core.v1.Secret(
        f"sealed-secret-{i}", metadata={"namespace": ns}, immutable=True,
        string_data={"i": str(i), "gen": str(gen)},
    )
    for i in range(4)
]
for i in range(2):  # a Job's pod template is immutable: replaced, waited for to complete
    k8s.batch.v1.Job(
        f"job-{i}",
        metadata={"namespace": ns},
        spec={"template": {
            "metadata": {"annotations": {"gen": str(gen)}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "work", "image": "registry.local/task-exit0:1",
                "envFrom": [{"configMapRef": {"name": sealed[i].metadata["name"]}}],
            }]},
        }},
    )
first = sw.ResourceOptions(delete_before_replace=True, replace_on_changes=["data"])
for i in range(4):  # named: the old object deleted before the new is made
    k8s.core.v1.ConfigMap(
        f"dbr-cm-{i}", metadata={"name": f"dbr-cm-{i}", "namespace": ns},
        data={"gen": str(gen), "secret": sealed_secrets[i].metadata["name"]}, opts=first,
    )
for i in range(2):
    k8s.core.v1.Secret(
        f"dbr-secret-{i}", metadata={"name": f"dbr-secret-{i}", "namespace": ns},
        immutable=True, string_data={"gen": str(gen)},
        opts=sw.ResourceOptions(delete_before_replace=True),
    )
# A Namespace replaced delete-first: the objects in it go with its old object
again = k8s.core.v1.Namespace(
    "ns-again", metadata={"name": "crashrep-again", "labels": {"gen": str(gen)}},
    opts=sw.ResourceOptions(delete_before_replace=True, replace_on_changes=["metadata.labels"]),
)
again_ns = again.metadata["name"]
for i in range(2):
    k8s.core.v1.ConfigMap(f"again-cm-{i}", metadata={"namespace": again_ns}, data={"i": str(i)})
k8s.core.v1.ConfigMap(
    "again-named", metadata={"name": "named", "namespace": again_ns}, data={"k": "v"}
)
k8s.core.v1.Secret("again-secret", metadata={"namespace": again_ns}, string_data={"k": "v"})
# An auto-named Namespace replaced (the new one made first): the objects in it move to it
moved = k8s.core.v1.Namespace(
    "ns-moved", metadata={"labels": {"gen": str(gen)}},
    opts=sw.ResourceOptions(replace_on_changes=["metadata.labels"]),
)
k8s.core.v1.ConfigMap("moved-cm", metadata={"namespace": moved.metadata["name"]}, data={"k": "v"})
k8s.core.v1.ConfigMap(
    "moved-named", metadata={"name": "named", "namespace": moved.metadata["name"]}, data={"k": "v"}
)
for i in range(6):  # updated in place, to name a replaced ConfigMap's new object
    k8s.core.v1.ConfigMap(
        f"upd-cm-{i}", metadata={"namespace": ns},
        data={"gen": str(gen), "source": sealed[i].metadata["name"]},
    )
for i in range(2):
    k8s.core.v1.ServiceAccount(
        f"upd-sa-{i}",
        metadata={"name": f"upd-sa-{i}", "namespace": ns, "labels": {"gen": str(gen)}},
    )
for i in range(3):  # unchanged
    k8s.core.v1.ConfigMap(f"same-{i}", metadata={"namespace": ns}, data={"i": str(i)})
for i in range(3):  # created and deleted in turn
    k8s.core.v1.ConfigMap(f"extra-{side}-{i}", metadata={"namespace": ns}, data={"i": str(i)})
# A Namespace with objects in it, created and deleted in turn
flip = k8s.core.v1.Namespace(f"ns-{side}", metadata={"name": f"crashrep-{side}"})
flip_ns = flip.metadata["name"]
for i in range(3):
    k8s.core.v1.ConfigMap(f"in-{side}-cm-{i}", metadata={"namespace": flip_ns}, data={"i": str(i)})
k8s.core.v1.ConfigMap(
    f"in-{side}-named", metadata={"name": "named", "namespace": flip_ns}, data={"k": "v"}
)
k8s.core.v1.Secret(f"in-{side}-secret", metadata={"namespace": flip_ns}, string_data={"k": "v"})
k8s.batch.v1.Job(
    f"in-{side}-job",
    metadata={"namespace": flip_ns},
    spec={"template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "work", "image": "registry.local/task-exit0:1"}],
    }}},
)
"""

#: The resources every generation replaces (their old objects must be gone after it).
REPLACED = (
    *((CONFIGMAP, f"sealed-cm-{i}") for i in range(6)),
    *((SECRET, f"sealed-secret-{i}") for i in range(4)),
    *((JOB, f"job-{i}") for i in range(2)),
    *((CONFIGMAP, f"dbr-cm-{i}") for i in range(4)),
    *((SECRET, f"dbr-secret-{i}") for i in range(2)),
    (NAMESPACE, "ns-moved"),
    # in it: made anew in the new Namespace (the old deleted after)
    (CONFIGMAP, "moved-cm"),
    (CONFIGMAP, "moved-named"),
    (NAMESPACE, "ns-again"),
    # in it: made anew in the new Namespace
    *((CONFIGMAP, f"again-cm-{i}") for i in range(2)),
    (CONFIGMAP, "again-named"),
    (SECRET, "again-secret"),
)


def declared(project: Project, gen: int, moved: str = "") -> dict[str, Wanted]:
    """URN → where PROGRAM's generation `gen` puts its object (`moved`: the auto-name its
    Namespace `ns-moved` has now)."""
    keep, side = f"{PROJECT}-keep", gen % 2
    out: dict[str, Wanted] = {project.urn(NAMESPACE, "ns-keep"): Wanted("Namespace", None, keep)}

    def add(type_: str, logical: str, namespace: str | None, name: str | None) -> None:
        out[project.urn(type_, logical)] = Wanted(type_.rpartition(":")[2], namespace, name)

    add(NAMESPACE, "ns-moved", None, None)
    add(CONFIGMAP, "moved-cm", moved, None)
    add(CONFIGMAP, "moved-named", moved, "named")

    for i in range(6):
        add(CONFIGMAP, f"sealed-cm-{i}", keep, None)
        add(CONFIGMAP, f"upd-cm-{i}", keep, None)
    for i in range(4):
        add(SECRET, f"sealed-secret-{i}", keep, None)
        add(CONFIGMAP, f"dbr-cm-{i}", keep, f"dbr-cm-{i}")
    for i in range(2):
        add(JOB, f"job-{i}", keep, None)
        add(SECRET, f"dbr-secret-{i}", keep, f"dbr-secret-{i}")
        add(SERVICE_ACCOUNT, f"upd-sa-{i}", keep, f"upd-sa-{i}")
    for i in range(3):
        add(CONFIGMAP, f"same-{i}", keep, None)
        add(CONFIGMAP, f"extra-{side}-{i}", keep, None)
    again = f"{PROJECT}-again"
    out[project.urn(NAMESPACE, "ns-again")] = Wanted("Namespace", None, again)
    for i in range(2):
        add(CONFIGMAP, f"again-cm-{i}", again, None)
    add(CONFIGMAP, "again-named", again, "named")
    add(SECRET, "again-secret", again, None)
    flip = f"{PROJECT}-{side}"
    out[project.urn(NAMESPACE, f"ns-{side}")] = Wanted("Namespace", None, flip)
    for i in range(3):
        add(CONFIGMAP, f"in-{side}-cm-{i}", flip, None)
    add(CONFIGMAP, f"in-{side}-named", flip, "named")
    add(SECRET, f"in-{side}-secret", flip, None)
    add(JOB, f"in-{side}-job", flip, None)
    return out


def live_by_urn(cluster: LiveCluster) -> dict[str, list[tuple[str, str | None, str, str]]]:
    """URN → (kind, namespace, name, uid) of each object labelled as this stack's."""
    found: dict[str, list[tuple[str, str | None, str, str]]] = {}
    for kind, meta in managed_metadata(cluster, f"urn:sw:{STACK}::{PROJECT}::"):
        obj = (kind, meta.get("namespace"), meta["name"], meta["uid"])
        found.setdefault(urn_of(meta), []).append(obj)
    return found


def check_replaced(
    project: Project,
    gen: int,
    before: dict[str, list[tuple[str, str | None, str, str]]],
    where: str,
) -> None:
    """Each replaced resource has one object, made since `before` (its old one is gone),
    and every object of the stack is of a resource generation `gen` declares."""
    now = live_by_urn(project.cluster)
    for type_, logical in REPLACED:
        urn = project.urn(type_, logical)
        old = {obj[3] for obj in before.get(urn, [])}
        new = now.get(urn, [])
        assert len(new) == 1, f"{where}: {logical} has {len(new)} objects: {new}"
        assert new[0][3] not in old, f"{where}: {logical}'s object was never replaced: {new}"
    wanted = declared(project, gen)
    strays = {urn: objs for urn, objs in now.items() if urn not in wanted}
    assert strays == {}, f"{where}: objects of resources no longer declared: {strays}"
    doubles = {urn: objs for urn, objs in now.items() if len(objs) > 1}
    assert doubles == {}, f"{where}: several objects of one resource: {doubles}"


def moved_name(project: Project) -> str:
    """The name the state records for the auto-named Namespace `ns-moved`."""
    state = json.loads(project.sw("stack", "export").stdout)
    (name,) = [
        r["id"] for r in state["resources"] if r["urn"] == project.urn(NAMESPACE, "ns-moved")
    ]
    return str(name)


def check_no_op_up(project: Project, gen: int, where: str) -> None:
    """A second `up` of the same program changes nothing."""
    again = project.up(gen)
    assert again.returncode == 0, f"{where}: a second up failed: {again.failure()}"
    changed = [
        (e["op"], e["urn"].rsplit("::", 1)[1])
        for e in again.events
        if e["event"] == "step-started" and e["op"] != "same"
    ]
    assert changed == [], f"{where}: a second up still changes: {changed}"
    counts = again.events[-1]["counts"]
    assert counts == {"same": len(declared(project, gen))}, f"{where}: {counts}"


def test_kill_9_during_replaces_updates_and_deletes(cluster: LiveCluster, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    print(f"\nseed {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(tmp_path / "p", cluster, name=PROJECT, stack=STACK, program=PROGRAM)
    project.sw("stack", "init", STACK)
    began = time.monotonic()
    first = project.up(0)
    assert first.returncode == 0, first.failure()
    measured = project.up(1)  # what every generation's `up` does
    assert measured.returncode == 0, measured.failure()
    counts = measured.events[-1]["counts"]
    assert counts == {
        "replace": 22,
        "delete-replaced": 15,
        "update": 8,
        "same": 4,
        "create": 14,
        "delete": 10,
    }, counts
    startup = measured.elapsed - measured.events[-1]["elapsed"]
    steps = measured.events[-1]["elapsed"]
    again_urn = project.urn(NAMESPACE, "ns-again")
    (emptied,) = [  # the replaced Namespace's old object emptied and removed, the new made
        e["elapsed"]
        for e in measured.events
        if e["event"] == "step-done" and e["op"] == "replace" and e["urn"] == again_urn
    ]
    print(
        f"an up of every operation takes {measured.elapsed:.2f}s ({startup:.2f}s to start, "
        f"{emptied * 1000:.0f}ms to replace the Namespace)"
    )

    kills: list[tuple[str, Run]] = []
    missed = 0
    settled: Counter[str] = Counter()
    # Aimed kills, (what, the markers of generation `gen`'s run, the longest delay after
    # them): deletes take milliseconds, a Namespace's a few more (emptied, then removed).
    aims = (
        ("a replacement began", lambda gen: (started("replace"),), 0.02),
        ("an old object's delete began", lambda gen: (started("delete-replaced"),), 0.02),
        ("a delete began", lambda gen: (started("delete"),), 0.02),
        (
            "the flipped Namespace's delete began",
            lambda gen: (started("delete", project.urn(NAMESPACE, f"ns-{(gen + 1) % 2}")),),
            0.004,
        ),
        (
            "the Namespace's replacement began",
            lambda gen: (started("replace", again_urn),),
            emptied,
        ),
    )

    def up_and_kill(gen: int) -> Run:
        if len(kills) < 2 or rng.random() < 0.5:  # the first two in the Namespace's
            label, markers, longest = aims[-1 if len(kills) < 2 else rng.randrange(len(aims))]
            extra = rng.uniform(0.0, longest)
            how = f"{extra * 1000:.1f}ms after {label}"
            run = project.up(gen, kill_after=startup + steps + 5.0, kill_on=(markers(gen), extra))
        else:
            wait = rng.uniform(0.9 * startup, startup + steps)
            how = f"after {wait:.2f}s"
            run = project.up(gen, kill_after=wait)
        if run.killed:
            kills.append((how, run))
            print(f"kill {len(kills):2}: gen {gen} {how}: {run.phase()}")
        return run

    def count_settled(recovery: Run) -> None:
        settled.update(recovery.settled())
        settled["record of an object gone with its Namespace"] += sum(
            1
            for e in recovery.events
            if e["event"] == "diagnostic" and "whose delete was interrupted" in e["message"]
        )

    gen = 1
    while len(kills) < KILLS:
        gen += 1
        where = f"seed {SEED}, kill {len(kills) + 1} (gen {gen})"
        before = live_by_urn(cluster)
        run = up_and_kill(gen)
        if not run.killed:
            missed += 1
            assert run.returncode == 0, f"{where}: an up let finish failed: {run.failure()}"
        else:
            while len(kills) < KILLS and rng.random() < 0.25:  # the recovery killed too
                if rng.random() < 0.5:
                    gen += 1
                again = up_and_kill(gen)
                count_settled(again)
                if not again.killed:
                    assert again.returncode == 0, f"{where}: {again.failure()}"
                    break
            else:
                if rng.random() < 0.3:
                    gen += 1  # the recovery runs another program than the one killed
                recovery = project.up(gen)
                count_settled(recovery)
                assert recovery.returncode == 0, (
                    f"{where}: the recovery failed: {recovery.failure()}"
                )
        check_converged(project, declared(project, gen, moved_name(project)), where)
        check_replaced(project, gen, before, where)
        check_no_op_up(project, gen, where)

    phases = Counter(run.phase() for _, run in kills)
    print(
        f"{len(kills)} kills ({missed} runs finished first) in {time.monotonic() - began:.1f}s; "
        "landed: " + ", ".join(f"{n} {p}" for p, n in phases.most_common())
    )
    print("settled: " + ", ".join(f"{n} {op}" for op, n in settled.most_common()))
    assert project.destroy().returncode == 0
