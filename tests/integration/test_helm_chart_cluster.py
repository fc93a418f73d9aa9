"""`k8s.helm.Chart` through the CLI on the local cluster: from disk and from an HTTP chart
repository served on 127.0.0.1 by the test."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_cli
from cli_in_process import sw as run

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from test_helm_chart import serving_repository  # the unit tests' chart repository

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
    with serving_repository(tmp_path) as url:
        yield url


#: The login of `private_repository`, as (user, password).
LOGIN = ("ci", "pw-Qz81x-repo")


@contextlib.contextmanager
def private_repository(tmp_path: Path) -> Iterator[str]:
    """A chart repository over HTTPS on 127.0.0.1, with a certificate no system trusts,
    serving only requests carrying `LOGIN` (HTTP basic auth): the one-ConfigMap chart
    `release-namespace` 0.1.0."""
    import ssl

    from stackwright.localcluster.credentials import ensure_credentials

    certificate = ensure_credentials(tmp_path / "tls")
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(certificate.server_cert, certificate.server_key)
    with serving_repository(
        tmp_path, login=LOGIN, chart=WEBAPP.parent / "release-namespace", tls=tls
    ) as url:
        yield url


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


def test_a_chart_from_a_repository_that_requires_credentials_and_skips_tls_checks(
    tmp_path: Path, cluster: Any, namespace: None
) -> None:
    """`username`, `password` and `insecure_skip_tls_verify` reach Helm's pull, as `helm
    pull --username --password --insecure-skip-tls-verify`; a refusal is bad input: one
    line naming the repository and the fix, exit code 2, the password nowhere."""
    root = project(tmp_path, "helmprivate", str(cluster.kubeconfig), PROGRAM)
    user, password = LOGIN
    env = {"CHART": "release-namespace", "VALUES": "{}"}
    with private_repository(tmp_path) as url:
        opts = {"repo": url, "username": user, "password": password}
        shown = {
            case: sw(
                root,
                {**env, "REPOSITORY_OPTS": json.dumps({**opts, **given})},
                "preview",
                check=False,
            )
            for case, given in (
                ("trusted", {"insecure_skip_tls_verify": True}),
                ("untrusted", {}),
                ("refused", {"insecure_skip_tls_verify": True, "password": "wrong-pw-1"}),
            )
        }
    for case, result in shown.items():
        assert password not in result.stdout + result.stderr, case

    done, untrusted, refused = shown["trusted"], shown["untrusted"], shown["refused"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ConfigMap:helmtest/demo-where" in done.stdout, done.stdout
    assert untrusted.returncode == 2, untrusted.stdout + untrusted.stderr
    assert untrusted.stderr.strip().endswith(
        f": the chart repository {url} has a certificate this machine does not trust (x509: "
        "certificate signed by unknown authority); name its CA bundle in the SSL_CERT_FILE "
        "environment variable, or set repository_opts insecure_skip_tls_verify"
    ), untrusted.stderr
    assert refused.returncode == 2, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.endswith(
        f": the chart repository {url} refused the credentials given (401 Unauthorized); "
        "check repository_opts username and password"
    ), line


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
