"""quickstart: a small web app on Kubernetes, declared with Stackwright."""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
replicas = cfg.get_int("replicas") or 2
labels = {"app": "quickstart"}  # this app's own: no other app's Service in the namespace selects its pods

page = k8s.core.v1.ConfigMap("web-page", data={"index.html": "<h1>Hello from quickstart</h1>"})

web = k8s.apps.v1.Deployment(
    "web",
    spec={
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.29",
                        "ports": [{"containerPort": 80}],
                        "volumeMounts": [{"name": "page", "mountPath": "/usr/share/nginx/html"}],
                    }
                ],
                "volumes": [{"name": "page", "configMap": {"name": page.metadata["name"]}}],
            },
        },
    },
)

service = k8s.core.v1.Service("web", spec={"selector": labels, "ports": [{"port": 80, "targetPort": 80}]})

sw.export("deployment", web.metadata["name"])
sw.export("service_ip", service.spec["clusterIP"])
sw.export("ready_replicas", web.status["readyReplicas"])
