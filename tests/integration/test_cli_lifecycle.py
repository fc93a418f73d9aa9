"""The main job end to end: the real `stackwright` command against a real local cluster.

Each test writes a project into its own folder and namespace, then walks Pulumi's
lifecycle scenario through the CLI — program v1 → up → program v2 → preview → up —
and checks three things each time: the steps (`--json` event lines), the state
(`stack export`) and the cluster itself (kubectl). One cluster serves the module.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_in_process import run_cli

from stackwright.localcluster import lifecycle
from stackwright.state import LockLost, open_backend

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)

CLI = [sys.executable, "-m", "stackwright.cli.main"]
STACK = "dev"

#: What every program starts with: the imports, its namespace, and a Deployment spec maker.
PRELUDE = """\
import stackwright as sw
import stackwright.kubernetes as k8s

NS = {namespace!r}


def app_spec(app, image="nginx:1.29", replicas=1):
    return {{
        "replicas": replicas,
        "selector": {{"matchLabels": {{"app": app}}}},
        "template": {{
            "metadata": {{"labels": {{"app": app}}}},
            "spec": {{"containers": [{{"name": "main", "image": image}}]}},
        }},
    }}

"""
PRELUDE_LINES = PRELUDE.count("\n")


@dataclass
class Result:
    """One CLI run: exit code, stdout, stderr, and its `--json` events."""

    args: tuple[str, ...]
    rc: int
    out: str
    err: str

    @property
    def events(self) -> list[dict[str, Any]]:
        # --json promises one JSON object per line and nothing else on stdout.
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]

    @property
    def summary(self) -> dict[str, Any]:
        (summary,) = self.of("summary")
        return summary

    def ops(self, kind: str = "step-done") -> dict[str, str]:
        """Resource name → op of its `kind` events (the last one wins)."""
        return {e["name"]: e["op"] for e in self.of(kind)}

    def changed(self) -> dict[str, str]:
        """Name → op of every planned step that is not `same`."""
        return {n: op for n, op in self.ops("step-started").items() if op != "same"}

    def check_steps(self) -> None:
        """Every step that ends was started, with the same op: displays pair them up."""
        started: set[tuple[str, str]] = set()
        for e in self.events:
            if e["event"] == "step-started":
                started.add((e["urn"], e["op"]))
            elif e["event"] == "step-done":
                assert (e["urn"], e["op"]) in started, f"{e} ends a step never started"

    def index(self, kind: str, name: str, op: str | None = None) -> int:
        """Position of the first `kind` event of resource `name` (and `op`) in the stream."""
        for i, e in enumerate(self.events):
            if e["event"] == kind and e.get("name") == name and op in (None, e.get("op")):
                return i
        raise AssertionError(f"no {kind} event for {name} ({op}) in:\n{self.out}")


class Project:
    """A project folder with one stack, `dev`, whose default cluster is the test cluster;
    its commands run in this process unless `process` (see `sw`)."""

    def __init__(
        self,
        root: Path,
        name: str,
        namespace: str,
        config: dict[str, Any],
        *,
        process: bool = False,
    ) -> None:
        self.root = root
        self.name = name
        self.ns = namespace
        self.process = process
        root.mkdir(parents=True, exist_ok=True)
        (root / "Stackwright.yaml").write_text(f"name: {name}\nruntime: python\n")
        (root / f"Stackwright.{STACK}.yaml").write_text(yaml.safe_dump({"config": config}))
        assert "Created stack dev" in self.sw("stack", "init", STACK).out

    @classmethod
    def made_by_new(cls, root: Path, name: str, namespace: str) -> Project:
        """A project `stackwright new` made (its stack too), files left as they are."""
        made = cls.__new__(cls)
        made.root, made.name, made.ns, made.process = root, name, namespace, False
        return made

    def urn(self, type_: str, name: str) -> str:
        return f"urn:sw:{STACK}::{self.name}::{type_}::{name}"

    @property
    def applyset_parent(self) -> str:
        """The stack's ApplySet parent ConfigMap in each namespace it uses."""
        return f"stackwright-applyset-{self.name}.{STACK}"

    def program(self, body: str) -> None:
        source = PRELUDE.format(namespace=self.ns) + textwrap.dedent(body)
        (self.root / "__main__.py").write_text(source)

    def sw(
        self, *args: str, rc: int | None = 0, timeout: float = 90, process: bool | None = None
    ) -> Result:
        """`stackwright ARGS` in the project's folder: in this process (`cli_in_process`),
        or as its own process with `process=True` (default: the project's `process`)."""
        env = {**os.environ, "NO_COLOR": "1"}
        if self.process if process is None else process:
            done = subprocess.run(
                [*CLI, *args],
                cwd=self.root,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
            )
        else:
            done = run_cli(args, cwd=self.root, env=env)
        result = Result(tuple(args), done.returncode, done.stdout, done.stderr)
        if "--json" in args and args[0] in ("preview", "up", "destroy", "refresh"):
            result.check_steps()
        if rc is not None:
            assert result.rc == rc, (
                f"stackwright {' '.join(args)} exited {result.rc}, expected {rc}\n"
                f"--- stdout\n{result.out}\n--- stderr\n{result.err}"
            )
        return result

    def up(self, *args: str, rc: int | None = 0) -> Result:
        return self.sw("up", "--yes", "--json", *args, rc=rc)

    def preview(self, *args: str, rc: int | None = 0) -> Result:
        return self.sw("preview", "--json", *args, rc=rc)

    def state(self) -> dict[str, Any]:
        """What `stackwright stack export` prints, read in this process (the same backend
        call; `test_outputs_history_and_secrets` checks the command prints exactly this)."""
        with contextlib.closing(open_backend()) as backend:
            return backend.export(self.name, STACK)

    def resources(self) -> dict[str, dict[str, Any]]:
        """The state's resources by logical name."""
        return {r["urn"].rsplit("::", 1)[1]: r for r in self.state()["resources"]}

    def history(self) -> list[dict[str, Any]]:
        """The stack's operations, newest first, as `stack history --json` lists them."""
        with contextlib.closing(open_backend()) as backend:
            entries = backend.history(self.name, STACK)
        return [
            {"kind": e.kind, "result": e.result, "counts": e.counts, "message": e.message}
            for e in entries
        ]


#: Where the kinds the tests read most live: read over HTTP, not by a kubectl process each
#: (~0.1 s a read); others (custom kinds, short names) through `kubectl get`.
_READ_PATHS = {
    "configmap": "api/v1/{ns}configmaps",
    "configmaps": "api/v1/{ns}configmaps",
    "secret": "api/v1/{ns}secrets",
    "service": "api/v1/{ns}services",
    "services": "api/v1/{ns}services",
    "deployment": "apis/apps/v1/{ns}deployments",
    "deployments": "apis/apps/v1/{ns}deployments",
    "namespace": "api/v1/namespaces",
}


def _read(cluster: LiveCluster, kind: str, ns: str | None, name: str = "") -> Any:
    """GET the object `name` (or the list) of `kind`: its JSON, or None when it is absent."""
    scope = "" if kind == "namespace" else f"namespaces/{ns or 'default'}/"
    path = "/" + _READ_PATHS[kind].format(ns=scope) + (f"/{name}" if name else "")
    with cluster.http() as http:
        reply = http.get(path)
    if reply.status_code == 404 and name:
        return None
    assert reply.status_code == 200, f"GET {path}: {reply.status_code} {reply.text}"
    return reply.json()


def get(cluster: LiveCluster, kind: str, name: str, ns: str | None = None) -> dict[str, Any] | None:
    """The live object (managed fields included), or None when it does not exist."""
    if kind in _READ_PATHS:
        found: dict[str, Any] | None = _read(cluster, kind, ns, name)
        return found
    args = ["get", kind, name, "-o", "json", "--ignore-not-found", "--show-managed-fields"]
    if ns:
        args += ["-n", ns]
    text = cluster.kubectl(*args).stdout.strip()
    return json.loads(text) if text else None


def live(cluster: LiveCluster, kind: str, name: str, ns: str | None = None) -> dict[str, Any]:
    """The live object, which must exist."""
    found = get(cluster, kind, name, ns)
    assert found is not None, f"{kind} {ns}/{name} does not exist"
    return found


def release_configmaps(cluster: LiveCluster, ns: str, *names: str) -> None:
    """Take the finalizers off ConfigMaps a test held with them, so that they can go."""
    for name in names:
        cluster.kubectl(
            "patch", "configmap", name, "-n", ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}',
        )  # fmt: skip


def create(
    cluster: LiveCluster, kind: str, name: str, ns: str | None = None, **fields: Any
) -> None:
    """Create a core/v1 object outside Stackwright, as a user would.

    (`kubectl create -f`, not `kubectl create configmap`: the typed subcommands send
    protobuf, which the local cluster does not accept.)
    """
    meta: dict[str, Any] = {"name": name, **({"namespace": ns} if ns else {})}
    manifest = {"apiVersion": "v1", "kind": kind, "metadata": meta, **fields}
    cluster.kubectl("create", "-f", "-", input=json.dumps(manifest))


def restored_from_copy(cluster: LiveCluster, name: str, ns: str) -> None:
    """ConfigMap `name` deleted and made again from a copy that keeps its labels and
    annotations (as a backup restores it, or `kubectl create` of a saved manifest): a new
    uid, the stack's marks."""
    copy = live(cluster, "configmap", name, ns)
    copy["metadata"] = {
        k: v
        for k, v in copy["metadata"].items()
        if k in ("name", "namespace", "labels", "annotations")
    }
    cluster.kubectl("delete", "configmap", name, "-n", ns)
    cluster.kubectl("create", "-f", "-", input=json.dumps(copy))


def names(cluster: LiveCluster, kind: str, ns: str) -> set[str]:
    if kind in _READ_PATHS:
        return {item["metadata"]["name"] for item in _read(cluster, kind, ns)["items"]}
    out = cluster.kubectl("get", kind, "-n", ns, "-o", "name").stdout.split()
    return {line.rpartition("/")[2] for line in out}


def managers(obj: dict[str, Any]) -> set[str]:
    return {m["manager"] for m in obj["metadata"].get("managedFields", [])}


def one_line(result: Result) -> str:
    """The error a failed command printed: one line on stderr, never a traceback."""
    text = result.err.strip()
    assert "Traceback" not in result.err + result.out
    assert len(text.splitlines()) == 1, text
    return text


@contextlib.contextmanager
def another_cluster(name: str) -> Iterator[lifecycle.ClusterInfo]:
    """A second local cluster `name` (the module's `cluster` is the first), stopped after."""
    info, _ = lifecycle.start(name)
    try:
        yield info
    finally:
        lifecycle.stop(name)


@pytest.fixture
def new_project(tmp_path: Path, cluster: LiveCluster, request: pytest.FixtureRequest) -> Any:
    """`new_project(config=None, process=False)`: a project and a namespace named after the
    test, whose stack targets the test cluster through its kubeconfig unless `config` says
    otherwise; `process`: its commands run as their own processes."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.removeprefix("test_").lower())
    name = name.strip("-")[:40].strip("-")

    def make(config: dict[str, Any] | None = None, *, process: bool = False) -> Project:
        settings = config or {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
        return Project(tmp_path / name, name, f"lc-{name}", settings, process=process)

    return make


# --- create, no-op, update ------------------------------------------------------------------


def test_create(new_project: Any, cluster: LiveCluster) -> None:
    # The stack names the local cluster, as `stackwright new` writes it. Every command runs
    # as its own process here: the real command, end to end, from its entry point.
    p = new_project({"kubernetes:cluster": "test"}, process=True)
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings", "namespace": NS},
                              data={"mode": "fast"})
        web = k8s.apps.v1.Deployment("web", metadata={"namespace": NS}, spec=app_spec("web"))
        k8s.core.v1.Service("front", metadata={"namespace": NS},
                            spec={"selector": {"app": "web"}, "ports": [{"port": 80}]})
        sw.export("deployment", web.metadata["name"])
        """
    )
    planned = p.preview()
    assert planned.changed() == dict.fromkeys(("ns", "settings", "web", "front"), "create")
    assert planned.summary["dryRun"] is True
    assert planned.summary["counts"] == {"create": 4}
    assert get(cluster, "namespace", p.ns) is None, "a preview must not change the cluster"

    up = p.up()
    assert up.summary["ok"] is True
    assert up.summary["counts"] == {"create": 4}
    dones = up.of("step-done")
    assert len(dones) == 4 and all(e["ok"] and e["op"] == "create" for e in dones)
    # Kubernetes' own ordering, though the program states no dependency: the namespace first.
    ns_done = up.index("step-done", "ns")
    assert all(up.index("step-started", n) > ns_done for n in ("settings", "web"))

    deployment = up.summary["outputs"]["deployment"]
    assert re.fullmatch(r"web-[0-9a-f]{8}", deployment), deployment

    state = p.resources()
    assert set(state) == {"ns", "settings", "web", "front"}
    assert state["settings"]["id"] == f"{p.ns}/settings"
    assert state["settings"]["outputs"]["metadata"]["uid"]
    assert p.state()["outputs"] == {"deployment": deployment}

    cm = get(cluster, "configmap", "settings", p.ns)
    assert cm is not None and cm["data"] == {"mode": "fast"}
    meta = cm["metadata"]
    assert meta["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    assert meta["annotations"]["stackwright.io/stack"] == STACK
    assert meta["annotations"]["stackwright.io/urn"] == p.urn(
        "kubernetes:core/v1:ConfigMap", "settings"
    )
    assert "stackwright" in managers(cm)
    # `up` waited for the rollout, and the objects belong to the stack's ApplySet.
    dep = get(cluster, "deployment", deployment, p.ns)
    assert dep is not None and dep["status"].get("readyReplicas") == 1
    parent = get(cluster, "configmap", p.applyset_parent, p.ns)
    assert parent is not None
    set_id = parent["metadata"]["labels"]["applyset.kubernetes.io/id"]
    assert dep["metadata"]["labels"]["applyset.kubernetes.io/part-of"] == set_id
    assert len(names(cluster, "services", p.ns)) == 1


def test_noop(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"})
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web"))
        """
    )
    p.up()
    objects = [
        ("namespace", p.ns, None),
        ("configmap", "cfg", p.ns),
        ("deployment", "web", p.ns),
        ("configmap", p.applyset_parent, p.ns),
    ]

    def versions() -> list[str]:
        found = [get(cluster, kind, name, ns) for kind, name, ns in objects]
        return [obj["metadata"]["resourceVersion"] for obj in found if obj is not None]

    before = versions()
    assert len(before) == 4

    planned = p.preview()
    assert planned.summary["counts"] == {"same": 3}
    assert planned.changed() == {}
    again = p.up()
    assert again.summary["counts"] == {"same": 3}
    assert again.of("step-done") == [], "a no-op up reports no step done"
    assert versions() == before, "a no-op up must not write to the cluster"
    assert [h["counts"] for h in p.history()] == [{"same": 3}, {"create": 3}]


def test_a_step_that_fails_before_its_diff_shows_no_operation(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A recorded resource that fails before its diff is made (an input the program computes
    raises; the cluster cannot be reached) was shown as `~ update`, which it was never
    planned to be. It shows as Pulumi shows a failed diff: the error, on the resource, and no
    operation. A new resource's step is a create whatever its diff: a failed create."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"})
        """
    )
    p.up()
    p.program(
        """
        def mode(_):
            raise ValueError("no mode for this cluster")

        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        for name in ("cfg", "extra"):
            k8s.core.v1.ConfigMap(name, metadata={"name": name, "namespace": NS},
                                  data={"a": sw.Output.from_input("1").apply(mode)})
        """
    )
    # The callback's failure names its line, as a program's other failures do.
    at = f"__main__.py:{PRELUDE_LINES + 3}"
    said = "an apply callback failed: ValueError: no mode for this cluster"
    for command in (["preview"], ["up", "--yes"]):
        shown = p.sw(*command, rc=1)
        lines = shown.out.splitlines()
        assert f"error: {at}: kubernetes:core/v1:ConfigMap cfg: {said}" in lines, shown.out
        assert [line for line in lines if line.endswith("  cfg")] == [], shown.out
        i = lines.index("+ create  kubernetes:core/v1:ConfigMap  extra")
        failed = f"! failed  {at}: kubernetes:core/v1:ConfigMap extra: {said}"
        assert failed in lines[i:], shown.out

        events = p.sw(*command, "--json", rc=1).events
        cfg = p.urn("kubernetes:core/v1:ConfigMap", "cfg")
        assert [e for e in events if e.get("urn") == cfg] == [
            {
                "event": "diagnostic",
                "urn": cfg,
                "severity": "error",
                "message": f"{at}: kubernetes:core/v1:ConfigMap cfg: {said}",
            }
        ]
        assert [(e["event"], e["op"]) for e in events if e.get("name") == "extra"] == [
            ("step-started", "create"),
            ("step-done", "create"),
        ]
    assert set(p.resources()) == {"ns", "cfg"}


def test_update_in_place(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    v1 = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data=DATA)
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web", replicas=REPLICAS))
        """
    p.program('DATA = {"a": "1"}\nREPLICAS = 1\n' + textwrap.dedent(v1))
    p.up()
    uids = {
        k: live(cluster, k, n, p.ns)["metadata"]["uid"]
        for k, n in (("cm", "cfg"), ("deploy", "web"))
    }

    p.program('DATA = {"a": "2", "b": "3"}\nREPLICAS = 2\n' + textwrap.dedent(v1))
    planned = p.preview()
    assert planned.changed() == {"cfg": "update", "web": "update"}
    changes = {
        e["name"]: {c["path"]: c for c in e["changes"]}
        for e in planned.of("step-started")
        if e["op"] == "update"
    }
    assert changes["cfg"]["data.a"] == {"path": "data.a", "kind": "update", "old": "1", "new": "2"}
    assert changes["cfg"]["data.b"] == {"path": "data.b", "kind": "add", "new": "3"}
    assert set(changes["web"]) == {"spec.replicas"}
    shown = p.sw("preview", "--diff").out  # the plain display a CI log gets
    assert "~ update  kubernetes:core/v1:ConfigMap  cfg" in shown
    assert '~ data.a: "1" → "2"' in shown and '+ data.b: "3"' in shown
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"a": "1"}

    up = p.up()
    assert up.ops() == {"cfg": "update", "web": "update"}
    assert up.summary["counts"] == {"update": 2, "same": 1}
    cm = get(cluster, "configmap", "cfg", p.ns)
    dep = get(cluster, "deployment", "web", p.ns)
    assert cm is not None and dep is not None
    assert cm["data"] == {"a": "2", "b": "3"}
    assert {"cm": cm["metadata"]["uid"], "deploy": dep["metadata"]["uid"]} == uids
    assert dep["status"].get("readyReplicas") == 2, "up waits for the scaled rollout"
    assert p.resources()["cfg"]["inputs"]["data"] == {"a": "2", "b": "3"}


def test_a_load_balancer_service_made_cluster_ip_is_updated(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The API server drops what defaulting gave the LoadBalancer type
    (allocateLoadBalancerNodePorts, externalTrafficPolicy, node ports) when the type goes:
    the update is accepted, as on a real cluster."""
    p = new_project()
    program = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.Service("web", metadata={"name": "web", "namespace": NS},
                            spec={TYPE"ports": [{"port": 80}]})
        """
    p.program(textwrap.dedent(program).replace("TYPE", '"type": "LoadBalancer", '))
    p.up()
    uid = live(cluster, "service", "web", p.ns)["metadata"]["uid"]

    p.program(textwrap.dedent(program).replace("TYPE", ""))
    assert p.up().ops() == {"web": "update"}
    spec = live(cluster, "service", "web", p.ns)["spec"]
    assert spec["type"] == "ClusterIP" and "nodePort" not in spec["ports"][0]
    assert "allocateLoadBalancerNodePorts" not in spec and "externalTrafficPolicy" not in spec
    assert live(cluster, "service", "web", p.ns)["metadata"]["uid"] == uid


# --- replacements ------------------------------------------------------------------------------


def test_replace_create_before_delete(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        web = k8s.apps.v1.Deployment("web", metadata={"namespace": NS}, spec=app_spec(APP))
        sw.export("name", web.metadata["name"])
        """
    p.program('APP = "web"\n' + textwrap.dedent(body))
    old_name = p.up().summary["outputs"]["name"]
    assert re.fullmatch(r"web-[0-9a-f]{8}", old_name)

    p.program('APP = "web2"\n' + textwrap.dedent(body))
    planned = p.preview()
    assert planned.changed() == {"web": "replace"}
    (step,) = [e for e in planned.of("step-started") if e["name"] == "web"]
    assert any("spec.selector" in r for r in step["replaceReasons"])
    assert get(cluster, "deployment", old_name, p.ns) is not None

    up = p.up()
    new_name = up.summary["outputs"]["name"]
    assert re.fullmatch(r"web-[0-9a-f]{8}", new_name) and new_name != old_name
    # The replacement is created (and ready) before the old object is deleted.
    assert up.index("step-done", "web", "replace") < up.index(
        "step-started", "web", "delete-replaced"
    )
    assert up.summary["counts"] == {"replace": 1, "delete-replaced": 1, "same": 1}
    assert names(cluster, "deployments", p.ns) == {new_name}
    state = [r for r in p.state()["resources"] if r["urn"].endswith("::web")]
    assert len(state) == 1 and state[0]["id"] == f"{p.ns}/{new_name}"
    assert not state[0]["deletePending"]


def test_replace_delete_before_replace(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        # Named explicitly: the new object cannot exist next to the old one.
        k8s.apps.v1.Deployment("api", metadata={"name": "api", "namespace": NS}, spec=app_spec(APP))
        # Auto-named, but the program asks for delete-before-replace.
        k8s.core.v1.ConfigMap("cfg", metadata={"namespace": NS}, data={"v": APP},
                              opts=sw.ResourceOptions(replace_on_changes=["data"],
                                                      delete_before_replace=True))
        """
    p.program('APP = "api"\n' + textwrap.dedent(body))
    p.up()
    cm_name = p.resources()["cfg"]["id"].rpartition("/")[2]
    before = {
        "api": live(cluster, "deployment", "api", p.ns)["metadata"]["uid"],
        "cfg": live(cluster, "configmap", cm_name, p.ns)["metadata"]["uid"],
    }

    p.program('APP = "api2"\n' + textwrap.dedent(body))
    planned = p.preview()
    assert planned.changed() == {"api": "replace", "cfg": "replace"}
    up = p.up()
    assert up.ops() == {"api": "replace", "cfg": "replace"}
    assert "delete-replaced" not in up.ops("step-started").values()
    dep = get(cluster, "deployment", "api", p.ns)
    cm = get(cluster, "configmap", cm_name, p.ns)
    assert dep is not None and cm is not None, "same names, new objects"
    assert dep["metadata"]["uid"] != before["api"] and cm["metadata"]["uid"] != before["cfg"]
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "api2"}}
    assert cm["data"] == {"v": "api2"}
    assert {r["id"] for r in p.state()["resources"]} == {p.ns, f"{p.ns}/api", f"{p.ns}/{cm_name}"}


def test_textbook_jobs_run_their_command_and_complete(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The Jobs of Kubernetes' own documentation — busybox echoing, perl computing pi — run
    their command and complete on the local cluster, so `up` is done in seconds (an image
    without a test marker used to run forever, and `up` waited for it until its timeout)."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.batch.v1.Job("hello", metadata={"name": "hello", "namespace": NS}, spec={
            "template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "hello", "image": "busybox:1.36",
                "command": ["sh", "-c", "echo hello"]}]}}})
        k8s.batch.v1.Job("pi", metadata={"name": "pi", "namespace": NS}, spec={
            "backoffLimit": 4,
            "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{
                "name": "pi", "image": "perl:5.34.0",
                "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}]}}})
        """
    )
    began = time.monotonic()
    done = p.sw("up", "--yes", "--json", process=True, timeout=60)
    assert time.monotonic() - began < 20
    assert done.ops() == {"ns": "create", "hello": "create", "pi": "create"}
    for name in ("hello", "pi"):
        assert live(cluster, "job", name, p.ns)["status"]["succeeded"] == 1


def test_commands_that_fail_or_end_fail_the_up_naming_the_cause(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A Job whose command exits 3 fails as on a node: each pod Failed with `Error (exit code
    3)`, counted against backoffLimit, and `up` names that cause. A Deployment running
    busybox's `echo hello` ends at once and crash-loops: `up` fails in seconds with
    CrashLoopBackOff (it used to run forever, and `up` succeeded)."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.batch.v1.Job("migrate", metadata={"name": "migrate", "namespace": NS}, spec={
            "backoffLimit": 1,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "migrate", "image": "busybox:1.36",
                "command": ["sh", "-c", "echo start; exit 3"]}]}}})
        spec = app_spec("hello", image="busybox:1.36")
        spec["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "echo hello"]
        k8s.apps.v1.Deployment("hello", metadata={"name": "hello", "namespace": NS}, spec=spec)
        """
    )
    began = time.monotonic()
    up = p.up(rc=1)
    assert time.monotonic() - began < 15, "failed in seconds, not at a timeout"
    errors = {e["name"]: e["error"] for e in up.of("step-done") if not e["ok"]}
    assert "BackoffLimitExceeded" in errors["migrate"], errors
    assert "Error (exit code 3)" in errors["migrate"], errors
    assert "CrashLoopBackOff" in errors["hello"] and "(last exit code 0)" in errors["hello"], errors
    job = live(cluster, "job", "migrate", p.ns)
    assert job["status"]["failed"] == 2, job["status"]
    logs = cluster.kubectl("-n", p.ns, "logs", "deployment/hello").stdout
    assert "INFO running sh -c echo hello\n" in logs and "exiting with code 0" in logs


def test_named_objects_whose_fields_cannot_change_are_replaced_deleting_first(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Named objects whose change the server refuses in place — a Job's pod template, an
    immutable ConfigMap's data, a Secret's type — are deleted, then made anew under their
    names: the dry run over the old object refuses only the fields that force it, so it goes
    ahead; the old Job's pods go with it. (A Job is waited for until it completes: its image
    exits 0 — one that runs on, a server's or `sleep infinity`, keeps `up` waiting.)"""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.batch.v1.Job("job", metadata={"name": "job", "namespace": NS}, spec={
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "task", "image": "example.com/task-exit0:1", "args": [GEN]}]}}})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS},
                              immutable=True, data={"gen": GEN})
        k8s.core.v1.Secret("secret", metadata={"name": "secret", "namespace": NS},
                           type=TYPE, string_data={"gen": GEN})
        """
    p.program('GEN, TYPE = "1", "Opaque"\n' + textwrap.dedent(body))
    p.up()
    kinds = {"job": "job", "cm": "configmap", "secret": "secret"}
    uids = {
        name: live(cluster, kind, name, p.ns)["metadata"]["uid"] for name, kind in kinds.items()
    }

    p.program('GEN, TYPE = "2", "example.com/token"\n' + textwrap.dedent(body))
    reasons = {
        e["name"]: e["replaceReasons"]
        for e in p.preview().of("step-started")
        if e["op"] == "replace"
    }
    assert {name: [r.partition(":")[0] for r in said] for name, said in reasons.items()} == {
        "job": ["spec.template"], "cm": ["data"], "secret": ["type"],
    }, reasons  # fmt: skip
    started = time.monotonic()
    up = p.up()
    assert time.monotonic() - started < 30, "each is replaced in seconds, not waited on"
    assert up.ops() == {"job": "replace", "cm": "replace", "secret": "replace"}
    assert "delete-replaced" not in up.ops("step-started").values(), "deleted first"
    fresh = {name: live(cluster, kind, name, p.ns) for name, kind in kinds.items()}
    for name, obj in fresh.items():
        assert obj["metadata"]["uid"] != uids[name], f"{name}: the old object is still there"
    assert fresh["job"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["2"]
    assert fresh["job"]["status"]["succeeded"] == 1
    assert fresh["cm"]["data"] == {"gen": "2"} and fresh["cm"]["immutable"] is True
    assert fresh["secret"]["type"] == "example.com/token"
    deadline = time.monotonic() + 10
    while (old_pods := cluster.kubectl(
        "get", "pods", "-n", p.ns, "-o", "name", "-l", f"controller-uid={uids['job']}"
    ).stdout.split()):  # fmt: skip
        assert time.monotonic() < deadline, f"the old Job's pods stay: {old_pods}"
        time.sleep(0.2)
    ids = {r["urn"].rsplit("::", 1)[1]: r["id"] for r in p.state()["resources"]}
    assert ids == {"ns": p.ns, **{name: f"{p.ns}/{name}" for name in kinds}}
    assert p.up().changed() == {}


#: A Deployment whose new selector forces its replacement, a StatefulSet whose new claim
#: template does (its spec is immutable but for replicas, template, …): (kind, program,
#: the forcing value before and after).
_DELETED_FIRST = {
    "deployment": (
        """
        k8s.apps.v1.Deployment("api", metadata={"name": "api", "namespace": NS},
                               spec=app_spec(FORCING, replicas=REPLICAS))
        """,
        ("api", "api2"),
    ),
    "statefulset": (
        """
        k8s.apps.v1.StatefulSet("api", metadata={"name": "api", "namespace": NS}, spec={
            **app_spec("api", replicas=REPLICAS), "serviceName": "api",
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": FORCING}}}}]})
        """,
        ("1Gi", "2Gi"),
    ),
}


@pytest.mark.parametrize("kind", sorted(_DELETED_FIRST))
def test_refused_delete_first_kept(new_project: Any, cluster: LiveCluster, kind: str) -> None:
    """A replacement that deletes the object first, whose new object the server would refuse
    for more than the immutable field that forces it (and `replicas: -1`): the preview says
    so, and the `up` refuses it before the delete, the old object left running (it used to
    be deleted, then its replacement refused; a StatefulSet's too, every refusal under its
    `spec` taken for the forcing field's)."""
    p = new_project()
    resource, (before, after) = _DELETED_FIRST[kind]
    body = 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + textwrap.dedent(resource)
    p.program(f"FORCING, REPLICAS = {before!r}, 1\n" + body)
    p.up()
    uid = live(cluster, kind, "api", p.ns)["metadata"]["uid"]

    p.program(f"FORCING, REPLICAS = {after!r}, -1\n" + body)
    for refused in (p.preview(rc=2), p.up(rc=2)):
        (failure,) = refused.summary["failures"]
        assert "spec.replicas" in failure and "greater than or equal to 0" in failure, failure
        assert "immutable" not in failure and "left as it is" in failure, failure
    assert live(cluster, kind, "api", p.ns)["metadata"]["uid"] == uid
    assert p.resources()["api"]["id"] == f"{p.ns}/api"
    # Only the forcing field: the replacement goes ahead, as before.
    p.program(f"FORCING, REPLICAS = {after!r}, 1\n" + body)
    assert p.up().ops() == {"api": "replace"}
    assert live(cluster, kind, "api", p.ns)["metadata"]["uid"] != uid


def test_a_delete_first_replacement_of_fields_worded_otherwise_goes_ahead(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The dry run over the old object refuses a RoleBinding's new roleRef ("cannot change
    roleRef") and a Pod's new args ("pod updates may not change fields…"): no refusal of the
    new objects, which replace the old ones (both used to be refused, the old left as it is)."""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.rbac.v1.RoleBinding("rb", metadata={"name": "rb", "namespace": NS},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                      "name": ROLE},
            subjects=[{"kind": "ServiceAccount", "name": "default", "namespace": NS}])
        k8s.core.v1.Pod("pod", metadata={"name": "pod", "namespace": NS},
            spec={"containers": [{"name": "c", "image": "nginx:1.29", "args": ARGS}]})
        """
    p.program('ROLE, ARGS = "view", ["a"]\n' + textwrap.dedent(body))
    p.up()
    kinds = {"rb": "rolebinding", "pod": "pod"}
    uids = {
        name: live(cluster, kind, name, p.ns)["metadata"]["uid"] for name, kind in kinds.items()
    }
    p.program('ROLE, ARGS = "edit", ["b"]\n' + textwrap.dedent(body))
    p.preview()
    assert p.up().ops() == {"rb": "replace", "pod": "replace"}
    assert live(cluster, "rolebinding", "rb", p.ns)["roleRef"]["name"] == "edit"
    for name, kind in kinds.items():
        assert live(cluster, kind, name, p.ns)["metadata"]["uid"] != uids[name]


def test_a_replacement_onto_another_resources_object_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """b's new name is a's object, known only once a is applied: b's replacement is refused
    before it changes anything, whether a creates that object in the run or keeps it (b's
    replacement used to apply over a's object, marking it as b's)."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("b", metadata={"name": "b", "namespace": NS}, data={"k": "w"})
        """
    )
    p.up()
    uid = live(cluster, "configmap", "b", p.ns)["metadata"]["uid"]
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        a = k8s.core.v1.ConfigMap("a", metadata={"namespace": NS}, data={"k": "v"})
        k8s.core.v1.ConfigMap("b", metadata={"name": a.metadata["name"], "namespace": NS},
                              data={"k": "w"})
        """
    )
    for verb in ("creates too", "holds"):  # a is created by the first up, kept by the second
        refused = p.up(rc=1)
        created = {"a": "create"} if verb == "creates too" else {}
        assert refused.changed() == {**created, "b": "replace"}, refused.changed()
        (failure,) = refused.summary["failures"]
        assert f"is the object kubernetes:core/v1:ConfigMap a {verb}" in failure, failure
        made = live(cluster, "configmap", p.resources()["a"]["id"].partition("/")[2], p.ns)
        assert made["data"] == {"k": "v"} and made["metadata"]["annotations"][
            "stackwright.io/urn"
        ] == p.urn("kubernetes:core/v1:ConfigMap", "a")
        assert live(cluster, "configmap", "b", p.ns)["metadata"]["uid"] == uid


def test_a_create_onto_the_object_a_later_step_keeps_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """a keeps its ConfigMap, its step after b's create, whose name (an Output) is a's
    object's: b is refused before it applies, and so with `--exclude` a (b used to apply
    over a's object, marking it as b's, and a's step was the one refused)."""
    p = new_project()
    keeper = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("a", metadata={"name": "shared", "namespace": NS},
                              data={"k": "v"}, opts=sw.ResourceOptions(depends_on=after))
        """
    p.program("\n        after = []" + keeper)
    p.up()
    uid = live(cluster, "configmap", "shared", p.ns)["metadata"]["uid"]
    p.program(
        """
        after = [k8s.core.v1.ConfigMap(
            "b", metadata={"name": sw.Output.from_input("shared"), "namespace": NS},
            data={"k": "w"})]"""
        + keeper
    )
    a = p.urn("kubernetes:core/v1:ConfigMap", "a")
    for flags in ((), ("--exclude", a)):
        refused = p.up(*flags, rc=1)
        (failure,) = refused.summary["failures"]
        assert failure.startswith("__main__.py:"), failure  # b's line
        assert ": kubernetes:core/v1:ConfigMap b: " in failure, failure
        assert "is the object kubernetes:core/v1:ConfigMap a holds" in failure, failure
        made = live(cluster, "configmap", "shared", p.ns)
        assert made["metadata"]["uid"] == uid and made["data"] == {"k": "v"}
        assert made["metadata"]["annotations"]["stackwright.io/urn"] == a
    assert "b" not in p.resources()


def test_a_protected_resource_renamed_keeps_its_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Its replacement is refused, and with it the whole `up` before any change: b's create
    onto its object (before its step) does not run either, where b applied over it and the
    state recorded the object twice (the engine's own refusal of such a create, for a run
    that cannot tell the replacement in advance: test_engine_one_object_each)."""
    p = new_project()
    keeper = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("a", metadata={"name": NAME, "namespace": NS}, data={"k": "v"},
                              opts=sw.ResourceOptions(depends_on=after, protect=True))
        """
    p.program('\n        after, NAME = [], "shared"' + keeper)
    p.up()
    uid = live(cluster, "configmap", "shared", p.ns)["metadata"]["uid"]
    p.program(
        """
        NAME = "moved"
        after = [k8s.core.v1.ConfigMap(
            "b", metadata={"name": sw.Output.from_input("shared"), "namespace": NS},
            data={"k": "w"})]"""
        + keeper
    )
    refused = p.up(rc=2)
    (error,) = refused.of("error")
    assert error["message"].startswith("up refused: __main__.py:"), error
    assert "ConfigMap::a cannot be replaced because it is protected" in error["message"]
    made = live(cluster, "configmap", "shared", p.ns)
    assert made["metadata"]["uid"] == uid and made["data"] == {"k": "v"}
    assert "b" not in p.resources()


# --- delete and destroy ------------------------------------------------------------------------


def test_delete(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("keep", metadata={"name": "keep", "namespace": NS}, data={"a": "1"})
        k8s.core.v1.ConfigMap("drop", metadata={"name": "drop", "namespace": NS}, data={"a": "1"})
        """
    )
    p.up()
    kept = live(cluster, "configmap", "keep", p.ns)["metadata"]["resourceVersion"]

    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("keep", metadata={"name": "keep", "namespace": NS}, data={"a": "1"})
        """
    )
    assert p.preview().changed() == {"drop": "delete"}
    assert get(cluster, "configmap", "drop", p.ns) is not None
    up = p.up()
    assert up.ops() == {"drop": "delete"}
    assert up.summary["counts"] == {"delete": 1, "same": 2}
    assert get(cluster, "configmap", "drop", p.ns) is None
    assert live(cluster, "configmap", "keep", p.ns)["metadata"]["resourceVersion"] == kept
    assert set(p.resources()) == {"ns", "keep"}


def test_destroy(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    shared = f"{p.ns}-shared"  # a namespace the stack uses but does not own: it stays
    create(cluster, "Namespace", shared)
    p.program(
        f"""
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        k8s.core.v1.ConfigMap("own", metadata={{"name": "own", "namespace": NS}}, data={{"a": "1"}})
        k8s.apps.v1.Deployment("web", metadata={{"namespace": NS}}, spec=app_spec("web"))
        k8s.core.v1.ConfigMap("guest", metadata={{"name": "guest", "namespace": {shared!r}}},
                              data={{"a": "1"}})
        sw.export("ns", NS)
        """
    )
    p.up()
    assert get(cluster, "configmap", p.applyset_parent, shared) is not None
    assert get(cluster, "configmap", p.applyset_parent, p.ns) is not None

    down = p.sw("destroy", "--yes", "--json")
    assert down.summary["ok"] is True
    assert down.of("diagnostic") == []
    assert down.ops() == {"ns": "delete", "own": "delete", "web": "delete", "guest": "delete"}
    assert all(e["ok"] for e in down.of("step-done"))
    # Dependents first: the namespace goes after what is in it.
    ns_started = down.index("step-started", "ns")
    assert all(down.index("step-done", n) < ns_started for n in ("own", "web"))
    assert get(cluster, "namespace", p.ns) is None
    assert get(cluster, "configmap", "guest", shared) is None
    assert get(cluster, "configmap", p.applyset_parent, shared) is None, "nor its ApplySet parent"
    assert get(cluster, "namespace", shared) is not None
    state = p.state()
    assert state["resources"] == [] and state["outputs"] == {}
    assert p.history()[0]["kind"] == "destroy"

    # `destroy --remove` (Pulumi's): then the stack goes, its file and selection with it;
    # not with a selection that keeps resources (here an excluded one): refused before the
    # destroy, which would otherwise run and leave the stack `--remove` then refused.
    p.up()
    before = p.state()
    kept = p.urn("kubernetes:core/v1:ConfigMap", "guest")
    left = p.sw("destroy", "--yes", "--remove", "--exclude", kept, rc=2)
    assert one_line(left) == (
        "error: --remove removes the whole stack, and --exclude keeps some of its resources: "
        "run the destroy without --remove, then `stackwright stack rm --force` if the stack "
        "should go with what it kept; nothing was changed"
    )
    assert p.state() == before
    assert p.sw("destroy", "--yes", "--remove").out.rstrip().endswith(f"Removed stack {STACK}.")
    assert json.loads(p.sw("stack", "ls", "--json").out) == []
    assert not (p.root / f"Stackwright.{STACK}.yaml").exists()


def warnings(result: Result) -> list[str]:
    return [e["message"] for e in result.of("diagnostic") if e["severity"] != "info"]


def assert_members(cluster: LiveCluster, parent: str, ns: str, *members: str) -> None:
    """The ApplySet parent `parent` is in `ns` and the named ConfigMaps are in its set."""
    set_id = live(cluster, "configmap", parent, ns)["metadata"]["labels"][
        "applyset.kubernetes.io/id"
    ]
    for name in members:
        labels = live(cluster, "configmap", name, ns)["metadata"]["labels"]
        assert labels["applyset.kubernetes.io/part-of"] == set_id, name


def test_destroy_preview_only_shows_the_deletes_and_changes_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    """As Pulumi's: what the destroy would delete, nothing changed, no --yes needed (it
    was "No such option")."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": ns.metadata["name"]},
                              data={"k": "v"})
        """
    )
    p.up()
    before = p.state()
    history = p.sw("stack", "history", "--json").out

    shown = p.sw("destroy", "--preview-only", "--json")

    summary = shown.events[-1]
    assert summary["event"] == "summary" and summary["dryRun"] is True
    assert summary["counts"] == {"delete": 2}
    assert {e["name"] for e in shown.events if e.get("op") == "delete"} == {"ns", "cm"}
    assert live(cluster, "configmap", "cm", p.ns)["data"] == {"k": "v"}
    assert p.state() == before and p.sw("stack", "history", "--json").out == history

    refused = p.sw("destroy", "--preview-only", "--remove", rc=2)
    assert refused.err == (
        "error: --preview-only changes nothing, and --remove would remove the stack: leave one "
        "out; nothing was changed\n"
    )
    p.sw("destroy", "--yes")


def test_an_up_that_leaves_a_namespace_removes_its_applyset_parent(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    shared = f"{p.ns}-shared"  # a namespace the stack uses but does not own: it stays
    create(cluster, "Namespace", shared)
    own = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("own", metadata={"name": "own", "namespace": NS}, data={"a": "1"})
        """
    guest = f"""
        k8s.core.v1.ConfigMap("guest", metadata={{"name": "guest", "namespace": {shared!r}}},
                              data={{"a": "1"}})
        """
    p.program(own + guest)
    p.up()
    assert_members(cluster, p.applyset_parent, shared, "guest")

    p.program(own)
    up = p.up()

    assert up.ops() == {"guest": "delete"} and warnings(up) == []
    assert get(cluster, "configmap", p.applyset_parent, shared) is None
    assert get(cluster, "namespace", shared) is not None
    assert_members(cluster, p.applyset_parent, p.ns, "own")


def test_up_after_a_stack_rename_removes_the_former_names_applyset_parents(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    shared = f"{p.ns}-shared"
    create(cluster, "Namespace", shared)
    p.program(
        f"""
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        k8s.core.v1.ConfigMap("own", metadata={{"name": "own", "namespace": NS}}, data={{"a": "1"}})
        k8s.core.v1.ConfigMap("guest", metadata={{"name": "guest", "namespace": {shared!r}}},
                              data={{"a": "1"}})
        """
    )
    p.up()
    former = p.applyset_parent
    renamed = f"stackwright-applyset-{p.name}.renamed"

    p.sw("stack", "rename", STACK, "renamed")
    assert json.loads(p.sw("stack", "export").out)["formerNames"] == [STACK]
    up = p.up()

    assert up.summary["counts"] == {"update": 3} and warnings(up) == []
    for ns, member in ((p.ns, "own"), (shared, "guest")):
        assert get(cluster, "configmap", former, ns) is None, ns
        assert_members(cluster, renamed, ns, member)
    assert "formerNames" not in json.loads(p.sw("stack", "export").out)
    assert set(p.up().summary["counts"]) == {"same"}


# --- refresh and drift --------------------------------------------------------------------------


def test_refresh_with_drift(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                              data={"mode": "a", "size": "1"})
        k8s.core.v1.ConfigMap("lost", metadata={"name": "lost", "namespace": NS}, data={"a": "1"})
        """
    )
    p.up()
    cluster.kubectl("patch", "configmap", "cfg", "-n", p.ns, "-p", '{"data":{"mode":"b"}}')
    cluster.kubectl("label", "configmap", "cfg", "-n", p.ns, "team=ops")
    cluster.kubectl("delete", "configmap", "lost", "-n", p.ns)

    seen = p.sw("refresh", "--preview-only", "--json")
    gone = [e for e in seen.of("drift") if e["gone"]]
    assert [e["urn"] for e in gone] == [p.urn("kubernetes:core/v1:ConfigMap", "lost")]
    (drift,) = [e for e in seen.of("drift") if not e["gone"]]
    assert drift["urn"] == p.urn("kubernetes:core/v1:ConfigMap", "cfg")
    # Only the field Stackwright set and someone changed: the added label is not drift.
    assert drift["fields"] == [
        {"path": "data.mode", "recorded": "a", "live": "b", "manager": "kubectl-patch"}
    ]
    recorded = p.resources()["cfg"]["outputs"]["data"]
    assert recorded["mode"] == "a", "--preview-only records nothing"
    # A refreshing preview shows the drift as the change `up --refresh` will make.
    (step,) = [e for e in p.preview("--refresh").of("step-started") if e["name"] == "cfg"]
    assert step["op"] == "update"
    assert [(c["path"], c["old"], c["new"]) for c in step["changes"]] == [("data.mode", "b", "a")]

    fixed = p.up("--refresh")
    assert fixed.ops() == {"cfg": "update", "lost": "create"}
    assert get(cluster, "configmap", "lost", p.ns) is not None
    cm = get(cluster, "configmap", "cfg", p.ns)
    assert cm is not None and cm["data"] == {"mode": "a", "size": "1"}
    assert cm["metadata"]["labels"]["team"] == "ops", "a field we never set is left alone"
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []
    assert p.preview("--refresh").changed() == {}
    # The CI drift gate: objects read and found in sync are no change.
    p.preview("--refresh", "--expect-no-changes")
    cluster.kubectl("patch", "configmap", "cfg", "-n", p.ns, "-p", '{"data":{"mode":"c"}}')
    gate = p.sw("preview", "--refresh", "--expect-no-changes", rc=1)
    assert one_line(gate) == "error: --expect-no-changes: the preview shows changes (1 to update)"
    # A CI script reading the events sees why the gate failed after an ok summary: the
    # error is the last event, as for every error that ends a command.
    gated = p.sw("preview", "--refresh", "--expect-no-changes", "--json", rc=1)
    assert gated.events[-2]["event"] == "summary" and gated.summary["ok"] is True
    assert gated.summary["exitCode"] == 1  # the gate's: the code the command exits with
    assert gated.events[-1] == {
        "event": "error",
        "message": "--expect-no-changes: the preview shows changes (1 to update)",
        "exitCode": 1,
    }
    # The same gate on refresh (Pulumi's `refresh --expect-no-changes`): nothing recorded.
    drifted = p.sw("refresh", "--yes", "--expect-no-changes", rc=1)
    assert one_line(drifted) == (
        "error: --expect-no-changes: the refresh finds drift (1 drifted); nothing was recorded"
    )
    assert p.resources()["cfg"]["outputs"]["data"]["mode"] == "a"
    as_events = p.sw("refresh", "--yes", "--expect-no-changes", "--json", rc=1)
    assert as_events.events[-1]["message"] == (
        "--expect-no-changes: the refresh finds drift (1 drifted); nothing was recorded"
    )
    assert as_events.summary["exitCode"] == 1
    p.up("--refresh")
    p.sw("refresh", "--yes", "--expect-no-changes")


def test_a_refresh_summary_carries_the_stack_outputs(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A refresh runs no program and leaves the outputs as they were: its summary shows them
    (secrets masked) as `up`'s does, not `{}`, which read as if the stack had lost them."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        sw.export("namespace", ns.metadata["name"])
        sw.export("token", sw.Output.secret("t0ken-for-refresh"))
        """
    )
    outputs = p.up().summary["outputs"]
    assert outputs == {"namespace": p.ns, "token": "[secret]"}
    for args in (("--preview-only",), ("--yes",)):
        seen = p.sw("refresh", *args, "--json")
        assert seen.summary["outputs"] == outputs, args
        assert "t0ken-for-refresh" not in seen.out + seen.err
    assert p.sw("destroy", "--yes", "--json").summary["outputs"] == {}


def test_refresh_of_an_object_made_again_outside(new_project: Any, cluster: LiveCluster) -> None:
    """An object deleted and made again by hand under its name is another object (another
    uid, none of the stack's marks): refresh finds the stack's object gone, and the stack
    does not take the new one over unless the program adopts it."""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"}%s)
        """
    p.program(body % "")
    p.up()
    restored_from_copy(cluster, "cfg", p.ns)  # with its marks: still the stack's object
    assert p.sw("refresh", "--preview-only", "--json").summary["counts"] == {"in-sync": 2}

    cluster.kubectl("delete", "configmap", "cfg", "-n", p.ns)
    create(cluster, "ConfigMap", "cfg", p.ns, data={"b": "2"})
    seen = p.sw("refresh", "--preview-only", "--json")
    assert [(e["urn"], e["gone"]) for e in seen.of("drift")] == [
        (p.urn("kubernetes:core/v1:ConfigMap", "cfg"), True)
    ]
    refused = p.up("--refresh", rc=1)
    assert (
        "already exists (it is not this stack's: made outside it, or forgotten by `state delete`)"
        in refused.summary["failures"][0]
    )
    cm = live(cluster, "configmap", "cfg", p.ns)
    assert cm["data"] == {"b": "2"} and "annotations" not in cm["metadata"], "left as it is"
    assert "cfg" not in p.resources()

    p.program(body % ", opts=sw.ResourceOptions(import_=f'{NS}/cfg')")
    assert p.up().ops() == {"cfg": "import"}
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"a": "1", "b": "2"}


def two_configmaps_up(new_project: Any) -> tuple[Any, str, str]:
    """A stack of a Namespace and ConfigMaps `a` and `b`, up: the project and their URNs."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        for name in ("a", "b"):
            k8s.core.v1.ConfigMap(name, metadata={"name": name, "namespace": NS}, data={"k": "1"})
        """
    )
    p.up()
    a, b = (p.urn("kubernetes:core/v1:ConfigMap", n) for n in ("a", "b"))
    return p, a, b


def test_refresh_selection(new_project: Any, cluster: LiveCluster) -> None:
    """`refresh --target` reads only the targets, `--exclude` all but those (Pulumi's flags)."""
    p, a, b = two_configmaps_up(new_project)
    for name in ("a", "b"):
        cluster.kubectl("patch", "configmap", name, "-n", p.ns, "-p", '{"data":{"k":"2"}}')

    seen = p.sw("refresh", "--preview-only", "--json", "--exclude", a)
    assert [e["urn"] for e in seen.of("drift")] == [b]
    assert seen.summary["counts"] == {"in-sync": 1, "drifted": 1}
    recorded = p.sw("refresh", "--yes", "--json", "--target", "**::a")
    assert [e["urn"] for e in recorded.of("drift")] == [a]
    assert p.resources()["a"]["outputs"]["data"] == {"k": "2"}
    assert p.resources()["b"]["outputs"]["data"] == {"k": "1"}, "not a target: not read"
    missing = p.sw("refresh", "--yes", "--target", "**::nope", rc=2)
    assert "--target **::nope matches no resource" in one_line(missing)


def test_up_refresh_with_a_selection_reads_only_what_it_may_change(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`up --refresh --target` (and its preview) reads the targets and what they need, not
    the whole stack, as Pulumi's since its #4174: a resource outside the selection deleted
    by hand stays recorded for the `up` that may make it again, not forgotten by this one."""
    p, a, b = two_configmaps_up(new_project)
    cluster.kubectl("patch", "configmap", "a", "-n", p.ns, "-p", '{"data":{"k":"2"}}')
    cluster.kubectl("delete", "configmap", "b", "-n", p.ns)

    seen = p.sw("preview", "--refresh", "--json", "--target", a)
    assert [e["urn"] for e in seen.of("drift")] == [a]
    assert seen.summary["counts"] == {"update": 1, "same": 1, "drifted": 1, "in-sync": 1}
    done = p.up("--refresh", "--target", a)
    assert [e["urn"] for e in done.of("drift")] == [a]
    assert live(cluster, "configmap", "a", p.ns)["data"] == {"k": "1"}
    assert "b" in p.resources(), "outside the selection: not read, still recorded"
    excluded = p.sw("preview", "--refresh", "--json", "--exclude", a)
    assert [(e["urn"], e["gone"]) for e in excluded.of("drift")] == [(b, True)]
    assert p.up("--refresh").ops()["b"] == "create"


def test_refresh_reports_an_object_deleted_by_hand_that_finalizers_hold(
    new_project: Any, cluster: LiveCluster
) -> None:
    """An object `kubectl delete` left Terminating (a finalizer holds it) is drift now, not
    in sync until the finalizer lets it go; `up --refresh` has nothing to take back while
    it is there, and makes it again once it is gone."""
    p, a, _ = two_configmaps_up(new_project)
    finalizers = '{"metadata":{"finalizers":%s}}'
    patch = ("patch", "configmap", "a", "-n", p.ns, "--type", "merge", "-p")
    cluster.kubectl(*patch, finalizers % '["example.com/hold"]')
    cluster.kubectl("delete", "configmap", "a", "-n", p.ns, "--wait=false")

    seen = p.sw("refresh", "--preview-only", "--json")
    ((drift,),) = [e["fields"] for e in seen.of("drift")]
    assert (drift["path"], drift["recorded"]) == ("metadata.deletionTimestamp", None)
    (warning,) = [e["message"] for e in seen.of("diagnostic") if e["urn"] == a]
    assert "is being deleted" in warning and "example.com/hold" in warning
    p.sw("refresh", "--preview-only", "--expect-no-changes", rc=1)
    assert p.preview("--refresh").changed() == {}

    cluster.kubectl(*patch, finalizers % "null")
    assert p.up("--refresh").ops()["a"] == "create"
    assert "deletionTimestamp" not in live(cluster, "configmap", "a", p.ns)["metadata"]


def test_refresh_of_an_object_others_refer_to_that_was_deleted(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A resource that refresh finds gone leaves the state; what refers to it stays, with
    the reference dropped (as Pulumi's refresh does): the state still loads."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        other = k8s.core.v1.Namespace("other", metadata={"name": NS + "-other"})
        k8s.core.v1.ConfigMap("refers", metadata={"name": "refers", "namespace": NS},
                              data={"ns": other.metadata["name"]})
        k8s.core.v1.ConfigMap("child", metadata={"name": "child", "namespace": NS},
                              opts=sw.ResourceOptions(parent=other))
        """
    )
    p.up()
    cluster.kubectl("delete", "namespace", p.ns + "-other")
    p.sw("refresh", "--yes", "--json")
    resources = p.resources()  # loads: no reference to a resource the state lacks
    assert "other" not in resources
    assert resources["refers"]["dependencies"] == []
    assert resources["child"]["parent"] == ""
    # The program declares them again: `other` is made again, the references put back.
    assert p.preview().changed()["other"] == "create"
    p.up()
    assert p.resources()["child"]["parent"] == p.urn("kubernetes:core/v1:Namespace", "other")
    assert p.preview().changed() == {}


def test_marks_removed_by_hand_are_put_back(new_project: Any, cluster: LiveCluster) -> None:
    """An object whose marks someone removed looks like no stack's (another could adopt
    it): once a refresh has seen that, the next up marks it again."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"})
        """
    )
    p.up()
    cluster.kubectl(
        "annotate", "configmap", "cfg", "-n", p.ns, "stackwright.io/urn-", "stackwright.io/stack-"
    )
    cluster.kubectl("label", "configmap", "cfg", "-n", p.ns, "app.kubernetes.io/managed-by-")
    assert p.preview("--refresh").changed() == {"cfg": "update"}
    p.up("--refresh")
    meta = live(cluster, "configmap", "cfg", p.ns)["metadata"]
    assert meta["annotations"]["stackwright.io/urn"] == p.urn("kubernetes:core/v1:ConfigMap", "cfg")
    assert meta["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    assert p.preview("--refresh").changed() == {}


def test_refresh_then_up_restores_the_program(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"mode": "a"})
        """
    )
    p.up()
    cluster.kubectl("patch", "configmap", "cfg", "-n", p.ns, "-p", '{"data":{"mode":"b"}}')
    assert p.sw("refresh", "--yes", "--json").summary["counts"]["drifted"] == 1
    assert p.resources()["cfg"]["outputs"]["data"] == {"mode": "b"}, "refresh records the cluster"
    assert p.preview().changed() == {"cfg": "update"}
    p.up()
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"mode": "a"}


# --- import -------------------------------------------------------------------------------------


def test_import_command(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "ConfigMap", "legacy", p.ns, data={"k": "v"})
    uid = live(cluster, "configmap", "legacy", p.ns)["metadata"]["uid"]

    done = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy")
    urn = p.urn("kubernetes:core/v1:ConfigMap", "legacy")
    assert urn in done.out
    code = done.out.split("Add this to your program:", 1)[1].strip()
    assert code.startswith("k8s.core.v1.ConfigMap(\n    'legacy',")
    assert "data={'k': 'v'}" in code
    compile(code, "imported", "exec")
    legacy = p.resources()["legacy"]
    assert legacy["id"] == f"{p.ns}/legacy" and legacy["urn"] == urn
    # Protected, as `pulumi import` does: an `up` before the code is in the program does not
    # delete an object the stack never made; the printed code keeps it so.
    assert legacy["protect"] is True
    assert code.endswith("    opts=sw.ResourceOptions(protect=True),\n)")
    refused = p.up(rc=2)
    assert "cannot be deleted because it is protected" in one_line(refused)
    assert live(cluster, "configmap", "legacy", p.ns)["data"] == {"k": "v"}
    cm = get(cluster, "configmap", "legacy", p.ns)
    assert cm is not None and cm["metadata"]["uid"] == uid
    assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    # A member of the stack's ApplySet, as what the stack creates is: kubectl lists it.
    assert_members(cluster, p.applyset_parent, p.ns, "legacy")

    # The printed code, added to the program, declares exactly what was adopted.
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    assert live(cluster, "configmap", "legacy", p.ns)["metadata"]["uid"] == uid
    again = p.sw(
        "import", "--yes", "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy", rc=2
    )
    assert "already" in one_line(again)

    # An object another resource manages is refused, and left as it is.
    twice = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "copy", f"{p.ns}/legacy", rc=2)
    assert one_line(twice) == (
        f"error: cannot import {p.ns}/legacy: stack dev of project {p.name} manages it as "
        f"{urn}; remove it from that stack first (`stackwright state delete {urn} --stack dev "
        "--force` there keeps the object)"
    )
    assert live(cluster, "configmap", "legacy", p.ns)["data"] == {"k": "v"}
    # A malformed name or ID is bad input: one line, exit 2, nothing journaled.
    operations = len(p.history())
    for name, object_id, says in (
        ("", f"{p.ns}/other", "NAME"),
        ("x", "", "ID"),
        ("x", f"{p.ns}/", "ID"),
        ("x", "a/b/c", "ID"),
    ):
        bad = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", name, object_id, rc=2)
        assert one_line(bad).startswith("error: import"), bad.err
        assert says in bad.err
        assert p.state()["pending"] == []
    assert len(p.history()) == operations, "no operation was started"
    # A kind the cluster does not serve is named as such, not as a missing object.
    unknown = p.sw("import", "--yes", "kubernetes:apps/v1:Deploymnt", "x", f"{p.ns}/legacy", rc=2)
    assert one_line(unknown).startswith(
        f"error: cannot import {p.ns}/legacy: Deploymnt (apps/v1) is not served by the cluster"
    )
    assert "did you mean Deployment, which it serves?" in unknown.err
    # A stack removed with --force leaves its objects marked as its own: the refusal says
    # how to free one, and once freed it is adopted.
    gone = Project(
        p.root.parent / "gone", "gone", p.ns, {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
    )
    gone.program('k8s.core.v1.ConfigMap("left", metadata={"name": "left", "namespace": NS})\n')
    gone.up()
    gone.sw("stack", "rm", STACK, "--force", "--yes")
    refused = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "left", f"{p.ns}/left", rc=2)
    hint = f"kubectl annotate configmap left -n {p.ns} stackwright.io/urn-"
    assert f"`{hint}`" in one_line(refused)
    cluster.kubectl(*hint.split()[1:])
    p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "left", f"{p.ns}/left")
    # Once out of the state it can be adopted again; what Stackwright applied before stays.
    p.sw("state", "delete", "--yes", urn, "--force")
    unprotected = p.sw(
        "import",
        "--yes",
        "kubernetes:core/v1:ConfigMap",
        "adopted",
        f"{p.ns}/legacy",
        "--no-protect",
    )
    assert "protect" not in unprotected.out and p.resources()["adopted"]["protect"] is False
    assert live(cluster, "configmap", "legacy", p.ns)["data"] == {"k": "v"}


def test_import_shows_what_it_imports_and_asks_first(
    new_project: Any,
    cluster: LiveCluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As `pulumi import`: a preview of the import, then a question (--yes skips it);
    without a terminal and without --yes, a refusal that changes nothing."""
    import io

    from stackwright.cli.main import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "ConfigMap", "legacy", p.ns, data={"k": "v"})
    urn = p.urn("kubernetes:core/v1:ConfigMap", "legacy")
    operations = len(p.history())
    monkeypatch.chdir(p.root)
    args = ["import", "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy"]
    capsys.readouterr()

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as caught:
        main(args)
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "error: `stackwright import` asks for confirmation: pass --yes to run it without a "
        "terminal\n"
    )
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    with pytest.raises(SystemExit) as declined:  # as Pulumi ends a declined update: not 0
        main(args)
    assert declined.value.code == 1
    out = capsys.readouterr().out
    assert out.startswith(
        f"Previewing import into stack {STACK}:\n    = import {p.ns}/legacy as {urn} (protected)\n"
        "Do you want to perform this import? [y/N]: "
    )
    assert out.endswith("Cancelled: nothing was changed.\n")
    assert "legacy" not in p.resources() and len(p.history()) == operations
    assert "labels" not in live(cluster, "configmap", "legacy", p.ns)["metadata"]

    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    main(args)
    assert f"Imported {p.ns}/legacy as {urn}." in capsys.readouterr().out
    assert p.resources()["legacy"]["protect"] is True


def test_an_import_whose_reply_is_lost_is_settled_by_the_next_run(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import is journaled before the object is marked as the stack's: when the apply
    lands but its answer is lost, the next run reads the object and records it."""
    from stackwright.automation.stack import Workspace
    from stackwright.providers.kubernetes.provider import KubernetesProvider

    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "ConfigMap", "legacy", p.ns, data={"k": "v"})
    real = KubernetesProvider.apply

    async def lands_then_resets(self: Any, desired: Any, **options: Any) -> Any:
        applied = await real(self, desired, **options)
        if desired["metadata"]["name"] != "legacy":
            return applied  # the stack's ApplySet parent, applied first
        raise ConnectionResetError("connection reset by peer")

    monkeypatch.setattr(KubernetesProvider, "apply", lands_then_resets)
    with pytest.raises(ConnectionResetError):
        Workspace.open(p.root, STACK).import_object(
            "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy"
        )
    monkeypatch.undo()
    urn = p.urn("kubernetes:core/v1:ConfigMap", "legacy")
    marked = live(cluster, "configmap", "legacy", p.ns)
    assert marked["metadata"]["annotations"]["stackwright.io/urn"] == urn
    assert [(x["op"], x["resource"]["urn"]) for x in p.state()["pending"]] == [("import", urn)]

    p.sw("refresh", "--yes", "--json")
    assert p.state()["pending"] == []
    assert p.resources()["legacy"]["id"] == f"{p.ns}/legacy"


def test_import_option(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    create(cluster, "Namespace", p.ns)
    create(cluster, "ConfigMap", "adopted", p.ns, data={"k": "v"})
    uid = live(cluster, "configmap", "adopted", p.ns)["metadata"]["uid"]
    p.program(
        """
        k8s.core.v1.ConfigMap("adopted", metadata={"name": "adopted", "namespace": NS},
                              data={"k": "v"},
                              opts=sw.ResourceOptions(import_=f"{NS}/adopted"))
        """
    )
    assert p.preview().changed() == {"adopted": "import"}
    up = p.up()
    assert up.ops() == {"adopted": "import"}
    cm = get(cluster, "configmap", "adopted", p.ns)
    assert cm is not None and cm["metadata"]["uid"] == uid, "adopted, not re-created"
    assert cm["metadata"]["annotations"]["stackwright.io/urn"] == p.urn(
        "kubernetes:core/v1:ConfigMap", "adopted"
    )
    assert p.resources()["adopted"]["id"] == f"{p.ns}/adopted"
    assert p.up().summary["counts"] == {"same": 1}

    # import_ of an object that does not exist fails the step, creating nothing.
    p.program(
        """
        k8s.core.v1.ConfigMap("ghost", metadata={"name": "ghost", "namespace": NS},
                              data={"k": "v"}, opts=sw.ResourceOptions(import_=f"{NS}/ghost"))
        """
    )
    failed = p.up(rc=1)
    assert "ghost" in " ".join(failed.summary["failures"])
    assert get(cluster, "configmap", "ghost", p.ns) is None


def test_an_object_being_deleted_is_not_imported(new_project: Any, cluster: LiveCluster) -> None:
    """An object `kubectl delete` left Terminating would go all the same once its finalizer
    lets it: `stackwright import` and `import_` refuse it, naming the finalizer."""
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "ConfigMap", "held", p.ns, data={"a": "1"})
    finalizers = '{"metadata":{"finalizers":%s}}'
    patch = ("patch", "configmap", "held", "-n", p.ns, "--type", "merge", "-p")
    cluster.kubectl(*patch, finalizers % '["example.com/hold"]')
    cluster.kubectl("delete", "configmap", "held", "-n", p.ns, "--wait=false")
    try:
        refused = p.sw(
            "import", "--yes", "kubernetes:core/v1:ConfigMap", "held", f"{p.ns}/held", rc=2
        )
        assert "it is being deleted (since " in one_line(refused)
        assert "held by finalizers: example.com/hold" in one_line(refused)
        p.program(
            """
            k8s.core.v1.Namespace("ns", metadata={"name": NS})
            k8s.core.v1.ConfigMap("held", metadata={"name": "held", "namespace": NS},
                                  data={"a": "1"}, opts=sw.ResourceOptions(import_=f"{NS}/held"))
            """
        )
        (failure,) = p.preview(rc=1).summary["failures"]
        assert "it is being deleted (since " in failure
        assert "held" not in p.resources()
    finally:
        cluster.kubectl(*patch, finalizers % "null")


def test_import_option_checks_the_object_first(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    """`import_` adopts what `stackwright import` would: an object that exists and no other
    stack's resource manages. Its preview says so already, as the up would."""
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    other = Project(
        tmp_path / "other", "other", p.ns, {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
    )
    other.program('k8s.core.v1.ConfigMap("theirs", metadata={"name": "theirs", "namespace": NS})\n')
    other.up()
    theirs = other.urn("kubernetes:core/v1:ConfigMap", "theirs")

    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("mine", metadata={"name": "theirs", "namespace": NS},
                              opts=sw.ResourceOptions(import_=f"{NS}/theirs"))
        """
    )
    refusal = (
        f"cannot import {p.ns}/theirs: stack dev of project other manages it as {theirs}; "
        f"remove it from that stack first (`stackwright state delete {theirs} --stack dev` "
        "there keeps "
        "the object)"
    )
    mine = f"__main__.py:{PRELUDE_LINES + 3}: kubernetes:core/v1:ConfigMap mine"
    for result in (p.preview(rc=1), p.up(rc=1)):
        assert result.summary["failures"] == [f"{mine}: {refusal}"]  # at the line declaring it
    cm = live(cluster, "configmap", "theirs", p.ns)
    assert cm["metadata"]["annotations"]["stackwright.io/urn"] == theirs, "left as it was"
    # Its ApplySet parent is that stack's bookkeeping, not an object to adopt.
    parent = f"{p.ns}/{other.applyset_parent}"
    bookkeeping = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "parent", parent, rc=2)
    assert one_line(bookkeeping) == (
        f"error: cannot import {parent}: it is the ApplySet parent Stackwright keeps for "
        "stack dev of project other (how kubectl finds the stack's objects); no program "
        "manages it"
    )
    assert "mine" not in p.resources()

    # An object that is not there: the preview fails as the up does.
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("ghost", metadata={"name": "ghost", "namespace": NS},
                              opts=sw.ResourceOptions(import_=f"{NS}/ghost"))
        """
    )
    (failure,) = p.preview(rc=1).summary["failures"]
    assert failure.endswith(
        f"cannot import {p.ns}/ghost: no ConfigMap of that name exists in the cluster"
    )

    # Once the other stack lets go of it (`state delete` keeps the object), it can be adopted.
    other.sw("state", "delete", "--yes", theirs)
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("mine", metadata={"name": "theirs", "namespace": NS},
                              opts=sw.ResourceOptions(import_=f"{NS}/theirs"))
        """
    )
    assert p.up().ops() == {"mine": "import"}
    assert p.resources()["mine"]["id"] == f"{p.ns}/theirs"

    # A field the program may differ in (`ignore_changes`) is taken as the object has it,
    # as Pulumi's import does: no conflict with the manager that set it, nothing changed.
    create(cluster, "ConfigMap", "hand", p.ns, data={"a": "live", "b": "1"})
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("mine", metadata={"name": "theirs", "namespace": NS})
        k8s.core.v1.ConfigMap("hand", metadata={"name": "hand", "namespace": NS},
                              data={"a": "program", "b": "1"},
                              opts=sw.ResourceOptions(import_=f"{NS}/hand",
                                                      ignore_changes=["data.a"]))
        """
    )
    assert p.preview().changed() == {"hand": "import"}
    assert p.up().ops() == {"hand": "import"}
    assert live(cluster, "configmap", "hand", p.ns)["data"] == {"a": "live", "b": "1"}
    assert p.preview().changed() == {}


# --- resource options ------------------------------------------------------------------------------


def test_protect(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("vault", metadata={"name": "vault", "namespace": NS}, data={"a": "1"},
                              opts=sw.ResourceOptions(protect=True))
        """
    )
    p.up()
    assert p.resources()["vault"]["protect"] is True

    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    refused = p.up(rc=2)
    urn = p.urn("kubernetes:core/v1:ConfigMap", "vault")
    assert one_line(refused).startswith(f"error: up refused: resource {urn} cannot be deleted")
    # The preview fails on it as Pulumi's does, in the same words, with the same exit code.
    words = refused.of("error")[0]["message"].removeprefix("up refused: ")
    for planned in (p.preview(rc=2), p.sw("destroy", "--preview-only", "--json", rc=2)):
        (failure,) = planned.summary["failures"]
        assert f"{failure.partition(': ')[2]}; nothing was changed" == words
        assert planned.summary["exitCode"] == 2
    assert "state unprotect" in refused.of("error")[0]["message"]
    assert get(cluster, "configmap", "vault", p.ns) is not None
    assert "vault" in p.resources()

    p.sw("state", "unprotect", "--yes", urn)
    assert p.resources()["vault"]["protect"] is False
    up = p.up()
    assert up.ops() == {"vault": "delete"}
    assert get(cluster, "configmap", "vault", p.ns) is None
    assert "vault" not in p.resources()


def test_ignore_changes(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                              data={"a": A, "b": B},
                              opts=sw.ResourceOptions(ignore_changes=["data.a"]))
        """
    p.program('A, B = "1", "1"\n' + textwrap.dedent(body))
    p.up()
    version = live(cluster, "configmap", "cfg", p.ns)["metadata"]["resourceVersion"]

    p.program('A, B = "2", "1"\n' + textwrap.dedent(body))
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    cm = get(cluster, "configmap", "cfg", p.ns)
    assert cm is not None and cm["metadata"]["resourceVersion"] == version

    # Another field still updates, and the ignored one keeps its recorded value.
    p.program('A, B = "3", "2"\n' + textwrap.dedent(body))
    planned = p.preview()
    (step,) = [e for e in planned.of("step-started") if e["name"] == "cfg"]
    assert step["op"] == "update" and [c["path"] for c in step["changes"]] == ["data.b"]
    p.up()
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"a": "1", "b": "2"}

    # What ignore_changes is for: another manager owns the field now (kubectl scale, an
    # HPA). An update of another field leaves it as that manager set it, no conflict.
    scaled = """
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web", image=IMAGE, replicas=2),
                               opts=sw.ResourceOptions(ignore_changes=["spec.replicas"]))
        """
    p.program(
        'A, B, IMAGE = "3", "2", "nginx:1.29"\n' + textwrap.dedent(body) + textwrap.dedent(scaled)
    )
    p.up()
    cluster.kubectl("scale", "deployment", "web", "-n", p.ns, "--replicas=3")
    p.program(
        'A, B, IMAGE = "3", "2", "nginx:1.30"\n' + textwrap.dedent(body) + textwrap.dedent(scaled)
    )
    assert p.preview().changed() == {"web": "update"}
    assert p.up().ops()["web"] == "update"
    spec = live(cluster, "deployment", "web", p.ns)["spec"]
    assert (spec["replicas"], spec["template"]["spec"]["containers"][0]["image"]) == (
        3,
        "nginx:1.30",
    )
    assert p.preview().changed() == {}


def test_a_targeted_delete_first_replacement_leaves_its_dependents_depending_on_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Its dependents' references are dropped while it is deleted (a refused replacement
    # must leave a state that loads); once it is made again they name it again, though
    # `--target` leaves them out of the run: a `destroy` must still delete them first.
    p = new_project()
    program = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        db = k8s.core.v1.ConfigMap(
            "db", metadata={"name": "db", "namespace": NS}, data={"v": V},
            opts=sw.ResourceOptions(replace_on_changes=["data"], delete_before_replace=True),
        )
        k8s.core.v1.ConfigMap("app", metadata={"name": "app", "namespace": NS}, data={"v": "1"},
                              opts=sw.ResourceOptions(depends_on=[db]))
        """
    p.program('V = "1"\n' + textwrap.dedent(program))
    p.up()
    db = p.urn("kubernetes:core/v1:ConfigMap", "db")
    assert db in p.resources()["app"]["dependencies"]
    p.program('V = "2"\n' + textwrap.dedent(program))
    assert p.up("--target", db).ops() == {"db": "replace"}
    assert live(cluster, "configmap", "db", p.ns)["data"] == {"v": "2"}
    assert db in p.resources()["app"]["dependencies"]
    assert p.preview().changed() == {}


def test_a_target_does_not_wait_for_a_new_resource_a_rule_only_orders_before_what_it_needs(
    new_project: Any, cluster: LiveCluster
) -> None:
    # A Role is ordered before the Deployments of its namespace by Kubernetes' rules, which
    # selection does not follow: a new Role left out of `--target` must not leave the
    # Deployment the target needs `not done` (seed 422 of the model test's exploration:
    # the preview exited 1, `web failed or was not done` for an unchanged Deployment).
    p = new_project()
    program = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        web = k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec={
            "replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}}})
        k8s.core.v1.ConfigMap("app", metadata={"name": "app", "namespace": NS}, data={"v": V},
                              opts=sw.ResourceOptions(depends_on=[web]))
        """
    p.program('V = "1"\n' + textwrap.dedent(program))
    p.up()
    role = """
        k8s.rbac.v1.Role("reader", metadata={"name": "reader", "namespace": NS},
                         rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
        """
    p.program('V = "2"\n' + textwrap.dedent(program) + textwrap.dedent(role))
    app = p.urn("kubernetes:core/v1:ConfigMap", "app")
    assert p.preview("--target", app).changed() == {"app": "update"}
    assert p.up("--target", app).changed() == {"app": "update"}
    assert p.preview().changed() == {"reader": "create"}


def test_targets(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    v1 = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS}, data={"v": V})
        k8s.core.v1.ConfigMap("b", metadata={"name": "b", "namespace": NS}, data={"v": V})
        """
    p.program('V = "1"\n' + textwrap.dedent(v1))
    p.up()
    v2 = """
        base = k8s.core.v1.ConfigMap("base", metadata={"name": "base", "namespace": NS},
                                     data={"v": V})
        k8s.core.v1.ConfigMap("top", metadata={"name": "top", "namespace": NS},
                              data={"base": base.metadata["name"]})
        k8s.core.v1.ConfigMap("other", metadata={"name": "other", "namespace": NS}, data={"v": V})
        """
    p.program('V = "2"\n' + textwrap.dedent(v1) + textwrap.dedent(v2))
    top = p.urn("kubernetes:core/v1:ConfigMap", "top")
    a = p.urn("kubernetes:core/v1:ConfigMap", "a")

    planned = p.preview("--target", top)
    assert planned.changed() == {"base": "create", "top": "create"}
    up = p.up("--target", top, "--target", a)
    assert up.ops() == {"base": "create", "top": "create", "a": "update"}
    assert names(cluster, "configmaps", p.ns) >= {"a", "b", "base", "top"}
    assert get(cluster, "configmap", "other", p.ns) is None
    assert live(cluster, "configmap", "b", p.ns)["data"] == {"v": "1"}
    assert live(cluster, "configmap", "top", p.ns)["data"] == {"base": "base"}
    state = p.resources()
    assert "other" not in state and state["b"]["inputs"]["data"] == {"v": "1"}
    # What the targeted run left out is still to do.
    assert p.preview().changed() == {"b": "update", "other": "create"}

    # Forgetting base alone would leave top referring to nothing; with its dependents it goes.
    base = p.urn("kubernetes:core/v1:ConfigMap", "base")
    refused = p.sw("state", "delete", "--yes", base, rc=2)
    assert f"{top} (depends on it)" in one_line(refused)
    forgot = p.sw("state", "delete", "--yes", base, "--target-dependents")
    assert forgot.out.count("Removed ") == 2 and not {"base", "top"} & set(p.resources())
    assert live(cluster, "configmap", "top", p.ns)  # the objects themselves stay


def test_replace_exclude_target_dependents_and_expect_no_changes(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        base = k8s.core.v1.ConfigMap("base", metadata={"name": "base", "namespace": NS},
                                     data={"v": V})
        k8s.core.v1.ConfigMap("top", metadata={"name": "top", "namespace": NS},
                              data={"base": base.data["v"]})
        k8s.core.v1.ConfigMap("other", metadata={"name": "other", "namespace": NS}, data={"v": V})
        """
    p.program('V = "1"\n' + textwrap.dedent(body))
    p.up()
    base, top = (p.urn("kubernetes:core/v1:ConfigMap", n) for n in ("base", "top"))

    # Nothing to do: the CI gate passes, and `up` with it runs.
    p.preview("--expect-no-changes")
    gated = p.up("--expect-no-changes")  # a preview, then the up
    assert [e["counts"] for e in gated.of("summary")] == [{"same": 4}, {"same": 4}]
    assert [e["exitCode"] for e in gated.of("summary")] == [0, 0]

    # --replace: a new object under the same name, though nothing about it changed.
    uid = live(cluster, "configmap", "base", p.ns)["metadata"]["uid"]
    replaced = p.up("--replace", base)
    assert replaced.ops() == {"base": "replace"}
    (started,) = [e for e in replaced.of("step-started") if e["name"] == "base"]
    assert started["replaceReasons"] == ["asked for by --replace"]
    assert live(cluster, "configmap", "base", p.ns)["metadata"]["uid"] != uid

    # A change: the gate fails (exit 1) and `up` with it changes nothing.
    p.program('V = "2"\n' + textwrap.dedent(body))
    gate = p.sw("preview", "--expect-no-changes", rc=1)
    assert one_line(gate).startswith("error: --expect-no-changes: the preview shows changes")
    refused = p.up("--expect-no-changes", rc=1)
    assert "nothing was changed" in refused.err and refused.of("summary")[0]["dryRun"]
    assert [e["exitCode"] for e in refused.of("summary")] == [1]  # the up never ran
    assert live(cluster, "configmap", "other", p.ns)["data"] == {"v": "1"}

    # --exclude with its dependents: only `other` changes.
    assert p.up("--exclude", base, "--exclude-dependents").ops() == {"other": "update"}
    assert live(cluster, "configmap", "top", p.ns)["data"] == {"base": "1"}
    # --target with its dependents: base and what reads it.
    assert p.up("--target", base, "--target-dependents").ops() == {
        "base": "update",
        "top": "update",
    }
    assert live(cluster, "configmap", "top", p.ns)["data"] == {"base": "2"}

    # destroy --exclude: top stays, with base (it reads base) and the namespace it lives in.
    gone = p.sw("destroy", "--yes", "--json", "--exclude", top)
    assert gone.ops() == {"other": "delete"}
    assert set(p.resources()) == {"ns", "base", "top"}
    assert names(cluster, "configmaps", p.ns) >= {"base", "top"}

    bad = p.sw("up", "--yes", "--exclude-dependents", rc=2)
    assert one_line(bad) == (
        "error: --exclude-dependents needs an --exclude: add the resources to leave out"
    )

    # Behind an excluded resource not created yet, each one not done names it, not a failure.
    chain = """
        new = k8s.core.v1.ConfigMap("new", metadata={"name": "new", "namespace": NS}, data={})
        mid = k8s.core.v1.ConfigMap("mid", metadata={"name": "mid", "namespace": NS},
                                    data={"new": new.metadata["name"]})
        k8s.core.v1.ConfigMap("end", metadata={"name": "end", "namespace": NS},
                              data={"mid": mid.metadata["name"]})
        """
    p.program('V = "2"\n' + textwrap.dedent(body) + textwrap.dedent(chain))
    skipped = p.preview("--exclude", p.urn("kubernetes:core/v1:ConfigMap", "new"), rc=2)
    cm = "kubernetes:core/v1:ConfigMap"
    assert skipped.summary["notDone"] == [
        f"{cm} mid: it needs {cm} new, which is excluded and not created yet: exclude this one "
        "too, or add --exclude-dependents",
        f"{cm} end: it needs {cm} mid, which needs {cm} new, which is excluded and not created "
        "yet: exclude this one too, or add --exclude-dependents",
    ]


# --- failures ------------------------------------------------------------------------------------


def test_failed_rollout_reports_its_cause(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        broken = k8s.apps.v1.Deployment("broken", metadata={"name": "broken", "namespace": NS},
                                        spec=app_spec("broken", image=IMAGE))
        k8s.core.v1.ConfigMap("independent", metadata={"name": "independent", "namespace": NS},
                              data={"a": "1"})
        k8s.core.v1.ConfigMap("dependent", metadata={"name": "dependent", "namespace": NS},
                              data={"image": broken.spec["template"]["spec"]["containers"][0]["image"]})
        """
    p.program('IMAGE = "nginx:doesnotexist"\n' + textwrap.dedent(body))
    started = time.monotonic()
    up = p.sw("up", "--yes", "--json", rc=1, process=True)  # a failed up's own exit code
    assert time.monotonic() - started < 30, (
        "the failure is reported within seconds, not at a timeout"
    )
    (failed,) = [e for e in up.of("step-done") if not e["ok"]]
    assert failed["name"] == "broken"
    assert failed["elapsed"] >= 1, "the failed step reports how long it waited"
    # The cause, from the pod's status: the kubelet alternates ErrImagePull and ImagePullBackOff.
    assert "doesnotexist" in failed["error"], failed["error"]
    assert re.search(r"ImagePullBackOff|ErrImagePull", failed["error"]), failed["error"]
    assert any("doesnotexist" in f for f in up.summary["failures"])
    assert "ImagePullBackOff" in up.out
    assert up.ops()["independent"] == "create"
    assert get(cluster, "configmap", "independent", p.ns) is not None
    assert [e["name"] for e in up.of("step-skipped")] == ["dependent"]
    assert any("dependent" in item for item in up.summary["notDone"])
    assert get(cluster, "configmap", "dependent", p.ns) is None
    # The object exists though it never became ready: the state knows it.
    assert p.resources()["broken"]["id"] == f"{p.ns}/broken"
    assert "dependent" not in p.resources()
    assert p.history()[0]["result"] == "failed"

    # Fixing the program finishes the job: the failed object is updated, not re-created.
    uid = live(cluster, "deployment", "broken", p.ns)["metadata"]["uid"]
    p.program('A, B, IMAGE = "3", "2", "nginx:1.29"\n' + textwrap.dedent(body))
    fixed = p.up()
    assert fixed.ops() == {"broken": "update", "dependent": "create"}
    assert live(cluster, "deployment", "broken", p.ns)["metadata"]["uid"] == uid
    dependent = get(cluster, "configmap", "dependent", p.ns)
    assert dependent is not None and dependent["data"] == {"image": "nginx:1.29"}


def test_reverting_a_rollout_that_missed_its_deadline_waits_for_the_revert(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Put back to the ReplicaSet that served before, the Deployment is first reported with
    # the new generation observed and the stalled rollout's ProgressDeadlineExceeded still
    # on it (kube-controller-manager keeps it until it sees progress): that is not a failure.
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.apps.v1.Deployment("back", metadata={"name": "back", "namespace": NS},
                               spec={**app_spec("back", image=IMAGE), "progressDeadlineSeconds": 4})
        """
    p.program('IMAGE = "nginx:1.29"\n' + textwrap.dedent(body))
    p.up()
    p.program('IMAGE = "nginx:doesnotexist"\n' + textwrap.dedent(body))
    stalled = p.up(rc=1)
    (failed,) = [e for e in stalled.of("step-done") if not e["ok"]]
    assert "exceeded its progress deadline" in failed["error"], failed["error"]

    p.program('IMAGE = "nginx:1.29"\n' + textwrap.dedent(body))
    reverted = p.up()
    assert reverted.ops() == {"back": "update"}
    d = live(cluster, "deployment", "back", p.ns)
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    assert {c["type"]: c["reason"] for c in d["status"]["conditions"]}["Progressing"] == (
        "NewReplicaSetAvailable"
    )


def test_an_object_in_a_namespace_nobody_made_fails_naming_it_not_the_applyset(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`up --yes` meets the missing namespace first at the stack's ApplySet parent, a
    ConfigMap the user never declared: the failure named it
    (`x: stackwright-applyset-….dev: namespaces "…" not found`). The program's to fix, as
    a field the server refuses is: at the resource's line, exit 2 where nothing changed (a
    server's message and exit 1, no line, before)."""
    p = new_project()
    p.program('k8s.core.v1.ConfigMap("x", metadata={"name": "x", "namespace": NS}, data={})\n')
    said = (
        f"__main__.py:{PRELUDE_LINES + 1}: kubernetes:core/v1:ConfigMap x: "
        f'namespaces "{p.ns}" not found: declare namespace {p.ns} in the program (a Namespace '
        "resource is applied before what goes in it) or create it, or put the object in a "
        "namespace that exists"
    )
    for run in (p.preview(rc=2), p.up(rc=2)):
        (failed,) = [e for e in run.of("step-done") if not e["ok"]]
        assert failed["error"] == said
        assert run.summary["failures"] == [said]
    shown = p.sw("preview", rc=2)  # as the display says it
    assert f"Failures:\n    {said}\n" in shown.out and "Traceback" not in shown.out + shown.err
    assert get(cluster, "namespace", p.ns) is None
    # Beside a change that was made, the failed operation's exit 1, at the same line.
    p.program(
        'k8s.core.v1.ConfigMap("x", metadata={"name": "x", "namespace": NS}, data={})\n'
        'k8s.core.v1.Namespace("other", metadata={"name": NS + "-other"})\n'
    )
    assert p.up(rc=1).summary["failures"] == [said]


def test_a_delete_first_replacement_into_a_namespace_nobody_made_leaves_the_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    # The new object's dry run over the old one is refused for its namespace: a verdict on
    # the new object whatever forces the replacement, so the old one is not deleted first.
    p = new_project()
    declared = (
        'k8s.core.v1.Namespace("ns", metadata={{"name": NS}})\n'
        'k8s.core.v1.ConfigMap("c", metadata={{"name": "c", "namespace": {ns}}}, data={{}},\n'
        "                      opts=sw.ResourceOptions(delete_before_replace=True))\n"
    )
    p.program(declared.format(ns="NS"))
    p.up()
    p.program(declared.format(ns='NS + "-gone"'))
    (refused,) = p.up(rc=2).summary["failures"]
    assert refused.startswith(f"__main__.py:{PRELUDE_LINES + 2}: "), refused
    assert refused.endswith("(a replacement that deletes the object first: it is left as it is)")
    assert live(cluster, "configmap", "c", p.ns)["metadata"]["name"] == "c"


def test_service_whose_named_target_port_no_container_declares_fails_in_seconds(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`targetPort: "http"` that no container names: the cluster gives the Pods no port
    (an EndpointSlice without ports), so the Service serves nothing. `up` called it ready
    ("1 ready endpoint"); it fails within seconds, saying what to fix."""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web"))
        k8s.core.v1.Service("web", metadata={"name": "web", "namespace": NS},
                            spec={"selector": {"app": "web"},
                                  "ports": [{"port": 80, "targetPort": TARGET}]})
        """
    p.program('TARGET = "http"\n' + textwrap.dedent(body))
    started = time.monotonic()
    up = p.up(rc=1)
    assert time.monotonic() - started < 30, "the failure is reported within seconds"
    (failed,) = [e for e in up.of("step-done") if not e["ok"]]
    assert (failed["type"], failed["name"]) == ("kubernetes:core/v1:Service", "web")
    assert (
        'targetPort "http" (of port 80) is a container port name that none of the 1 Pod '
        in (failed["error"])
    )
    assert 'name a containerPort "http"' in failed["error"]

    p.program("TARGET = 80\n" + textwrap.dedent(body))
    assert p.up().ops()["web"] == "update"


def test_crd_and_custom_objects_in_one_program(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.apiextensions.CustomResource(
            "small", api_version="lifecycle.example.com/v1", kind="Gadget",
            metadata={"name": "small", "namespace": NS}, spec={"size": 1})
        k8s.apiextensions.v1.CustomResourceDefinition(
            "gadgets",
            metadata={"name": "gadgets.lifecycle.example.com"},
            spec={
                "group": "lifecycle.example.com",
                "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [{
                    "name": "v1", "served": True, "storage": True,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True}},
                    }},
                }],
            })
        k8s.apiextensions.CustomResource(
            "big", api_version="lifecycle.example.com/v1", kind="Gadget",
            metadata={"name": "big", "namespace": NS}, spec={"size": 9})
        """
    )
    planned = p.preview()
    assert planned.changed() == {
        "ns": "create",
        "small": "create",
        "gadgets": "create",
        "big": "create",
    }
    up = p.up()
    assert up.summary["counts"] == {"create": 4}
    crd_done = up.index("step-done", "gadgets")
    assert (
        up.index("step-started", "small") > crd_done and up.index("step-started", "big") > crd_done
    )
    assert names(cluster, "gadgets.lifecycle.example.com", p.ns) == {"small", "big"}
    big = get(cluster, "gadgets.lifecycle.example.com", "big", p.ns)
    assert big is not None and big["spec"] == {"size": 9}
    assert p.preview().changed() == {}

    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    down = p.up()
    assert down.ops() == {"small": "delete", "big": "delete", "gadgets": "delete"}
    crd_started = down.index("step-started", "gadgets")
    assert down.index("step-done", "small") < crd_started
    assert down.index("step-done", "big") < crd_started
    assert get(cluster, "crd", "gadgets.lifecycle.example.com") is None


def test_two_providers(new_project: Any, cluster: LiveCluster) -> None:
    second, _ = lifecycle.start("second")
    try:
        p = new_project()
        p.program(
            f"""
            other = k8s.Provider("second", kubeconfig={str(second.kubeconfig)!r})
            on_other = sw.ResourceOptions(provider=other)
            k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
            k8s.core.v1.Namespace("ns2", metadata={{"name": NS}}, opts=on_other)
            k8s.core.v1.ConfigMap("here", metadata={{"name": "here", "namespace": NS}},
                                  data={{"at": "first"}})
            k8s.core.v1.ConfigMap("there", metadata={{"name": "there", "namespace": NS}},
                                  data={{"at": "second"}}, opts=on_other)
            """
        )
        up = p.up()
        assert up.summary["counts"] == {"create": 5}

        def other(*args: str) -> str:
            env = {**os.environ, "KUBECONFIG": str(second.kubeconfig)}
            done = subprocess.run(
                ["kubectl", *args], capture_output=True, text=True, env=env, timeout=60
            )
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert names(cluster, "configmaps", p.ns) - {p.applyset_parent, "kube-root-ca.crt"} == {
            "here"
        }
        there = json.loads(other("get", "configmap", "there", "-n", p.ns, "-o", "json"))
        assert there["data"] == {"at": "second"}
        assert "configmap/here" not in other("get", "configmaps", "-n", p.ns, "-o", "name").split()
        state = p.resources()
        assert state["there"]["provider"] == p.urn("stackwright:providers:kubernetes", "second")
        # A kubeconfig file's path holds no credentials (its contents would be a secret).
        assert state["second"]["secretPaths"] == []
        assert state["second"]["inputs"]["kubeconfig"] == str(second.kubeconfig)

        # Destroy runs without the program: each object's provider comes from the state.
        p.sw("destroy", "--yes", "--json")
        assert other("get", "configmap", "there", "-n", p.ns, "--ignore-not-found") == ""
        assert get(cluster, "configmap", "here", p.ns) is None
    finally:
        lifecycle.stop("second")


# --- bad input and locks -------------------------------------------------------------------------------


def test_stack_show_and_graph(new_project: Any, cluster: LiveCluster) -> None:
    """`stackwright stack` lists what the state holds and `stack graph` draws the order
    `up` follows, Kubernetes' own rules included (as `pulumi stack` / `stack graph`)."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        app = sw.ComponentResource("acme:web:App", "shop")
        cfg = k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                                    data={"a": "1"}, opts=sw.ResourceOptions(parent=app))
        k8s.core.v1.ConfigMap("reader", metadata={"name": "reader", "namespace": NS},
                              data={"from": cfg.metadata["name"]},
                              opts=sw.ResourceOptions(parent=app, protect=True))
        app.register_outputs({"config": cfg.metadata["name"], "key": sw.Output.secret("c0mp-key")})
        sw.export("token", sw.Output.secret("s3cr3t-value"))
        """
    )
    shown = p.sw("stack").out
    assert "Last operation: none yet" in shown and "Resources (0):" in shown
    p.up()
    shown = p.sw("stack").out
    assert "Last operation: up succeeded" in shown and "(4 create)" in shown
    rows = {line.split()[1]: line for line in shown.splitlines() if "kubernetes:" in line}
    assert set(rows) == {"ns", "cfg", "reader"}
    assert f"{p.ns}/reader" in rows["reader"] and "(protected)" in rows["reader"]
    assert "acme:web:App" in shown and "token: [secret]" in shown
    assert "s3cr3t-value" not in shown
    assert "s3cr3t-value" in p.sw("stack", "--show-secrets").out
    urns = p.sw("stack", "--show-urns").out
    reader = p.urn("acme:web:App$kubernetes:core/v1:ConfigMap", "reader")
    assert reader in urns
    listed = json.loads(p.sw("stack", "--json").out)
    assert listed["lastOperation"]["counts"] == {"create": 4}
    assert {r["name"]: r["protect"] for r in listed["resources"]}["reader"] is True
    assert listed["outputs"] == {"token": "[secret]"}
    # A component shows what it registered (register_outputs), its secret sealed in the
    # state and its export.
    shop = {r["name"]: r for r in listed["resources"]}["shop"]
    assert shop["outputs"] == {"config": "cfg", "key": "[secret]"}
    assert "outputs" not in {r["name"]: r for r in listed["resources"]}["cfg"]
    assert 'outputs: {"config": "cfg", "key": "[secret]"}' in shown
    revealed = json.loads(p.sw("stack", "--json", "--show-secrets").out)
    assert {r["name"]: r for r in revealed["resources"]}["shop"]["outputs"]["key"] == "c0mp-key"
    exported = p.sw("stack", "export").out
    (component,) = [r for r in json.loads(exported)["resources"] if r["type"] == "acme:web:App"]
    assert component["outputs"]["config"] == "cfg" and "@secret" in component["outputs"]["key"]
    assert "c0mp-key" not in exported and "c0mp-key" not in shown

    printed = p.sw("stack", "graph", "--json").out
    assert printed.endswith("}\n")  # a line: `… | tee graph.json` and shells end it there
    graph = json.loads(printed)
    edges = {
        (e["from"].rsplit("::", 1)[1], e["to"].rsplit("::", 1)[1], e["why"]) for e in graph["edges"]
    }
    assert edges == {
        ("cfg", "shop", "parent"),
        ("reader", "shop", "parent"),
        ("reader", "cfg", "declared"),
        ("cfg", "ns", "namespace-first"),
        ("reader", "ns", "namespace-first"),
    }
    assert len(graph["nodes"]) == 4
    only = json.loads(p.sw("stack", "graph", "--json", "--ignore-parent-edges").out)
    assert {e["why"] for e in only["edges"]} == {"declared", "namespace-first"}
    dot_file = p.root / "graph.dot"
    p.sw("stack", "graph", str(dot_file))
    dot = dot_file.read_text()
    assert dot.startswith(f'strict digraph "{p.name}/dev" {{') and dot.rstrip().endswith("}")
    assert f'"{reader}" [label="reader\\nkubernetes:core/v1:ConfigMap"];' in dot
    assert 'style=dashed, label="namespace-first"' in dot
    assert dot.count(" -> ") == 5


def test_state_rename_follows_a_rename_in_the_program(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`state rename` instead of an alias (as `pulumi state rename`): the renamed resource
    keeps its object, what reads it follows, and the next `up` only re-marks the object."""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        first = k8s.core.v1.ConfigMap("{name}", metadata={{"name": "cfg", "namespace": NS}},
                                      data={{"a": "1"}})
        k8s.core.v1.ConfigMap("reader", metadata={{"name": "reader", "namespace": NS}},
                              data={{"from": first.metadata["name"]}})
        """
    p.program(body.format(name="settings"))
    p.up()
    uid = live(cluster, "configmap", "cfg", p.ns)["metadata"]["uid"]
    p.program(body.format(name="config"))
    # Without help the rename is a create and a delete; the reader's object stays as it
    # is (the name it reads is the same), so its new dependency is only recorded: same.
    planned = p.preview()
    assert planned.changed() == {"config": "create", "settings": "delete"}
    assert planned.ops("step-started")["reader"] == "same"

    old = p.urn("kubernetes:core/v1:ConfigMap", "settings")
    missing = one_line(p.sw("state", "rename", old + "x", "config", "--yes", rc=2))
    assert f"no resource {old}x in stack dev; did you mean {old}?" in missing
    taken = one_line(p.sw("state", "rename", old, "reader", "--yes", rc=2))
    assert "already has a resource" in taken and taken.endswith("::reader")
    renamed = p.sw("state", "rename", old, "config", "--yes").out
    assert p.urn("kubernetes:core/v1:ConfigMap", "config") in renamed

    assert p.resources()["reader"]["dependencies"] == [
        p.urn("kubernetes:core/v1:ConfigMap", "config")
    ]
    assert p.preview().changed() == {"config": "update"}  # its URN mark only
    p.up()
    cm = live(cluster, "configmap", "cfg", p.ns)
    assert cm["metadata"]["uid"] == uid
    assert cm["metadata"]["annotations"]["stackwright.io/urn"] == p.urn(
        "kubernetes:core/v1:ConfigMap", "config"
    )
    assert set(p.resources()) == {"ns", "config", "reader"}


def test_program_that_raises_changes_nothing(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("new", metadata={"name": "new", "namespace": NS}, data={"a": "1"})
        settings = {"replicas": 1}
        replicas = settings["replcas"]
        """
    )
    line = PRELUDE_LINES + 5  # textwrap.dedent keeps the leading blank line
    for command in (("preview", "--json"), ("up", "--yes", "--json")):
        failed = p.sw(*command, rc=2)
        message = one_line(failed)
        assert f"__main__.py:{line}" in message and "KeyError" in message, message
    assert get(cluster, "configmap", "new", p.ns) is None
    assert len(p.history()) == 1
    assert set(p.resources()) == {"ns"}


def test_an_apply_nothing_uses_prints_in_up_and_one_that_raises_fails_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        cfg = k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS})
        cfg.metadata["uid"].apply(lambda uid: print("cfg has uid", uid))
        """
    )
    assert "cfg has uid" not in p.sw("preview").out  # not known before it is created
    up = p.sw("up", "--yes")
    uid = live(cluster, "configmap", "cfg", p.ns)["metadata"]["uid"]
    assert up.out.count("cfg has uid") == 1 and f"cfg has uid {uid}" in up.out, up.out

    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        cfg = k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                                    data={"a": "1"})
        cfg.data.apply(lambda data: data["missing"])
        """
    )
    failed = p.up(rc=1)
    line = PRELUDE_LINES + 5  # textwrap.dedent keeps the leading blank line
    assert failed.summary["failures"] == [
        f"__main__.py:{line}: an apply callback failed: KeyError: 'missing'"
    ]
    # What was applied before the callback ran is in the cluster and the state.
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"a": "1"}
    assert p.resources()["cfg"]["inputs"]["data"] == {"a": "1"}


def test_duplicate_resource_names(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("twin", metadata={"name": "one", "namespace": NS}, data={"a": "1"})
        k8s.core.v1.ConfigMap("twin", metadata={"name": "two", "namespace": NS}, data={"a": "1"})
        """
    )
    failed = p.up(rc=2)
    assert "twin" in one_line(failed)
    assert get(cluster, "namespace", p.ns) is None
    assert p.history() == []


def test_unknown_target(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    nowhere = p.urn("kubernetes:core/v1:ConfigMap", "nowhere")
    failed = p.up("--target", nowhere, rc=2)
    assert nowhere in one_line(failed)
    # --json readers get the same line as the last event.
    (error,) = failed.events
    assert error == {"event": "error", "message": one_line(failed)[7:], "exitCode": 2}
    # Without a terminal to ask in, `up` (`destroy`, `refresh`) needs --yes: said before a
    # preview that would read the cluster only to be thrown away.
    for command in ("up", "destroy", "refresh"):
        refused = p.sw(command, rc=2)
        assert "--yes" in one_line(refused) and refused.out == "", refused.out
    assert get(cluster, "namespace", p.ns) is None
    assert p.history() == []


def test_a_missing_kubeconfig_or_context_is_one_line_before_anything_runs(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-kubeconfig"
    # Its own processes: bad input is one line and exit code 2 from the real command.
    p = new_project({"kubernetes:kubeconfig": str(missing)}, process=True)
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'k8s.core.v1.ConfigMap("a", metadata={"name": "a", "namespace": NS})\n'
    )
    for command in (("preview",), ("up", "--yes")):
        failed = p.sw(*command, rc=2)
        assert str(missing) in one_line(failed)
    p.sw("config", "set", "kubernetes:kubeconfig", str(cluster.kubeconfig))
    p.sw("config", "set", "kubernetes:context", "no-such-context")
    assert "no-such-context" in one_line(p.sw("up", "--yes", rc=2))
    assert get(cluster, "namespace", p.ns) is None and p.history() == []


def test_a_misspelt_key_is_refused_at_its_line_before_any_api_call(
    new_project: Any, cluster: LiveCluster
) -> None:
    # A key that is no field of a built-in kind's object, however deep, is the program's
    # mistake: one line naming its line, the path and the closest field, as a YAML program
    # gets, before anything reaches the cluster (it used to be the API server's wording in a
    # step's failure, exit 1, and no line).
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'spec = app_spec("web")\n'
        'spec["template"]["spec"]["containers"] = [{"name": "web", "imagee": "nginx"}]\n'
        'k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)\n'
    )
    line = PRELUDE_LINES + 4
    for command in (("preview",), ("preview", "--json"), ("up", "--yes", "--json")):
        assert one_line(p.sw(*command, rc=2)) == (
            f"error: __main__.py:{line}: Deployment 'web': "
            "spec.template.spec.containers[0].imagee: Container has no field 'imagee'; "
            "did you mean 'image'?"
        )
    assert get(cluster, "deployment", "web", p.ns) is None
    assert len(p.history()) == 1


def test_inputs_the_server_refuses_name_their_line_and_fail_a_preview_as_bad_input(
    new_project: Any, cluster: LiveCluster
) -> None:
    # A value of the wrong type is refused from the schema before anything runs (exit 2,
    # one line at the resource's line); what only the server knows to refuse (a ConfigMap
    # key, an object name), its dry run does: the preview says the server's reason and the
    # resource's line, exit 2, nothing changed.
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()  # a preview dry-runs only into namespaces that exist
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'spec = app_spec("web")\n'
        'spec["replicas"] = "3"\n'
        'k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)\n'
    )
    at = f"__main__.py:{PRELUDE_LINES + 4}: "
    for command in (("preview",), ("up", "--yes")):
        refused = one_line(p.sw(*command, rc=2))
        assert refused == (
            f"error: {at}kubernetes:apps/v1:Deployment web: spec.replicas is the string "
            '"3", where a Deployment takes an integer; nothing was changed'
        ), refused
    assert get(cluster, "deployment", "web", p.ns) is None
    # A ConfigMap key and an object name Kubernetes does not allow: each at its line.
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'k8s.core.v1.ConfigMap("keys", metadata={"name": "keys", "namespace": NS},\n'
        '                      data={"no spaces": "x"})\n'
        'k8s.core.v1.ConfigMap("named", metadata={"name": "Not_A_Name", "namespace": NS})\n'
    )
    failures = p.preview(rc=2).summary["failures"]
    assert len(failures) == 2, failures
    keys, named = sorted(failures)
    assert keys.startswith(f"__main__.py:{PRELUDE_LINES + 2}: "), keys
    assert "no spaces" in keys, keys
    assert named.startswith(f"__main__.py:{PRELUDE_LINES + 4}: "), named
    assert "Not_A_Name" in named, named
    shown = p.sw("preview", rc=2)  # as the display says it
    assert f"Failures:\n    {keys}\n" in shown.out and "Traceback" not in shown.out + shown.err
    # An `up` whose applies are all refused, nothing else changed, is bad input as its
    # preview is: exit 2, with the lines all the same (one that changed others exits 1).
    failed = p.up(rc=2)
    assert sorted(failed.summary["failures"]) == [keys, named]
    assert get(cluster, "configmap", "keys", p.ns) is None


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        pytest.param(
            'spec = app_spec("web")\n'
            'spec["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": True}}\n'
            'k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)\n',
            "kubernetes:apps/v1:Deployment web: spec.template.spec.containers[0].resources.limits"
            '.cpu is the boolean true, where a Deployment takes a quantity (a string such as "500m"'
            ' or "1Gi", or a number); nothing was changed',
            id="quantity",
        ),
        pytest.param(
            'k8s.core.v1.ConfigMap("c", metadata={"name": "a/b", "namespace": NS})\n',
            "kubernetes:core/v1:ConfigMap c: its metadata.name 'a/b' holds a '/', which no "
            "Kubernetes name may (a name is part of the object's URL): give it a name of "
            "lowercase letters, digits, '-' and '.'; nothing was changed",
            id="slash",
        ),
    ],
)
def test_refused_before_the_run(
    new_project: Any, cluster: LiveCluster, declared: str, said: str
) -> None:
    # What the server refuses, before the run, at the resource's line (exit 2), its
    # namespace not even created: `cpu: True` (a quantity is a string or a number); a name
    # holding '/', whose id (`namespace/name`) would name another object (the run read `b`
    # in a namespace `<ns>/a` and failed on the server's 404, naming nothing).
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + declared)
    line = PRELUDE_LINES + 1 + declared.count("\n")
    for command in (("preview",), ("up", "--yes")):
        refused = one_line(p.sw(*command, rc=2))
        assert refused == f"error: __main__.py:{line}: {said}", refused
    assert get(cluster, "namespace", p.ns) is None


def test_a_manifests_value_of_the_wrong_type_is_refused_at_its_line_in_the_manifest(
    new_project: Any, cluster: LiveCluster
) -> None:
    # What to fix is in the manifest the ConfigGroup loads, not at the program's line.
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    manifest = p.root / "app.yaml"
    manifest.write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: fine, namespace: {p.ns}}}\n---\n"
        f"apiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: {p.ns}}}\n"
        "spec:\n  ports:\n  - port: 80\n  - port: '443'\n"
    )
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'k8s.yaml.ConfigGroup("app", files=["app.yaml"])\n'
    )
    refused = one_line(p.sw("preview", rc=2))
    assert refused.startswith("error: app.yaml:11: kubernetes:core/v1:Service "), refused
    assert refused.endswith(
        '(from app.yaml (document 2)): spec.ports[1].port is the string "443", where a '
        "Service takes an integer; nothing was changed"
    ), refused
    assert get(cluster, "configmap", "fine", p.ns) is None


def test_a_stack_does_not_take_over_an_object_that_exists(
    new_project: Any, cluster: LiveCluster, tmp_path: Path
) -> None:
    first = new_project()
    first.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'k8s.core.v1.ConfigMap("shared", metadata={"name": "shared", "namespace": NS},\n'
        '                      data={"owner": "first"})\n'
    )
    first.up()
    create(cluster, "ConfigMap", "byhand", first.ns, data={"a": "1"})
    kubeconfig = {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
    second = Project(tmp_path / "second", "second", first.ns, kubeconfig)
    second.program(
        'k8s.core.v1.ConfigMap("shared", metadata={"name": "shared", "namespace": NS},\n'
        '                      data={"owner": "second"})\n'
        'k8s.core.v1.ConfigMap("byhand", metadata={"name": "byhand", "namespace": NS},\n'
        '                      data={"b": "2"})\n'
    )
    assert len(second.preview(rc=1).summary["failures"]) == 2  # the preview says so too
    failed = second.up(rc=1)
    main = second.root / "__main__.py"  # each at the line declaring it
    assert sorted(f.split(" already exists")[0] for f in failed.summary["failures"]) == [
        f"{main.name}:{PRELUDE_LINES + 1}: kubernetes:core/v1:ConfigMap shared: ConfigMap "
        f"{first.ns}/shared",
        f"{main.name}:{PRELUDE_LINES + 3}: kubernetes:core/v1:ConfigMap byhand: ConfigMap "
        f"{first.ns}/byhand",
    ]
    assert live(cluster, "configmap", "shared", first.ns)["data"] == {"owner": "first"}
    assert live(cluster, "configmap", "byhand", first.ns)["data"] == {"a": "1"}
    assert second.resources() == {}
    # So its destroy deletes nothing of theirs.
    second.sw("destroy", "--yes")
    assert names(cluster, "configmaps", first.ns) >= {"shared", "byhand"}


def test_a_users_configmap_with_the_applyset_parents_name_is_left_alone(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Only that namespace fails, with one line naming the ConfigMap and the fix (in the
    preview already); the user's ConfigMap is not changed, and once it is out of the way
    the up goes through."""
    p = new_project()
    create(cluster, "Namespace", p.ns)
    create(cluster, "ConfigMap", p.applyset_parent, p.ns, data={"mine": "yes"})
    before = live(cluster, "configmap", p.applyset_parent, p.ns)
    p.program(
        """
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS}, data={"a": "1"})
        other = k8s.core.v1.Namespace("other", metadata={"name": NS + "-b"})
        k8s.core.v1.ConfigMap("elsewhere", data={"a": "1"},
                              metadata={"name": "elsewhere", "namespace": other.metadata["name"]})
        """
    )
    where = f"ConfigMap {p.ns}/{p.applyset_parent}"
    previewed = p.sw("preview", rc=1)  # the preview finds it already, writing nothing
    assert f"{where} is in the way" in previewed.out and "Traceback" not in previewed.err
    failed = p.up(rc=1)
    assert failed.summary["failures"] == [
        f"kubernetes:core/v1:ConfigMap cfg: {where} is in the way: stack dev keeps its ApplySet "
        "parent under that name, and this ConfigMap (no applyset.kubernetes.io/id label) is not "
        "one; Stackwright will not change it: rename or delete it, then run the command again"
    ]
    assert failed.ops() == {"cfg": "create", "other": "create", "elsewhere": "create"}
    assert live(cluster, "configmap", "elsewhere", f"{p.ns}-b")["data"] == {"a": "1"}
    assert get(cluster, "configmap", "cfg", p.ns) is None
    after = live(cluster, "configmap", p.applyset_parent, p.ns)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["data"] == {"mine": "yes"} and "labels" not in after["metadata"]
    text = p.sw("up", "--yes", rc=1)
    assert "Traceback" not in text.err and f"{where} is in the way" in text.out

    cluster.kubectl("delete", "configmap", p.applyset_parent, "-n", p.ns)
    assert p.up().summary["ok"]
    parent = live(cluster, "configmap", p.applyset_parent, p.ns)
    assert "applyset.kubernetes.io/id" in parent["metadata"]["labels"]
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"a": "1"}
    p.sw("destroy", "--yes")


def test_a_retained_object_stays_unmarked(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
        'k8s.core.v1.ConfigMap("kept", metadata={"name": "kept", "namespace": NS},\n'
        '    data={"a": "1"}, opts=sw.ResourceOptions(retain_on_delete=True))\n'
    )
    p.up()
    assert (
        "stackwright.io/urn" in live(cluster, "configmap", "kept", p.ns)["metadata"]["annotations"]
    )
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    assert p.up().ops() == {"kept": "delete"}
    kept = live(cluster, "configmap", "kept", p.ns)
    assert kept["data"] == {"a": "1"}
    assert not {"stackwright.io/urn", "stackwright.io/stack"} & set(
        kept["metadata"].get("annotations") or {}
    )
    assert not {"applyset.kubernetes.io/part-of", "app.kubernetes.io/managed-by"} & set(
        kept["metadata"].get("labels") or {}
    )


def _web(p: Project, probe: dict[str, Any] | None = None) -> None:
    """A namespace and a Deployment `web` in it, its container with `probe` if given."""
    p.program(
        f"""
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        spec = app_spec("web")
        if {probe!r}:
            spec["template"]["spec"]["containers"][0]["readinessProbe"] = {probe!r}
        k8s.apps.v1.Deployment("web", metadata={{"name": "web", "namespace": NS}}, spec=spec)
        """
    )


def _slow_up(
    p: Project, cluster: LiveCluster, *, sigint_ignored: bool = False
) -> subprocess.Popen[str]:
    """An `up` started in the background, returned once it waits for a Deployment to be
    ready (its pod's readiness probe starts after 600 kubelet seconds, 30 s of the local
    cluster's time); `sigint_ignored` as a shell starts `cmd &` in a script. The tests stop
    it, then `_web(p)` drops the probe so that the next up converges at once."""
    _web(p, {"tcpSocket": {"port": 80}, "initialDelaySeconds": 600})
    child = subprocess.Popen(
        [*CLI, "up", "--yes"],
        cwd=p.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        if sigint_ignored
        else None,
    )
    deadline = time.monotonic() + 30
    while get(cluster, "deployment", "web", p.ns) is None:  # waiting for it to be ready
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.1)
    return child


@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["", "in-the-background"])
def test_sigterm_stops_an_up_as_ctrl_c_does(
    new_project: Any, cluster: LiveCluster, sigint_ignored: bool
) -> None:
    """A cancelled CI job sends SIGTERM: the up stops at once (exit 143), says what the next
    operation does, records the operation as cancelled and releases the lock — not left to
    lapse as after kill -9 — and the next up converges. So too for an up a script started
    in the background, where Ctrl-C (SIGINT) is ignored."""
    p = new_project()
    child = _slow_up(p, cluster, sigint_ignored=sigint_ignored)
    # The Deployment exists once its apply lands; the wait's first status ("0/1 ready")
    # follows a moment later, and the stopped line says it only once there is one.
    time.sleep(1)
    child.terminate()
    out, err = child.communicate(timeout=30)
    assert child.returncode == 143, out + err
    assert "interrupted: the next operation picks up anything that was under way" in err
    # The log says which step was under way and where it stood, as the live display does.
    assert re.search(r"\n  stopped  kubernetes:apps/v1:Deployment  web after \d+s: 0/1 ready", out)
    assert "Traceback" not in err, err
    assert p.history()[0]["result"] == "cancelled"
    assert p.preview().summary["ok"]  # not locked: the lock was released
    _web(p)
    p.up()
    assert set(p.resources()) == {"ns", "web"}
    assert p.state()["pending"] == []


def test_cancel_stops_a_running_up(new_project: Any, cluster: LiveCluster) -> None:
    """`stackwright cancel` while an up waits for readiness: the up stops within a second,
    saying it was cancelled (exit 1: it failed, and nothing holds the stack; 4 means another
    operation does), instead of waiting on with nothing to record it."""
    p = new_project()
    child = _slow_up(p, cluster)
    started = time.monotonic()
    assert "lock released" in p.sw("cancel").out
    out, err = child.communicate(timeout=30)
    # The readiness probe starts after 30 s: an up that went on would take that long.
    assert time.monotonic() - started < 20, "the up went on after its lock was cleared"
    # The step it was waiting for fails saying why (or, between steps, the whole run does).
    assert child.returncode == 1, out + err
    assert "was cancelled (`stackwright cancel` cleared its lock)" in out + err
    _web(p)
    p.up()
    assert set(p.resources()) == {"ns", "web"}
    assert p.state()["pending"] == []


def test_an_up_whose_event_reader_goes_away_still_completes(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`stackwright up --yes --json | head -1`, or a CI log shipper that dies: the display
    cannot write, but the operation is not abandoned halfway (objects applied and not
    recorded as done, the history failed): it completes, and the command exits 1."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        for i in range(5):
            k8s.core.v1.ConfigMap(f"cm{i}", metadata={"name": f"cm{i}", "namespace": NS},
                                  data={"i": str(i)})
        spec = app_spec("web")  # ready after ~0.5 s: events still to write when the reader goes
        spec["template"]["spec"]["containers"][0]["readinessProbe"] = {
            "tcpSocket": {"port": 80}, "initialDelaySeconds": 10}
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
        """
    )
    child = subprocess.Popen(
        [*CLI, "up", "--yes", "--json"],
        cwd=p.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    assert json.loads(child.stdout.readline())["event"] == "step-started"
    child.stdout.close()  # the reader is gone
    child.stderr.read()
    assert child.wait(timeout=60) == 1
    assert len(p.resources()) == 7 and p.state()["pending"] == []
    assert p.history()[0]["result"] == "succeeded"
    assert names(cluster, "configmap", p.ns) >= {f"cm{i}" for i in range(5)}


def _event(p: Project, action: str) -> dict[str, Any]:
    return {"event": "stack", "action": action, "project": p.name, "stack": STACK}


def _cancel_json(p: Project) -> Any:
    """`cancel --json`'s one line, written compact as every --json line is."""
    out = p.sw("cancel", "--json").out
    assert out.count("\n") == 1 and '"event":"stack"' in out, out
    return json.loads(out)


def test_locked_stack(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    backend = open_backend()
    operation = backend.begin_operation(p.name, STACK, kind="up")
    try:
        locked = p.sw("up", "--yes", rc=4, process=True)  # another process than the holder
        message = one_line(locked)
        assert "lock" in message and str(os.getpid()) in message, message
        assert get(cluster, "namespace", p.ns) is None
        assert _cancel_json(p) == {**_event(p, "cancel"), "released": True}
        assert p.up().summary["counts"] == {"create": 1}
        # The old holder learns that its lock was taken instead of writing on.
        with pytest.raises(LockLost, match="cancelled"):
            operation.set_outputs({"stale": True})
        assert p.state()["outputs"] == {}
    finally:
        with contextlib.suppress(LockLost):
            operation.__exit__(None, None, None)
        backend.close()
    assert [h["result"] for h in p.history()] == ["succeeded", "cancelled"]
    assert p.sw("cancel").out.strip() == f"stack {STACK} is not locked"
    assert _cancel_json(p) == {**_event(p, "cancel"), "released": False}


# --- outputs, history, secrets ------------------------------------------------------------------------


def test_outputs_history_and_secrets(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    os.environ["STACKWRIGHT_CONFIG_PASSPHRASE"] = "lifecycle"
    try:
        p.sw("config", "set", "--secret", "password", "hunter2")
        p.sw("config", "set", "greeting", "hello")
        assert "hunter2" not in (p.root / f"Stackwright.{STACK}.yaml").read_text()
        p.program(
            """
            cfg = sw.Config()
            k8s.core.v1.Namespace("ns", metadata={"name": NS})
            creds = k8s.core.v1.Secret("creds", metadata={"name": "creds", "namespace": NS},
                                       string_data={"password": cfg.require_secret("password")})
            sw.export("greeting", cfg.get("greeting"))
            sw.export("secret_name", creds.metadata["name"])
            sw.export("password", cfg.require_secret("password"))
            sw.export("derived", cfg.require_secret("password").apply(lambda s: s.upper()))
            """
        )
        planned = p.preview()
        (creds,) = [e for e in planned.of("step-started") if e["name"] == "creds"]
        assert "hunter2" not in planned.out and "[secret]" in json.dumps(creds["changes"])
        up = p.up()
        assert up.summary["outputs"] == {
            "greeting": "hello",
            "secret_name": "creds",
            "password": "[secret]",
            "derived": "[secret]",
        }
        assert "hunter2" not in up.out and "HUNTER2" not in up.out
        secret = get(cluster, "secret", "creds", p.ns)
        assert secret is not None and "password" in secret["data"]

        shown = p.sw("stack", "output").out
        assert 'greeting: "hello"' in shown and "password: [secret]" in shown
        assert p.sw("stack", "output", "secret_name").out.strip() == "creds"
        assert json.loads(p.sw("stack", "output", "--json").out)["derived"] == "[secret]"
        assert json.loads(p.sw("stack", "export").out) == p.state()
        # Secret outputs are stored encrypted (test_secrets_lifecycle follows every path).
        assert set(p.state()["outputs"]["password"]) == {"@secret"}

        p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
        p.up("--message", "drop the secret")
        history = json.loads(p.sw("stack", "history", "--json").out)
        assert [{k: h[k] for k in ("kind", "result", "counts", "message")} for h in history] == (
            p.history()
        )
        assert [h["kind"] for h in history] == ["up", "up"]
        assert [h["result"] for h in history] == ["succeeded", "succeeded"]
        assert history[0]["message"] == "drop the secret"
        assert history[0]["counts"] == {"delete": 1, "same": 1}
        assert history[1]["counts"] == {"create": 2}
        text = p.sw("stack", "history").out
        assert len(text.strip().splitlines()) == 2 and "drop the secret" in text
        assert p.sw("stack", "output").out.strip() == ""
    finally:
        os.environ.pop("STACKWRIGHT_CONFIG_PASSPHRASE", None)


# --- YAML programs ---------------------------------------------------------------------------


def test_a_yaml_program_made_by_new_goes_up_changes_with_its_config_and_goes_down(
    tmp_path: Path, cluster: LiveCluster
) -> None:
    """`stackwright new kubernetes-yaml`: Pulumi YAML's shape, in Stackwright.yaml itself."""
    folder = tmp_path / "yaml-web"
    made = subprocess.run(
        [*CLI, "new", "kubernetes-yaml", str(folder), "--name", "yaml-web"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Created project yaml-web" in made.stdout
    assert not (folder / "__main__.py").exists()
    assert "runtime: yaml" in (folder / "Stackwright.yaml").read_text()
    p = Project.made_by_new(folder, "yaml-web", "default")  # pointed at the test cluster:
    (folder / f"Stackwright.{STACK}.yaml").write_text(
        yaml.safe_dump({"config": {"kubernetes:kubeconfig": str(cluster.kubeconfig)}})
    )

    up = p.up()
    assert up.summary["ok"] and up.summary["counts"] == {"create": 3}
    outputs = up.summary["outputs"]
    deployment = live(cluster, "deployment", outputs["deployment"], "default")
    assert deployment["spec"]["replicas"] == 2 and outputs["ready_replicas"] == 2
    page = next(v["configMap"]["name"] for v in deployment["spec"]["template"]["spec"]["volumes"])
    assert live(cluster, "configmap", page, "default")["data"]["index.html"].startswith("<h1>")
    assert re.fullmatch(r"10\.96\.\d+\.\d+", outputs["service_ip"])
    assert p.preview().changed() == {}

    p.sw("config", "set", "replicas", "3")
    diff = p.sw("preview", "--diff").out
    assert "spec.replicas: 2 → 3" in diff
    assert p.up().changed() == {"web": "update"}
    assert live(cluster, "deployment", outputs["deployment"], "default")["spec"]["replicas"] == 3

    program = (folder / "Stackwright.yaml").read_text()
    (folder / "Stackwright.yaml").write_text(program.replace("${labels}", "${lables}", 1))
    bad = p.sw("preview", rc=2)
    assert bad.out.count("\n") + bad.err.count("\n") <= 2 and "Traceback" not in bad.err
    assert (
        "Stackwright.yaml:" in bad.err + bad.out and "did you mean 'labels'?" in bad.err + bad.out
    )
    (folder / "Stackwright.yaml").write_text(program)

    down = p.sw("destroy", "--yes", "--json")
    assert get(cluster, "deployment", outputs["deployment"], "default") is None
    assert down.rc == 0


def test_import_in_a_yaml_project_prints_the_yaml_that_declares_the_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    program = textwrap.dedent(
        f"""
        name: {p.name}
        runtime: yaml
        resources:
          ns:
            type: kubernetes:core/v1:Namespace
            properties:
              metadata: {{name: {p.ns}}}
        """
    ).lstrip()
    (p.root / "Stackwright.yaml").write_text(program)
    p.up()
    create(cluster, "ConfigMap", "legacy", p.ns, data={"k": "v"})

    done = p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy")
    code = done.out.split("Add this under `resources:` in your program:", 1)[1].strip()
    entry = yaml.safe_load(code)
    assert entry["legacy"]["type"] == "kubernetes:core/v1:ConfigMap"
    assert entry["legacy"]["properties"]["data"] == {"k": "v"}
    # Pasted under `resources:`, it declares exactly what was adopted.
    (p.root / "Stackwright.yaml").write_text(program + textwrap.indent(code, "  ") + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}


def test_reading_objects_the_stack_does_not_manage(new_project: Any, cluster: LiveCluster) -> None:
    """`Kind.get(name, id)`, as Pulumi's get: read in preview and up, outputs usable,
    nothing written to the objects read, and a destroy forgets them without deleting."""
    p = new_project()
    create(cluster, "Namespace", p.ns)
    create(cluster, "ConfigMap", "operator-made", p.ns, data={"mode": "fast"})
    api_before = live(cluster, "service", "kubernetes", "default")
    made_before = live(cluster, "configmap", "operator-made", p.ns)
    p.program(
        """
        api = k8s.core.v1.Service.get("api", "default/kubernetes")
        made = k8s.core.v1.ConfigMap.get("made", NS + "/operator-made")
        k8s.core.v1.ConfigMap("copy", metadata={"name": "copy", "namespace": NS},
                              data={"ip": api.spec["clusterIP"], "mode": made.data["mode"]})
        sw.export("api_ip", api.spec["clusterIP"])
        """
    )
    planned = p.preview()
    assert planned.changed() == {"api": "read", "made": "read", "copy": "create"}
    assert planned.summary["counts"] == {"read": 2, "create": 1}
    assert planned.summary["outputs"] == {"api_ip": api_before["spec"]["clusterIP"]}

    up = p.up()
    assert up.summary["counts"] == {"read": 2, "create": 1}
    assert up.ops() == {"api": "read", "made": "read", "copy": "create"}
    assert up.summary["outputs"] == {"api_ip": api_before["spec"]["clusterIP"]}
    copy = live(cluster, "configmap", "copy", p.ns)
    assert copy["data"] == {"ip": api_before["spec"]["clusterIP"], "mode": "fast"}
    # The objects read are as they were: not applied, marked or made ApplySet members.
    assert live(cluster, "service", "kubernetes", "default") == api_before
    assert live(cluster, "configmap", "operator-made", p.ns) == made_before
    assert get(cluster, "configmap", p.applyset_parent, "default") is None
    state = p.resources()
    assert state["api"]["external"] is True and state["api"]["id"] == "default/kubernetes"
    assert state["made"]["outputs"]["data"] == {"mode": "fast"}
    assert "read, not managed" in p.sw("stack").out

    again = p.up()
    assert again.summary["counts"] == {"read": 2, "same": 1}

    destroyed = p.sw("destroy", "--yes", "--json")
    assert destroyed.summary["counts"] == {"discard": 2, "delete": 1}
    assert get(cluster, "configmap", "copy", p.ns) is None
    assert live(cluster, "service", "kubernetes", "default") == api_before
    assert live(cluster, "configmap", "operator-made", p.ns) == made_before
    assert p.resources() == {}


# --- ownership on adoption ------------------------------------------------------------------------


def _ports_service(port: int, *, import_: bool = True) -> str:
    option = ", opts=sw.ResourceOptions(import_=f'{NS}/web')" if import_ else ""
    return (
        'k8s.core.v1.Service("web", metadata={"name": "web", "namespace": NS},\n'
        f'                    spec={{"ports": [{{"port": {port}, "targetPort": {port}}}]}}{option})\n'
    )


def _owned(obj: dict[str, Any], manager: str, operation: str) -> dict[str, Any] | None:
    """The fieldsV1 of `manager`'s `operation` entry (not a subresource's), or None."""
    for entry in obj["metadata"].get("managedFields", []):
        if (entry["manager"], entry["operation"]) == (manager, operation) and not entry.get(
            "subresource"
        ):
            fields: dict[str, Any] = entry["fieldsV1"]
            return fields
    return None


def _port_items(fields: dict[str, Any] | None) -> dict[str, Any]:
    ports = ((fields or {}).get("f:spec") or {}).get("f:ports") or {}
    return {key: node for key, node in ports.items() if key != "."}


def _ports(cluster: LiveCluster, ns: str) -> list[tuple[int, Any]]:
    spec = live(cluster, "service", "web", ns)["spec"]
    return [(port["port"], port["targetPort"]) for port in spec["ports"]]


def test_an_adopted_object_is_the_stacks_alone_for_what_the_program_declares(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A Service made by a plain create (an Update entry owning every field, defaults
    included), adopted with `import_`: the creator's entry gives up what Stackwright now
    applies, so a port the program changes replaces the one it had (server-side apply keeps
    an item another manager still owns: two unnamed ports, which the API server refuses)."""
    p = new_project()
    create(cluster, "Namespace", p.ns)
    create(cluster, "Service", "web", p.ns, spec={"ports": [{"port": 8000, "targetPort": 8000}]})
    p.program(_ports_service(8000))
    assert p.up().ops() == {"web": "import"}
    creator = _owned(live(cluster, "service", "web", p.ns), "kubectl-create", "Update")
    assert creator is not None, "what the program does not declare stays the creator's"
    assert _port_items(creator) == {'k:{"port":8000,"protocol":"TCP"}': {"f:protocol": {}}}
    assert "f:clusterIP" in creator["f:spec"]

    p.program(_ports_service(8001))
    assert p.up().ops() == {"web": "update"}
    assert _ports(cluster, p.ns) == [(8001, 8001)]


def test_an_object_adopted_by_the_import_command_is_the_stacks_alone_too(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "Service", "web", p.ns, spec={"ports": [{"port": 8000, "targetPort": 8000}]})
    done = p.sw(
        "import", "--yes", "--no-protect", "kubernetes:core/v1:Service", "web", f"{p.ns}/web"
    )
    code = done.out.split("Add this to your program:", 1)[1].strip()
    creator = _owned(live(cluster, "service", "web", p.ns), "kubectl-create", "Update")
    assert all("." not in item for item in _port_items(creator).values())
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + code + "\n")
    assert p.up().summary["counts"] == {"same": 2}
    assert code.count("8000") == 2, code  # its port and targetPort
    code = code.replace("8000", "8001")
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + code + "\n")
    assert p.up().ops() == {"web": "update"}
    assert _ports(cluster, p.ns) == [(8001, 8001)]


def test_another_appliers_fields_stay_shared_on_adoption(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Another declarative tool's `Apply` entry keeps what it declares, shared with the
    stack (its conflicts are honest); a controller's `Update` of a field the program does
    not declare stays the controller's."""
    p = new_project()
    create(cluster, "Namespace", p.ns)
    manifest = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": p.ns},
        "spec": {"ports": [{"port": 8000, "targetPort": 8000}]},
    }
    cluster.kubectl(
        "apply",
        "--server-side",
        "--field-manager=other-tool",
        "-f",
        "-",
        input=json.dumps(manifest),
    )
    cluster.kubectl(
        "patch", "service", "web", "-n", p.ns, "--type=merge", "--field-manager=a-controller",
        "-p", '{"metadata":{"labels":{"seen-by":"controller"}}}',
    )  # fmt: skip
    before = live(cluster, "service", "web", p.ns)
    p.program(_ports_service(8000))
    assert p.up().ops() == {"web": "import"}
    adopted = live(cluster, "service", "web", p.ns)
    applier = _owned(adopted, "other-tool", "Apply")
    assert applier == _owned(before, "other-tool", "Apply")
    assert set(_port_items(applier)) == {'k:{"port":8000,"protocol":"TCP"}'}
    controller = _owned(adopted, "a-controller", "Update")
    assert controller == _owned(before, "a-controller", "Update")
    assert controller == {"f:metadata": {"f:labels": {".": {}, "f:seen-by": {}}}}

    # The label is still the controller's, and stays through the stack's next change.
    p.program(
        'k8s.core.v1.Service("web", metadata={"name": "web", "namespace": NS,'
        ' "annotations": {"team": "a"}},\n'
        '                    spec={"ports": [{"port": 8000, "targetPort": 8000}]},'
        " opts=sw.ResourceOptions(import_=f'{NS}/web'))\n"
    )
    assert p.up().ops() == {"web": "update"}
    changed = live(cluster, "service", "web", p.ns)
    assert changed["metadata"]["labels"]["seen-by"] == "controller"
    assert _owned(changed, "a-controller", "Update") == controller


def test_an_adoption_stopped_before_its_takeover_is_finished_by_the_next_up(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that dies between an import's apply and the takeover of its fields (a kill -9
    there) leaves the import pending: the next run records it and takes the fields over
    before a change the creator's entry would otherwise refuse."""
    from stackwright.providers.kubernetes.provider import KubernetesProvider

    p = new_project()
    create(cluster, "Namespace", p.ns)
    create(cluster, "Service", "web", p.ns, spec={"ports": [{"port": 8000, "targetPort": 8000}]})

    async def dies(self: Any, path: str, name: str, live: Any) -> Any:
        raise ConnectionResetError("killed")

    monkeypatch.setattr(KubernetesProvider, "_take_over", dies)
    p.program(_ports_service(8000))
    p.up(rc=1)
    monkeypatch.undo()
    urn = p.urn("kubernetes:core/v1:Service", "web")
    assert [(x["op"], x["resource"]["urn"]) for x in p.state()["pending"]] == [("import", urn)]
    creator = _owned(live(cluster, "service", "web", p.ns), "kubectl-create", "Update")
    assert "." in _port_items(creator)['k:{"port":8000,"protocol":"TCP"}'], "not taken over"

    p.program(_ports_service(8001))
    assert p.up().ops() == {"web": "update"}
    assert _ports(cluster, p.ns) == [(8001, 8001)]
    assert p.up().summary["counts"] == {"same": 1}
