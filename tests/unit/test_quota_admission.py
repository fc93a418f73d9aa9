"""ResourceQuota and LimitRanger admission of the local cluster, with kube-apiserver's words.

A Cluster over an in-memory store, no server: LimitRange defaults and bounds at a pod's
creation (and a claim's), quota totals kept as writes commit (terminal pods freed,
dry runs changing nothing), and the Forbidden messages clients and controllers see.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stackwright.localcluster import quota, status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.quotas import ResourceQuotaController
from stackwright.localcluster.store import Store

OPTS = WriteOptions(field_manager="test")


@pytest.fixture
def cluster() -> Cluster:
    made = Cluster(Store(":memory:"))
    made.create(
        made.type_for("", "v1", "namespaces"), "",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}, OPTS,
    )  # fmt: skip
    made.create(
        made.type_for("", "v1", "serviceaccounts"), "team",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, OPTS,
    )  # fmt: skip
    return made


def make(cluster: Cluster, plural: str, body: dict[str, Any], dry_run: bool = False) -> Any:
    opts = WriteOptions(field_manager="test", dry_run=dry_run)
    return cluster.create(cluster.type_for("", "v1", plural), "team", body, opts).obj


def pod(name: str, **resources: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.29"}
    if resources:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container]}}  # fmt: skip


def limit_range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": list(items)}}  # fmt: skip


def resource_quota(name: str, **hard: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": {"hard": hard}}  # fmt: skip


def refusal(cluster: Cluster, plural: str, body: dict[str, Any]) -> str:
    with pytest.raises(status.Forbidden) as caught:
        make(cluster, plural, body)
    assert caught.value.to_status()["code"] == 403
    return caught.value.message


# --- LimitRanger ---------------------------------------------------------------------------


def test_container_defaults_fill_limits_and_requests_and_are_annotated(cluster: Cluster) -> None:
    make(cluster, "limitranges", limit_range(
        {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
         "defaultRequest": {"cpu": "100m"}},
    ))  # fmt: skip
    made = make(cluster, "pods", pod("web", limits={"memory": "128Mi"}))
    resources = made["spec"]["containers"][0]["resources"]
    # memory's request came from its own limit (Pod defaulting); cpu's from the range.
    assert resources == {
        "limits": {"cpu": "500m", "memory": "128Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }
    assert made["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container web; cpu limit for container web"
    )
    assert made["status"]["qosClass"] == "Burstable"


def test_a_default_limit_alone_becomes_the_request_too(cluster: Cluster) -> None:
    make(cluster, "limitranges", limit_range({"type": "Container", "default": {"cpu": "1"}}))
    made = make(cluster, "pods", pod("web"))
    assert made["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1"}, "requests": {"cpu": "1"},
    }  # fmt: skip


def test_bounds_are_refused_together_in_the_plugins_words(cluster: Cluster) -> None:
    make(cluster, "limitranges", limit_range(
        {"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
         "maxLimitRequestRatio": {"cpu": "2"}},
    ))  # fmt: skip
    message = refusal(
        cluster, "pods", pod("x", requests={"cpu": "50m"}, limits={"cpu": "200m", "memory": "2Gi"})
    )
    assert message == (
        'pods "x" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "maximum memory usage per Container is 1Gi, but limit is 2Gi, "
        "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]"
    )
    # The max is the default limit (LimitRange defaulting), so only the ratio fails: bare.
    assert refusal(cluster, "pods", pod("y", requests={"cpu": "200m"})) == (
        'pods "y" is forbidden: cpu max limit to request ratio per Container is 2, but no '
        "limit is specified or limit is 0"
    )


def test_pod_and_claim_limits(cluster: Cluster) -> None:
    make(cluster, "limitranges", limit_range(
        {"type": "Pod", "max": {"cpu": "1"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}},
    ))  # fmt: skip
    two = pod("two", limits={"cpu": "800m"})
    two["spec"]["containers"].append(
        {"name": "side", "image": "busybox", "resources": {"limits": {"cpu": "400m"}}}
    )
    assert refusal(cluster, "pods", two) == (
        'pods "two" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m'
    )
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "500Mi"}}}}  # fmt: skip
    assert refusal(cluster, "persistentvolumeclaims", claim) == (
        'persistentvolumeclaims "data" is forbidden: minimum storage usage per '
        "PersistentVolumeClaim is 1Gi, but request is 500Mi"
    )


# --- ResourceQuota ---------------------------------------------------------------------------


def test_object_counts_are_refused_past_hard_naming_the_quota(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", resource_quota("counts", pods="2", configmaps="1"))
    make(cluster, "pods", pod("a"))
    make(cluster, "pods", pod("b"))
    assert refusal(cluster, "pods", pod("c")) == (
        'pods "c" is forbidden: exceeded quota: counts, requested: pods=1, used: pods=2, '
        "limited: pods=2"
    )
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-"}}
    make(cluster, "configmaps", cm)
    assert refusal(cluster, "configmaps", cm) == (
        'configmaps "cfg-" is forbidden: exceeded quota: counts, requested: configmaps=1, '
        "used: configmaps=1, limited: configmaps=1"
    )


def test_a_dry_run_is_checked_and_counts_nothing(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", resource_quota("counts", pods="1"))
    make(cluster, "pods", pod("a"), dry_run=True)
    make(cluster, "pods", pod("a"), dry_run=True)
    assert cluster.quota.totals("team")["pods"] == 0
    make(cluster, "pods", pod("a"))
    with pytest.raises(status.Forbidden, match="exceeded quota: counts"):
        make(cluster, "pods", pod("b"), dry_run=True)


def test_terminal_pods_free_their_share(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", resource_quota("counts", pods="1"))
    made = make(cluster, "pods", pod("a"))
    pods = cluster.type_for("", "v1", "pods")
    cluster.update(
        pods, "team", "a", {**made, "status": {**made["status"], "phase": "Succeeded"}},
        OPTS, subresource="status",
    )  # fmt: skip
    make(cluster, "pods", pod("b"))
    assert cluster.quota.totals("team")["pods"] == 1


def test_compute_quota_needs_every_container_to_state_it(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", resource_quota(
        "compute", **{"limits.cpu": "1", "requests.memory": "1Gi"}
    ))  # fmt: skip
    assert refusal(cluster, "pods", pod("bare")) == (
        'pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: web; '
        "must specify requests.memory for: web"
    )
    sized = {"requests": {"memory": "768Mi"}, "limits": {"cpu": "600m", "memory": "768Mi"}}
    make(cluster, "pods", pod("one", **sized))
    assert refusal(cluster, "pods", pod("two", **sized)) == (
        'pods "two" is forbidden: exceeded quota: compute, requested: '
        "limits.cpu=600m,requests.memory=768Mi, used: limits.cpu=600m,requests.memory=768Mi, "
        "limited: limits.cpu=1,requests.memory=1Gi"
    )


def test_storage_per_class_and_load_balancers(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", resource_quota("storage", **{
        "requests.storage": "10Gi", "fast.storageclass.storage.k8s.io/requests.storage": "1Gi",
        "services.loadbalancers": "0",
    }))  # fmt: skip

    def claim(name: str, size: str, klass: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": klass,
                         "resources": {"requests": {"storage": size}}}}  # fmt: skip

    make(cluster, "persistentvolumeclaims", claim("slow", "8Gi", "standard"))
    assert refusal(cluster, "persistentvolumeclaims", claim("big", "3Gi", "standard")) == (
        'persistentvolumeclaims "big" is forbidden: exceeded quota: storage, requested: '
        "requests.storage=3Gi, used: requests.storage=8Gi, limited: requests.storage=10Gi"
    )
    assert "fast.storageclass.storage.k8s.io/requests.storage=2Gi" in refusal(
        cluster, "persistentvolumeclaims", claim("quick", "2Gi", "fast")
    )
    lb = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
          "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}  # fmt: skip
    assert "requested: services.loadbalancers=1" in refusal(cluster, "services", lb)


def test_totals_follow_deletes_and_a_namespace_without_quota_is_not_tracked(
    cluster: Cluster,
) -> None:
    assert not cluster.quota.tracks("team")
    make(cluster, "pods", pod("early", requests={"cpu": "250m"}))
    make(cluster, "resourcequotas", resource_quota("compute", cpu="1"))
    # Counted from what was there when the first quota came.
    assert (
        cluster.quota.totals("team")["cpu"]
        == quota.usage(
            ("", "pods"), {"spec": {"containers": [{"resources": {"requests": {"cpu": "250m"}}}]}}
        )["cpu"]
    )
    from stackwright.localcluster.cluster import DeleteOptions

    cluster.delete(cluster.type_for("", "v1", "pods"), "team", "early",
                   DeleteOptions(grace_period_seconds=0))  # fmt: skip
    assert cluster.quota.totals("team")["cpu"] == 0
    cluster.delete(cluster.type_for("", "v1", "resourcequotas"), "team", "compute", DeleteOptions())
    assert not cluster.quota.tracks("team")


def test_the_controller_writes_hard_and_used(cluster: Cluster) -> None:
    controller = ResourceQuotaController(cluster)
    make(cluster, "resourcequotas", resource_quota("mixed", pods="3", **{"requests.memory": "1Gi"}))
    make(cluster, "pods", pod("a", requests={"memory": "256Mi"}, limits={"memory": "256Mi"}))
    asyncio.run(controller.reconcile("team"))
    written = cluster.store.get(quota.QUOTA_TYPE, "team", "mixed")
    assert written is not None
    assert written["status"] == {
        "hard": {"pods": "3", "requests.memory": "1Gi"},
        "used": {"pods": "1", "requests.memory": "256Mi"},
    }


def test_a_restart_counts_each_quotas_namespace_from_the_store_in_one_pass(
    tmp_path: Any,
) -> None:
    """The store persists; the totals are rebuilt from it as the server starts, one pass
    over the store for every namespace with a quota (not one per namespace: 3.4 s with a
    quota in each of 200 namespaces)."""
    path = tmp_path / "store.db"
    first = Cluster(Store(path))
    namespaces = first.type_for("", "v1", "namespaces")
    for namespace in ("team", "other", "free"):
        first.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": namespace}}, OPTS)  # fmt: skip
        first.create(first.type_for("", "v1", "configmaps"), namespace, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}, OPTS)  # fmt: skip
    for namespace in ("team", "other"):
        first.create(first.type_for("", "v1", "resourcequotas"), namespace,
                     resource_quota("count", configmaps="5"), OPTS)  # fmt: skip
    kept = {ns: dict(first.quota.totals(ns)) for ns in ("team", "other")}

    class Counted(Store):
        listed = 0

        def items(self, key: Any, namespace: str | None = None) -> list[dict[str, Any]]:
            Counted.listed += 1
            return super().items(key, namespace)

    store = Counted(path)
    types = len(list(store.type_keys()))
    again = quota.Usage(store)  # as Cluster(store) makes it

    assert {ns: dict(again.totals(ns)) for ns in ("team", "other")} == kept
    assert kept["team"]["configmaps"] == 1 and not again.tracks("free")
    assert Counted.listed == 1 + types  # the quotas, then each type once


def test_a_pods_totals_are_its_containers_sum_or_an_init_containers_if_larger() -> None:
    """PodRequestsAndLimits, which the quota and the LimitRanger's Pod items both read."""
    from stackwright.localcluster.quota import pod_totals

    spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
            {"resources": {"requests": {"cpu": "0.2"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
    }
    totals = {name: qty.canonical() for name, qty in pod_totals(spec, "requests").items()}
    assert totals == {"cpu": "500m", "memory": "1Gi"}
    spec["initContainers"] = [{"resources": {"requests": {"cpu": "250m"}}}]
    assert pod_totals(spec, "requests")["cpu"].canonical() == "300m"
