"""Project templates for `stackwright new TEMPLATE DIR`.

`kubernetes-python`: a web app (ConfigMap, Deployment, Service) whose `dev` stack
deploys to the Stackwright local cluster, started on first `up`. `kubernetes-yaml`:
the same app as a YAML program, in Stackwright.yaml itself.
"""

from __future__ import annotations

from pathlib import Path

from stackwright.errors import UsageError

_PROGRAM = '''"""{name}: a small web app on Kubernetes, declared with Stackwright."""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
replicas = cfg.get_int("replicas") or 2
labels = {{"app": "web"}}

page = k8s.core.v1.ConfigMap("web-page", data={{"index.html": "<h1>Hello from {name}</h1>"}})

web = k8s.apps.v1.Deployment(
    "web",
    spec={{
        "replicas": replicas,
        "selector": {{"matchLabels": labels}},
        "template": {{
            "metadata": {{"labels": labels}},
            "spec": {{
                "containers": [
                    {{
                        "name": "web",
                        "image": "nginx:1.29",
                        "ports": [{{"containerPort": 80}}],
                        "volumeMounts": [{{"name": "page", "mountPath": "/usr/share/nginx/html"}}],
                    }}
                ],
                "volumes": [{{"name": "page", "configMap": {{"name": page.metadata["name"]}}}}],
            }},
        }},
    }},
)

service = k8s.core.v1.Service("web", spec={{"selector": labels, "ports": [{{"port": 80, "targetPort": 80}}]}})

sw.export("deployment", web.metadata["name"])
sw.export("service_ip", service.spec["clusterIP"])
sw.export("ready_replicas", web.status["readyReplicas"])
'''

_YAML_PROGRAM = """name: {name}
runtime: yaml
description: A web app on Kubernetes

config:
  replicas:
    type: integer
    default: 2

variables:
  labels:
    app: web

resources:
  web-page:
    type: kubernetes:core/v1:ConfigMap
    properties:
      data:
        index.html: <h1>Hello from {name}</h1>

  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      spec:
        replicas: ${{replicas}}
        selector:
          matchLabels: ${{labels}}
        template:
          metadata:
            labels: ${{labels}}
          spec:
            containers:
              - name: web
                image: nginx:1.29
                ports:
                  - containerPort: 80
                volumeMounts:
                  - name: page
                    mountPath: /usr/share/nginx/html
            volumes:
              - name: page
                configMap:
                  name: ${{web-page.metadata.name}}

  service:
    type: kubernetes:core/v1:Service
    properties:
      spec:
        selector: ${{labels}}
        ports:
          - port: 80
            targetPort: 80

outputs:
  deployment: ${{web.metadata.name}}
  service_ip: ${{service.spec.clusterIP}}
  ready_replicas: ${{web.status.readyReplicas}}
"""

_GITIGNORE = "__pycache__/\n*.pyc\n.venv/\n"

TEMPLATES = ("kubernetes-python", "kubernetes-yaml")


def create(template: str, folder: Path, *, name: str | None = None) -> str:
    """Write the template's files into `folder`; returns the project name."""
    if template not in TEMPLATES:
        raise UsageError(f"unknown template {template!r}: templates are {', '.join(TEMPLATES)}")
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder} is not empty: pick a new or empty directory")
    folder.mkdir(parents=True, exist_ok=True)
    project = (
        name
        or "".join(c if c.isalnum() or c in "-_" else "-" for c in folder.resolve().name)
        or "app"
    )
    if template == "kubernetes-yaml":
        (folder / "Stackwright.yaml").write_text(_YAML_PROGRAM.format(name=project))
    else:
        (folder / "Stackwright.yaml").write_text(
            f"name: {project}\nruntime: python\nmain: __main__.py\ndescription: A web app on Kubernetes\n"
        )
        (folder / "__main__.py").write_text(_PROGRAM.format(name=project))
        (folder / ".gitignore").write_text(_GITIGNORE)
    (folder / "Stackwright.dev.yaml").write_text("config:\n  kubernetes:cluster: local\n")
    return project
