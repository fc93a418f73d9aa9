"""A provider whose target changes — another API server behind the same context, another
namespace, the stack's default cluster switched — never loses track of its objects.

Each test runs the real CLI against two real local clusters: objects are replaced into
the new target and deleted from the former one, or the run is refused with one line
before any change when the former target cannot be reached any more.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cli_lifecycle import (  # the CLI-running helpers of the lifecycle tests
    LiveCluster,
    Project,
    get,
    new_project,
    one_line,
)

from stackwright.localcluster import lifecycle
from stackwright.localcluster.lifecycle import ClusterInfo

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

CONTEXT = "target"


@pytest.fixture(scope="module")
def other(cluster: LiveCluster) -> Iterator[ClusterInfo]:
    """A second local cluster (the module's `cluster` is the first)."""
    info, _ = lifecycle.start("other-target")
    try:
        yield info
    finally:
        lifecycle.stop("other-target")


def kubeconfig_of(kubeconfig: Path, context: str = CONTEXT) -> dict[str, Any]:
    """A local cluster's kubeconfig with its context (and cluster, user) renamed `context`."""
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["name"] = config["users"][0]["name"] = context
    config["contexts"][0] = {
        "name": context,
        "context": {**config["contexts"][0]["context"], "cluster": context, "user": context},
    }
    config["current-context"] = context
    return config


def both(first: Path, second: Path) -> dict[str, Any]:
    """One kubeconfig with the contexts `first` and `second`, the current one `first`."""
    one, two = kubeconfig_of(first, "first"), kubeconfig_of(second, "second")
    for key in ("clusters", "users", "contexts"):
        one[key] += two[key]
    return one


def on_other(info: ClusterInfo, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(info.kubeconfig)}
    return subprocess.run(
        ["kubectl", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def other_get(info: ClusterInfo, kind: str, name: str, ns: str) -> dict[str, Any] | None:
    done = on_other(info, "get", kind, name, "-n", ns, "-o", "json", "--ignore-not-found")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def two_objects(p: Project, provider: str) -> None:
    """A namespace and a ConfigMap in it, through `provider` (a Python expression)."""
    p.program(
        f"""
        region = {provider}
        ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}},
                                   opts=sw.ResourceOptions(provider=region))
        k8s.core.v1.ConfigMap("cm", metadata={{"name": "cm", "namespace": NS}}, data={{"a": "1"}},
                              opts=sw.ResourceOptions(provider=region, depends_on=[ns]))
        """
    )


def created_there(p: Project, cluster: LiveCluster, other: ClusterInfo) -> None:
    """After a refresh forgot them: `up` creates the objects in `other`, `destroy` deletes
    them there, and `cluster` keeps its copies, no longer the stack's."""
    assert p.up().changed() == {"ns": "create", "cm": "create"}
    assert other_get(other, "configmap", "cm", p.ns) is not None
    p.sw("destroy", "--yes")
    assert other_get(other, "configmap", "cm", p.ns) is None
    assert get(cluster, "configmap", "cm", p.ns) is not None
    cluster.kubectl("delete", "namespace", p.ns)


# --- case 1: the same context, another API server ----------------------------------------------


def test_inline_kubeconfig_naming_another_server_replaces_the_objects_there(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo
) -> None:
    p = new_project()
    first = yaml.safe_dump(kubeconfig_of(cluster.kubeconfig))
    two_objects(p, f'k8s.Provider("region", kubeconfig={first!r})')
    assert p.up().summary["counts"] == {"create": 3}
    assert get(cluster, "configmap", "cm", p.ns) is not None

    # New credentials for the same server (another token line): nothing moves.
    rotated = kubeconfig_of(cluster.kubeconfig)
    rotated["users"][0]["user"]["token"] = cluster.token + " "
    same = yaml.safe_dump(rotated)
    two_objects(p, f'k8s.Provider("region", kubeconfig={same!r})')
    assert p.up().changed() == {"region": "update"}

    second = yaml.safe_dump(kubeconfig_of(other.kubeconfig))
    two_objects(p, f'k8s.Provider("region", kubeconfig={second!r})')
    assert p.preview().changed() == {"region": "update", "ns": "replace", "cm": "replace"}
    up = p.up()
    assert up.changed() == {"region": "update", "ns": "replace", "cm": "replace"}
    assert get(cluster, "configmap", "cm", p.ns) is None
    assert get(cluster, "namespace", p.ns) is None
    assert other_get(other, "configmap", "cm", p.ns) is not None
    assert p.preview().changed() == {}
    p.sw("destroy", "--yes")
    assert other_get(other, "configmap", "cm", p.ns) is None


def test_kubeconfig_file_now_naming_another_server_is_refused(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    p = new_project()
    path = tmp_path / "kubeconfig.yaml"
    path.write_text(yaml.safe_dump(kubeconfig_of(cluster.kubeconfig)))
    two_objects(p, f'k8s.Provider("region", kubeconfig={str(path)!r})')
    assert p.up().summary["counts"] == {"create": 3}

    path.write_text(yaml.safe_dump(kubeconfig_of(other.kubeconfig)))
    before = p.state()
    for command in (p.preview, p.up):
        message = one_line(command(rc=2))
        assert "region" in message and str(path) in message, message
        assert cluster.server in message and other.server in message, message
    assert p.state() == before
    assert other_get(other, "namespace", p.ns, "default") is None
    assert get(cluster, "configmap", "cm", p.ns) is not None

    # The ways out the message names: the former kubeconfig back (nothing changes then) …
    path.write_text(yaml.safe_dump(kubeconfig_of(cluster.kubeconfig)))
    assert p.preview().changed() == {}
    # … or a refresh, which forgets what the new server lacks and records that server:
    # `up` then creates the objects there; the former server keeps its copies.
    path.write_text(yaml.safe_dump(kubeconfig_of(other.kubeconfig)))
    p.sw("refresh", "--yes")
    assert set(p.resources()) == {"region"}
    assert p.resources()["region"]["outputs"] == {"cluster": other.server}
    created_there(p, cluster, other)


# --- case 2: the stack's default provider switched to another cluster ----------------------


def test_default_cluster_switched_is_refused_before_any_change(
    new_project: Any, cluster: LiveCluster, other: ClusterInfo, tmp_path: Path
) -> None:
    path = tmp_path / "kubeconfig.yaml"
    config = both(cluster.kubeconfig, other.kubeconfig)
    path.write_text(yaml.safe_dump(config))
    p = new_project({"kubernetes:kubeconfig": str(path)})
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS}, data={"a": "1"})
        """
    )
    assert p.up().summary["counts"] == {"create": 2}

    # `kubectl config use-context second`, as a user switching clusters would.
    subprocess.run(
        ["kubectl", "--kubeconfig", str(path), "config", "use-context", "second"], check=True
    )
    before = p.state()
    for args in (("preview", "--json"), ("up", "--yes", "--json"), ("destroy", "--yes")):
        message = one_line(p.sw(*args, rc=2))
        assert "default" in message and other.server in message, message
        assert "refresh" in message and "context" in message, message
    assert p.state() == before
    assert other_get(other, "namespace", p.ns, "default") is None

    # The way back: the former context. Then nothing changes.
    subprocess.run(
        ["kubectl", "--kubeconfig", str(path), "config", "use-context", "first"], check=True
    )
    assert p.preview().changed() == {}

    # The stack's config naming the other context is the same switch.
    p.sw("config", "set", "kubernetes:context", "second")
    assert other.server in one_line(p.preview(rc=2))
    # Moving on deliberately: a refresh forgets what the new cluster lacks, and `up`
    # creates it there (the former cluster keeps its copies, no longer the stack's).
    p.sw("refresh", "--yes")
    created_there(p, cluster, other)


# --- case 3: the provider's namespace changes ------------------------------------------------


def test_provider_namespace_change_replaces_objects_into_the_new_namespace(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()

    def declare(namespace: str) -> None:
        p.program(
            f"""
            k8s.core.v1.Namespace("a", metadata={{"name": NS + "-a"}})
            k8s.core.v1.Namespace("b", metadata={{"name": NS + "-b"}})
            region = k8s.Provider("region", kubeconfig={str(cluster.kubeconfig)!r},
                                  namespace=NS + {namespace!r})
            k8s.core.v1.ConfigMap("cm", metadata={{"name": "cm"}}, data={{"a": "1"}},
                                  opts=sw.ResourceOptions(provider=region))
            k8s.core.v1.ConfigMap("auto", data={{"a": "1"}},
                                  opts=sw.ResourceOptions(provider=region))
            """
        )

    declare("-a")
    assert p.up().summary["counts"] == {"create": 5}
    auto = p.resources()["auto"]["id"]
    assert p.resources()["cm"]["id"] == f"{p.ns}-a/cm" and auto.startswith(f"{p.ns}-a/")

    declare("-b")
    assert p.preview().changed() == {"region": "update", "cm": "replace", "auto": "replace"}
    up = p.up()
    assert up.summary["counts"] == {"same": 2, "update": 1, "replace": 2, "delete-replaced": 2}
    assert up.ops() == {"region": "update", "cm": "delete-replaced", "auto": "delete-replaced"}
    state = p.resources()
    assert state["cm"]["id"] == f"{p.ns}-b/cm" and state["auto"]["id"].startswith(f"{p.ns}-b/")
    assert get(cluster, "configmap", "cm", f"{p.ns}-a") is None
    assert get(cluster, "configmap", auto.partition("/")[2], f"{p.ns}-a") is None
    assert get(cluster, "configmap", "cm", f"{p.ns}-b") is not None
    assert p.preview().changed() == {}
    p.sw("destroy", "--yes")
    assert get(cluster, "configmap", "cm", f"{p.ns}-b") is None


# --- case 4: an exec credential plugin that is not installed --------------------------------


@pytest.mark.parametrize("provider", ["default", "explicit"])
def test_exec_plugin_not_installed_is_bad_input(
    new_project: Any, cluster: LiveCluster, tmp_path: Path, provider: str
) -> None:
    config = kubeconfig_of(cluster.kubeconfig)
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "no-such-auth-plugin",
            "interactionMode": "Never",
        }
    }
    path = tmp_path / "exec.yaml"
    path.write_text(yaml.safe_dump(config))
    if provider == "default":
        p = new_project({"kubernetes:kubeconfig": str(path)})
        p.program('k8s.core.v1.ConfigMap("cm", metadata={"namespace": NS})\n')
    else:
        p = new_project()
        p.program(
            f"""
            region = k8s.Provider("region", kubeconfig={str(path)!r})
            k8s.core.v1.ConfigMap("cm", metadata={{"namespace": NS}},
                                  opts=sw.ResourceOptions(provider=region))
            """
        )
    for command in (p.preview, p.up):
        message = one_line(command(rc=2))
        assert "no-such-auth-plugin" in message and repr(CONTEXT) in message, message
        assert "PATH" in message, message
    assert p.history() == [] and p.state()["resources"] == []
