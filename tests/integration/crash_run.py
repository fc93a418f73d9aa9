"""Kill -9 harness shared by the crash tests: run the CLI as its own process group, SIGKILL
it at a chosen instant, and check afterwards that the state and the cluster agree.

A project's config carries a generation counter (`<project>:gen`) that its program may
read to change between runs. Kills are aimed either on a timer or at a marker in the
`--json` event stream (`started(op, urn)`), so that they land in steps a timer seldom
hits (deletes take milliseconds).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli

LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)

MANAGED = "app.kubernetes.io/managed-by=stackwright"
URN_ANNOTATION = "stackwright.io/urn"
#: Where to list each kind the crash and model programs use (cluster-wide: stricter than per
#: namespace).
LIST_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ConfigMap": "/api/v1/configmaps",
    "Secret": "/api/v1/secrets",
    "ServiceAccount": "/api/v1/serviceaccounts",
    "Service": "/api/v1/services",
    "Deployment": "/apis/apps/v1/deployments",
    "Job": "/apis/batch/v1/jobs",
    "Role": "/apis/rbac.authorization.k8s.io/v1/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/rolebindings",
}
AUTO_NAME = re.compile(r"^(?P<logical>.+)-[0-9a-f]{8}$")


def cli() -> str:
    beside = Path(sys.executable).with_name("stackwright")
    found = str(beside) if beside.exists() else shutil.which("stackwright")
    if found is None:
        pytest.fail("the stackwright command is not installed next to this Python")
    return found


def started(op: str, urn: str = "") -> str:
    """The `--json` text of a step-started event of `op` (of `urn`, if given): a kill marker."""
    marker = f'"event":"step-started","op":"{op}"'
    return f'{marker},"urn":"{urn}"' if urn else marker


@dataclass
class Run:
    """One `stackwright up|destroy --json` run: how it ended and the events it printed."""

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

    def failure(self) -> str:
        """What a failed run said: its failed steps, its summary and its stderr's end."""
        failed = [
            e
            for e in self.events
            if e["event"] in ("step-done", "summary") and not e.get("ok", True)
        ]
        return f"{failed}\n{self.stderr[-3000:]}"


class Project:
    """A Python project of one stack on the test cluster, whose config has `<name>:gen`."""

    def __init__(
        self, folder: Path, cluster: LiveCluster, *, name: str, stack: str, program: str
    ) -> None:
        self.folder = folder
        self.cluster = cluster
        self.name = name
        self.stack = stack
        self.cli = cli()
        self.env = {**os.environ, "STACKWRIGHT_HOME": str(cluster.home)}
        self.env.pop("STACKWRIGHT_BACKEND_URL", None)
        self.runs = 0
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Stackwright.yaml").write_text(
            f"name: {name}\nruntime: python\nmain: __main__.py\n"
        )
        (folder / "__main__.py").write_text(program)
        self.set_gen(0)

    def urn(self, type_: str, logical: str) -> str:
        return f"urn:sw:{self.stack}::{self.name}::{type_}::{logical}"

    def set_gen(self, gen: int) -> None:
        (self.folder / f"Stackwright.{self.stack}.yaml").write_text(
            f"config:\n  kubernetes:kubeconfig: {self.cluster.kubeconfig}\n"
            f"  {self.name}:gen: {gen}\n"
        )

    def sw(
        self, *args: str, check: bool = True, process: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """`stackwright --cwd FOLDER ARGS` run to its end: in this process (`cli_in_process`;
        the runs killed, and the runs measured to aim kills, are `run`'s own processes), or
        with `process` as its own."""
        command = ["--cwd", str(self.folder), *args]
        if process:
            result = subprocess.run(
                [self.cli, *command], capture_output=True, text=True, env=self.env, timeout=120
            )
        else:
            result = run_cli(command, cwd=self.folder, env=self.env)
        if check and result.returncode != 0:
            raise AssertionError(
                f"stackwright {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def up(self, gen: int, **kill: Any) -> Run:
        """`up --yes` of the program of generation `gen`; `kill` as `run`'s."""
        return self.run("up", gen, **kill)

    def destroy(self, **kill: Any) -> Run:
        """`destroy --yes`; `kill` as `run`'s."""
        return self.run("destroy", -1, **kill)

    def run(
        self,
        command: str,
        gen: int,
        *,
        kill_after: float | None = None,
        kill_on: tuple[tuple[str, ...], float] | None = None,
    ) -> Run:
        """Run `command --yes --json` (its own process group; the config left as it is when
        `gen` < 0); SIGKILL the group after `kill_after` seconds, or, with `kill_on` =
        (markers, extra), `extra` seconds after one of `markers` (`started`) is printed."""
        if gen >= 0:
            self.set_gen(gen)
        self.runs += 1
        out_path = self.folder / f"{command}-{self.runs}.jsonl"
        err_path = self.folder / f"{command}-{self.runs}.err"
        with out_path.open("w") as out, err_path.open("w") as err, out_path.open() as watch:
            began = time.monotonic()
            process = subprocess.Popen(
                [self.cli, "--cwd", str(self.folder), command, "--yes", "--json"],
                stdout=out,
                stderr=err,
                env=self.env,
                start_new_session=True,
            )
            killed = False
            try:
                if kill_after is not None:
                    deadline, seen = began + kill_after, ""
                    while process.poll() is None:
                        if kill_on is not None:
                            seen += watch.read()
                            markers, extra = kill_on
                            if any(marker in seen for marker in markers):
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
            elapsed = time.monotonic() - began
        text = out_path.read_text()
        if killed:  # the kill may cut the last line short: a buffered write half made
            text = text[: text.rfind("\n") + 1]
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
        return Run(
            gen, killed, None if killed else returncode, elapsed, events, err_path.read_text()
        )


# --- checking convergence ----------------------------------------------------------------


def managed_metadata(
    cluster: LiveCluster, urn_prefix: str = "", more: dict[str, str] | None = None
) -> list[tuple[str, Any]]:
    """(kind, metadata) of every object labelled as managed by Stackwright (whose URN
    starts with `urn_prefix`: one stack's), ApplySet parents left out; `more` lists other
    kinds (a CRD's, by kind) where to find them."""
    found = []
    with cluster.http() as http:
        for kind, path in {**LIST_PATHS, **(more or {})}.items():
            response = http.get(path, params={"labelSelector": MANAGED})
            assert response.status_code == 200, f"listing {path}: {response.text}"
            for item in response.json()["items"]:
                meta = item["metadata"]
                if kind == "ConfigMap" and meta["name"].startswith("stackwright-applyset-"):
                    continue  # the ApplySet parent: not a resource
                if urn_of(meta).startswith(urn_prefix):
                    found.append((kind, meta))
    return found


def urn_of(meta: Any) -> str:
    return str((meta.get("annotations") or {}).get(URN_ANNOTATION, ""))


def live_objects(
    cluster: LiveCluster, urn_prefix: str = "", more: dict[str, str] | None = None
) -> list[tuple[str, str | None, str, str, int]]:
    """(kind, namespace, name, urn annotation, generation) of every object labelled as
    managed by Stackwright (whose URN starts with `urn_prefix`: one stack's)."""
    return [
        (
            kind,
            meta.get("namespace"),
            meta["name"],
            urn_of(meta),
            meta.get("generation", 0),
        )
        for kind, meta in managed_metadata(cluster, urn_prefix, more)
    ]


def check_agrees(
    project: Project, where: str, more: dict[str, str] | None = None
) -> tuple[dict[str, dict[str, Any]], set[Any]]:
    """The state and the cluster agree after a completed run: nothing pending, no orphan
    (a managed object of the stack with no state record), no duplicate (two objects of one
    URN), nothing recorded that is absent, no recorded output older than its object.
    Returns the Kubernetes records by URN (Patches' too) and the live (kind, namespace, name)
    keys; `more` as `managed_metadata`'s. A Patch's object is not the stack's (no marks):
    the caller checks it."""
    exported = project.sw("stack", "export").stdout
    (project.folder / "checked-state.json").write_text(exported)  # for a post-mortem
    state = json.loads(exported)
    assert state["pending"] == [], f"{where}: steps still pending after a completed run"
    rows = [r for r in state["resources"] if r["custom"] and r["type"].startswith("kubernetes:")]
    assert not [r["urn"] for r in rows if r["deletePending"]], (
        f"{where}: replaced objects still await deletion"
    )
    by_urn = Counter(r["urn"] for r in rows)
    assert [u for u, n in by_urn.items() if n > 1] == [], f"{where}: a URN recorded twice"
    recorded = {r["urn"]: r for r in rows}
    by_object: dict[tuple[str, str | None, str], str] = {}
    for row in rows:
        if row["type"].endswith("Patch"):
            continue
        namespace, _, name = row["id"].rpartition("/")
        by_object[(row["inputs"]["kind"], namespace or None, name)] = row["urn"]

    live = live_objects(project.cluster, f"urn:sw:{project.stack}::{project.name}::", more)
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
        seen = (recorded[urn]["outputs"].get("metadata") or {}).get("generation", 0)
        if key in generations and seen != generations[key]:
            stale.append((urn.rsplit("::", 1)[1], seen, generations[key]))
    assert stale == [], f"{where}: recorded outputs older than the live objects: {stale}"
    missing_live = [key for key in by_object if key not in live_keys]
    assert missing_live == [], (
        f"{where}: recorded in state, absent from the cluster: {missing_live}"
    )
    return recorded, live_keys


@dataclass(frozen=True)
class Wanted:
    """Where a program puts a resource's object."""

    kind: str
    namespace: str | None
    name: str | None  # None: auto-named


def check_converged(
    project: Project, wanted: dict[str, Wanted], where: str, providers: int = 0
) -> None:
    """The state and the cluster agree (`check_agrees`), the state records what the program
    declares (`wanted`, by URN) where it puts it, and a preview changes nothing (the
    program's `providers` are unchanged too)."""
    recorded, live_keys = check_agrees(project, where)
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
    check_no_changes(project, where, len(wanted) + providers)


def check_no_changes(project: Project, where: str, count: int) -> None:
    """A preview after convergence plans nothing: `count` resources, all the same."""
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
    assert summary["counts"] == {"same": count}, (
        f"{where}: a preview after convergence still plans changes: {summary['counts']}"
    )
