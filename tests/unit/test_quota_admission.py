"""ResourceQuota and LimitRanger admission of the local cluster, with kube-apiserver's words.

A Cluster over an in-memory store, no server: LimitRange defaults and bounds at a pod's
creation (and a claim's), quota totals kept as writes commit (terminal pods freed,
dry runs changing nothing), and the Forbidden messages clients and controllers see.
Scoped quotas: which pods a scope covers (upstream's podMatchesScopeFunc), the quota's own
validation (validateResourceQuotaScopes, validateScopedResourceSelectorRequirement) and
admission and `status.used` counting only the pods in scope.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from stackwright.localcluster import quota, status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
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
    return pod_with(name, resources)


def pod_with(name: str, resources: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.29"}
    if resources:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container], **spec}}  # fmt: skip


def limit_range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": list(items)}}  # fmt: skip


def resource_quota(name: str, **hard: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": {"hard": hard}}  # fmt: skip


def priority_classes(cluster: Cluster, *names: str) -> None:
    """The PriorityClasses the pods name (Priority admission refuses a pod naming none)."""
    for value, name in enumerate(names):
        cluster.create(
            cluster.type_for("scheduling.k8s.io", "v1", "priorityclasses"), "",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": name}, "value": value}, OPTS,
        )  # fmt: skip


def refusal(cluster: Cluster, plural: str, body: dict[str, Any], dry_run: bool = False) -> str:
    with pytest.raises(status.Forbidden) as caught:
        make(cluster, plural, body, dry_run=dry_run)
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


def test_count_pods_counts_terminal_pods_too(cluster: Cluster) -> None:
    """Upstream's PodUsageFunc: `count/pods` is every pod stored, `pods` only live ones."""
    make(cluster, "resourcequotas", resource_quota("stored", **{"count/pods": "1"}))
    made = make(cluster, "pods", pod("a", requests={"cpu": "1"}))
    pods = cluster.type_for("", "v1", "pods")
    cluster.update(
        pods, "team", "a", {**made, "status": {**made["status"], "phase": "Failed"}},
        OPTS, subresource="status",
    )  # fmt: skip
    totals = cluster.quota.totals("team")
    assert {k: totals[k] for k in ("count/pods", "pods", "requests.cpu")} == {
        "count/pods": 1,
        "pods": 0,
        "requests.cpu": 0,
    }
    assert "requested: count/pods=1, used: count/pods=1, limited: count/pods=1" in refusal(
        cluster, "pods", pod("b")
    )


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


# --- scoped quotas ---------------------------------------------------------------------------


def scoped_quota(
    name: str, hard: dict[str, str], scopes: list[str] | None = None,
    *expressions: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {"hard": hard}
    if scopes is not None:
        spec["scopes"] = scopes
    if expressions:
        spec["scopeSelector"] = {"matchExpressions": list(expressions)}
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def term(scope: str, operator: str, *values: str) -> dict[str, Any]:
    made: dict[str, Any] = {"scopeName": scope, "operator": operator}
    if values:
        made["values"] = list(values)
    return made


def covers(spec: dict[str, Any], candidate: dict[str, Any]) -> bool:
    return quota.in_scope(quota.scopes_of({"spec": spec}), candidate)


def invalid(cluster: Cluster, body: dict[str, Any], dry_run: bool = False) -> list[str]:
    with pytest.raises(status.Invalid) as caught:
        make(cluster, "resourcequotas", body, dry_run=dry_run)
    return [f"{c['field']}: {c['message']}" for c in caught.value.to_status()["details"]["causes"]]


# --- scoped quotas: which pods a scope covers ------------------------------------------------


def test_terminating_is_an_active_deadline_of_zero_or_more() -> None:
    for deadline, terminating in ((None, False), (0, True), (30, True)):
        candidate = (
            pod_with("p") if deadline is None else pod_with("p", activeDeadlineSeconds=deadline)
        )
        assert covers({"scopes": ["Terminating"]}, candidate) is terminating
        assert covers({"scopes": ["NotTerminating"]}, candidate) is not terminating
        selector = {"scopeSelector": {"matchExpressions": [term("Terminating", "Exists")]}}
        assert covers(selector, candidate) is terminating


def test_best_effort_is_no_cpu_or_memory_in_any_container_init_ones_too() -> None:
    bare = pod_with("bare")
    zero = pod_with("zero", {"requests": {"cpu": "0"}})
    storage = pod_with("storage", {"requests": {"ephemeral-storage": "1Gi"}})
    sized = pod_with("sized", {"limits": {"memory": "64Mi"}})
    init = pod_with("init", initContainers=[
        {"name": "setup", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
    ])  # fmt: skip
    for candidate, best_effort in ((bare, True), (zero, True), (storage, True), (sized, False),
                                   (init, False)):  # fmt: skip
        assert covers({"scopes": ["BestEffort"]}, candidate) is best_effort, candidate["metadata"]
        assert covers({"scopes": ["NotBestEffort"]}, candidate) is not best_effort
    # A stored pod's status.qosClass is what qos.GetPodQOS reads first.
    assert covers({"scopes": ["NotBestEffort"]}, {**bare, "status": {"qosClass": "Burstable"}})


def test_priority_class_with_each_operator() -> None:
    high, low, none = (
        pod_with("h", priorityClassName="high"), pod_with("l", priorityClassName="low"), pod_with("n")
    )  # fmt: skip

    def by(operator: str, *values: str) -> list[bool]:
        spec = {"scopeSelector": {"matchExpressions": [term("PriorityClass", operator, *values)]}}
        return [covers(spec, candidate) for candidate in (high, low, none)]

    assert by("In", "high", "top") == [True, False, False]
    assert by("NotIn", "high") == [False, True, True]  # no class is not in the set
    assert by("Exists") == [True, True, False]
    assert by("DoesNotExist") == [False, False, True]
    # Named in `scopes`, it is the Exists term admission makes of it.
    assert [covers({"scopes": ["PriorityClass"]}, c) for c in (high, low, none)] == by("Exists")


def test_cross_namespace_pod_affinity_is_a_term_naming_namespaces_or_a_selector() -> None:
    def with_affinity(affinity: dict[str, Any]) -> dict[str, Any]:
        return pod_with("p", affinity=affinity)

    local = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    named = {**local, "namespaces": ["other"]}
    selected = {**local, "namespaceSelector": {}}  # even an empty selector: all namespaces
    spec = {"scopes": ["CrossNamespacePodAffinity"]}
    assert not covers(spec, pod_with("plain"))
    assert not covers(spec, with_affinity(
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [local]}}
    ))  # fmt: skip
    assert covers(spec, with_affinity(
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [named]}}
    ))  # fmt: skip
    assert covers(spec, with_affinity({"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": selected}
        ]}}))  # fmt: skip


def test_every_term_must_cover_the_pod_and_no_scope_covers_all() -> None:
    spec = {"scopes": ["NotBestEffort"],
            "scopeSelector": {"matchExpressions": [term("PriorityClass", "In", "high")]}}  # fmt: skip
    sized = {"requests": {"cpu": "1"}}
    assert covers(spec, pod_with("both", sized, priorityClassName="high"))
    assert not covers(spec, pod_with("class only", priorityClassName="high"))
    assert not covers(spec, pod_with("size only", sized))
    assert covers({"hard": {"pods": "1"}}, pod_with("any"))


# --- scoped quotas: the quota's own validation ---------------------------------------------


def test_a_best_effort_quota_tracks_pods_only(cluster: Cluster) -> None:
    assert invalid(cluster, scoped_quota("be", {"pods": "2", "cpu": "1"}, ["BestEffort"])) == [
        'spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource'
    ]
    # The same through the selector, which the message shows whole; and on a dry run too.
    assert invalid(
        cluster,
        scoped_quota("be", {"requests.memory": "1Gi"}, None, term("BestEffort", "Exists")),
        dry_run=True,
    ) == [
        "spec.scopeSelector.matchExpressions: Invalid value: "
        '{"matchExpressions":[{"operator":"Exists","scopeName":"BestEffort"}]}: '
        "unsupported scope applied to resource"
    ]
    # Other scopes allow cpu and memory but no other standard resource; a count/ name fits any.
    assert invalid(cluster, scoped_quota("t", {"configmaps": "1"}, ["Terminating"])) == [
        'spec.scopes: Invalid value: ["Terminating"]: unsupported scope applied to resource'
    ]
    make(cluster, "resourcequotas", scoped_quota(
        "fine", {"pods": "1", "limits.cpu": "2", "count/configmaps": "1"}, ["NotTerminating"]
    ))  # fmt: skip


def test_conflicting_and_unknown_scopes_are_refused(cluster: Cluster) -> None:
    assert invalid(
        cluster, scoped_quota("q", {"pods": "1"}, ["Terminating", "NotTerminating"])
    ) == ['spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes']
    assert invalid(cluster, scoped_quota(
        "q", {"pods": "1"}, None, term("BestEffort", "Exists"), term("NotBestEffort", "Exists")
    )) == ["spec.scopeSelector.matchExpressions: Invalid value: null: conflicting scopes"]  # fmt: skip
    assert invalid(cluster, scoped_quota("q", {"pods": "1"}, ["Gold"])) == [
        'spec.scopes: Invalid value: ["Gold"]: unsupported scope'
    ]
    assert invalid(cluster, scoped_quota("q", {"pods": "1"}, None, term("Gold", "Exists"))) == [
        'spec.scopeSelector.matchExpressions.scopeName: Invalid value: "Gold": unsupported scope'
    ]


def test_selector_operators_and_values_are_checked(cluster: Cluster) -> None:
    path = "spec.scopeSelector.matchExpressions"
    assert invalid(cluster, scoped_quota("q", {"pods": "1"}, None, term("Terminating", "DoesNotExist"))) == [
        f'{path}.operator: Invalid value: "DoesNotExist": must be \'Exists\' when scope is any of '
        "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
        "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity"
    ]  # fmt: skip
    assert invalid(
        cluster, scoped_quota("q", {"pods": "1"}, None, term("PriorityClass", "In"))
    ) == [
        f"{path}.values: Required value: must be at least one value when `operator` is 'In' or "
        "'NotIn' for scope selector"
    ]
    assert invalid(
        cluster, scoped_quota("q", {"pods": "1"}, None, term("PriorityClass", "Exists", "high"))
    ) == [
        f"{path}.values: Invalid value: [\"high\"]: must be no value when `operator` is 'Exist' "
        "or 'DoesNotExist' for scope selector"
    ]
    assert invalid(
        cluster, scoped_quota("q", {"pods": "1"}, None, term("PriorityClass", "Gt", "1"))
    ) == [f'{path}.operator: Invalid value: "Gt": not a valid selector operator']


def test_an_update_to_a_wrong_selector_is_refused(cluster: Cluster) -> None:
    made = make(cluster, "resourcequotas", scoped_quota(
        "q", {"pods": "1"}, None, term("PriorityClass", "In", "high")
    ))  # fmt: skip
    made["spec"]["scopeSelector"]["matchExpressions"][0]["values"] = []
    quotas = cluster.type_for("", "v1", "resourcequotas")
    with pytest.raises(status.Invalid, match="must be at least one value"):
        cluster.update(quotas, "team", "q", made, OPTS)


# --- scoped quotas: admission and status.used ------------------------------------------------


def test_a_best_effort_quota_refuses_only_best_effort_pods(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", scoped_quota("be", {"pods": "1"}, ["BestEffort"]))
    make(cluster, "pods", pod_with("first"))
    assert refusal(cluster, "pods", pod_with("second")) == (
        'pods "second" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, '
        "limited: pods=1"
    )
    assert "exceeded quota: be" in refusal(cluster, "pods", pod_with("dry"), dry_run=True)
    make(cluster, "pods", pod_with("sized", {"requests": {"cpu": "100m"}}))
    assert cluster.quota.used(cluster.store.get(quota.QUOTA_TYPE, "team", "be"))["pods"] == 1
    assert cluster.quota.totals("team")["pods"] == 2


def test_a_pod_outside_the_scopes_need_not_state_what_the_quota_tracks(cluster: Cluster) -> None:
    make(cluster, "resourcequotas", scoped_quota(
        "sized", {"requests.cpu": "1"}, ["NotBestEffort"]
    ))  # fmt: skip
    make(cluster, "pods", pod_with("bare"))  # best effort: not this quota's, no `must specify`
    assert refusal(cluster, "pods", pod_with("mem", {"requests": {"memory": "64Mi"}})) == (
        'pods "mem" is forbidden: failed quota: sized: must specify requests.cpu for: web'
    )
    make(cluster, "pods", pod_with("a", {"requests": {"cpu": "600m"}}))
    assert refusal(cluster, "pods", pod_with("b", {"requests": {"cpu": "600m"}})) == (
        'pods "b" is forbidden: exceeded quota: sized, requested: requests.cpu=600m, '
        "used: requests.cpu=600m, limited: requests.cpu=1"
    )


def test_a_limit_range_default_takes_a_pod_out_of_best_effort_first(cluster: Cluster) -> None:
    """LimitRanger runs before quota admission: its default makes the pod Burstable."""
    make(cluster, "resourcequotas", scoped_quota("be", {"pods": "0"}, ["BestEffort"]))
    make(cluster, "limitranges", {
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "50m"}}]},
    })  # fmt: skip
    make(cluster, "pods", pod_with("defaulted"))
    cluster.delete(cluster.type_for("", "v1", "limitranges"), "team", "limits", DeleteOptions())
    assert "limited: pods=0" in refusal(cluster, "pods", pod_with("bare"))


def test_priority_class_and_terminating_quotas_count_their_own_pods(cluster: Cluster) -> None:
    priority_classes(cluster, "low", "high")
    make(cluster, "resourcequotas", scoped_quota(
        "high", {"pods": "1"}, None, term("PriorityClass", "In", "high")
    ))  # fmt: skip
    make(cluster, "resourcequotas", scoped_quota("batch", {"pods": "1"}, ["Terminating"]))
    make(cluster, "pods", pod_with("h1", priorityClassName="high"))
    make(cluster, "pods", pod_with("l1", priorityClassName="low"))
    make(cluster, "pods", pod_with("l2", priorityClassName="low"))
    assert "exceeded quota: high, requested: pods=1, used: pods=1" in refusal(
        cluster, "pods", pod_with("h2", priorityClassName="high")
    )
    make(cluster, "pods", pod_with("job1", activeDeadlineSeconds=60))
    assert "exceeded quota: batch" in refusal(
        cluster, "pods", pod_with("job2", activeDeadlineSeconds=60)
    )
    # A terminating pod of class high meets both; the first quota to refuse is named.
    assert "exceeded quota: " in refusal(
        cluster, "pods", pod_with("both", priorityClassName="high", activeDeadlineSeconds=5)
    )


def test_a_priority_class_quota_sees_the_default_class_admission_filled_in(
    cluster: Cluster,
) -> None:
    """Priority admission runs before ResourceQuota's: a pod naming no class is in the
    scope of the global default's name."""
    cluster.create(
        cluster.type_for("scheduling.k8s.io", "v1", "priorityclasses"), "",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "usual"}, "value": 5, "globalDefault": True}, OPTS,
    )  # fmt: skip
    make(cluster, "resourcequotas", scoped_quota(
        "usual", {"pods": "1"}, None, term("PriorityClass", "In", "usual")
    ))  # fmt: skip
    make(cluster, "pods", pod_with("first"))
    assert "exceeded quota: usual, requested: pods=1" in refusal(
        cluster, "pods", pod_with("second")
    )


def test_a_scoped_quota_counts_no_other_kind(cluster: Cluster) -> None:
    """Only the pod evaluator matches scopes: a scoped quota's `count/configmaps` stays at
    zero and refuses nothing."""
    controller = ResourceQuotaController(cluster)
    make(cluster, "resourcequotas", scoped_quota(
        "scoped", {"pods": "5", "count/configmaps": "1"}, ["NotTerminating"]
    ))  # fmt: skip
    for index in range(2):
        make(cluster, "configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": f"cm{index}"}})  # fmt: skip
    asyncio.run(controller.reconcile("team"))
    written = cluster.store.get(quota.QUOTA_TYPE, "team", "scoped")
    assert written is not None
    assert written["status"]["used"] == {"pods": "0", "count/configmaps": "0"}


def test_the_controller_reports_only_the_pods_in_scope(cluster: Cluster) -> None:
    controller = ResourceQuotaController(cluster)
    priority_classes(cluster, "low", "high")
    make(
        cluster, "pods", pod_with("early", {"requests": {"cpu": "250m"}}, priorityClassName="high")
    )
    make(cluster, "resourcequotas", scoped_quota(
        "high", {"pods": "10", "requests.cpu": "4"}, None, term("PriorityClass", "In", "high")
    ))  # fmt: skip
    make(cluster, "resourcequotas", scoped_quota("free", {"pods": "10"}, ["BestEffort"]))
    make(cluster, "pods", pod_with("late", {"requests": {"cpu": "500m"}}, priorityClassName="high"))
    make(cluster, "pods", pod_with("other", {"requests": {"cpu": "1"}}, priorityClassName="low"))
    make(cluster, "pods", pod_with("bare"))
    asyncio.run(controller.reconcile("team"))

    def used(name: str) -> dict[str, str]:
        written = cluster.store.get(quota.QUOTA_TYPE, "team", name)
        assert written is not None
        return dict(written["status"]["used"])

    assert used("high") == {"pods": "2", "requests.cpu": "750m"}
    assert used("free") == {"pods": "1"}
    # A deleted pod leaves its scope's totals; a changed selector counts afresh.
    cluster.delete(cluster.type_for("", "v1", "pods"), "team", "late",
                   DeleteOptions(grace_period_seconds=0))  # fmt: skip
    current = copy.deepcopy(cluster.store.get(quota.QUOTA_TYPE, "team", "high"))
    assert current is not None
    current["spec"]["scopeSelector"]["matchExpressions"][0]["values"] = ["high", "low"]
    cluster.update(cluster.type_for("", "v1", "resourcequotas"), "team", "high", current, OPTS)
    asyncio.run(controller.reconcile("team"))
    assert used("high") == {"pods": "2", "requests.cpu": "1250m"}


def test_a_restart_counts_scoped_quotas_from_the_store(tmp_path: Any) -> None:
    path = tmp_path / "store.db"
    first = Cluster(Store(path))
    first.create(first.type_for("", "v1", "namespaces"), "",
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
                 OPTS)  # fmt: skip
    first.create(first.type_for("", "v1", "serviceaccounts"), "team",
                 {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
                 OPTS)  # fmt: skip
    first.create(first.type_for("", "v1", "resourcequotas"), "team",
                 scoped_quota("be", {"pods": "1"}, ["BestEffort"]), OPTS)  # fmt: skip
    first.create(first.type_for("", "v1", "pods"), "team", pod_with("a"), OPTS)
    first.create(first.type_for("", "v1", "pods"), "team",
                 pod_with("b", {"requests": {"cpu": "1"}}), OPTS)  # fmt: skip

    again = Cluster(Store(path))
    kept = again.store.get(quota.QUOTA_TYPE, "team", "be")
    assert kept is not None
    assert dict(again.quota.used(kept)) == {"pods": 1, "count/pods": 1}
    with pytest.raises(status.Forbidden, match="exceeded quota: be"):
        again.create(again.type_for("", "v1", "pods"), "team", pod_with("c"), OPTS)
