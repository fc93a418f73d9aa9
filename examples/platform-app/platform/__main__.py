"""The platform team's stack: a namespace for the app team, and credentials for it alone.

It makes the namespace, a ServiceAccount `deployer`, a Role granting what the app
team's `up` needs there (its kinds, and what waiting for their readiness reads: Pods,
ReplicaSets, EndpointSlices, Events) and nothing cluster-wide, and a token Secret that
the cluster's token controller fills for `deployer` (`up` waits until it has). It exports
the namespace and a kubeconfig built from that Secret: the server from the kubeconfig
this stack deploys with (`kubernetes:kubeconfig`, or its `kubernetes:cluster`'s), the CA and
token from the Secret, the namespace as its context's. The app team's own stack reads
both with `sw.StackReference("platform/dev")` (see ../app) and so deploys as `deployer`,
not as the cluster's administrator. The kubeconfig is secret here and there.
"""

import base64
import os
from pathlib import Path

import yaml

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
team = cfg.get("team") or "shop"
kubernetes = sw.Config("kubernetes")
# The stack's kubeconfig, else the one of the local cluster it deploys to (`kubernetes:cluster`),
# kept in STACKWRIGHT_HOME as `stackwright cluster kubeconfig --name NAME` prints it.
home = Path(os.environ.get("STACKWRIGHT_HOME") or "~/.stackwright")
configured = kubernetes.get("kubeconfig") or cfg.get("kubeconfig_file")
kubeconfig_file = (
    Path(configured) if configured else home / "clusters" / kubernetes.require("cluster") / "kubeconfig"
)
# The API server of that kubeconfig's current context: all this program takes from it.
admin = yaml.safe_load(kubeconfig_file.expanduser().read_text())
context = next(c["context"] for c in admin["contexts"] if c["name"] == admin["current-context"])
server = next(c["cluster"]["server"] for c in admin["clusters"] if c["name"] == context["cluster"])

ns = k8s.core.v1.Namespace("team", metadata={"name": team, "labels": {"team": team}})
namespace = ns.metadata["name"]
deployer = k8s.core.v1.ServiceAccount(
    "deployer", metadata={"name": "deployer", "namespace": namespace}
)
role = k8s.rbac.v1.Role(
    "deployer",
    metadata={"name": "deployer", "namespace": namespace},
    rules=[
        {
            "apiGroups": ["", "apps"],
            "resources": ["configmaps", "services", "deployments"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
        {  # what waiting for those to be ready reads
            "apiGroups": ["", "apps", "discovery.k8s.io"],
            "resources": ["pods", "replicasets", "endpointslices", "events"],
            "verbs": ["get", "list", "watch"],
        },
    ],
)
k8s.rbac.v1.RoleBinding(
    "deployer",
    metadata={"name": "deployer", "namespace": namespace},
    role_ref={
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role.metadata["name"],
    },
    subjects=[{"kind": "ServiceAccount", "name": deployer.metadata["name"], "namespace": team}],
)
token = k8s.core.v1.Secret(
    "deployer-token",
    metadata={
        "name": "deployer-token",
        "namespace": namespace,
        "annotations": {"kubernetes.io/service-account.name": deployer.metadata["name"]},
    },
    type="kubernetes.io/service-account-token",
)


def kubeconfig(data: dict[str, str], namespace: str) -> str:
    return yaml.safe_dump({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "platform", "cluster": {
            "server": server, "certificate-authority-data": data["ca.crt"]}}],
        "users": [{"name": "deployer", "user": {"token": base64.b64decode(data["token"]).decode()}}],
        "contexts": [{"name": "deployer", "context": {
            "cluster": "platform", "user": "deployer", "namespace": namespace}}],
        "current-context": "deployer",
    })  # fmt: skip


sw.export("namespace", ns.metadata["name"])
sw.export("service_account", deployer.metadata["name"])
scoped = sw.Output.all(token.data, namespace).apply(lambda found: kubeconfig(*found))
sw.export("kubeconfig", sw.Output.secret(scoped))
