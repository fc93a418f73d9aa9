"""Policy in the real CLI against a real local cluster: every built-in rule in one preview,
advisory findings that let a preview go on, an `up` a mandatory policy blocks without a
single connection to the cluster (counted by a TCP proxy in front of it), a Patch judged by
what it sets, and `policy audit` of live objects."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_in_process import run_cli

from stackwright.policy import Settings, Subject, evaluate, select_packs
from stackwright.state import open_backend

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from policy_cases import CASES, CONFIG, OFFLINE, all_objects

pytestmark = pytest.mark.integration

LiveCluster = Any
CLI = [sys.executable, "-m", "stackwright.cli.main"]
CONTEXT = "stackwright-test"
PACKS = ["kubernetes-best-practices", "pod-security-restricted"]


def sw(root: Path, *args: str, rc: int, process: bool = False) -> subprocess.CompletedProcess[str]:
    """`stackwright ARGS` in `root`: in this process (`cli_in_process`), or its own."""
    env = {**os.environ, "NO_COLOR": "1"}
    if process:
        done = subprocess.run(
            [*CLI, *args], cwd=root, capture_output=True, text=True, timeout=120, env=env
        )
    else:
        done = run_cli(args, cwd=root, env=env)
    assert done.returncode == rc, f"{args} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def project(root: Path, name: str, config: dict[str, Any], program: str) -> Path:
    root.mkdir(parents=True)
    (root / "Stackwright.yaml").write_text(f"name: {name}\nruntime: python\n")
    (root / "Stackwright.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    (root / "__main__.py").write_text(textwrap.dedent(program))
    sw(root, "stack", "init", "dev", rc=0)
    return root


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def findings(document: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    return sorted(
        (f["id"], f["kind"], f["namespace"] or f["name"], f["path"], f["message"], f["severity"])
        for f in document["findings"]
    )


def test_every_rule_in_one_preview(tmp_path: Path, cluster: LiveCluster) -> None:
    separation = next(c for c in CASES if c.rule == "SW-K8S-029")
    cases = [*OFFLINE, separation]
    objects = all_objects(cases, violating=True)
    config = {
        **CONFIG,
        "kubernetes:kubeconfig": str(cluster.kubeconfig),
        "kubernetes:context": CONTEXT,
        "policy:packs": dict.fromkeys(PACKS, "mandatory"),
    }
    root = project(
        tmp_path / "every-rule",
        "every-rule",
        config,
        """
        import stackwright.kubernetes as k8s
        k8s.yaml.ConfigFile("cases", file="cases.yaml")
        """,
    )
    (root / "cases.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    done = sw(root, "preview", "--json", rc=3, process=True)  # exit code 3 from the real command
    (policy,) = [e for e in events(done) if e["event"] == "policy"]
    assert [e["event"] for e in events(done)] == ["policy", "error"], "blocked before any step"
    assert events(done)[-1]["exitCode"] == 3
    expected = evaluate(
        [Subject(o, cluster=CONTEXT) for o in objects],
        select_packs(PACKS),
        Settings.from_config(config, "Stackwright.dev.yaml"),
        stack="dev",
    )
    assert findings(policy) == findings(expected.to_dict())
    reported = {f["id"] for f in policy["findings"]}
    assert reported == {c.rule for c in cases}
    assert all(f["level"] == "mandatory" and f["urn"].startswith("urn:sw:dev::every-rule::")
               for f in policy["findings"])  # fmt: skip
    assert re.match(r"error: __main__\.py:\d+: preview blocked by policy: ", done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1

    # The passing variant of every case (the separation case's: the cluster is production's)
    # and the same mandatory packs find nothing.
    key = "policy:policies.production-separation.clusters.stackwright-test"
    sw(root, "config", "set", "--path", key, "production", rc=0)
    passing = all_objects(cases, violating=False)
    (root / "cases.yaml").write_text(yaml.safe_dump_all(passing, sort_keys=False))
    clean = sw(root, "preview", "--json", rc=0)
    (policy,) = [e for e in events(clean) if e["event"] == "policy"]
    assert policy["findings"] == [] and policy["checked"] == len(passing), policy


def test_an_advisory_preview_shows_the_findings_and_goes_on(
    tmp_path: Path, cluster: LiveCluster
) -> None:
    root = project(
        tmp_path / "advisory",
        "advisory",
        {
            "kubernetes:kubeconfig": str(cluster.kubeconfig),
            "policy:packs": {"kubernetes-best-practices": "advisory"},
        },
        """
        import stackwright.kubernetes as k8s
        k8s.core.v1.Namespace("ns", metadata={"name": "policy-advisory"})
        k8s.apps.v1.Deployment("web", metadata={"namespace": "policy-advisory"}, spec={
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]}}})
        """,
    )
    done = sw(root, "preview", "--json", rc=0)
    kinds = [e["event"] for e in events(done)]
    assert kinds[0] == "policy" and "step-started" in kinds and kinds[-1] == "summary"
    (policy,) = [e for e in events(done) if e["event"] == "policy"]
    assert {"SW-K8S-012", "SW-K8S-018", "SW-K8S-014"} <= {f["id"] for f in policy["findings"]}
    assert policy["blocked"] is False
    # A team's pack from a directory joins the stack's packs for the run.
    (root / "packs").mkdir()
    (root / "packs" / "acme.py").write_text(
        "from stackwright.policy import Violation, policy\n"
        "@policy('team-label', description='Workloads name their team', kinds=['Deployment'])\n"
        "def team(subject):\n"
        "    if 'team' not in subject.labels:\n"
        "        yield Violation(f'{subject.display} has no team label', 'metadata.labels')\n"
    )
    with_team = sw(root, "preview", "--json", "--policy-pack", "packs", rc=0)
    (team,) = [e for e in events(with_team) if e["event"] == "policy"]
    assert [f["message"] for f in team["findings"] if f["policy"] == "team-label"] == [
        "Deployment policy-advisory/web has no team label"
    ]
    # `--policy-level mandatory` makes every enabled policy block, for this run only.
    strict = sw(root, "preview", "--json", "--policy-level", "mandatory", rc=3)
    assert [e["event"] for e in events(strict)] == ["policy", "error"]
    bad = sw(root, "preview", "--policy-level", "loud", rc=2)
    assert bad.stderr.strip() == "error: --policy-level loud: use mandatory or advisory"
    plain = sw(root, "preview", rc=0).stdout
    # The line that declared the object, named from the project folder (where sw runs).
    assert (
        "advisory  SW-K8S-012 image-tag (high)  __main__.py:4 Deployment policy-advisory/" in plain
    )
    assert "runs image nginx:latest with the tag latest" in plain
    assert "at spec.template.spec.containers[0].image" in plain


class CountingProxy:
    """A TCP proxy in front of the cluster that counts the connections made through it
    (TLS passes through untouched, so any API call at all is a connection)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.create_connection(self.target)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def proxy(cluster: LiveCluster) -> Iterator[CountingProxy]:
    counting = CountingProxy(("127.0.0.1", cluster.info.port))
    try:
        yield counting
    finally:
        counting.close()


UNSAFE = """
import stackwright.kubernetes as k8s
k8s.core.v1.Namespace("ns", metadata={"name": "policy-blocked"})
k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": "policy-blocked"%s},
    spec={"selector": {"matchLabels": {"app": "web"}},
          "template": {"metadata": {"labels": {"app": "web"}},
                       "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]}}})
"""
EXEMPT = (
    ', "annotations": {"policy.stackwright.io/exempt": "image-tag", '
    '"policy.stackwright.io/reason": "the vendor only tags latest"}'
)


def test_an_up_blocked_by_a_mandatory_policy_makes_no_api_call(
    tmp_path: Path, cluster: LiveCluster, proxy: CountingProxy
) -> None:
    kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for entry in kubeconfig["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
    proxied = tmp_path / "proxied-kubeconfig"
    proxied.write_text(yaml.safe_dump(kubeconfig))
    root = project(
        tmp_path / "blocked",
        "blocked",
        {
            "kubernetes:kubeconfig": str(proxied),
            "policy:packs": {"kubernetes-best-practices": "advisory"},
            "policy:policies": {"image-tag": "mandatory"},
        },
        UNSAFE % "",
    )
    done = sw(root, "up", "--yes", "--json", rc=3)
    assert done.stderr.strip() == (
        "error: __main__.py:4: up blocked by policy: SW-K8S-012 image-tag: container "
        "web of Deployment policy-blocked/web runs image nginx:latest with the tag latest; "
        "nothing was changed. "
        "Fix the objects, or exempt them with the policy.stackwright.io/exempt annotation and "
        "a policy.stackwright.io/reason"
    )
    assert proxy.connections == 0, "a blocked up must not call the cluster at all"
    assert cluster.kubectl("get", "namespace", "policy-blocked", "--ignore-not-found").stdout == ""
    with contextlib.closing(open_backend()) as backend:
        assert backend.history("blocked", "dev") == []
        assert backend.export("blocked", "dev")["resources"] == []

    # The fix: an exemption with its reason. The same up now goes through the proxy.
    (root / "__main__.py").write_text(textwrap.dedent(UNSAFE % EXEMPT))
    done = sw(root, "up", "--yes", "--json", rc=0)
    (policy,) = [e for e in events(done) if e["event"] == "policy"]
    assert [(e["policy"], e["via"]) for e in policy["exemptions"]] == [("image-tag", "annotation")]
    assert proxy.connections > 0
    assert "deployment.apps/web" in cluster.kubectl("get", "deploy", "-n", "policy-blocked",
                                                    "-o", "name").stdout  # fmt: skip


def test_policy_audit_of_a_live_cluster(tmp_path: Path, cluster: LiveCluster) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-audit"}},
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "debug", "namespace": "policy-audit"},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "busybox:latest", "command": ["sleep", "infinity"]}
                    ]
                },
            },
        ],
    }
    cluster.kubectl("create", "--validate=false", "-f", "-", input=json.dumps(manifest))
    args = ["policy", "audit", "--kubeconfig", str(cluster.kubeconfig), "--context", CONTEXT,
            "--namespace", "policy-audit", "--json"]  # fmt: skip
    done = sw(tmp_path, *args, rc=0)
    report = json.loads(done.stdout)
    about_pod = {f["id"] for f in report["findings"] if f["kind"] == "Pod"}
    assert {"SW-K8S-001", "SW-K8S-012"} <= about_pod
    assert all(f["namespace"] in ("policy-audit", "") for f in report["findings"])
    blocked = sw(tmp_path, *args, "--level", "mandatory", rc=3)
    assert json.loads(blocked.stdout)["blocked"] is True
    # A local cluster by its name, as a stack's kubernetes:cluster names it: no kubeconfig
    # to look up (`cluster start` writes its own, not ~/.kube/config).
    local = ["policy", "audit", "--cluster", cluster.info.name, "--namespace", "policy-audit"]
    assert json.loads(sw(tmp_path, *local, "--json", rc=0).stdout) == report
    # A namespace with nothing in it (a misspelt one) is not a silent pass.
    empty = sw(
        tmp_path, "policy", "audit", "--cluster", cluster.info.name, "-n", "policy-audt", rc=0
    )
    assert empty.stderr.strip() == (
        "warning: namespace 'policy-audt' holds no object the packs judge (Namespaces, "
        "workloads, Services, PodDisruptionBudgets, NetworkPolicies); nothing was checked"
    )
    missing = sw(tmp_path, "policy", "audit", "--cluster", "nosuch", rc=2)
    assert missing.stderr.strip() == (
        f"error: no local cluster named 'nosuch' (there are: {cluster.info.name}): start one with "
        "`stackwright cluster start --name nosuch`"
    )


PATCHED = """
import stackwright.kubernetes as k8s
k8s.apps.v1.DeploymentPatch("web-%s", metadata={"name": "web", "namespace": "policy-patch"%s},
                            spec=%r)
"""


def test_an_up_of_a_patch_is_judged_by_what_it_sets(tmp_path: Path, cluster: LiveCluster) -> None:
    """A DeploymentPatch setting an image :latest is refused by the built-in packs, as a
    Deployment would be, before any change; one changing only replicas and a label passes
    both packs, all of them mandatory, and is applied."""
    existing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-patch"}},
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "policy-patch"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                    },
                },
            },
        ],
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(existing))
    latest = {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:latest"}]}}}
    root = project(
        tmp_path / "patched",
        "patched",
        {
            "kubernetes:kubeconfig": str(cluster.kubeconfig),
            "policy:packs": dict.fromkeys(PACKS, "mandatory"),
        },
        PATCHED % ("image", "", latest),
    )
    preview = sw(root, "preview", rc=3).stdout
    assert "mandatory SW-K8S-012 image-tag (high)  __main__.py:3 DeploymentPatch " in preview
    done = sw(root, "up", "--yes", "--json", rc=3)
    (policy,) = [e for e in events(done) if e["event"] == "policy"]
    assert [(f["id"], f["urn"], f["path"]) for f in policy["findings"]] == [
        ("SW-K8S-012", "urn:sw:dev::patched::kubernetes:apps/v1:DeploymentPatch::web-image",
         "spec.template.spec.containers[0].image")
    ]  # fmt: skip
    assert done.stderr.startswith("error: __main__.py:"), done.stderr
    assert (
        ": up blocked by policy: SW-K8S-012 image-tag: container web of DeploymentPatch "
        "policy-patch/web runs image nginx:latest with the tag latest; nothing was changed"
    ) in done.stderr
    image = "jsonpath={.spec.template.spec.containers[0].image}"
    live = cluster.kubectl("get", "deploy", "web", "-n", "policy-patch", "-o", image).stdout
    assert live == "nginx:1.29", "nothing was changed"
    with contextlib.closing(open_backend()) as backend:
        assert backend.history("patched", "dev") == []

    # Only replicas (which kubectl set: taken over) and a label: nothing a rule forbids.
    force = ', "labels": {"tier": "front"}, "annotations": {"stackwright.io/patch-force": "true"}'
    (root / "__main__.py").write_text(textwrap.dedent(PATCHED % ("scale", force, {"replicas": 2})))
    done = sw(root, "up", "--yes", "--json", rc=0)
    (policy,) = [e for e in events(done) if e["event"] == "policy"]
    assert (policy["findings"], policy["checked"], policy["blocked"]) == ([], 1, False)
    live = json.loads(
        cluster.kubectl("get", "deploy", "web", "-n", "policy-patch", "-o", "json").stdout
    )
    assert live["spec"]["replicas"] == 2 and live["metadata"]["labels"]["tier"] == "front"
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
