"""The dependency graph: Kubernetes' ordering rules, declared edges, cycles and speed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from stackwright.engine.graph import (
    MATCHES,
    RULES,
    Graph,
    Node,
    implicit_edges,
    service_feeders,
    services_fed_later,
)
from stackwright.errors import UsageError


def obj(
    kind: str, name: str, namespace: str = "", api_version: str = "v1", **extra: Any
) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **extra}


def node(urn: str, body: dict[str, Any] | None = None, *needs: str) -> Node:
    return Node(urn, body or {}, frozenset(needs))


def deploy(name: str, namespace: str = "", **pod: Any) -> dict[str, Any]:
    """A Deployment whose pods have the spec `pod` (volumes, containers, ...)."""
    spec = {"template": {"spec": pod}} if pod else {}
    return obj("Deployment", name, namespace, "apps/v1", **({"spec": spec} if spec else {}))


#: A pod spec naming a ConfigMap, a Secret, a ServiceAccount and a claim.
REFERS = {
    "serviceAccountName": "sa",
    "volumes": [
        {"name": "c", "configMap": {"name": "c"}},
        {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
    ],
    "containers": [{"name": "app", "envFrom": [{"secretRef": {"name": "s"}}]}],
}


CRD = obj(
    "CustomResourceDefinition",
    "widgets.example.com",
    api_version="apiextensions.k8s.io/v1",
    spec={"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}},
)


def test_rules_are_data_with_reasons() -> None:
    assert [rule.name for rule in RULES] == [
        "namespace-first",
        "crd-before-custom-objects",
        "config-before-workloads",
        "account-before-its-token-secrets",
        "rbac-before-workloads",
        "cluster-rbac-before-workloads",
        "pod-classes-before-workloads",
        "limits-before-workloads",
        "services-before-their-webhooks",
        "apiservice-before-its-objects",
        "storageclass-before-claims",
        "ingressclass-before-ingresses",
    ]
    for rule in RULES:
        assert rule.reason and rule.match in MATCHES and rule.first


def test_namespace_first() -> None:
    graph = Graph(
        [
            node("cm", obj("ConfigMap", "c", "apps")),
            node("other", obj("ConfigMap", "c", "elsewhere")),
            node("ns", obj("Namespace", "apps")),
        ]
    )
    assert graph.order == ["other", "ns", "cm"]
    assert graph.needs == {"cm": {"ns"}, "other": set(), "ns": set()}
    assert graph.why("cm", "ns") == "namespace-first"


def test_rules_count_real_objects_not_patches_of_them() -> None:
    """Nothing waits for a Patch by Kubernetes' rules (a NamespacePatch is not the Namespace,
    a ConfigMapPatch not the ConfigMap); a Patch still waits by them as its object would."""
    graph = Graph(
        [
            Node("ns-patch", obj("Namespace", "apps"), frozenset(), patch=True),
            Node("cm-patch", obj("ConfigMap", "c", "apps"), frozenset(), patch=True),
            node("web", deploy("web", "apps", volumes=[{"configMap": {"name": "c"}}])),
            node("cm", obj("ConfigMap", "d", "apps")),
            node("other-ns", obj("Namespace", "other")),
            Node("other-patch", obj("ConfigMap", "c", "other"), frozenset(), patch=True),
        ]
    )
    assert graph.needs == {
        "ns-patch": set(),
        "cm-patch": set(),
        "web": set(),
        "cm": set(),
        "other-ns": set(),
        "other-patch": {"other-ns"},
    }


def test_crd_before_its_custom_objects_only() -> None:
    graph = Graph(
        [
            node("widget", obj("Widget", "w", "apps", "example.com/v1")),
            node("gadget", obj("Gadget", "g", "apps", "example.com/v1")),
            node("other-group", obj("Widget", "w", "apps", "other.com/v1")),
            node("crd", CRD),
        ]
    )
    assert graph.needs["widget"] == {"crd"}
    assert graph.needs["gadget"] == set()
    assert graph.needs["other-group"] == set()
    assert graph.order == ["gadget", "other-group", "crd", "widget"]


def test_config_before_the_workloads_whose_pods_refer_to_it() -> None:
    graph = Graph(
        [
            node("web", deploy("web", "apps", **REFERS)),
            node("job", obj("Job", "j", "apps", "batch/v1")),
            node("cm", obj("ConfigMap", "c", "apps")),
            node("secret", obj("Secret", "s", "apps")),
            node("sa", obj("ServiceAccount", "sa", "apps")),
            node("pvc", obj("PersistentVolumeClaim", "data", "apps")),
            node("unused", obj("ConfigMap", "unused", "apps")),
            node("other-cm", obj("ConfigMap", "c", "other")),
            node("svc", obj("Service", "web", "apps")),
        ]
    )
    assert graph.needs["web"] == {"cm", "secret", "sa", "pvc"}
    # A workload waits only for what its pods name (not for every ConfigMap beside it, which
    # could itself wait for something slow), and only in its own namespace.
    assert graph.needs["job"] == set()
    assert graph.needs["svc"] == set()  # a Service does not mount anything
    assert graph.dependents["unused"] == graph.dependents["other-cm"] == set()
    assert graph.why("web", "pvc") == "config-before-workloads"
    assert graph.order == [
        "job", "cm", "secret", "sa", "pvc", "web", "unused", "other-cm", "svc"
    ]  # fmt: skip


def test_every_place_a_pod_names_config_counts() -> None:
    pod = {
        "imagePullSecrets": [{"name": "pull"}],
        "volumes": [
            {"name": "s", "secret": {"secretName": "mounted"}},
            {"name": "p", "projected": {"sources": [
                {"configMap": {"name": "projected-cm"}}, {"secret": {"name": "projected-s"}}
            ]}},
        ],
        "initContainers": [{"name": "init", "env": [
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "a"}}},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "env-s", "key": "b"}}},
        ]}],
        "containers": [{"name": "app", "envFrom": [{"configMapRef": {"name": "from-cm"}}]}],
        "serviceAccount": "legacy-sa",
    }  # fmt: skip
    named = {
        "pull": "Secret", "mounted": "Secret", "projected-cm": "ConfigMap",
        "projected-s": "Secret", "env-cm": "ConfigMap", "env-s": "Secret",
        "from-cm": "ConfigMap", "legacy-sa": "ServiceAccount",
    }  # fmt: skip
    cron = obj(
        "CronJob", "nightly", "apps", "batch/v1",
        spec={"jobTemplate": {"spec": {"template": {"spec": pod}}}},
    )  # fmt: skip
    for workload in (obj("Pod", "p", "apps", spec=pod), cron):
        graph = Graph(
            [node("w", workload)]
            + [node(name, obj(kind, name, "apps")) for name, kind in named.items()]
        )
        assert graph.needs["w"] == set(named), workload["kind"]


def test_default_namespace_objects_are_one_namespace() -> None:
    pod = {"volumes": [{"name": "c", "configMap": {"name": "c"}}]}
    graph = Graph([node("web", deploy("web", **pod)), node("cm", obj("ConfigMap", "c"))])
    assert graph.needs["web"] == {"cm"}


def test_rbac_before_workloads() -> None:
    graph = Graph(
        [
            node("web", deploy("web", "apps")),
            node("role", obj("Role", "r", "apps", "rbac.authorization.k8s.io/v1")),
            node("binding", obj("RoleBinding", "r", "apps", "rbac.authorization.k8s.io/v1")),
            node("other-role", obj("Role", "r", "other", "rbac.authorization.k8s.io/v1")),
            node(
                "cluster-role", obj("ClusterRole", "cr", api_version="rbac.authorization.k8s.io/v1")
            ),
            node(
                "cluster-binding",
                obj("ClusterRoleBinding", "crb", api_version="rbac.authorization.k8s.io/v1"),
            ),
        ]
    )
    assert graph.needs["web"] == {"role", "binding", "cluster-role", "cluster-binding"}
    assert graph.why("web", "cluster-role") == "cluster-rbac-before-workloads"
    assert graph.order[-1] == "web"


def test_an_account_before_its_token_secrets_only() -> None:
    def secret(name: str, account: str, kind: str = "kubernetes.io/service-account-token") -> Any:
        annotations = {"kubernetes.io/service-account.name": account}
        body = obj("Secret", name, "apps", type=kind)
        return {**body, "metadata": {**body["metadata"], "annotations": annotations}}

    graph = Graph(
        [
            node("token", secret("token", "ci")),
            node("opaque", secret("opaque", "ci", kind="Opaque")),
            node("other", secret("other", "deployer")),
            node("ci", obj("ServiceAccount", "ci", "apps")),
            node("ci-elsewhere", obj("ServiceAccount", "ci", "other")),
        ]
    )
    assert graph.needs["token"] == {"ci"} and graph.needs["opaque"] == graph.needs["other"] == set()
    assert graph.why("token", "ci") == "account-before-its-token-secrets"


def test_the_classes_a_workloads_pods_name_before_it() -> None:
    # The Priority and RuntimeClass admission plugins refuse a pod naming a class that is
    # not there; its ReplicaSet tries again only after a growing back-off.
    scheduling, node_api = "scheduling.k8s.io/v1", "node.k8s.io/v1"
    graph = Graph(
        [
            node("web", deploy("web", "apps", priorityClassName="high", runtimeClassName="gv")),
            node("plain", deploy("plain", "apps")),
            node("high", obj("PriorityClass", "high", api_version=scheduling, value=1000)),
            node("low", obj("PriorityClass", "low", api_version=scheduling, value=1)),
            node("gv", obj("RuntimeClass", "gv", api_version=node_api, handler="runsc")),
            node("runc", obj("RuntimeClass", "high", api_version=node_api, handler="runc")),
        ]
    )
    assert graph.needs["web"] == {"high", "gv"} and graph.needs["plain"] == set()
    assert graph.why("web", "high") == "pod-classes-before-workloads"


def test_a_namespaces_limits_and_quotas_before_its_workloads() -> None:
    graph = Graph(
        [
            node("web", deploy("web", "apps")),
            node("other", deploy("other", "other")),
            node("limits", obj("LimitRange", "defaults", "apps")),
            node("quota", obj("ResourceQuota", "compute", "apps")),
        ]
    )
    assert graph.needs["web"] == {"limits", "quota"} and graph.needs["other"] == set()
    assert graph.order[-1] == "web" and graph.why("web", "quota") == "limits-before-workloads"


def test_webhooks_an_api_service_and_a_conversion_wait_for_the_service_they_call() -> None:
    def called(namespace: str, name: str) -> dict[str, Any]:
        return {"clientConfig": {"service": {"namespace": namespace, "name": name}}}

    def configuration(kind: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
        admission = "admissionregistration.k8s.io/v1"
        return obj(kind, kind.lower(), api_version=admission, webhooks=list(webhooks))

    conversion = {"strategy": "Webhook", "webhook": called("certs", "convert")}
    api = {"group": "metrics.k8s.io", "version": "v1beta1", "service": {"name": "metrics"}}
    registration = "apiregistration.k8s.io/v1"
    validate = configuration(
        "ValidatingWebhookConfiguration", {"name": "a", **called("certs", "hook")}, {"name": "b"}
    )
    mutate = configuration("MutatingWebhookConfiguration", {"name": "c", **called("o", "hook")})
    api_service = obj("APIService", "v1beta1.metrics.k8s.io", api_version=registration, spec=api)
    graph = Graph(
        [
            node("validate", validate),
            node("mutate", mutate),
            node("crd", {**CRD, "spec": {**CRD["spec"], "conversion": conversion}}),
            node("api", api_service),
            node("hook", obj("Service", "hook", "certs")),
            node("convert", obj("Service", "convert", "certs")),
            node("metrics", obj("Service", "metrics", "kube-system")),
            # Declared without a namespace: it may be in the one the webhook names.
            node("unplaced", obj("Service", "hook")),
        ]
    )
    assert graph.needs["validate"] == {"hook", "unplaced"}
    assert graph.needs["mutate"] == {"unplaced"}  # the hook of certs is not the one of o
    assert graph.needs["crd"] == {"convert"} and graph.needs["api"] == set()
    assert graph.why("validate", "hook") == "services-before-their-webhooks"
    # Deleted the other way round: a webhook configuration goes before the Service it calls.
    assert graph.order.index("hook") < graph.order.index("validate")


def test_an_aggregated_apis_objects_wait_for_its_api_service() -> None:
    def api_service(group: str, version: str, **service: str) -> dict[str, Any]:
        spec = {"group": group, "version": version, **({"service": service} if service else {})}
        registration = "apiregistration.k8s.io/v1"
        return obj("APIService", f"{version}.{group}", api_version=registration, spec=spec)

    graph = Graph(
        [
            node("usage", obj("Usage", "u", "apps", api_version="metrics.example.com/v1")),
            node("older", obj("Usage", "o", "apps", api_version="metrics.example.com/v1beta1")),
            node("apps", deploy("web", "apps")),
            node("api", api_service("metrics.example.com", "v1", namespace="m", name="server")),
            node("local", api_service("apps", "v1")),  # the API server's own: no service
        ]
    )
    assert graph.needs["usage"] == {"api"} and graph.needs["older"] == set()
    assert graph.needs["apps"] == set()
    assert graph.why("usage", "api") == "apiservice-before-its-objects"


def test_storageclass_before_claims() -> None:
    graph = Graph(
        [
            node("pvc", obj("PersistentVolumeClaim", "data", "apps")),
            node("sc", obj("StorageClass", "fast", api_version="storage.k8s.io/v1")),
        ]
    )
    assert graph.order == ["sc", "pvc"]
    assert graph.why("pvc", "sc") == "storageclass-before-claims"


def test_ingressclass_before_ingresses() -> None:
    # An Ingress's wait reads the cluster's IngressClasses once and fails on a class it
    # names that is not there: one the same run creates must exist by then.
    graph = Graph(
        [
            node("web", obj("Ingress", "web", "apps", api_version="networking.k8s.io/v1")),
            node("nginx", obj("IngressClass", "nginx", api_version="networking.k8s.io/v1")),
        ]
    )
    assert graph.order == ["nginx", "web"]
    assert graph.why("web", "nginx") == "ingressclass-before-ingresses"


def test_components_and_unknown_objects_get_no_implicit_edges() -> None:
    assert implicit_edges([node("comp"), node("ns", obj("Namespace", "apps"))]) == {"ns": set()}


def test_explicit_edge_wins_over_an_opposite_rule() -> None:
    # The ConfigMap uses an Output of the Deployment: the rule "config first" gives way.
    graph = Graph(
        [
            node("web", deploy("web", "apps")),
            node("cm", obj("ConfigMap", "c", "apps"), "web"),
        ]
    )
    assert graph.needs == {"web": set(), "cm": {"web"}}
    assert graph.order == ["web", "cm"]
    assert graph.why("cm", "web") == "declared"


def test_explicit_path_wins_over_an_opposite_rule() -> None:
    # cm -> svc -> web, declared; the rule would make web wait for cm.
    graph = Graph(
        [
            node("web", deploy("web", "apps")),
            node("svc", obj("Service", "s", "apps"), "web"),
            node("cm", obj("ConfigMap", "c", "apps"), "svc"),
        ]
    )
    assert graph.order == ["web", "svc", "cm"]
    assert graph.needs["web"] == set()


def test_a_program_edge_against_a_rule_that_holds_is_a_cycle() -> None:
    # The Namespace was declared to wait for a ConfigMap inside it (through a Secret): the
    # ConfigMap's need of its Namespace gave way, and it was sent to a namespace not made yet.
    with pytest.raises(UsageError) as info:
        Graph(
            [
                node("ns", obj("Namespace", "apps"), "secret"),
                node("secret", obj("Secret", "s", "other"), "cm"),
                node("cm", obj("ConfigMap", "c", "apps")),
            ],
            program=True,
        )
    assert str(info.value) == (
        "dependency cycle: ns -> secret -> cm -> ns (cm is inside the Namespace ns, so it "
        "cannot exist before it (the rule namespace-first))"
    )
    with pytest.raises(UsageError, match=r"widget is of the kind the CustomResourceDefinition "):
        Graph([node("crd", CRD, "widget"), node("widget", obj("Widget", "w", "", "example.com/v1"))],
              program=True)  # fmt: skip
    # A recorded stack's edges win, as before, so that what it holds can be deleted.
    recorded = Graph(
        [node("ns", obj("Namespace", "apps"), "cm"), node("cm", obj("ConfigMap", "c", "apps"))]
    )
    assert recorded.order == ["cm", "ns"]


def test_cycle_is_reported_with_its_path() -> None:
    with pytest.raises(UsageError) as info:
        Graph([node("a", None, "b"), node("b", None, "a"), node("c", None, "a")])
    assert str(info.value) == "dependency cycle: a -> b -> a"
    with pytest.raises(UsageError) as info:
        Graph([node("x"), node("a", None, "c"), node("b", None, "a"), node("c", None, "b")])
    assert str(info.value) == "dependency cycle: a -> c -> b -> a"


def test_a_cycle_through_a_rule_names_the_rule() -> None:
    # The StorageClass was declared to wait for the Deployment; the claim waits for the class
    # and the Deployment for the claim by Kubernetes' rules.
    with pytest.raises(UsageError) as info:
        Graph(
            [
                node("sc", obj("StorageClass", "fast", api_version="storage.k8s.io/v1"), "web"),
                node("pvc", obj("PersistentVolumeClaim", "data", "apps")),
                node("web", deploy("web", "apps", **REFERS)),
            ]
        )
    assert str(info.value) == (
        "dependency cycle: sc -> web -> pvc -> sc "
        "(web waits for pvc by the rule config-before-workloads; "
        "pvc waits for sc by the rule storageclass-before-claims)"
    )


def test_order_is_stable_by_declaration_order() -> None:
    nodes = [
        node("app-cm", obj("ConfigMap", "c", "app")),
        node("web", deploy("web", "app", **REFERS)),
        node("comp"),
        node("db", deploy("db", "data", **REFERS), "comp"),
        node("data-secret", obj("Secret", "s", "data")),
        node("ns-data", obj("Namespace", "data")),
        node("ns-app", obj("Namespace", "app")),
        node("late", None, "web"),
        node("free"),
    ]
    graph = Graph(nodes)
    assert graph.order == [
        "comp",
        "ns-data",
        "data-secret",
        "db",
        "ns-app",
        "app-cm",
        "web",
        "late",
        "free",
    ]
    # Same input, same order, every time.
    assert Graph(nodes).order == graph.order


def test_explicit_edges_to_unknown_urns_and_itself_are_ignored() -> None:
    graph = Graph([node("a", None, "a", "missing")])
    assert graph.needs == {"a": set()}


def test_upstream_and_downstream() -> None:
    graph = Graph(
        [
            node("ns", obj("Namespace", "apps")),
            node("cm", obj("ConfigMap", "c", "apps")),
            node("web", deploy("web", "apps", **REFERS)),
            node("svc", obj("Service", "web", "apps"), "web"),
            node("other", obj("Namespace", "other")),
        ]
    )
    # Selection follows the program's edges and what holds an object (its namespace), not
    # the rules that only order (a ConfigMap before the workloads whose pods mount it).
    assert graph.needs["web"] == {"cm", "ns"}
    assert graph.upstream(["web"]) == {"web", "ns"}
    assert graph.upstream(["svc", "other"]) == {"svc", "web", "ns", "other"}
    assert graph.upstream(["not-there"]) == set()
    assert graph.downstream(["cm"]) == {"cm"}
    assert graph.downstream(["ns"]) == {"ns", "cm", "web", "svc"}


def test_implicit_edges_stay_fast() -> None:
    namespaces = [f"ns{i}" for i in range(10)]
    nodes = [node(f"namespace/{ns}", obj("Namespace", ns)) for ns in namespaces]
    nodes += [node(f"cm/{i}", obj("ConfigMap", f"c{i}", namespaces[i % 10])) for i in range(2000)]
    # Each Deployment's pods mount the 200 ConfigMaps of its namespace.
    mounts = [
        {"volumes": [{"name": f"v{j}", "configMap": {"name": f"c{j}"}} for j in range(n, 2000, 10)]}
        for n in range(10)
    ]
    nodes += [
        node(f"deploy/{i}", deploy(f"d{i}", namespaces[i % 10], **mounts[i % 10]))
        for i in range(2000)
    ]
    nodes += [node(f"svc/{i}", obj("Service", f"s{i}", namespaces[i % 10])) for i in range(990)]
    assert len(nodes) == 5000
    # CPU time, not wall time: a quadratic walk would take minutes; other processes on a
    # busy machine (a CI runner) only stretch the wall clock. ~0.5 s here on a quiet machine;
    # the bound leaves room for a shared one (2 s failed once under load), not for minutes.
    start = time.process_time()
    graph = Graph(nodes)
    elapsed = time.process_time() - start
    assert elapsed < 10.0, f"building the graph of 5,000 objects took {elapsed:.2f} s of CPU"
    # Each Deployment waits for its namespace and the 200 ConfigMaps in it, and nothing else.
    assert len(graph.needs["deploy/7"]) == 201
    assert graph.needs["deploy/7"] >= {"namespace/ns7", "cm/7", "cm/1997"}
    assert "cm/8" not in graph.needs["deploy/7"]
    position = {urn: i for i, urn in enumerate(graph.order)}
    assert all(position[d] < position[u] for u, deps in graph.needs.items() for d in deps)


def test_recorded_edges_name_why_and_count_a_replaced_object_once() -> None:
    from stackwright.engine.records import recorded_edges
    from stackwright.model import ResourceState

    def state(name: str, body: dict[str, Any], **fields: Any) -> ResourceState:
        return ResourceState(urn=f"urn:{name}", type=f"t:{name}", inputs=body, **fields)

    states = [
        state("provider", {}, custom=False),
        state("app", {}, custom=False),
        state("ns", obj("Namespace", "shop")),
        state("cfg", obj("ConfigMap", "cfg", "shop"), parent="urn:app", provider="urn:provider"),
        # A replaced Deployment awaiting deletion is recorded beside its successor.
        state("web", deploy("web-1", "shop"), dependencies=("urn:cfg",), delete_pending=True),
        state("web", deploy("web-2", "shop"), dependencies=("urn:cfg",)),
    ]
    edges = {(e.dependent, e.dependency, e.why) for e in recorded_edges(states)}
    assert edges == {
        ("urn:cfg", "urn:app", "parent"),
        ("urn:cfg", "urn:provider", "provider"),
        ("urn:cfg", "urn:ns", "namespace-first"),
        ("urn:web", "urn:cfg", "declared"),
        ("urn:web", "urn:ns", "namespace-first"),
    }
    assert len(recorded_edges(states)) == len(edges)


# --- Services whose Pods come later -------------------------------------------------------------


def _web(namespace: str = "apps", labels: dict[str, str] | None = None) -> dict[str, Any]:
    template = {"metadata": {"labels": labels or {"app": "web", "tier": "front"}}}
    return obj("Deployment", "web", namespace, "apps/v1", spec={"template": template})


SERVICE = obj("Service", "web", "apps", spec={"selector": {"app": "web"}})


def test_a_service_whose_pods_come_from_what_waits_for_it_is_fed_later() -> None:
    """A Deployment whose env holds the Service's clusterIP (an Output: it waits for the
    Service): the Service's endpoints come only once the Deployment is made."""
    graph = Graph([node("svc", SERVICE), node("web", _web(), "svc")])
    assert services_fed_later(graph) == {"svc": "web"}
    # Through a chain and Kubernetes' own rules: a ConfigMap holds the clusterIP, a Role
    # depends on the ConfigMap, and RBAC comes before the namespace's workloads.
    role = obj("Role", "reader", "apps", "rbac.authorization.k8s.io/v1")
    chained = Graph(
        [node("svc", SERVICE), node("cm", obj("ConfigMap", "ip", "apps"), "svc"),
         node("role", role, "cm"), node("web", _web())]
    )  # fmt: skip
    assert "role" in chained.needs["web"]
    assert services_fed_later(chained) == {"svc": "web"}


@pytest.mark.parametrize(
    "nodes",
    [
        # Made alongside it, not after it: its endpoints come while it waits.
        [node("svc", SERVICE), node("web", _web())],
        # What waits for it makes Pods the selector does not pick, or in another namespace.
        [node("svc", SERVICE), node("web", _web(labels={"app": "api"}), "svc")],
        [node("svc", SERVICE), node("web", _web(namespace="other"), "svc")],
        # No selector: nothing to wait for anyway.
        [node("svc", obj("Service", "web", "apps", spec={})), node("web", _web(), "svc")],
    ],
)
def test_a_service_whose_pods_come_alongside_or_from_elsewhere_is_not(nodes: list[Node]) -> None:
    assert services_fed_later(Graph(nodes)) == {}


def test_the_workloads_a_service_selects_pods_of_are_its_feeders() -> None:
    # Its wait for endpoints ends once all of them failed or were not done.
    graph = Graph(
        [
            node("svc", SERVICE),
            node("web", _web()),
            node("canary", _web()),
            node("api", _web(labels={"app": "api"})),
            node("elsewhere", _web(namespace="other")),
            node("open", obj("Service", "open", "apps", spec={})),  # no selector
        ]
    )
    assert service_feeders(graph) == {"svc": ("web", "canary")}
