"""`stackwright.io/deletion-propagation` against the local cluster, end to end through the
CLI: `orphan` deletes a Deployment and leaves its ReplicaSet and Pods running, owned by
nothing of it (a migration's first step, as Pulumi users use `pulumi.com/
deletionPropagationPolicy`); `foreground` makes the delete step last until its Pods are
gone; a destroy, which runs no program, does as the state recorded; a value the annotation
does not name is refused before any change.

The last tests hold the local cluster's garbage collector to kube-controller-manager's
behaviour for these policies, which the others rely on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from test_cli_lifecycle import get, live, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

KEY = "stackwright.io/deletion-propagation"
NAMESPACE = 'ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
HOLD = "example.com/hold"


def web(policy: str, namespace: str = 'ns.metadata["name"]') -> str:
    """A Deployment of two Pods annotated with `policy`."""
    return (
        "k8s.apps.v1.Deployment(\n"
        f'    "web", metadata={{"name": "web", "namespace": {namespace},\n'
        f'                     "annotations": {{"{KEY}": "{policy}"}}}},\n'
        '    spec=app_spec("web", replicas=2),\n'
        ")\n"
    )


def items(cluster: LiveCluster, path: str) -> list[dict[str, Any]]:
    with cluster.http() as http:
        reply = http.get(path)
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()["items"]
    return found


def replicasets(cluster: LiveCluster, ns: str) -> list[dict[str, Any]]:
    return items(cluster, f"/apis/apps/v1/namespaces/{ns}/replicasets")


def pods(cluster: LiveCluster, ns: str) -> list[dict[str, Any]]:
    return items(cluster, f"/api/v1/namespaces/{ns}/pods")


def owners(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["kind"], o["uid"]) for o in obj["metadata"].get("ownerReferences") or ()]


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)
    return result


def assert_orphaned(cluster: LiveCluster, ns: str, owner_uid: str) -> None:
    """The Deployment is gone; its ReplicaSet and both Pods stay, and stay (no collector
    comes for them later), none owned by it, the Pods still by their ReplicaSet."""
    assert get(cluster, "deployment", "web", ns) is None
    for _ in range(2):
        (rs,) = replicasets(cluster, ns)
        assert owners(rs) == [], rs["metadata"]
        kept = pods(cluster, ns)
        assert len(kept) == 2
        for pod in kept:
            assert owners(pod) == [("ReplicaSet", rs["metadata"]["uid"])]
            assert not pod["metadata"].get("deletionTimestamp")
        assert all(uid != owner_uid for obj in [rs, *kept] for _, uid in owners(obj))
        time.sleep(1.5)  # what a background delete would have collected by now


def deploy(p: Any, cluster: LiveCluster, policy: str, *, own_namespace: bool = True) -> str:
    """`up` the Deployment annotated with `policy` (in a Namespace of the program's own
    unless not `own_namespace`), wait for its Pods, and return its uid."""
    p.program(NAMESPACE + web(policy) if own_namespace else web(policy, namespace="NS"))
    p.up()
    eventually(lambda: len(pods(cluster, p.ns)) == 2 and replicasets(cluster, p.ns))
    uid: str = live(cluster, "deployment", "web", p.ns)["metadata"]["uid"]
    return uid


def test_orphan_leaves_the_replicaset_and_pods_of_a_deployment_the_program_dropped(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    uid = deploy(p, cluster, "orphan")
    deployment = live(cluster, "deployment", "web", p.ns)
    # Sent with the object, as skip-await and timeout-seconds are; recorded with it.
    assert deployment["metadata"]["annotations"][KEY] == "orphan"
    assert p.resources()["web"]["deletionPropagation"] == "Orphan"

    p.program(NAMESPACE)
    done = p.up()

    assert done.changed() == {"web": "delete"}
    assert_orphaned(cluster, p.ns, uid)
    assert p.sw("destroy", "--yes", "--json").rc == 0


def test_foreground_ends_the_delete_step_only_once_the_pods_are_gone(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    deploy(p, cluster, "Foreground")

    p.program(NAMESPACE)
    done = p.up()

    assert done.changed() == {"web": "delete"}
    # Read as the command returns: a background delete returns with the Pods still there.
    assert pods(cluster, p.ns) == []
    assert replicasets(cluster, p.ns) == []
    assert get(cluster, "deployment", "web", p.ns) is None
    said = [e["message"] for e in done.of("step-progress") if e["urn"].endswith("::web")]
    assert any("foregroundDeletion" in message for message in said), said
    assert p.sw("destroy", "--yes", "--json").rc == 0


def test_a_destroy_orphans_as_the_state_recorded(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    # The namespace is not the stack's: the destroy leaves it, and what the Deployment owned.
    cluster.kubectl("create", "namespace", p.ns)
    try:
        uid = deploy(p, cluster, "ORPHAN", own_namespace=False)

        destroyed = p.sw("destroy", "--yes", "--json")

        assert destroyed.ops() == {"web": "delete"}
        assert_orphaned(cluster, p.ns, uid)
        assert p.state()["resources"] == []
    finally:
        cluster.kubectl("delete", "namespace", p.ns, "--wait=false")


def test_a_value_it_does_not_name_is_refused_and_nothing_changes(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    settings = 'k8s.core.v1.ConfigMap("settings", metadata={{"name": "settings", "namespace": NS}}, data={{"v": "{v}"}})\n'
    p.program(NAMESPACE + settings.format(v="1"))
    p.up()
    before = p.state()

    p.program(NAMESPACE + settings.format(v="2") + web("cascade"))
    refused = p.up(rc=2)

    source = (p.root / "__main__.py").read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "k8s.apps.v1.Deployment(" in text)
    message = one_line(refused)
    assert f"__main__.py:{line}: " in message, message
    assert "kubernetes:apps/v1:Deployment web" in message, message
    assert f"{KEY} must be one of orphan | background | foreground, got 'cascade'" in message
    assert live(cluster, "configmap", "settings", p.ns)["data"] == {"v": "1"}
    assert get(cluster, "deployment", "web", p.ns) is None
    assert p.state() == before
    assert p.sw("destroy", "--yes", "--json").rc == 0


def statefulset(policy: str | None, pod_management: str) -> str:
    annotations = f'"annotations": {{"{KEY}": "{policy}"}}, ' if policy else ""
    return (
        "k8s.apps.v1.StatefulSet(\n"
        f'    "db", metadata={{"name": "db", "namespace": ns.metadata["name"], {annotations}}},\n'
        '    spec={**app_spec("db", replicas=2), "serviceName": "db",\n'
        f'          "podManagementPolicy": "{pod_management}"}},\n'
        ")\n"
    )


def test_orphan_added_with_the_change_that_replaces_a_statefulset_keeps_its_pods(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The case Pulumi users asked for (pulumi-kubernetes#1831): a change the API server
    refuses to make in place replaces the StatefulSet; with `orphan` added in the same
    run its Pods are not restarted, and the new StatefulSet adopts them."""
    p = new_project()
    p.program(NAMESPACE + statefulset(None, "OrderedReady"))
    p.up()
    running = eventually(lambda: len(found := pods(cluster, p.ns)) == 2 and found)
    before = {pod["metadata"]["name"]: pod["metadata"]["uid"] for pod in running}

    p.program(NAMESPACE + statefulset("orphan", "Parallel"))
    done = p.up()

    assert done.changed() == {"db": "replace"}
    new_uid = live(cluster, "statefulset", "db", p.ns)["metadata"]["uid"]

    def adopted() -> list[dict[str, Any]]:
        found = pods(cluster, p.ns)
        return found if all(owners(pod) == [("StatefulSet", new_uid)] for pod in found) else []

    eventually(adopted)
    time.sleep(1.5)  # what a rolling update of Pods on a revision it took for another would take
    after = adopted()
    assert {pod["metadata"]["name"]: pod["metadata"]["uid"] for pod in after} == before
    assert p.sw("destroy", "--yes", "--json").rc == 0


# --- the local cluster's garbage collector, as kube-controller-manager's ----------------------


@pytest.fixture
def configmaps(cluster: LiveCluster, request: pytest.FixtureRequest) -> Any:
    """A namespace of the test's own, and the path of its ConfigMaps."""
    ns = "gc-" + request.node.name.removeprefix("test_").replace("_", "-")[:40].strip("-")
    cluster.kubectl("create", "namespace", ns)
    yield f"/api/v1/namespaces/{ns}/configmaps"
    cluster.kubectl("delete", "namespace", ns, "--wait=false")


def config_map(name: str, owner: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    refs = []
    if owner is not None:
        refs = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                **meta.pop("ref", {}),
            }
        ]
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    if refs:
        body["metadata"]["ownerReferences"] = refs
    return body


def test_foreground_waits_only_for_dependents_that_block_their_owners_deletion(
    cluster: LiveCluster, configmaps: str
) -> None:
    """kube-controller-manager removes `foregroundDeletion` once no dependent with
    `blockOwnerDeletion: true` remains; the others are deleted too, not waited for."""
    with cluster.http() as api:
        owner = api.post(configmaps, json=config_map("owner")).json()
        api.post(configmaps, json=config_map("free", owner, finalizers=[HOLD]))
        deleted = api.request(
            "DELETE", f"{configmaps}/owner", json={"propagationPolicy": "Foreground"}
        )
        assert deleted.status_code == 200, deleted.text
        eventually(lambda: api.get(f"{configmaps}/owner").status_code == 404)
        free = eventually(
            lambda: (
                (d := api.get(f"{configmaps}/free").json())["metadata"].get("deletionTimestamp")
                and d
            )
        )
        assert free["metadata"]["finalizers"] == [HOLD]
        free["metadata"]["finalizers"] = []
        assert api.put(f"{configmaps}/free", json=free).status_code == 200


def test_deleting_again_with_another_policy_replaces_the_collectors_finalizer(
    cluster: LiveCluster, configmaps: str
) -> None:
    """As kube-apiserver's deletionFinalizersForGarbageCollection: a DELETE's policy takes
    `orphan` / `foregroundDeletion` off and puts on the one it asks for (never both), and
    a DELETE without a policy leaves the one there."""
    with cluster.http() as api:
        owner = api.post(configmaps, json=config_map("owner", finalizers=[HOLD])).json()
        api.post(
            configmaps,
            json=config_map("child", owner, finalizers=[HOLD], ref={"blockOwnerDeletion": True}),
        )
        first = api.request(
            "DELETE", f"{configmaps}/owner", json={"propagationPolicy": "Foreground"}
        )
        assert first.json()["metadata"]["finalizers"] == [HOLD, "foregroundDeletion"]
        eventually(
            lambda: api.get(f"{configmaps}/child").json()["metadata"].get("deletionTimestamp")
        )
        again = api.request("DELETE", f"{configmaps}/owner", json={})
        assert again.json()["metadata"]["finalizers"] == [HOLD, "foregroundDeletion"]
        orphan = api.request("DELETE", f"{configmaps}/owner", json={"propagationPolicy": "Orphan"})
        assert orphan.status_code == 200, orphan.text
        assert orphan.json()["metadata"]["finalizers"] == [HOLD, "orphan"]
        # The collector orphans the child and takes its finalizer off; ours holds the owner.
        eventually(
            lambda: api.get(f"{configmaps}/owner").json()["metadata"]["finalizers"] == [HOLD]
        )
        assert "ownerReferences" not in api.get(f"{configmaps}/child").json()["metadata"]
        for name in ("owner", "child"):
            held = api.get(f"{configmaps}/{name}").json()
            held["metadata"]["finalizers"] = []
            assert api.put(f"{configmaps}/{name}", json=held).status_code == 200
