"""Helpers for tests of scoped credentials: deploy a YAML program through a kubeconfig, and ask
the API server what a user may do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml


def scoped_up(tmp_path: Path, kubeconfig: Path, program: str) -> subprocess.CompletedProcess[str]:
    """`stackwright up --yes` of a YAML `program` deployed through `kubeconfig`."""
    project = tmp_path / "project"
    project.mkdir(parents=True)
    (project / "Stackwright.yaml").write_text(program)
    (project / "Stackwright.dev.yaml").write_text(
        f"config:\n  kubernetes:kubeconfig: {json.dumps(str(kubeconfig))}\n"
    )
    env = {**os.environ, "STACKWRIGHT_STACK": "dev"}
    command = [sys.executable, "-m", "stackwright.cli.main", "--cwd", str(project)]
    subprocess.run([*command, "stack", "init", "dev"], check=True, capture_output=True, env=env)
    return subprocess.run(
        [*command, "up", "--yes"], capture_output=True, text=True, timeout=120, env=env
    )


def program(name: str, *, namespace: str = "app", **resources: tuple[str, dict[str, Any]]) -> str:
    """A YAML program of `resources`: name → (type, properties), all in `namespace`."""
    return yaml.safe_dump({
        "name": name,
        "runtime": "yaml",
        "resources": {
            key: {"type": f"kubernetes:core/v1:{kind}",
                  "properties": {"metadata": {"name": key, "namespace": namespace}, **properties}}
            for key, (kind, properties) in resources.items()
        },
    })  # fmt: skip


def review_access(cluster: Any, user: str, groups: list[str], **attributes: str) -> Any:
    """The status of a SubjectAccessReview of `user` in `groups` for `attributes`
    (resourceAttributes: namespace, verb, resource, …), asked as the administrator."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": groups, "resourceAttributes": attributes},
    }
    with cluster.http() as api:
        answered = api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review)
    return answered.json()["status"]
