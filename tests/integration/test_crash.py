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

import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)

SEED = int(os.environ.get("STACKWRIGHT_CRASH_SEED", "20261123"))
KILLS = 30
PROJECT, STACK = "crash", "dev"
NAMESPACES = ("crash-a", "crash-b")
MANAGED = "app.kubernetes.io/managed-by=stackwright"
URN_ANNOTATION = "stackwright.io/urn"

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
#: Where to list each kind the program uses (cluster-wide: stricter than per namespace).
LIST_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ConfigMap": "/api/v1/configmaps",
    "Secret": "/api/v1/secrets",
    "ServiceAccount": "/api/v1/serviceaccounts",
    "Service": "/api/v1/services",
    "Deployment": "/apis/apps/v1/deployments",
}
AUTO_NAME = re.compile(r"^(?P<logical>.+)-[0-9a-f]{8}$")


@dataclass(frozen=True)
class Wanted:
    kind: str
    namespace: str | None
    name: str | None  # None: auto-named


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


# --- running the CLI -------------------------------------------------------------------


def _cli() -> str:
    beside = Path(sys.executable).with_name("stackwright")
    found = str(beside) if beside.exists() else shutil.which("stackwright")
    if found is None:
        pytest.fail("the stackwright command is not installed next to this Python")
    return found


@dataclass
class Run:
    """One `stackwright up --json` run: how it ended and the events it printed."""

    gen: int
    killed: bool
    returncode: int | None
    elapsed: float
    events: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""

    def in_flight(self) -> list[str]:
        """The mutating steps started and not done when the run ended, as `op`."""
        open_steps: dict[tuple[str, str], str] = {}
        for event in self.events:
            key = (event.get("urn", ""), event.get("op", ""))
            if event["event"] == "step-started" and event["op"] != "same":
                open_steps[key] = event["op"]
            elif event["event"] in ("step-done", "step-skipped"):
                open_steps.pop(key, None)
        return sorted(open_steps.values())

    def phase(self) -> str:
        """Where a kill landed: in which steps, or before / between them."""
        if not self.events:
            return "startup (program / plan, nothing applied)"
        if any(e["event"] == "summary" for e in self.events):
            return "after the summary"
        flying = self.in_flight()
        if flying:
            return "in " + "+".join(sorted(set(flying)))
        if not any(e["event"] == "step-done" for e in self.events):
            return "settling / planning (no step done yet)"
        return "between steps"

    def settled(self) -> list[str]:
        """The interrupted steps this run settled, as `op` (from its diagnostics)."""
        found = []
        for event in self.events:
            if event["event"] == "diagnostic":
                match = re.match(r"settled an interrupted (\S+) of", event.get("message", ""))
                if match:
                    found.append(match.group(1))
        return found


class Project:
    def __init__(self, folder: Path, cluster: LiveCluster) -> None:
        self.folder = folder
        self.cluster = cluster
        self.cli = _cli()
        self.env = {**os.environ, "STACKWRIGHT_HOME": str(cluster.home)}
        self.env.pop("STACKWRIGHT_BACKEND_URL", None)
        self.runs = 0
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Stackwright.yaml").write_text(
            f"name: {PROJECT}\nruntime: python\nmain: __main__.py\n"
        )
        (folder / "__main__.py").write_text(PROGRAM)
        self.set_gen(0)

    def set_gen(self, gen: int) -> None:
        (self.folder / f"Stackwright.{STACK}.yaml").write_text(
            f"config:\n  kubernetes:kubeconfig: {self.cluster.kubeconfig}\n  {PROJECT}:gen: {gen}\n"
        )

    def sw(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.cli, "--cwd", str(self.folder), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"stackwright {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def up(
        self,
        gen: int,
        *,
        kill_after: float | None = None,
        kill_on: tuple[tuple[str, ...], float] | None = None,
    ) -> Run:
        """Run `up` (its own process group); SIGKILL the group after `kill_after` seconds, or,
        with `kill_on` = (ops, extra), `extra` seconds after the first step of one of `ops`
        starts: deletes come last and take milliseconds, creates are few after the first
        `up`, so a timer alone seldom lands in them."""
        self.set_gen(gen)
        self.runs += 1
        out_path = self.folder / f"up-{self.runs}.jsonl"
        err_path = self.folder / f"up-{self.runs}.err"
        with out_path.open("w") as out, err_path.open("w") as err, out_path.open() as watch:
            started = time.monotonic()
            process = subprocess.Popen(
                [self.cli, "--cwd", str(self.folder), "up", "--yes", "--json"],
                stdout=out,
                stderr=err,
                env=self.env,
                start_new_session=True,
            )
            killed = False
            try:
                if kill_after is not None:
                    deadline, seen = started + kill_after, ""
                    while process.poll() is None:
                        if kill_on is not None:
                            seen += watch.read()
                            ops, extra = kill_on
                            if any(f'"event":"step-started","op":"{op}"' in seen for op in ops):
                                deadline = min(deadline, time.monotonic() + extra)
                                kill_on = None
                        if time.monotonic() >= deadline:
                            os.killpg(process.pid, signal.SIGKILL)
                            killed = True
                            break
                        time.sleep(0.0005)
                returncode = process.wait(timeout=120)
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            elapsed = time.monotonic() - started
        events = [json.loads(line) for line in out_path.read_text().splitlines() if line.strip()]
        return Run(
            gen, killed, None if killed else returncode, elapsed, events, err_path.read_text()
        )


# --- checking convergence ----------------------------------------------------------------


def live_objects(cluster: LiveCluster) -> list[tuple[str, str | None, str, str, int]]:
    """(kind, namespace, name, urn annotation, generation) of every object labelled as
    managed by Stackwright."""
    found = []
    with cluster.http() as http:
        for kind, path in LIST_PATHS.items():
            response = http.get(path, params={"labelSelector": MANAGED})
            assert response.status_code == 200, f"listing {path}: {response.text}"
            for item in response.json()["items"]:
                meta = item["metadata"]
                if kind == "ConfigMap" and meta["name"].startswith("stackwright-applyset-"):
                    continue  # the ApplySet parent: not a resource
                urn = (meta.get("annotations") or {}).get(URN_ANNOTATION, "")
                found.append(
                    (kind, meta.get("namespace"), meta["name"], urn, meta.get("generation", 0))
                )
    return found


def check_converged(project: Project, gen: int, where: str) -> None:
    exported = project.sw("stack", "export").stdout
    (project.folder / "checked-state.json").write_text(exported)  # for a post-mortem
    state = json.loads(exported)
    assert state["pending"] == [], f"{where}: steps still pending after a completed up"
    rows = [r for r in state["resources"] if r["custom"] and r["type"].startswith("kubernetes:")]
    assert not [r["urn"] for r in rows if r["deletePending"]], (
        f"{where}: replaced objects still await deletion"
    )
    by_object: dict[tuple[str, str | None, str], str] = {}
    by_urn = Counter(r["urn"] for r in rows)
    recorded_rows = {r["urn"]: r for r in rows}
    assert [u for u, n in by_urn.items() if n > 1] == [], f"{where}: a URN recorded twice"
    for row in rows:
        namespace, _, name = row["id"].rpartition("/")
        by_object[(row["inputs"]["kind"], namespace or None, name)] = row["urn"]

    live = live_objects(project.cluster)
    orphans = [obj for obj in live if by_object.get(obj[:3]) != obj[3]]
    assert orphans == [], f"{where}: orphans (managed objects the state does not record): {orphans}"
    per_urn = Counter(obj[3] for obj in live)
    duplicates = {urn: n for urn, n in per_urn.items() if n > 1}
    assert duplicates == {}, f"{where}: duplicates (several objects of one URN): {duplicates}"
    live_keys = {obj[:3] for obj in live}
    generations = {obj[:3]: obj[4] for obj in live}
    # What the state recorded after each step is the object as that step left it, not an
    # older copy (a spec changed since would be a generation the state never saw).
    stale = []
    for key, urn in by_object.items():
        seen = (recorded_rows[urn]["outputs"].get("metadata") or {}).get("generation", 0)
        if key in generations and seen != generations[key]:
            stale.append((urn.rsplit("::", 1)[1], seen, generations[key]))
    assert stale == [], f"{where}: recorded outputs older than the live objects: {stale}"
    missing_live = [key for key in by_object if key not in live_keys]
    assert missing_live == [], (
        f"{where}: recorded in state, absent from the cluster: {missing_live}"
    )

    wanted = declared(gen)
    recorded = {row["urn"]: row for row in rows}
    assert set(recorded) == set(wanted), (
        f"{where}: state and program differ: missing {sorted(set(wanted) - set(recorded))}, "
        f"extra {sorted(set(recorded) - set(wanted))}"
    )
    for urn, want in wanted.items():
        row = recorded[urn]
        namespace, _, name = row["id"].rpartition("/")
        assert row["inputs"]["kind"] == want.kind and (namespace or None) == want.namespace, (
            f"{where}: {urn} is recorded as {row['inputs']['kind']} {row['id']}"
        )
        if want.name is not None:
            assert name == want.name, (
                f"{where}: {urn} is named {name}, the program says {want.name}"
            )
        else:
            match = AUTO_NAME.match(name)
            assert match and match["logical"] == urn.rsplit("::", 1)[1], (
                f"{where}: {urn} has the auto-name {name}"
            )
        assert (want.kind, want.namespace, name) in live_keys, f"{where}: {urn} not in the cluster"

    preview = project.sw("preview", "--json")
    (project.folder / "checked-preview.jsonl").write_text(preview.stdout)
    events = [json.loads(line) for line in preview.stdout.splitlines() if line.strip()]
    summary = events[-1]
    changed = [
        (e["op"], e["urn"].rsplit("::", 1)[1], e.get("changes"))
        for e in events
        if e["event"] == "step-started" and e["op"] != "same"
    ]
    assert changed == [], f"{where}: a preview after convergence still plans changes: {changed}"
    assert summary["event"] == "summary" and summary["ok"], f"{where}: preview: {summary}"
    assert summary["counts"] == {"same": len(wanted)}, (
        f"{where}: a preview after convergence still plans changes: {summary['counts']}"
    )


# --- the test ---------------------------------------------------------------------------------


def test_kill_9_at_random_instants_then_up_converges(cluster: LiveCluster, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    print(f"\ncrash test seed: {SEED} (replay with STACKWRIGHT_CRASH_SEED={SEED})")
    project = Project(tmp_path / "crash", cluster)
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
        return project.up(gen, kill_after=wait + 1.0, kill_on=(ops, extra)), how

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
                f"{[e for e in recovery.events if e['event'] in ('step-done', 'summary') and not e.get('ok', True)]}\n"
                f"{recovery.stderr[-3000:]}"
            )
            measure(recovery)
        check_converged(project, gen, f"seed {SEED}, after kill {len(kills)} (gen {gen})")
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
