"""The app team's stack: deploys into the namespace the platform stack made for it.

Everything about the cluster comes from the platform stack's outputs, read with
a stack reference: the kubeconfig builds this program's `k8s.Provider`, and the
namespace is that provider's default namespace. That kubeconfig holds the token of
the platform's `deployer` service account, so this stack may do what its Role allows
in that namespace and is refused (403) anywhere else. It is a secret there, so a
secret here: encrypted in this stack's state and shown as [secret].
"""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
platform = sw.StackReference(cfg.get("platform_stack") or "platform/dev")
cluster = k8s.Provider(
    "platform",
    kubeconfig=platform.require_output("kubeconfig"),
    namespace=platform.require_output("namespace"),
)
opts = sw.ResourceOptions(provider=cluster)
labels = {"app": "shop"}
deployment = k8s.apps.v1.Deployment(
    "shop",
    spec={
        "replicas": cfg.get_int("replicas") or 2,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "shop", "image": "nginx:1.29"}]},
        },
    },
    opts=opts,
)
service = k8s.core.v1.Service("shop", spec={"selector": labels, "ports": [{"port": 80}]}, opts=opts)

sw.export("namespace", platform.get_output("namespace"))
sw.export("ready", deployment.status["readyReplicas"])
sw.export("service", service.metadata["name"])
