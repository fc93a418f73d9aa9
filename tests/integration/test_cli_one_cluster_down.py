"""A stack over two clusters, one of them stopped: what `destroy` does, says and leaves.

The real CLI against two real local clusters; the second is stopped after `up`. Its
objects' deletes fail on refused connections, which sent nothing: they stay in the state
(nothing pending), the other cluster's go, and the next run on that cluster is not held
up by them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster, another_cluster, get, new_project

from stackwright.localcluster import lifecycle
from stackwright.localcluster.lifecycle import ClusterInfo

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

PROVIDER = "stackwright:providers:kubernetes"
CM = "kubernetes:core/v1:ConfigMap"


@pytest.fixture
def second(cluster: LiveCluster) -> Iterator[ClusterInfo]:
    """A second local cluster, which tests stop."""
    with another_cluster("second-down") as info:
        yield info


def test_destroy_with_one_cluster_down_deletes_the_others_and_holds_up_nothing(
    new_project: Any, cluster: LiveCluster, second: ClusterInfo
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)  # not the stack's: its delete would take time

    def program(a: str) -> None:
        p.program(
            f"""
            k8s.core.v1.ConfigMap("here", metadata={{"name": "here", "namespace": NS}},
                                  data={{"a": "{a}"}})
            far = k8s.Provider("far", kubeconfig={str(second.kubeconfig)!r}, namespace="default")
            k8s.core.v1.ConfigMap("there", metadata={{"name": "there"}}, data={{"a": "1"}},
                                  opts=sw.ResourceOptions(provider=far))
            """
        )

    program("1")
    p.up()
    lifecycle.stop("second-down")

    destroyed = p.sw("destroy", "--yes", "--json", rc=1)

    (summary,) = [e for e in destroyed.events if e["event"] == "summary"]
    (failure,) = summary["failures"]
    assert failure.startswith(f"{CM} there: ") and "cannot reach the API server" in failure
    far = p.urn(PROVIDER, "far")
    started = {e["name"]: e for e in destroyed.events if e["event"] == "step-started"}
    assert started["there"]["provider"] == far and started["here"]["provider"] == ""
    assert get(cluster, "configmap", "here", p.ns) is None
    state = p.state()
    assert state["pending"] == [], "a delete never sent is no interrupted operation"
    assert sorted(p.resources()) == ["far", "there"]

    # The cluster that answers is not held up by the one that does not.
    program("2")
    p.up("--target", p.urn(CM, "here"))
    assert get(cluster, "configmap", "here", p.ns)["data"] == {"a": "2"}  # type: ignore[index]
    cluster.kubectl("delete", "namespace", p.ns, "--wait=false")
