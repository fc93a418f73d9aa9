"""`k8s.helm.Chart` through the CLI on the local cluster: from disk and from an HTTP chart
repository served on 127.0.0.1 by the test."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli
from cli_in_process import sw as run

WEBAPP = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"

PROGRAM = """\
import json
import os

import stackwright.kubernetes as k8s

k8s.helm.Chart(
    "demo",
    chart=os.environ["CHART"],
    repository_opts=json.loads(os.environ.get("REPOSITORY_OPTS", "null")),
    version=os.environ.get("CHART_VERSION"),
    values=json.loads(os.environ["VALUES"]),
    namespace="helmtest",
)
"""

NAMESPACE = """\
import stackwright.kubernetes as k8s

k8s.core.v1.Namespace("helmtest", metadata={"name": "helmtest"})
"""

OBJECTS = {
    "CustomResourceDefinition:widgets.example.com",
    "Job:helmtest/demo-webapp-migrate",
    "Service:helmtest/demo-redis",
    "StatefulSet:helmtest/demo-redis",
    "ClusterRole:demo-webapp-reader",
    "ConfigMap:helmtest/demo-webapp-settings",
    "Deployment:helmtest/demo-webapp",
    "Service:helmtest/demo-webapp",
    "Widget:helmtest/demo-webapp",
}


def sw(
    project: Path, env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return run(project, *args, env=env, check=check)


def events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def summary(output: str) -> dict[str, Any]:
    found = [e for e in events(output) if e["event"] == "summary"]
    assert found, f"no summary event in:\n{output}"
    return found[-1]


def steps(output: str) -> dict[str, str]:
    """Child name → op of every step event that names a chart object."""
    found: dict[str, str] = {}
    for event in events(output):
        urn = event.get("urn") or ""
        op = event.get("op")
        if op and "helm.sh/v4:Chart$" in urn:
            found[urn.rsplit("::", 1)[1]] = op
    return found


def project(tmp_path: Path, name: str, kubeconfig: str, source: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "Stackwright.yaml").write_text(f"name: {name}\nruntime: python\nmain: __main__.py\n")
    (root / "__main__.py").write_text(source)
    (root / "Stackwright.dev.yaml").write_text(
        f"config:\n  kubernetes:kubeconfig: {json.dumps(kubeconfig)}\n"
    )
    sw(root, {}, "stack", "init", "dev")
    return root


@pytest.fixture(scope="module")
def namespace(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    root = project(tmp_path_factory.mktemp("ns"), "ns", str(cluster.kubeconfig), NAMESPACE)
    sw(root, {}, "up", "--yes", "--json")
    yield
    sw(root, {}, "destroy", "--yes", "--json")


@pytest.fixture()
def repository(tmp_path: Path) -> Iterator[str]:
    """The chart packaged into a .tgz with an index.yaml, served over HTTP on 127.0.0.1."""
    import helm_python as helm

    served = tmp_path / "repo"
    served.mkdir()
    with tarfile.open(served / "webapp-1.2.0.tgz", "w:gz") as tar:
        tar.add(WEBAPP, arcname="webapp")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    helm.repo_index_generate(served, base_url=url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def lifecycle(cluster: Any, root: Path, env: dict[str, str]) -> None:
    values = {"image": {"tag": "1.29"}}
    env = {**env, "VALUES": json.dumps(values)}
    preview = sw(root, env, "preview", "--json").stdout
    assert summary(preview)["counts"] == {"create": len(OBJECTS) + 1}, preview
    assert set(steps(preview)) == OBJECTS

    done = summary(sw(root, env, "up", "--yes", "--json").stdout)
    assert done["ok"] and done["counts"] == {"create": len(OBJECTS) + 1}, done
    deployment = json.loads(
        cluster.kubectl("get", "deploy", "demo-webapp", "-n", "helmtest", "-o", "json").stdout
    )
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    job = json.loads(
        cluster.kubectl("get", "job", "demo-webapp-migrate", "-n", "helmtest", "-o", "json").stdout
    )
    assert job["metadata"]["creationTimestamp"] <= deployment["metadata"]["creationTimestamp"]
    widget = cluster.kubectl("get", "widgets.example.com", "demo-webapp", "-n", "helmtest")
    assert widget.returncode == 0
    assert cluster.kubectl("get", "clusterrole", "demo-webapp-reader").returncode == 0

    again = summary(sw(root, env, "preview", "--json").stdout)
    assert again["counts"] == {"same": len(OBJECTS) + 1}

    # One value: only the ConfigMap that renders it changes.
    env["VALUES"] = json.dumps({**values, "settings": {"LOG_LEVEL": "debug"}})
    changed = sw(root, env, "up", "--yes", "--json").stdout
    assert summary(changed)["counts"] == {"same": len(OBJECTS), "update": 1}, changed
    assert {k for k, op in steps(changed).items() if op == "update"} == {
        "ConfigMap:helmtest/demo-webapp-settings"
    }
    data = json.loads(
        cluster.kubectl("get", "cm", "demo-webapp-settings", "-n", "helmtest", "-o", "json").stdout
    )["data"]
    assert data["LOG_LEVEL"] == "debug"

    # Turning the subchart off removes its templates from the render: their objects go.
    env["VALUES"] = json.dumps(
        {**values, "settings": {"LOG_LEVEL": "debug"}, "redis": {"enabled": False}}
    )
    removed = sw(root, env, "up", "--yes", "--json").stdout
    assert {k for k, op in steps(removed).items() if op == "delete"} == {
        "Service:helmtest/demo-redis",
        "StatefulSet:helmtest/demo-redis",
    }, removed
    assert (
        cluster.kubectl("get", "sts", "demo-redis", "-n", "helmtest", check=False).returncode != 0
    )

    assert summary(sw(root, env, "destroy", "--yes", "--json").stdout)["ok"]
    assert (
        cluster.kubectl("get", "deploy", "demo-webapp", "-n", "helmtest", check=False).returncode
        != 0
    )
    assert cluster.kubectl("get", "clusterrole", "demo-webapp-reader", check=False).returncode != 0
    assert cluster.kubectl("get", "crd", "widgets.example.com", check=False).returncode != 0


def test_chart_from_disk(tmp_path: Path, cluster: Any, namespace: None) -> None:
    root = project(tmp_path, "helmdisk", str(cluster.kubeconfig), PROGRAM)
    lifecycle(cluster, root, {"CHART": str(WEBAPP)})


def test_chart_from_an_http_repository(
    tmp_path: Path, cluster: Any, namespace: None, repository: str
) -> None:
    root = project(tmp_path, "helmrepo", str(cluster.kubeconfig), PROGRAM)
    lifecycle(
        cluster,
        root,
        {
            "CHART": "webapp",
            "CHART_VERSION": "1.2.0",
            "REPOSITORY_OPTS": json.dumps({"repo": repository}),
        },
    )


LIVE_VALUES = """\
import os

import stackwright.kubernetes as k8s

source = k8s.core.v1.ConfigMap(
    "source", metadata={"namespace": "helmtest"}, data={"version": os.environ["VERSION"]}
)
k8s.helm.Chart(
    "live",
    chart=os.environ["CHART"],
    values={
        "image": {"tag": "1.29"},
        "settings": {"SOURCE_UID": source.metadata["uid"], "LOG_LEVEL": "info"},
        "redis": {"enabled": False},
        "migrations": {"enabled": False},
    },
    namespace="helmtest",
)
"""


def test_chart_values_from_another_resources_live_state(
    tmp_path: Path, cluster: Any, namespace: None
) -> None:
    root = project(tmp_path, "helmlive", str(cluster.kubeconfig), LIVE_VALUES)
    env = {"CHART": str(WEBAPP), "VERSION": "1"}
    shown = sw(root, env, "preview", "--diff").stdout
    blocks = {
        block.split("\n", 1)[0].rsplit(" ", 1)[-1]: block for block in shown.split("+ create  ")
    }
    settings = blocks["ConfigMap:helmtest/live-webapp-settings"]
    assert '"SOURCE_UID":"(known after apply)"' in settings, shown
    assert '"LOG_LEVEL":"info"' in settings, shown
    # Only where the value reaches: every other object is shown as rendered.
    unknown = [name for name, block in blocks.items() if "(known after apply)" in block]
    assert unknown == ["ConfigMap:helmtest/live-webapp-settings"], shown

    done = summary(sw(root, env, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    uid = json.loads(
        cluster.kubectl("get", "cm", "-n", "helmtest", "-l", "!helm.sh/chart", "-o", "json").stdout
    )
    (source,) = [i for i in uid["items"] if i["metadata"]["name"].startswith("source-")]
    data = json.loads(
        cluster.kubectl("get", "cm", "live-webapp-settings", "-n", "helmtest", "-o", "json").stdout
    )["data"]
    assert data["SOURCE_UID"] == source["metadata"]["uid"]

    # Changing the source updates it in place (same uid): the chart's objects stay the same.
    env["VERSION"] = "2"
    changed = sw(root, env, "up", "--yes", "--json").stdout
    assert summary(changed)["counts"].get("update") == 1, changed
    assert set(steps(changed).values()) == {"same"}, changed
    assert summary(sw(root, env, "destroy", "--yes", "--json").stdout)["ok"]


def test_a_run_from_a_folder_inside_the_project_reads_paths_from_the_project(
    tmp_path: Path, cluster: Any, namespace: None
) -> None:
    """`stackwright up` in a subfolder finds the project above it, and runs its program from
    the project's folder, as Pulumi does: a chart's relative path is the project's, also
    when values that are Outputs render the chart again while the run applies them."""
    root = project(tmp_path, "helmsub", str(cluster.kubeconfig), LIVE_VALUES)
    shutil.copytree(WEBAPP, root / "charts" / "webapp")
    (root / "deploy").mkdir()
    env = {**os.environ, "STACKWRIGHT_STACK": "dev", "CHART": "charts/webapp", "VERSION": "1"}
    done = run_cli(["up", "--yes", "--json"], cwd=root / "deploy", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout)["ok"]
    assert summary(sw(root, env, "destroy", "--yes", "--json").stdout)["ok"]
