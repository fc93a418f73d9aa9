"""Project templates for `stackwright new TEMPLATE DIR`.

`kubernetes-python`: a web app (ConfigMap, Deployment, Service) whose `dev` stack
deploys to the Stackwright local cluster, started on first `up`. `kubernetes-yaml`:
the same app as a YAML program, in Stackwright.yaml itself.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from stackwright.automation.workspace import check_name, find_project, select_stack
from stackwright.errors import UsageError
from stackwright.state import backend_url, open_backend

_PROGRAM = '''"""{name}: a small web app on Kubernetes, declared with Stackwright."""

import stackwright as sw
import stackwright.kubernetes as k8s

cfg = sw.Config()
replicas = cfg.get_int("replicas") or 2
labels = {{"app": "{label}"}}  # this app's own: no other app's Service in the namespace selects its pods

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

_YAML_PROGRAM = """name: {yaml_name}
runtime: yaml
description: A web app on Kubernetes

config:
  replicas:
    type: integer
    default: 2

variables:
  labels:  # this app's own: no other app's Service in the namespace selects its pods
    app: {yaml_label}

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


def new_project(
    template: str, folder: Path, *, name: str | None = None, stack: str, force: bool = False
) -> str:
    """Make a project from `template` in `folder` with a first stack, selected; returns the
    project name. A folder that is not empty needs `force`, which writes the template's
    files over any of the same name and leaves every other file as it is (`pulumi new
    --force`)."""
    if template not in TEMPLATES:
        raise UsageError(f"unknown template {template!r}: templates are {', '.join(TEMPLATES)}")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file: pick a new or empty directory")
    if not force and folder.exists() and any(folder.iterdir()):
        raise UsageError(
            f"{folder} is not empty: pick a new or empty directory, or pass --force to write "
            "the template's files into it (other files are kept)"
        )
    project = (
        name
        or "".join(c if c.isalnum() or c in "-_" else "-" for c in folder.resolve().name)
        or "app"
    )
    check_name("project", project)  # before a file is written
    with contextlib.closing(open_backend(backend_url())) as backend:  # the template names none
        if backend.has_stack(project, check_name("stack", stack)):  # before a file is written
            raise UsageError(
                f"stack {stack} of project {project} already exists in the state store: "
                "pick another --stack or --name"
            )
        _write(template, folder, project, stack)
        backend.create_stack(project, stack)
    select_stack(find_project(folder), stack)
    return project


def _write(template: str, folder: Path, project: str, stack: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files(template, project).items():
        (folder / name).write_text(text)
    # The first stack's configuration: the local cluster (`up` starts it).
    (folder / f"Stackwright.{stack}.yaml").write_text("config:\n  kubernetes:cluster: local\n")


def files(template: str, project: str) -> dict[str, str]:
    """The files `template` makes for the project `project`, by name (its stack's aside)."""
    label = _label_value(project)
    if template == "kubernetes-yaml":
        yaml_names = {"yaml_name": _yaml_text(project), "yaml_label": _yaml_text(label)}
        return {"Stackwright.yaml": _YAML_PROGRAM.format(name=project, **yaml_names)}
    return {
        "Stackwright.yaml": f"name: {_yaml_text(project)}\nruntime: python\nmain: __main__.py\n"
        "description: A web app on Kubernetes\n",
        "__main__.py": _PROGRAM.format(name=project, label=label),
        ".gitignore": _GITIGNORE,
    }


def _yaml_text(text: str) -> str:
    """`text` as a YAML value that reads back as that text: quoted where it would read as a
    number, a boolean or null (a project named `2048`, `yes` or `null`)."""
    import yaml  # as `new` writes a project, not as every command starts (~14 ms)

    return text if yaml.safe_load(text) == text else json.dumps(text)


def _label_value(project: str) -> str:
    """The project's name as the value of its pods' `app` label, which its Service selects:
    a project's name (letters, digits, `-`, `_`, `.`, a letter or digit first) cut to the 63
    characters a label value may have, which must end with a letter or digit too."""
    return project[:63].rstrip("-_.")
