"""The local cluster enforces RBAC as kube-apiserver does, for kubectl, Python clients and `up`.

A service account `app:deployer` bound (RoleBinding) to a Role in namespace `app` uses a
token from `kubectl create token`; the administrator's credential stays all-powerful.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from scoped_credentials import program, review_access, scoped_up

pytestmark = pytest.mark.integration

SA = "system:serviceaccount:app:deployer"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:app", "system:authenticated"]
PODS_DENIED = (
    f'pods is forbidden: User "{SA}" cannot list resource "pods" in API group "" '
    'in the namespace "default"'
)
ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: deployer, namespace: app}
rules:
- apiGroups: ["", apps]
  resources: [configmaps, services, deployments, deployments/scale]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer, namespace: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}
subjects: [{kind: ServiceAccount, name: deployer}]
"""


@pytest.fixture(scope="module")
def token(cluster: Any) -> str:
    cluster.kubectl("create", "namespace", "app")
    cluster.kubectl("-n", "app", "create", "serviceaccount", "deployer")
    cluster.kubectl("apply", "-f", "-", input=ROLE)
    return str(cluster.kubectl("-n", "app", "create", "token", "deployer").stdout.strip())


@pytest.fixture(scope="module")
def scoped_kubeconfig(cluster: Any, token: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cluster's kubeconfig with the service account's token for the credential."""
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    for entry in config["users"]:
        entry["user"] = {"token": token}
    path = tmp_path_factory.mktemp("scoped") / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def as_deployer(cluster: Any, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cluster.kubectl(f"--token={token}", *args, check=False)


def test_a_token_does_what_its_role_allows_and_no_more(cluster: Any, token: str) -> None:
    cluster.kubectl("-n", "app", "create", "deployment", "web", "--image=nginx:1.29")
    assert as_deployer(cluster, token, "-n", "app", "create", "configmap", "c1").returncode == 0
    assert as_deployer(cluster, token, "-n", "app", "get", "configmap", "c1").returncode == 0
    scaled = as_deployer(cluster, token, "-n", "app", "scale", "deployment/web", "--replicas=2")
    assert scaled.returncode == 0, scaled.stderr
    listed = as_deployer(cluster, token, "get", "pods")
    assert listed.returncode == 1
    assert listed.stderr.strip() == f"Error from server (Forbidden): {PODS_DENIED}"
    named = as_deployer(cluster, token, "-n", "app", "get", "secret", "s1")
    assert named.stderr.strip() == (
        f'Error from server (Forbidden): secrets "s1" is forbidden: User "{SA}" cannot get '
        'resource "secrets" in API group "" in the namespace "app"'
    )
    logs = as_deployer(cluster, token, "get", "--raw", "/api/v1/namespaces/app/pods/p/log")
    assert 'cannot get resource "pods/log" in API group "" in the namespace "app"' in logs.stderr
    nodes = as_deployer(cluster, token, "delete", "node", "node-1")
    assert nodes.stderr.strip() == (
        f'Error from server (Forbidden): nodes "node-1" is forbidden: User "{SA}" cannot delete '
        'resource "nodes" in API group "" at the cluster scope'
    )
    root = as_deployer(cluster, token, "get", "--raw", "/")
    assert root.stderr.strip() == (
        f'Error from server (Forbidden): forbidden: User "{SA}" cannot get path "/"'
    )
    # ...and the administrator's credential may still do anything.
    assert cluster.kubectl("get", "pods", "-A").returncode == 0


def test_python_clients_get_the_same_answers(
    cluster: Any, token: str, scoped_kubeconfig: Path
) -> None:
    import kubernetes
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.resources.core_v1 import ConfigMap, Pod

    client = Client(KubeConfig.from_file(str(scoped_kubeconfig)))
    assert "kube-root-ca.crt" in [c.metadata.name for c in client.list(ConfigMap, namespace="app")]
    with pytest.raises(ApiError) as caught:
        list(client.list(Pod, namespace="default"))
    assert caught.value.status.code == 403
    assert caught.value.status.reason == "Forbidden"
    assert caught.value.status.message == PODS_DENIED
    assert caught.value.status.details.kind == "pods"

    configuration = kubernetes.client.Configuration()
    configuration.host = cluster.server
    configuration.ssl_ca_cert = str(cluster.ca)
    configuration.api_key = {"authorization": f"Bearer {token}"}
    with kubernetes.client.ApiClient(configuration) as api:
        core = kubernetes.client.CoreV1Api(api)
        assert core.read_namespaced_config_map("c1", "app").metadata.name == "c1"
        with pytest.raises(kubernetes.client.ApiException) as refused:
            core.list_namespaced_pod("default")
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == PODS_DENIED


def test_can_i_answers_for_the_token_and_for_an_impersonated_user(cluster: Any, token: str) -> None:
    def can_i(*args: str) -> str:
        return str(cluster.kubectl("auth", "can-i", *args, check=False).stdout.strip())

    assert can_i(f"--token={token}", "create", "configmaps", "-n", "app") == "yes"
    assert can_i(f"--token={token}", "update", "deployments.apps/scale", "-n", "app") == "yes"
    assert can_i(f"--token={token}", "create", "configmaps", "-n", "default") == "no"
    assert can_i(f"--token={token}", "get", "secrets", "-n", "app") == "no"
    assert can_i(f"--as={SA}", "create", "configmaps", "-n", "app") == "yes"
    assert can_i(f"--as={SA}", "list", "pods", "-n", "default") == "no"
    assert can_i("list", "pods", "-n", "default") == "yes"  # the administrator
    # The impersonated user is what the server acts as, and what whoami reports.
    impersonated = cluster.kubectl(f"--as={SA}", "get", "pods", check=False)
    assert impersonated.stderr.strip() == f"Error from server (Forbidden): {PODS_DENIED}"
    who = json.loads(cluster.kubectl(f"--as={SA}", "auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"] == {"username": SA, "groups": SA_GROUPS}
    who = json.loads(cluster.kubectl(f"--token={token}", "auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"] == {"username": SA, "groups": SA_GROUPS}
    # The service account may not impersonate anyone.
    escalated = as_deployer(cluster, token, "--as=kubernetes-admin", "get", "pods")
    assert escalated.stderr.strip() == (
        f'Error from server (Forbidden): users "kubernetes-admin" is forbidden: User "{SA}" '
        'cannot impersonate resource "users" in API group "" at the cluster scope'
    )
    listed = cluster.kubectl(f"--as={SA}", "auth", "can-i", "--list", "-n", "app").stdout
    rows = [line.split() for line in listed.splitlines()]
    assert ["configmaps", "[]", "[]", "[get", "list", "watch", "create", "update", "patch", "delete]"] in rows  # fmt: skip
    assert not any(row[0] == "*.*" for row in rows)
    assert review_access(
        cluster, SA, SA_GROUPS, namespace="app", verb="get", resource="configmaps"
    ) == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "deployer/app" of Role "deployer" to '
        'ServiceAccount "deployer/app"',
    }


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_cluster_role_labelled_for_view_is_aggregated_into_it(cluster: Any, token: str) -> None:
    def view_rules() -> list[dict[str, Any]]:
        role = json.loads(cluster.kubectl("get", "clusterrole", "view", "-o", "json").stdout)
        return list(role["rules"])

    assert not any("leases" in r.get("resources", []) for r in view_rules())
    cluster.kubectl(
        "apply", "-f", "-",
        input="""
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: lease-reader
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, watch]}
""",
    )  # fmt: skip
    lease_rule = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch"]}  # fmt: skip
    wait_for(lambda: lease_rule in view_rules(), "view to aggregate lease-reader")
    # view aggregates into edit, and edit into admin: the rule reaches them too.
    edit = json.loads(cluster.kubectl("get", "clusterrole", "edit", "-o", "json").stdout)
    wait_for(
        lambda: lease_rule in json.loads(
            cluster.kubectl("get", "clusterrole", "admin", "-o", "json").stdout
        )["rules"],
        "admin to aggregate edit's rules",
    )  # fmt: skip
    assert edit["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    cluster.kubectl("-n", "app", "create", "rolebinding", "viewer", "--clusterrole=view",
                    "--serviceaccount=app:deployer")  # fmt: skip
    assert as_deployer(cluster, token, "-n", "app", "get", "leases").returncode == 0
    cluster.kubectl("delete", "clusterrole", "lease-reader")
    wait_for(lambda: lease_rule not in view_rules(), "view to drop lease-reader's rules")
    assert as_deployer(cluster, token, "-n", "app", "get", "leases").returncode == 1
    cluster.kubectl("-n", "app", "delete", "rolebinding", "viewer")


def test_a_token_cannot_grant_what_it_does_not_hold(cluster: Any, token: str) -> None:
    refused = as_deployer(
        cluster, token, "-n", "app", "create", "role", "reader", "--verb=get", "--resource=secrets"
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "reader" is forbidden: '
        f'user "{SA}" (groups=["system:serviceaccounts" "system:serviceaccounts:app" '
        '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    # What it holds it may grant, and bind.
    held = as_deployer(
        cluster, token, "-n", "app", "create", "role", "cm-reader", "--verb=get", "--resource=configmaps"
    )  # fmt: skip
    assert held.returncode == 0, held.stderr
    bound = as_deployer(cluster, token, "-n", "app", "create", "rolebinding", "cm-reader",
                        "--role=cm-reader", "--serviceaccount=app:default")  # fmt: skip
    assert bound.returncode == 0, bound.stderr
    admin = as_deployer(cluster, token, "-n", "app", "create", "rolebinding", "boss",
                        "--clusterrole=admin", "--serviceaccount=app:deployer")  # fmt: skip
    assert admin.returncode == 1
    assert admin.stderr.startswith(
        'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "boss" is '
        f'forbidden: user "{SA}" (groups=['
    )
    assert (
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch" "create"'
        in admin.stderr
    )
    # `escalate` lifts the check for roles, `bind` for bindings of the role it names.
    cluster.kubectl("-n", "app", "create", "role", "escalator", "--verb=escalate,bind",
                    "--resource=roles.rbac.authorization.k8s.io,clusterroles.rbac.authorization.k8s.io")  # fmt: skip
    cluster.kubectl("-n", "app", "create", "rolebinding", "escalator", "--role=escalator",
                    "--serviceaccount=app:deployer")  # fmt: skip
    assert as_deployer(
        cluster, token, "-n", "app", "create", "role", "reader", "--verb=get", "--resource=secrets"
    ).returncode == 0  # fmt: skip
    assert as_deployer(cluster, token, "-n", "app", "create", "rolebinding", "boss",
                       "--clusterrole=admin", "--serviceaccount=app:default").returncode == 0  # fmt: skip


PROGRAM = program(
    "scoped",
    settings=("ConfigMap", {"data": {"a": "1"}}),
    password=("Secret", {"stringData": {"password": "hunter2"}}),
)


def test_up_through_a_namespace_scoped_kubeconfig_names_the_missing_permission(
    cluster: Any, scoped_kubeconfig: Path, tmp_path: Path
) -> None:
    up = scoped_up(tmp_path, scoped_kubeconfig, PROGRAM)
    assert up.returncode == 1, up.stdout + up.stderr
    refused = [line for line in (up.stdout + up.stderr).splitlines() if "forbidden" in line]
    assert refused, up.stdout + up.stderr
    assert (
        "kubernetes:core/v1:Secret password: "
        f'secrets "password" is forbidden: User "{SA}" cannot get resource "secrets" in API group '
        '"" in the namespace "app"; to fix, grant "get" on secrets in namespace "app" to '
        f"{SA} (a Role and a RoleBinding), or deploy with a kubeconfig whose user holds it"
    ) in [line.strip() for line in refused], up.stdout
    assert "hunter2" not in up.stdout + up.stderr
    assert cluster.kubectl("-n", "app", "get", "configmap", "settings").returncode == 0


def test_a_persisted_cluster_gets_missing_bootstrap_policy_at_its_next_start(
    cluster: Any, token: str
) -> None:
    from stackwright.localcluster import lifecycle

    cluster.kubectl("delete", "clusterrole", "system:basic-user")
    cluster.kubectl("delete", "clusterrolebinding", "system:discovery")
    whoami = as_deployer(cluster, token, "auth", "whoami")
    assert "you do not have permission to call it" in whoami.stderr
    lifecycle.stop(cluster.info.name)
    lifecycle.start(cluster.info.name)
    role = json.loads(
        cluster.kubectl("get", "clusterrole", "system:basic-user", "-o", "json").stdout
    )
    assert role["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert role["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"
    }
    subjects = json.loads(
        cluster.kubectl("get", "clusterrolebinding", "system:discovery", "-o", "json").stdout
    )["subjects"]
    assert subjects == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}
    ]
    assert as_deployer(cluster, token, "auth", "whoami").returncode == 0


SERVICE = program(
    "scoped-service",
    web=("Service", {"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
)


def test_waiting_for_a_service_whose_endpoints_it_may_not_read_fails_at_once(
    cluster: Any, scoped_kubeconfig: Path, tmp_path: Path
) -> None:
    # Its readiness is in EndpointSlices the Role does not grant: a real cluster would
    # leave `up` waiting out its timeout, saying "no Pod matches" (it cannot list pods).
    started = time.monotonic()
    up = scoped_up(tmp_path, scoped_kubeconfig, SERVICE)
    assert up.returncode == 1, up.stdout + up.stderr
    assert time.monotonic() - started < 30
    assert (
        "kubernetes:core/v1:Service web: its readiness cannot be seen without reading "
        "endpointslices: watch of EndpointSlice at "
        "/apis/discovery.k8s.io/v1/namespaces/app/endpointslices: "
        "endpointslices.discovery.k8s.io is forbidden: "
        f'User "{SA}" cannot list resource "endpointslices" in API group "discovery.k8s.io" in '
        'the namespace "app"; to fix, grant "list" on endpointslices.discovery.k8s.io in '
        f'namespace "app" to {SA} (a Role and a RoleBinding), or deploy with a kubeconfig whose '
        'user holds it; or annotate it stackwright.io/skip-await: "true"'
    ) in [line.strip() for line in up.stdout.splitlines()], up.stdout


WAITED_FOR = program(
    "scoped-wait-for",
    front=("Service", {
        "metadata": {"name": "front", "namespace": "app", "annotations": {
            "stackwright.io/wait-for": "jsonpath={.status.loadBalancer.ingress[0].ip}"}},
        "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 80}]},
    }),
)  # fmt: skip


def test_a_service_its_wait_for_annotation_decides_needs_no_endpoint_slices(
    cluster: Any, scoped_kubeconfig: Path, tmp_path: Path
) -> None:
    # The EndpointSlices only explain a wait that the annotation decides: a Role that does
    # not grant them does not fail it.
    up = scoped_up(tmp_path, scoped_kubeconfig, WAITED_FOR)
    assert up.returncode == 0, up.stdout + up.stderr


def test_a_token_secret_is_a_credential_until_it_is_deleted(cluster: Any, token: str) -> None:
    cluster.kubectl(
        "apply", "-f", "-",
        input="""
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: deployer-token
  namespace: app
  annotations: {kubernetes.io/service-account.name: deployer}
""",
    )  # fmt: skip

    def stored() -> str:
        jsonpath = "-o=jsonpath={.data.token}"
        return str(cluster.kubectl("-n", "app", "get", "secret", "deployer-token", jsonpath).stdout)

    wait_for(stored, "the token controller to fill data.token")
    legacy = base64.b64decode(stored()).decode()
    assert legacy != token
    who = json.loads(as_deployer(cluster, legacy, "auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"] == {"username": SA, "groups": SA_GROUPS}
    assert as_deployer(cluster, legacy, "get", "pods").stderr.strip() == (
        f"Error from server (Forbidden): {PODS_DENIED}"
    )
    cluster.kubectl("-n", "app", "delete", "secret", "deployer-token")
    refused = as_deployer(cluster, legacy, "-n", "app", "get", "configmaps")
    assert "Unauthorized" in refused.stderr, refused.stderr
