"""The platform team's stack: a namespace for the app team, its RBAC, and how to reach it.

It exports the namespace and a kubeconfig (secret) that the app team's own stack
reads with `sw.StackReference("platform/dev")` (see ../app): two programs, two
owners, linked only through these outputs. The kubeconfig is read from the file
the stack deploys with (`kubernetes:kubeconfig`, or the local cluster's) by
`sw.secret_from_file`, so it is never in the program or its configuration, and it
stays secret in this stack's state and in the app stack's.
"""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
team = cfg.get("team") or "shop"
kubeconfig_file = sw.Config("kubernetes").get("kubeconfig") or cfg.require("kubeconfig_file")

ns = k8s.core.v1.Namespace("team", metadata={"name": team, "labels": {"team": team}})
deployer = k8s.core.v1.ServiceAccount(
    "deployer", metadata={"name": "deployer", "namespace": ns.metadata["name"]}
)
role = k8s.rbac.v1.Role(
    "deployer",
    metadata={"name": "deployer", "namespace": ns.metadata["name"]},
    rules=[
        {
            "apiGroups": ["", "apps"],
            "resources": ["configmaps", "secrets", "services", "deployments"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        }
    ],
)
k8s.rbac.v1.RoleBinding(
    "deployer",
    metadata={"name": "deployer", "namespace": ns.metadata["name"]},
    role_ref={
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role.metadata["name"],
    },
    subjects=[{"kind": "ServiceAccount", "name": deployer.metadata["name"], "namespace": team}],
)

sw.export("namespace", ns.metadata["name"])
sw.export("service_account", deployer.metadata["name"])
sw.export("kubeconfig", sw.secret_from_file(kubeconfig_file))
