"""Users the cluster's client CA vouches for, as kube-apiserver's x509 authenticator reads them.

`stackwright cluster kubeconfig --user NAME [--group G …]` hands out a kubeconfig whose
credential is a client certificate (CN the user, O its groups), as kubeadm, k3s and
minikube do; kubectl, the `kubernetes` package and `stackwright up` authenticate with it,
and RBAC decides what it may do. A certificate the client CA did not sign, or an expired
one, authenticates nothing.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from scoped_credentials import program, review_access, scoped_up

from stackwright.localcluster.credentials import client_certificate, ensure_credentials

pytestmark = pytest.mark.integration

ALICE_GROUPS = ["developers", "system:authenticated"]
PODS_DENIED = (
    'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
    'in the namespace "default"'
)
ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: deployer, namespace: team}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
"""


def sw(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI, in the cluster fixture's STACKWRIGHT_HOME (set in this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "stackwright.cli.main", *args],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip


def user_kubeconfig(cluster: Any, user: str, *groups: str) -> Path:
    flags = [f"--group={g}" for g in groups]
    made = sw("cluster", "kubeconfig", "--name", cluster.info.name, "--user", user, *flags)
    assert made.returncode == 0, made.stderr
    return Path(made.stdout.strip())


def kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def whoami(kubeconfig: Path) -> dict[str, Any]:
    answered = kubectl(kubeconfig, "auth", "whoami", "-o", "json")
    assert answered.returncode == 0, answered.stderr
    info: dict[str, Any] = json.loads(answered.stdout)["status"]["userInfo"]
    return info


@pytest.fixture(scope="module")
def alice(cluster: Any) -> Path:
    cluster.kubectl("create", "namespace", "team")
    cluster.kubectl("apply", "-f", "-", input=ROLE)
    return user_kubeconfig(cluster, "alice", "developers")


def test_the_cli_writes_a_client_certificate_kubeconfig(cluster: Any, alice: Path) -> None:
    assert alice.stat().st_mode & 0o777 == 0o600
    config = yaml.safe_load(alice.read_text())
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    assert config["current-context"] == "stackwright-test-alice"
    assert config["clusters"][0]["cluster"] == admin["clusters"][0]["cluster"]
    assert sorted(config["users"][0]["user"]) == ["client-certificate-data", "client-key-data"]
    assert whoami(alice) == {"username": "alice", "groups": ALICE_GROUPS}
    as_json = sw("cluster", "kubeconfig", "--name", "test", "--user", "bob", "--json")
    assert json.loads(as_json.stdout) == {
        "name": "test",
        "context": "stackwright-test-bob",
        "user": "bob",
        "groups": [],
        "kubeconfig": str(cluster.info.folder / "users" / "bob.kubeconfig"),
    }
    for bad, said in [
        (["--user", ""], "error: --user '' is not a user name: give 1 to 64 printable"),
        (["--user", " alice"], "error: --user ' alice' is not a user name"),
        (["--name", "nope", "--user", "x"], "error: no local cluster named 'nope'"),
        (["--user", "x", "--group", ""], "error: --group '' is not a group name"),
    ]:
        refused = sw("cluster", "kubeconfig", "--name", "test", *bad)
        assert refused.returncode == 2
        assert refused.stderr.startswith(said) and refused.stderr.count("\n") == 1, refused.stderr
    assert not (cluster.info.folder / "users" / "x.kubeconfig").exists()


def test_kubectl_does_what_the_users_role_allows_and_no_more(cluster: Any, alice: Path) -> None:
    made = kubectl(alice, "-n", "team", "create", "configmap", "c1", "--from-literal=a=1")
    assert made.returncode == 0, made.stderr
    assert kubectl(alice, "-n", "team", "get", "configmap", "c1").returncode == 0
    listed = kubectl(alice, "get", "pods")
    assert listed.returncode == 1
    assert listed.stderr.strip() == f"Error from server (Forbidden): {PODS_DENIED}"

    def can_i(*args: str) -> str:
        return kubectl(alice, "auth", "can-i", *args).stdout.strip()

    assert can_i("create", "configmaps", "-n", "team") == "yes"
    assert can_i("get", "secrets", "-n", "team") == "no"
    assert can_i("list", "pods", "-n", "default") == "no"
    assert review_access(
        cluster, "alice", ALICE_GROUPS, namespace="team", verb="get", resource="configmaps"
    ) == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "deployer/team" of Role "deployer" to User "alice"',
    }


def test_a_certificate_user_impersonates_only_as_rbac_allows(cluster: Any, alice: Path) -> None:
    refused = kubectl(alice, "--as=carol", "get", "configmaps", "-n", "team")
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): users "carol" is forbidden: User "alice" cannot '
        'impersonate resource "users" in API group "" at the cluster scope'
    )
    cluster.kubectl("create", "clusterrole", "impersonate-carol", "--verb=impersonate",
                    "--resource=users", "--resource-name=carol")  # fmt: skip
    cluster.kubectl("create", "clusterrolebinding", "developers-as-carol",
                    "--clusterrole=impersonate-carol", "--group=developers")  # fmt: skip
    who = json.loads(kubectl(alice, "--as=carol", "auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"] == {"username": "carol", "groups": ["system:authenticated"]}
    # carol holds nothing in team: the request is hers, not alice's.
    as_carol = kubectl(alice, "--as=carol", "-n", "team", "get", "configmaps")
    assert 'User "carol" cannot list resource "configmaps"' in as_carol.stderr


def test_the_kubernetes_package_authenticates_with_the_certificate(alice: Path) -> None:
    import kubernetes

    with kubernetes.config.new_client_from_config(config_file=str(alice)) as api:
        core = kubernetes.client.CoreV1Api(api)
        core.create_namespaced_config_map("team", {"metadata": {"name": "c2"}, "data": {"b": "2"}})
        assert core.read_namespaced_config_map("c2", "team").data == {"b": "2"}
        with pytest.raises(kubernetes.client.ApiException) as refused:
            core.list_namespaced_pod("default")
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == PODS_DENIED


def test_up_through_a_client_certificate_kubeconfig(
    cluster: Any, alice: Path, tmp_path: Path
) -> None:
    allowed = program("cert-ok", namespace="team", settings=("ConfigMap", {"data": {"a": "1"}}))
    up = scoped_up(tmp_path / "ok", alice, allowed)
    assert up.returncode == 0, up.stdout + up.stderr
    assert cluster.kubectl("-n", "team", "get", "configmap", "settings").returncode == 0
    refused = program(
        "cert-refused", namespace="team", token=("Secret", {"stringData": {"t": "x"}})
    )
    up = scoped_up(tmp_path / "refused", alice, refused)
    assert up.returncode == 1, up.stdout + up.stderr
    assert (
        'kubernetes:core/v1:Secret token: secrets "token" is forbidden: User "alice" cannot get '
        'resource "secrets" in API group "" in the namespace "team"; to fix, grant "get" on '
        'secrets in namespace "team" to alice (a Role and a RoleBinding), or deploy with a '
        "kubeconfig whose user holds it"
    ) in [line.strip() for line in (up.stdout + up.stderr).splitlines()], up.stdout


def test_the_system_masters_group_may_do_anything(cluster: Any) -> None:
    root = user_kubeconfig(cluster, "root", "system:masters")
    assert whoami(root) == {
        "username": "root",
        "groups": ["system:masters", "system:authenticated"],
    }
    assert kubectl(root, "get", "nodes").returncode == 0
    made = kubectl(root, "create", "namespace", "masters-made")
    assert made.returncode == 0, made.stderr
    assert kubectl(root, "auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    assert kubectl(root, "--as=anyone", "auth", "whoami").returncode == 0


def tls_client(cluster: Any, cert: bytes, key: bytes, folder: Path) -> httpx.Client:
    (folder / "client.crt").write_bytes(cert)
    (folder / "client.key").write_bytes(key)
    context = ssl.create_default_context(cafile=str(cluster.ca))
    context.load_cert_chain(folder / "client.crt", folder / "client.key")
    return httpx.Client(base_url=cluster.server, verify=context, timeout=10)


def test_a_certificate_from_another_ca_or_expired_authenticates_nothing(
    cluster: Any, tmp_path: Path
) -> None:
    ours = ensure_credentials(cluster.info.folder)
    with tls_client(
        cluster, *client_certificate(ours, "root", ["system:masters"]), tmp_path
    ) as api:
        assert api.get("/api/v1/namespaces").status_code == 200  # the control
    elsewhere = ensure_credentials(tmp_path / "other-cluster")
    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=30)
    expired = client_certificate(ours, "root", ["system:masters"], now=long_ago,
                                 lifetime=datetime.timedelta(days=1))  # fmt: skip
    refusals = {"elsewhere": "decrypt error", "expired": "certificate expired"}
    for (why, alert), certificate in zip(
        refusals.items(),
        (client_certificate(elsewhere, "root", ["system:masters"]), expired),
        strict=True,
    ):
        # The handshake fails, as for a server that requires the client CA's signature.
        with (
            tls_client(cluster, *certificate, tmp_path) as api,
            pytest.raises(httpx.TransportError),
        ):
            api.get("/api/v1/namespaces")
        config = yaml.safe_load(cluster.kubeconfig.read_text())
        config["users"][0]["user"] = {
            "client-certificate-data": base64.b64encode(certificate[0]).decode(),
            "client-key-data": base64.b64encode(certificate[1]).decode(),
        }
        path = tmp_path / "refused.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        listed = kubectl(path, "get", "namespaces")
        assert listed.returncode == 1 and "NAME" not in listed.stdout
        # With the TLS alert that says why, as kube-apiserver ends such a handshake: a bare
        # EOF instead is what kubectl retries as a dropped connection, for about a minute.
        assert "remote error: tls:" in listed.stderr, (why, listed.stderr)
        # Stackwright says so at once, as bad input (exit 2), not as a server to retry.
        refused = scoped_up(tmp_path / why, path, program(f"refused-{why}", c=("ConfigMap", {})))
        assert refused.returncode == 2, (why, refused.stdout, refused.stderr)
        assert f"refused the client certificate (TLS alert: {alert})" in refused.stderr, why
        assert "attempts" not in refused.stderr and "Traceback" not in refused.stderr
    assert cluster.kubectl("get", "namespaces").returncode == 0  # the server serves on


def test_a_certificate_that_expires_during_a_kept_alive_connection_stops_authenticating(
    cluster: Any, tmp_path: Path
) -> None:
    """The handshake checked the certificate; kube-apiserver checks it at every request, so
    a connection kept open past its expiry is not the way around it."""
    expires_in = datetime.timedelta(seconds=3)
    start = datetime.datetime.now(datetime.UTC)
    certificate = client_certificate(ensure_credentials(cluster.info.folder), "erin",
                                     ["system:masters"], now=start, lifetime=expires_in)  # fmt: skip
    with tls_client(cluster, *certificate, tmp_path) as api:
        assert api.get("/api/v1/namespaces").status_code == 200
        time.sleep((start + expires_in - datetime.datetime.now(datetime.UTC)).total_seconds() + 1.1)
        answer = api.get("/api/v1/namespaces")  # on the same connection
        assert answer.status_code == 401, answer.text
        assert answer.json()["reason"] == "Unauthorized"
        # As upstream's union authenticator: the certificate fails, a bearer token still counts.
        review = api.post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            headers={"Authorization": f"Bearer {cluster.token}"},
        )
        assert review.status_code == 201, review.text
        assert review.json()["status"]["userInfo"]["username"] == "kubernetes-admin"


def test_a_verified_certificate_is_asked_before_the_token(cluster: Any, tmp_path: Path) -> None:
    # kube-apiserver's union authenticator tries x509 before bearer tokens.
    cert, key = client_certificate(ensure_credentials(cluster.info.folder), "dave", ["ops"])
    with tls_client(cluster, cert, key, tmp_path) as api:
        for token in (cluster.token, "not-a-token"):
            review = api.post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert review.json()["status"]["userInfo"] == {
                "username": "dave",
                "groups": ["ops", "system:authenticated"],
            }


def test_a_cluster_made_before_client_certificates_gets_a_client_ca_at_its_next_start(
    cluster: Any,
) -> None:
    from stackwright.localcluster import lifecycle

    folder = cluster.info.folder
    kept = {n: (folder / n).read_bytes() for n in ("ca.crt", "server.crt", "server.key", "token")}
    for name in ("client-ca.crt", "client-ca.key"):  # as an earlier version left the folder
        (folder / name).unlink()
    refused = sw("cluster", "kubeconfig", "--name", "test", "--user", "erin")
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        "error: cluster test was started before it had a client CA, so it would refuse the "
        "certificate: restart it"
    ), refused.stderr
    assert not (folder / "client-ca.crt").exists()
    lifecycle.stop("test")
    lifecycle.start("test")
    assert (folder / "client-ca.key").stat().st_mode & 0o777 == 0o600
    assert {n: (folder / n).read_bytes() for n in kept} == kept
    assert cluster.kubectl("get", "namespaces").returncode == 0  # the admin kubeconfig works on
    erin = user_kubeconfig(cluster, "erin", "system:masters")
    assert whoami(erin)["username"] == "erin"
