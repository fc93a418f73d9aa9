"""The local cluster's RBAC authorizer, rule by rule, as upstream's rbac package decides."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stackwright.localcluster import rbac, status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.clusterroles import (
    ClusterRoleAggregationController,
    ensure_bootstrap_policy,
)
from stackwright.localcluster.reviews import answer
from stackwright.localcluster.store import Store
from stackwright.localcluster.tokens import authenticate, issue, signing_key

BOB = rbac.User("bob", ("devs", rbac.AUTHENTICATED))
ROBOT = rbac.service_account_user("app", "robot")


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(Store(":memory:"))
    ensure_bootstrap_policy(cluster)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}
    cluster.create(cluster.type_for("", "v1", "namespaces"), "", namespace, WriteOptions())
    return cluster


def put(cluster: Cluster, plural: str, body: dict[str, Any], namespace: str = "") -> None:
    group, version = ("", "v1") if plural == "serviceaccounts" else (rbac.RBAC_GROUP, "v1")
    cluster.create(cluster.type_for(group, version, plural), namespace, body, WriteOptions())


def role(name: str, *rules: dict[str, Any], kind: str = "Role", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, **extra}, "rules": list(rules)}  # fmt: skip


def binding(name: str, ref_kind: str, ref: str, *subjects: dict[str, str], kind: str = "RoleBinding") -> dict[str, Any]:  # fmt: skip
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": rbac.RBAC_GROUP, "kind": ref_kind, "name": ref},
            "subjects": list(subjects)}  # fmt: skip


def attrs(method: str, path: str, user: rbac.User = ROBOT, **query: str) -> rbac.Attributes:
    return rbac.request_attributes(user, method, path, query)


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces/app/pods", {}, ("list", "", "pods", "", "", "app")),
        ("GET", "/api/v1/namespaces/app/pods", {"watch": "true"}, ("watch", "", "pods", "", "", "app")),
        ("GET", "/api/v1/watch/namespaces/app/pods/p", {}, ("watch", "", "pods", "", "p", "app")),
        ("GET", "/api/v1/pods", {"fieldSelector": "metadata.name=p"}, ("list", "", "pods", "", "p", "")),
        ("GET", "/api/v1/namespaces/app/pods/p/log", {}, ("get", "", "pods", "log", "p", "app")),
        ("PUT", "/apis/apps/v1/namespaces/app/deployments/web/scale", {}, ("update", "apps", "deployments", "scale", "web", "app")),
        ("POST", "/api/v1/namespaces/app/serviceaccounts/sa/token", {}, ("create", "", "serviceaccounts", "token", "sa", "app")),
        ("DELETE", "/api/v1/namespaces/app/configmaps", {}, ("deletecollection", "", "configmaps", "", "", "app")),
        ("PATCH", "/api/v1/nodes/n1", {}, ("patch", "", "nodes", "", "n1", "")),
        # A namespace is named by itself: a RoleBinding in it may grant reading it.
        ("GET", "/api/v1/namespaces/app", {}, ("get", "", "namespaces", "", "app", "app")),
        ("PUT", "/api/v1/namespaces/app/finalize", {}, ("update", "", "namespaces", "finalize", "app", "app")),
    ],
)  # fmt: skip
def test_request_attributes_are_parsed_as_the_api_servers_request_info(
    method: str, path: str, query: dict[str, str], expected: tuple[str, ...]
) -> None:
    a = attrs(method, path, **query)
    assert a.resource_request
    assert (a.verb, a.api_group, a.resource, a.subresource, a.name, a.namespace) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps/v1", "/version", "/openapi/v3/apis/apps/v1"])  # fmt: skip
def test_discovery_paths_are_non_resource_requests(cluster: Cluster, path: str) -> None:
    a = attrs("GET", path)
    assert not a.resource_request and a.verb == "get" and a.path == path
    assert rbac.authorize(
        cluster.store, a
    ).allowed  # system:discovery, for every authenticated user
    assert not rbac.authorize(cluster.store, attrs("GET", "/logs")).allowed


@pytest.mark.parametrize(
    ("rule", "allowed"),
    [
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, False),  # pods/log is not pods
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, True),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}, True),
        ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, True),
        ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods/log"]}, False),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"], "resourceNames": ["p"]}, True),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"], "resourceNames": ["q"]}, False),
        ({"verbs": ["list"], "apiGroups": [""], "resources": ["pods/log"]}, False),
    ],
)  # fmt: skip
def test_rule_matching(rule: dict[str, Any], allowed: bool) -> None:
    assert rbac.rule_allows(attrs("GET", "/api/v1/namespaces/app/pods/p/log"), rule) is allowed


def test_bindings_grant_by_user_group_and_service_account(cluster: Cluster) -> None:
    read = {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}
    put(cluster, "roles", role("reader", read), "app")
    put(cluster, "rolebindings", binding("robot", "Role", "reader", {"kind": "ServiceAccount", "name": "robot"}), "app")  # fmt: skip
    put(cluster, "clusterrolebindings", binding("devs", "ClusterRole", "system:aggregate-to-view", {"kind": "Group", "name": "devs"}, kind="ClusterRoleBinding"))  # fmt: skip
    store = cluster.store
    decision = rbac.authorize(store, attrs("GET", "/api/v1/namespaces/app/configmaps"))
    assert decision == rbac.Decision(
        True, 'RBAC: allowed by RoleBinding "robot/app" of Role "reader" to ServiceAccount "robot/app"'
    )  # fmt: skip
    assert not rbac.authorize(store, attrs("GET", "/api/v1/namespaces/other/configmaps")).allowed
    # A subject without a namespace binds the account of the binding's namespace only.
    other = rbac.service_account_user("other", "robot")
    assert not rbac.authorize(
        store, attrs("GET", "/api/v1/namespaces/app/configmaps", other)
    ).allowed
    assert rbac.authorize(store, attrs("GET", "/api/v1/namespaces/x/pods", BOB)).allowed
    assert not rbac.authorize(store, attrs("GET", "/api/v1/namespaces/x/secrets", BOB)).allowed
    assert rbac.authorize(store, attrs("DELETE", "/api/v1/nodes/n1", rbac.ADMIN)).allowed


def test_a_refusal_is_the_api_servers_403_and_names_a_missing_role(cluster: Cluster) -> None:
    put(cluster, "rolebindings", binding("gone", "Role", "gone", {"kind": "ServiceAccount", "name": "robot"}), "app")  # fmt: skip
    with pytest.raises(status.Forbidden) as refused:
        rbac.check(cluster.store, attrs("GET", "/apis/apps/v1/namespaces/app/deployments/web"))
    assert refused.value.to_status()["message"] == (
        'deployments.apps "web" is forbidden: User "system:serviceaccount:app:robot" cannot get '
        'resource "deployments" in API group "apps" in the namespace "app": '
        'RBAC: role.rbac.authorization.k8s.io "gone" not found'
    )
    assert refused.value.to_status()["details"] == {"kind": "deployments", "group": "apps", "name": "web"}  # fmt: skip


def test_escalation_is_refused_unless_held_or_escalate_or_bind(cluster: Cluster) -> None:
    manage = {"verbs": ["create", "update"], "apiGroups": [rbac.RBAC_GROUP], "resources": ["roles", "rolebindings"]}  # fmt: skip
    read = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}
    put(cluster, "roles", role("manager", manage, read), "app")
    put(cluster, "rolebindings", binding("manager", "Role", "manager", {"kind": "ServiceAccount", "name": "robot"}), "app")  # fmt: skip
    store = cluster.store
    rbac.guard_write(store, ROBOT, rbac.RBAC_GROUP, "roles", role("ok", read, namespace="app"))
    secrets = {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}
    with pytest.raises(status.Forbidden, match=r'Resources:\["secrets"\], Verbs:\["get" "list"\]\}$'):  # fmt: skip
        rbac.guard_write(
            store, ROBOT, rbac.RBAC_GROUP, "roles", role("no", secrets, namespace="app")
        )
    edit = binding("edit", "ClusterRole", "system:aggregate-to-edit", {"kind": "User", "name": "x"})
    edit["metadata"]["namespace"] = "app"
    with pytest.raises(status.Forbidden, match="attempting to grant RBAC permissions"):
        rbac.guard_write(store, ROBOT, rbac.RBAC_GROUP, "rolebindings", edit)
    grant = {"verbs": ["escalate", "bind"], "apiGroups": [rbac.RBAC_GROUP], "resources": ["roles", "clusterroles"]}  # fmt: skip
    put(cluster, "roles", role("escalator", grant), "app")
    put(cluster, "rolebindings", binding("escalator", "Role", "escalator", {"kind": "ServiceAccount", "name": "robot"}), "app")  # fmt: skip
    rbac.guard_write(store, ROBOT, rbac.RBAC_GROUP, "roles", role("no", secrets, namespace="app"))
    rbac.guard_write(store, ROBOT, rbac.RBAC_GROUP, "rolebindings", edit)
    rbac.guard_write(store, rbac.ADMIN, rbac.RBAC_GROUP, "clusterroles", role("any", secrets))


def test_impersonation_needs_impersonate_and_gives_the_accounts_groups(cluster: Cluster) -> None:
    as_robot = {"impersonate-user": ["system:serviceaccount:app:robot"], "impersonate-group": ["extra"]}  # fmt: skip
    user = rbac.impersonate(cluster.store, rbac.ADMIN, as_robot)
    assert user == rbac.User(
        ROBOT.name, ("system:serviceaccounts", "system:serviceaccounts:app", "extra", rbac.AUTHENTICATED)
    )  # fmt: skip
    with pytest.raises(status.Forbidden, match='serviceaccounts "robot" is forbidden: User "bob" cannot impersonate'):  # fmt: skip
        rbac.impersonate(cluster.store, BOB, as_robot)
    with pytest.raises(status.BadRequest):
        rbac.impersonate(cluster.store, rbac.ADMIN, {"impersonate-group": ["g"]})


def test_reviews_answer_for_the_subject(cluster: Cluster) -> None:
    def review(user: rbac.User, kind: str, spec: dict[str, Any], ns: str = "") -> Any:
        return answer(cluster.store, user, kind, "authorization.k8s.io/v1", ns, {"spec": spec})["status"]  # fmt: skip

    get_pods = {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "app"}}
    assert review(rbac.ADMIN, "SelfSubjectAccessReview", get_pods) == {"allowed": True}
    assert review(ROBOT, "SelfSubjectAccessReview", get_pods) == {"allowed": False}
    sar = {**get_pods, "user": "bob", "groups": ["system:masters"]}
    assert review(ROBOT, "SubjectAccessReview", sar) == {"allowed": True}
    with pytest.raises(status.Invalid, match=r"must match metadata\.namespace"):
        review(rbac.ADMIN, "LocalSubjectAccessReview", sar, "other")
    # A group given as a string is refused (400), not read as one group per character.
    for bad in ({"groups": "system:masters"}, {"groups": ["g"], "extra": {"scopes": "x"}}):
        with pytest.raises(status.BadRequest, match=r"spec\.(groups|extra) must"):
            review(ROBOT, "SubjectAccessReview", {**get_pods, "user": "bob", **bad})
    rules = review(ROBOT, "SelfSubjectRulesReview", {"namespace": "app"})
    assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in rules["resourceRules"]  # fmt: skip
    assert not rules["incomplete"]
    whoami = answer(cluster.store, ROBOT, "SelfSubjectReview", "authentication.k8s.io/v1", "", {})
    assert whoami["status"]["userInfo"]["username"] == "system:serviceaccount:app:robot"


def test_a_token_authenticates_its_service_account(cluster: Cluster) -> None:
    key = signing_key(b"credential")
    put(cluster, "serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}, "default")  # fmt: skip
    token = issue(cluster, key, "default", "robot", {})["status"]["token"]
    assert authenticate(cluster, key, token) == rbac.service_account_user("default", "robot")


def test_aggregation_follows_labelled_cluster_roles(cluster: Cluster) -> None:
    controller = ClusterRoleAggregationController(cluster)

    async def settle() -> None:
        for _ in range(3):  # view into edit into admin: a change reaches each in turn
            for key in controller.initial_keys():
                await controller.reconcile(key)

    asyncio.run(settle())
    leases = {"verbs": ["get"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}
    labels = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    put(cluster, "clusterroles", role("leases", leases, kind="ClusterRole", labels=labels))
    asyncio.run(settle())
    for name in ("view", "edit", "admin"):
        assert leases in cluster.store.get(rbac.CLUSTER_ROLES, "", name)["rules"], name
    view = cluster.store.get(rbac.CLUSTER_ROLES, "", "view")
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]} in view["rules"]  # fmt: skip
    assert view["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"
    }


def test_bootstrap_policy_is_reconciled_at_start_unless_taken_over(cluster: Cluster) -> None:
    before = cluster.store.resource_version
    ensure_bootstrap_policy(cluster)
    assert cluster.store.resource_version == before  # nothing to do: nothing written
    roles = cluster.type_for(rbac.RBAC_GROUP, "v1", "clusterroles")
    bindings = cluster.type_for(rbac.RBAC_GROUP, "v1", "clusterrolebindings")
    basic = cluster.store.get(rbac.CLUSTER_ROLES, "", "system:basic-user")
    cluster.update(roles, "", "system:basic-user", {**basic, "rules": basic["rules"][:1]}, WriteOptions())  # fmt: skip
    discovery = cluster.store.get(rbac.CLUSTER_ROLE_BINDINGS, "", "system:discovery")
    mine = {"apiGroup": rbac.RBAC_GROUP, "kind": "User", "name": "bob"}
    cluster.update(bindings, "", "system:discovery", {**discovery, "subjects": [mine]}, WriteOptions())  # fmt: skip
    viewer = cluster.store.get(rbac.CLUSTER_ROLES, "", "system:public-info-viewer")
    taken = {**viewer, "metadata": {**viewer["metadata"], "annotations": {rbac.AUTOUPDATE: "false"}}, "rules": []}  # fmt: skip
    cluster.update(roles, "", "system:public-info-viewer", taken, WriteOptions())
    ensure_bootstrap_policy(cluster)
    assert cluster.store.get(rbac.CLUSTER_ROLES, "", "system:basic-user")["rules"] == basic["rules"]
    assert cluster.store.get(rbac.CLUSTER_ROLE_BINDINGS, "", "system:discovery")["subjects"] == [
        mine, *discovery["subjects"]
    ]  # fmt: skip
    # Left as its taker wrote it: `rules: []`, which comes back null (no omitempty).
    assert cluster.store.get(rbac.CLUSTER_ROLES, "", "system:public-info-viewer")["rules"] is None
