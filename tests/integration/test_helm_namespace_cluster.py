"""`.Release.Namespace` through the CLI on the local cluster: a chart given no namespace is
rendered with the namespace its objects land in (the provider's), as Helm's own install
is; a `helm.Release` given none installs there too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_helm_chart_cluster import project, summary, sw  # the CLI-running helpers

pytestmark = pytest.mark.integration

NAMESPACES = ("rn-provider", "rn-context", "rn-config")

PROVIDER = """\
import os

import stackwright as sw
import stackwright.kubernetes as k8s

p = k8s.Provider("p", kubeconfig=os.environ["CLUSTER_KUBECONFIG"], namespace="rn-provider")
k8s.helm.Chart("chart", chart=os.environ["CHART"], opts=sw.ResourceOptions(provider=p))
k8s.helm.Release("rel", chart=os.environ["CHART"], opts=sw.ResourceOptions(provider=p))
"""

DEFAULT = """\
import os

import stackwright.kubernetes as k8s

k8s.helm.Chart("chart", chart=os.environ["CHART"])
"""


@pytest.fixture
def chart() -> Path:
    """A chart whose one ConfigMap (`<release>-where`) records the release's namespace."""
    return Path(__file__).resolve().parents[1] / "data" / "charts" / "release-namespace"


@pytest.fixture
def namespaces(cluster: Any) -> Iterator[None]:
    for name in NAMESPACES:
        manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    yield
    cluster.kubectl("delete", "namespace", *NAMESPACES, "--wait=false", check=False)


def recorded(cluster: Any, name: str, namespace: str) -> str:
    """The namespace the chart's ConfigMap `name` in `namespace` was rendered with."""
    found = cluster.kubectl("get", "configmap", name, "-n", namespace, "-o", "json")
    return str(json.loads(found.stdout)["data"]["namespace"])


def up_then_destroy(root: Path, env: dict[str, str], check: Any) -> None:
    done = summary(sw(root, env, "up", "--yes", "--json").stdout)
    assert done["ok"], done
    try:
        check()
        again = summary(sw(root, env, "preview", "--json").stdout)
        assert set(again["counts"]) == {"same"}, again
    finally:
        assert summary(sw(root, env, "destroy", "--yes", "--json").stdout)["ok"]


def test_a_provider_namespace_is_the_release_namespace(
    tmp_path: Path, cluster: Any, chart: Path, namespaces: None
) -> None:
    root = project(tmp_path, "rnprovider", str(cluster.kubeconfig), PROVIDER)
    env = {"CHART": str(chart), "CLUSTER_KUBECONFIG": str(cluster.kubeconfig)}

    def check() -> None:
        assert recorded(cluster, "chart-where", "rn-provider") == "rn-provider"
        # The Helm-owned release went where the provider puts objects, history and all.
        assert recorded(cluster, "rel-where", "rn-provider") == "rn-provider"
        secrets = cluster.kubectl("get", "secrets", "-n", "rn-provider", "-o", "name").stdout
        assert "secret/sh.helm.release.v1.rel.v1" in secrets.split()

    up_then_destroy(root, env, check)


def test_the_default_providers_context_and_configured_namespace(
    tmp_path: Path, cluster: Any, chart: Path, namespaces: None
) -> None:
    # The stack's kubeconfig names a namespace in its context, as `kubectl config
    # set-context --current --namespace` writes it.
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for context in config["contexts"]:
        context["context"]["namespace"] = "rn-context"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    env = {"CHART": str(chart)}

    def rendered_with(namespace: str) -> Any:
        def check() -> None:
            assert recorded(cluster, "chart-where", namespace) == namespace

        return check

    root = project(tmp_path, "rncontext", str(kubeconfig), DEFAULT)
    up_then_destroy(root, env, rendered_with("rn-context"))

    # `kubernetes:namespace` overrides the context's.
    root = project(tmp_path, "rnconfig", str(kubeconfig), DEFAULT)
    with (root / "Stackwright.dev.yaml").open("a") as config_file:
        config_file.write("  kubernetes:namespace: rn-config\n")
    up_then_destroy(root, env, rendered_with("rn-config"))


UNKNOWN = """\
import os

import stackwright as sw
import stackwright.kubernetes as k8s

ns = k8s.core.v1.Namespace("apps")
p = k8s.Provider("p", kubeconfig=os.environ["CLUSTER_KUBECONFIG"], namespace=ns.metadata["name"])
k8s.helm.Chart("chart", chart=os.environ["CHART"], opts=sw.ResourceOptions(provider=p))
"""


def test_a_provider_namespace_not_known_yet_is_bad_input(
    tmp_path: Path, cluster: Any, chart: Path
) -> None:
    root = project(tmp_path, "rnunknown", str(cluster.kubeconfig), UNKNOWN)
    env = {"CHART": str(chart), "CLUSTER_KUBECONFIG": str(cluster.kubeconfig)}
    for command in (("preview",), ("up", "--yes")):
        refused = sw(root, env, *command, check=False)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        (line,) = refused.stderr.strip().splitlines()
        assert "the namespace of its provider 'p' is not known until 'apps' is applied" in line
    assert "Traceback" not in refused.stderr
    exported = json.loads(sw(root, {}, "stack", "export").stdout)
    assert exported.get("resources", []) == [], "nothing was applied"
