"""One program, two clusters: the same app deployed to an "east" and a "west" cluster.

Each cluster has its own `k8s.Provider`; resources name theirs in their options.
Set the kubeconfigs once per stack, e.g. for two local clusters (from this folder):

    stackwright stack select --create dev
    stackwright cluster start --name east && stackwright cluster start --name west
    stackwright config set east_kubeconfig "$(stackwright cluster kubeconfig --name east)"
    stackwright config set west_kubeconfig "$(stackwright cluster kubeconfig --name west)"
"""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
outputs = {}
for region in ("east", "west"):
    provider = k8s.Provider(region, kubeconfig=cfg.require(f"{region}_kubeconfig"), namespace="default")
    opts = sw.ResourceOptions(provider=provider)
    settings = k8s.core.v1.ConfigMap(f"{region}-settings", data={"REGION": region}, opts=opts)
    app = k8s.apps.v1.Deployment(
        f"{region}-app",
        spec={
            "replicas": 2,
            "selector": {"matchLabels": {"app": "hello"}},
            "template": {
                "metadata": {"labels": {"app": "hello"}},
                "spec": {
                    "containers": [
                        {
                            "name": "hello",
                            "image": "nginx:1.29",
                            "envFrom": [{"configMapRef": {"name": settings.metadata["name"]}}],
                        }
                    ]
                },
            },
        },
        opts=opts,
    )
    outputs[region] = app.status["readyReplicas"]

sw.export("ready", outputs)
