"""Crash safety of deletes that ride on another's and of replacements into a provider's
new namespace: kill -9 the engine at seeded random instants (and at the journal's
interesting points: just after a carrier's delete begins) of

1. `destroy` of a stack whose objects ride on their Namespace (`deleted_with`), plus a few
   that do not; the next `destroy` leaves nothing of the stack and an empty state, or the
   next `up` (the program unchanged) converges;
2. `up` of a program that drops a Namespace and its riders; the next `up` converges;
3. `up` after the provider's `namespace` changed (every object replaced into the new one);
   the next `up` converges with each object once in the new namespace, none in the old.

Converged: nothing pending, no orphan (an object of the stack absent from the state), no
duplicate, nothing recorded that is absent, every declared object where the program says,
and a preview that changes nothing. Set STACKWRIGHT_CRASH_SEED to replay (it is printed).
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from crash_run import (
    LiveCluster,
    Project,
    Run,
    Wanted,
    check_agrees,
    check_converged,
    live_objects,
    started,
)

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("STACKWRIGHT_CRASH_SEED", "20261125"))
KILLS = 10
NAMESPACE = "kubernetes:core/v1:Namespace"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"

#: Three Namespaces, each with ten objects riding on it (one reading another's name) and
#: one that does not ride; one more object outside them. Odd generations drop the last
#: Namespace and everything in it.
RIDING = """
import stackwright as sw
import stackwright.kubernetes as k8s

gen = sw.Config().get_int("gen") or 0

for j in range(3 if gen % 2 == 0 else 2):
    ns = k8s.core.v1.Namespace(f"ns-{j}", metadata={"name": f"PREFIX-{j}"})
    ns_ref = ns.metadata["name"]
    rides = sw.ResourceOptions(deleted_with=ns)
    cms = []
    for i in range(6):
        meta = {"namespace": ns_ref, **({"name": f"cm-{i}"} if i % 2 else {})}
        cms.append(k8s.core.v1.ConfigMap(f"cm-{j}-{i}", metadata=meta, data={"i": str(i)}, opts=rides))
    for i in range(4):
        k8s.core.v1.Secret(
            f"secret-{j}-{i}",
            metadata={"namespace": ns_ref},
            string_data={"config": cms[i].metadata["name"]},
            opts=rides,
        )
    k8s.core.v1.ConfigMap(f"own-{j}", metadata={"namespace": ns_ref}, data={"j": str(j)})
k8s.core.v1.ConfigMap("outside", metadata={"namespace": "default"}, data={"k": "v"})
"""

#: Objects naming no namespace, in their provider's, which moves between two Namespaces
#: with the generation.
MOVING = """
import stackwright as sw
import stackwright.kubernetes as k8s

gen = sw.Config().get_int("gen") or 0

spaces = [k8s.core.v1.Namespace(f"ns-{j}", metadata={"name": f"move-{j}"}) for j in range(2)]
p = k8s.Provider("p", kubeconfig=sw.Config("kubernetes").require("kubeconfig"),
                 namespace=spaces[gen % 2].metadata["name"])
opts = sw.ResourceOptions(provider=p, depends_on=spaces)
cms = []
for i in range(12):
    meta = {"name": f"cm-{i}"} if i % 3 == 0 else {}
    cms.append(k8s.core.v1.ConfigMap(f"cm-{i}", metadata=meta, data={"i": str(i)}, opts=opts))
for i in range(8):
    k8s.core.v1.Secret(
        f"secret-{i}", string_data={"config": cms[i].metadata["name"]}, opts=opts
    )
"""


def riding_declared(project: Project, gen: int) -> dict[str, Wanted]:
    """URN → where RIDING's generation `gen` puts its object."""
    out = {project.urn(CONFIGMAP, "outside"): Wanted("ConfigMap", "default", None)}
    for j in range(3 if gen % 2 == 0 else 2):
        ns = f"{project.name}-{j}"
        out[project.urn(NAMESPACE, f"ns-{j}")] = Wanted("Namespace", None, ns)
        for i in range(6):
            named = f"cm-{i}" if i % 2 else None
            out[project.urn(CONFIGMAP, f"cm-{j}-{i}")] = Wanted("ConfigMap", ns, named)
        for i in range(4):
            out[project.urn(SECRET, f"secret-{j}-{i}")] = Wanted("Secret", ns, None)
        out[project.urn(CONFIGMAP, f"own-{j}")] = Wanted("ConfigMap", ns, None)
    return out


def moving_declared(project: Project, gen: int) -> dict[str, Wanted]:
    """URN → where MOVING's generation `gen` puts its object."""
    ns = f"move-{gen % 2}"
    out: dict[str, Wanted] = {
        project.urn(NAMESPACE, f"ns-{j}"): Wanted("Namespace", None, f"move-{j}") for j in range(2)
    }
    for i in range(12):
        named = f"cm-{i}" if i % 3 == 0 else None
        out[project.urn(CONFIGMAP, f"cm-{i}")] = Wanted("ConfigMap", ns, named)
    for i in range(8):
        out[project.urn(SECRET, f"secret-{i}")] = Wanted("Secret", ns, None)
    return out


def check_destroyed(project: Project, where: str) -> None:
    """Nothing of the stack in the cluster, nothing in its state."""
    left = live_objects(project.cluster, f"urn:sw:{project.stack}::{project.name}::")
    assert left == [], f"{where}: objects of the stack left after destroy: {left}"
    recorded, _ = check_agrees(project, where)
    assert recorded == {}, f"{where}: the state still records {sorted(recorded)}"


class Killer:
    """Seeded kill instants for one kind of run: the first few (`aimed`) just after one of
    `markers` (a carrier's delete beginning: its object deleted, its riders' records not
    yet; deletes take milliseconds), most of the rest at a random instant of the engine's steps (from
    the first step-started event to the summary, as last measured), a few on a timer from
    the process's start (startup, settling, planning)."""

    def __init__(
        self, rng: random.Random, markers: tuple[str, ...], aimed: int, label: str
    ) -> None:
        self.rng = rng
        self.markers = markers
        self.label = label
        self.aimed = aimed
        self.kills: list[tuple[str, Run]] = []
        self.missed = 0
        self.startup, self.total, self.steps = 0.3, 1.0, 0.1
        self.steps_settled: Counter[str] = Counter()
        self.riders_forgotten = 0

    def measure(self, run: Run) -> None:
        """Learn from a finished run when the engine started, how long it took and when the
        run ended."""
        self.total = run.elapsed
        self.startup = run.elapsed - (run.events[-1].get("elapsed") or 0.0)
        self.steps = max(0.005, run.events[-1].get("elapsed") or 0.0)  # an upper bound

    def run(self, launch: Callable[..., Run]) -> Run:
        draw = self.rng.random()
        if len(self.kills) + self.missed < self.aimed:
            extra = self.rng.uniform(0.0, 0.012)
            how = f"{extra * 1000:.1f}ms after {self.label}"
            run = launch(kill_after=self.total + 5.0, kill_on=(self.markers, extra))
        elif draw < 0.8:
            extra = self.rng.uniform(0.0, self.steps)
            how = f"{extra * 1000:.1f}ms after the first step began"
            markers = ('"event":"step-started"',)
            run = launch(kill_after=self.total + 5.0, kill_on=(markers, extra))
        else:
            wait = self.rng.uniform(0.9 * self.startup, self.total)
            how = f"after {wait:.2f}s"
            run = launch(kill_after=wait)
        if run.killed:
            self.kills.append((how, run))
            print(f"kill {len(self.kills):2} {how}: {run.phase()}")
        else:
            self.missed += 1
            assert run.returncode == 0, f"a run let finish failed:\n{run.failure()}"
            self.measure(run)
        return run

    def recover(self, launch: Callable[..., Run], where: str) -> Run:
        """The run after a kill, let finish; sometimes killed too first, early (in settling
        what the kill left, or in its first steps), as a user's next try may be."""
        while len(self.kills) < KILLS and self.rng.random() < 0.3:
            extra = self.rng.uniform(0.0, 0.01)
            markers = ('"event":"diagnostic"', '"event":"step-started"')
            run = launch(kill_after=self.total + 5.0, kill_on=(markers, extra))
            if not run.killed:
                assert run.returncode == 0, f"{where}: {run.failure()}"
                self.settled(run)
                return run
            self.kills.append(("a recovery", run))
            print(f"kill {len(self.kills):2} {extra * 1000:.1f}ms into a recovery: {run.phase()}")
        run = launch()
        assert run.returncode == 0, f"{where}: {run.failure()}"
        self.settled(run)
        return run

    def settled(self, recovery: Run) -> None:
        """Count what a recovery run settled: interrupted steps, and riders whose carrier's
        interrupted delete had taken their objects."""
        self.steps_settled.update(recovery.settled())
        self.riders_forgotten += sum(
            1
            for e in recovery.events
            if e["event"] == "diagnostic" and "whose delete was interrupted" in e["message"]
        )

    def report(self, began: float) -> None:
        phases = Counter(run.phase() for _, run in self.kills)
        print(
            f"{len(self.kills)} kills ({self.missed} runs finished first) in "
            f"{time.monotonic() - began:.1f}s; landed: "
            + ", ".join(f"{n} {p}" for p, n in phases.most_common())
        )
        print(
            "settled: "
            + ", ".join(f"{n} {op}" for op, n in self.steps_settled.most_common())
            + f"; {self.riders_forgotten} riders' records removed after their carrier's delete"
        )


def _carrier_markers(project: Project, count: int) -> tuple[str, ...]:
    return tuple(started("delete", project.urn(NAMESPACE, f"ns-{j}")) for j in range(count))


@pytest.mark.parametrize("then", ["destroy", "up"])
def test_kill_9_during_a_destroy_of_riders(cluster: LiveCluster, tmp_path: Path, then: str) -> None:
    rng = random.Random(f"{SEED}-destroy-{then}")
    print(f"\nseed {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(
        tmp_path / "p",
        cluster,
        name=f"ride{then}",
        stack="dev",
        program=RIDING.replace("PREFIX", f"ride{then}"),
    )
    project.sw("stack", "init", "dev")
    killer = Killer(rng, _carrier_markers(project, 3), 4, "a Namespace's delete began")
    began = time.monotonic()
    for run in (project.up(0), project.destroy(), project.up(0)):  # measured
        assert run.returncode == 0, run.failure()
        if run.events[-1].get("counts", {}).get("delete"):
            killer.measure(run)
    while len(killer.kills) < KILLS:
        where = f"seed {SEED}, kill {len(killer.kills) + 1} ({then} after it)"
        run = killer.run(project.destroy)
        if not run.killed:
            check_destroyed(project, where)
        elif then == "destroy":
            killer.recover(project.destroy, where)
            check_destroyed(project, where)
        else:
            killer.recover(lambda **kill: project.up(0, **kill), where)
            check_converged(project, riding_declared(project, 0), where)
            continue
        again = project.up(0)  # the stack back, for the next kill
        assert again.returncode == 0, f"{where}: {again.failure()}"
    killer.report(began)
    assert project.destroy().returncode == 0


def test_kill_9_during_an_up_that_drops_riders(cluster: LiveCluster, tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}-drop")
    print(f"\nseed {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(
        tmp_path / "p",
        cluster,
        name="ridedrop",
        stack="dev",
        program=RIDING.replace("PREFIX", "ridedrop"),
    )
    project.sw("stack", "init", "dev")
    killer = Killer(rng, _carrier_markers(project, 3), 4, "a Namespace's delete began")
    began = time.monotonic()
    for gen in (0, 1, 0):  # measured
        run = project.up(gen)
        assert run.returncode == 0, run.failure()
        if gen:
            killer.measure(run)
    while len(killer.kills) < KILLS:
        where = f"seed {SEED}, kill {len(killer.kills) + 1}"
        if killer.run(lambda **kill: project.up(1, **kill)).killed:
            killer.recover(lambda **kill: project.up(1, **kill), where)
        check_converged(project, riding_declared(project, 1), where)
        again = project.up(0)  # the Namespace and its riders back, for the next kill
        assert again.returncode == 0, f"{where}: {again.failure()}"
    killer.report(began)
    assert project.destroy().returncode == 0


def test_kill_9_during_a_move_to_the_providers_new_namespace(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    rng = random.Random(f"{SEED}-move")
    print(f"\nseed {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(tmp_path / "p", cluster, name="move", stack="dev", program=MOVING)
    project.sw("stack", "init", "dev")
    markers = (started("delete-replaced"),)
    killer = Killer(rng, markers, 3, "the first old object's delete began")
    began = time.monotonic()
    for gen in (0, 1):  # measured
        run = project.up(gen)
        assert run.returncode == 0, run.failure()
        killer.measure(run)
    while len(killer.kills) < KILLS:
        gen += 1
        where = f"seed {SEED}, kill {len(killer.kills) + 1} (gen {gen})"
        if killer.run(lambda **kill: project.up(gen, **kill)).killed:  # noqa: B023
            killer.recover(lambda **kill: project.up(gen, **kill), where)  # noqa: B023
        check_converged(project, moving_declared(project, gen), where, providers=1)
    killer.report(began)
    assert project.destroy().returncode == 0
