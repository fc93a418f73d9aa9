"""Crash safety: kill -9 the engine at 30 random instants of `stackwright up`; each next `up` converges.

A program of 100 resources (2 Namespaces and, in each, ConfigMaps, Secrets,
ServiceAccounts, Deployments and Services; some auto-named, some named, many
reading other resources' names through Outputs) is changed between runs by a
generation counter in the stack's config, so kills land in creates, updates,
create-before-delete and delete-before-replace replacements, renames and
deletes. Each `up` runs as its own process group and is SIGKILLed after a
seeded random delay spread over a measured `up`; sometimes the recovery `up`
is killed too. After the `up` that finally completes, the cluster and the
state must agree: no orphan (an object labelled as managed with no state
record), no duplicate (two objects of one URN), every declared resource
present, nothing pending, and a preview that changes nothing.

Set STACKWRIGHT_CRASH_SEED to replay a failing sequence (the seed is printed).
"""

from __future__ import annotations

import os
import random
import statistics
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
    live_objects,
    started,
)

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("STACKWRIGHT_CRASH_SEED", "20261123"))
KILLS = 30
PROJECT, STACK = "crash", "dev"
NAMESPACES = ("crash-a", "crash-b")

PROGRAM = """
import stackwright as sw
import stackwright.kubernetes as k8s

gen = sw.Config().get_int("gen") or 0

for j, ns_name in enumerate(("crash-a", "crash-b")):
    ns = k8s.core.v1.Namespace(f"ns-{j}", metadata={"name": ns_name})
    ns_ref = ns.metadata["name"]
    cms = []
    for i in range(14):  # auto-named
        data = {"index": str(i), "shared": "static"}
        opts = None
        if i % 3 == 0:
            data["gen"] = str(gen)  # updated every generation
        if i % 5 == 4:
            data["phase"] = str(gen // 2)  # replaced (create-before-delete) every 2nd
            opts = sw.ResourceOptions(replace_on_changes=["data"])
        cms.append(
            k8s.core.v1.ConfigMap(
                f"cfg-{j}-{i}", metadata={"namespace": ns_ref}, data=data, opts=opts
            )
        )
    for i in range(8):  # named
        name = f"named-{i}" if i >= 2 else f"named-{i}-v{gen % 3}"  # renamed: a replacement
        data = {"source": cms[i].metadata["name"]}
        opts = None
        if i in (2, 3):
            data["phase"] = str(gen // 3)  # replaced (delete-before-replace) every 3rd
            opts = sw.ResourceOptions(replace_on_changes=["data"])
        k8s.core.v1.ConfigMap(
            f"named-{j}-{i}", metadata={"name": name, "namespace": ns_ref}, data=data, opts=opts
        )
    for i in range(10):  # auto-named, reading the ConfigMaps' names
        string_data = {"user": f"u{i}", "config": cms[i].metadata["name"]}
        if i % 4 == 1:
            string_data["rotation"] = str(gen)
        k8s.core.v1.Secret(
            f"secret-{j}-{i}", metadata={"namespace": ns_ref}, string_data=string_data
        )
    sas = []
    for i in range(8):  # named
        labels = {"tier": "even" if (i + gen) % 2 == 0 else "odd"} if i < 3 else {"tier": "fixed"}
        sas.append(
            k8s.core.v1.ServiceAccount(
                f"sa-{j}-{i}", metadata={"name": f"sa-{i}", "namespace": ns_ref, "labels": labels}
            )
        )
    if gen % 2 == 0:  # only in even generations: created and deleted in turn
        for i in range(4):
            k8s.core.v1.ConfigMap(
                f"extra-{j}-{i}", metadata={"namespace": ns_ref}, data={"n": str(i)}
            )
    for i in range(3):  # waited for; rolled when a replaced ConfigMap gets its new name
        app = f"app-{i}"
        env_cm = cms[4 + i * 5] if i < 2 else cms[0]
        annotations = {"crash/gen": str(gen)} if i == 0 else {}
        k8s.apps.v1.Deployment(
            f"deploy-{j}-{i}",
            metadata={"namespace": ns_ref},
            spec={
                "replicas": 1 + i % 2,
                "selector": {"matchLabels": {"app": app}},
                "template": {
                    "metadata": {"labels": {"app": app}, "annotations": annotations},
                    "spec": {
                        "serviceAccountName": sas[i].metadata["name"],
                        "containers": [
                            {
                                "name": "main",
                                "image": "nginx:1.29",
                                "envFrom": [{"configMapRef": {"name": env_cm.metadata["name"]}}],
                            }
                        ],
                    },
                },
            },
        )
    for i in range(2):
        k8s.core.v1.Service(
            f"svc-{j}-{i}",
            metadata={"namespace": ns_ref},
            spec={"selector": {"app": f"app-{i}"}, "ports": [{"port": 80}]},
        )
"""

TYPES = {
    "Namespace": "kubernetes:core/v1:Namespace",
    "ConfigMap": "kubernetes:core/v1:ConfigMap",
    "Secret": "kubernetes:core/v1:Secret",
    "ServiceAccount": "kubernetes:core/v1:ServiceAccount",
    "Service": "kubernetes:core/v1:Service",
    "Deployment": "kubernetes:apps/v1:Deployment",
}


def declared(gen: int) -> dict[str, Wanted]:
    """URN → what the program of generation `gen` declares (mirrors PROGRAM)."""
    out: dict[str, Wanted] = {}

    def add(kind: str, logical: str, namespace: str | None, name: str | None) -> None:
        out[f"urn:sw:{STACK}::{PROJECT}::{TYPES[kind]}::{logical}"] = Wanted(kind, namespace, name)

    for j, ns in enumerate(NAMESPACES):
        add("Namespace", f"ns-{j}", None, ns)
        for i in range(14):
            add("ConfigMap", f"cfg-{j}-{i}", ns, None)
        for i in range(8):
            add(
                "ConfigMap",
                f"named-{j}-{i}",
                ns,
                f"named-{i}" if i >= 2 else f"named-{i}-v{gen % 3}",
            )
        for i in range(10):
            add("Secret", f"secret-{j}-{i}", ns, None)
        for i in range(8):
            add("ServiceAccount", f"sa-{j}-{i}", ns, f"sa-{i}")
        if gen % 2 == 0:
            for i in range(4):
                add("ConfigMap", f"extra-{j}-{i}", ns, None)
        for i in range(3):
            add("Deployment", f"deploy-{j}-{i}", ns, None)
        for i in range(2):
            add("Service", f"svc-{j}-{i}", ns, None)
    return out


# --- the test ---------------------------------------------------------------------------------


def test_kill_9_at_random_instants_then_up_converges(cluster: LiveCluster, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    print(f"\ncrash test seed: {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(tmp_path / "crash", cluster, name=PROJECT, stack=STACK, program=PROGRAM)
    project.sw("stack", "init", STACK)
    began = time.monotonic()

    # Measure an `up` of the 100 resources from nothing (when its first event comes and
    # when it ends), then start over from nothing so the first kill lands in the creates.
    measured = project.up(0)
    assert measured.returncode == 0, f"the measuring up failed:\n{measured.stderr[-3000:]}"
    created = Counter(e["op"] for e in measured.events if e["event"] == "step-done")
    assert created == {"create": 100}, created
    first_event = measured.elapsed - (measured.events[-1].get("elapsed") or 0.0)
    full = measured.elapsed
    print(f"a full up takes {full:.2f}s, {first_event:.2f}s of it before the engine's first step")
    project.sw("destroy", "--yes")
    assert live_objects(cluster) == []

    # Kill instants are spread from a little before the engine's first step to the end of
    # an `up`, both measured again on every `up` that completes (they vary with the load).
    startups, totals = [first_event], [full]
    gen = 0
    kills: list[tuple[int, Run]] = []

    def delay() -> float:
        startup, total = statistics.median(startups[-5:]), statistics.median(totals[-5:])
        return rng.uniform(0.8 * startup, max(total, startup + 0.1))

    def up_and_kill(gen: int) -> tuple[Run, str]:
        """An `up` killed at a random instant: most on a timer, some aimed at its creates
        (and create-before-delete replacements) or at its deletes."""
        wait, aim = delay(), rng.random()
        if not kills:  # the first `up` creates all 100 from nothing: kill it in the middle
            ops, extra = ("create",), rng.uniform(0.0, 0.5 * (totals[0] - startups[0]))
        elif aim < 0.2:
            ops, extra = ("delete", "delete-replaced"), rng.uniform(0.0, 0.003)
        elif aim < 0.35:
            ops, extra = ("create", "replace"), rng.uniform(0.0, 0.03)
        else:
            return project.up(gen, kill_after=wait), f"after {wait:.2f}s"
        how = f"{extra * 1000:.1f}ms after its first {ops[0]} began"
        markers = tuple(started(op) for op in ops)
        return project.up(gen, kill_after=wait + 1.0, kill_on=(markers, extra)), how

    def measure(run: Run) -> None:
        summary = run.events[-1]
        startups.append(run.elapsed - summary["elapsed"])
        totals.append(run.elapsed)

    settled: Counter[str] = Counter()
    missed = converged = 0
    while len(kills) < KILLS:
        run, how = up_and_kill(gen)
        if not run.killed:  # it finished first: that is a converged up as well
            missed += 1
            assert run.returncode == 0, f"gen {gen}: up failed:\n{run.stderr[-3000:]}"
            measure(run)
        else:
            kills.append((gen, run))
            print(f"kill {len(kills):2}: gen {gen:2} {how}: {run.phase()}")
            # No `cancel` and no waiting out the lease: the next up sees the holder's
            # process is gone and takes the lock over at once.
            # Consecutive crashes: sometimes the recovery is killed too (maybe with yet another
            # program), before one is let finish.
            while len(kills) < KILLS and rng.random() < 0.3:
                if rng.random() < 0.5:
                    gen += 1
                again, how = up_and_kill(gen)
                settled.update(again.settled())
                if not again.killed:
                    assert again.returncode == 0, f"gen {gen}: up failed:\n{again.stderr[-3000:]}"
                    measure(again)
                    break
                kills.append((gen, again))
                print(f"kill {len(kills):2}: gen {gen:2} {how} (a recovery run): {again.phase()}")
            if rng.random() < 0.5:
                gen += 1  # the recovery runs another program than the one killed
            recovery = project.up(gen)
            settled.update(recovery.settled())
            assert recovery.returncode == 0, (
                f"gen {gen}: the up after kill {len(kills)} failed (seed {SEED}):\n"
                f"{recovery.failure()}"
            )
            measure(recovery)
        check_converged(project, declared(gen), f"seed {SEED}, after kill {len(kills)} (gen {gen})")
        converged += 1
        gen += 1

    phases = Counter(run.phase().split(" (")[0] for _, run in kills)
    print(
        f"{KILLS} kills ({missed} runs finished before their kill), {converged} convergence checks"
    )
    print("kills landed: " + ", ".join(f"{n} {p}" for p, n in phases.most_common()))
    in_flight = Counter(op for _, run in kills for op in set(run.in_flight()))
    print(
        "kills with a step in flight, by op: "
        + ", ".join(f"{n} {op}" for op, n in in_flight.most_common())
    )
    print("interrupted steps settled: " + ", ".join(f"{n} {op}" for op, n in settled.most_common()))
    print(f"total {time.monotonic() - began:.1f}s")
