"""A web app: its namespace, a ConfigMap of settings, a Deployment, a Service and an Ingress.

The Deployment reads the ConfigMap by the name Stackwright gave it (an Output), so
the ConfigMap is created first; a change to its data replaces it (`replace_on_changes`:
a new one under a new name, then the old one deleted), which rolls the Deployment.
"""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
replicas = cfg.get_int("replicas") or 2
image = cfg.get("image") or "nginx:1.29"
labels = {"app": "web"}

ns = k8s.core.v1.Namespace("web", metadata={"name": "webapp"})
namespace = ns.metadata["name"]

settings = k8s.core.v1.ConfigMap(
    "web-settings",
    metadata={"namespace": namespace},
    data={"index.html": "<h1>Hello from Stackwright</h1>", "GREETING": cfg.get("greeting") or "hello"},
    opts=sw.ResourceOptions(replace_on_changes=["data"]),
)

web = k8s.apps.v1.Deployment(
    "web",
    metadata={"namespace": namespace, "labels": labels},
    spec={
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": image,
                        "ports": [{"containerPort": 80, "name": "http"}],
                        "envFrom": [{"configMapRef": {"name": settings.metadata["name"]}}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    }
                ],
            },
        },
    },
)

service = k8s.core.v1.Service(
    "web",
    metadata={"namespace": namespace},
    spec={"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
)

ingress_class = k8s.networking.v1.IngressClass(
    "web", metadata={"name": "webapp-nginx"}, spec={"controller": "k8s.io/ingress-nginx"}
)

ingress = k8s.networking.v1.Ingress(
    "web",
    metadata={"namespace": namespace},
    spec={
        "ingressClassName": ingress_class.metadata["name"],
        "rules": [
            {
                "host": "web.example.test",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": service.metadata["name"], "port": {"name": "http"}}},
                        }
                    ]
                },
            }
        ],
    },
)

sw.export("namespace", namespace)
sw.export("service_ip", service.spec["clusterIP"])
sw.export("ready_replicas", web.status["readyReplicas"])
sw.export("ingress_address", ingress.status["loadBalancer"])
