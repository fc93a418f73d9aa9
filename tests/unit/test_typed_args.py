"""Typed args: mypy checks what a program writes in a kind's nested objects, key by key.

Each kind's fields accept a dict (a TypedDict generated from the Kubernetes definitions,
in `stackwright.kubernetes.inputs`, also named by the kind's own module), a lightkube
model or an Output, and inside a dict the same again at every level. These tests run
mypy --strict over programs, as a user would, and read its report.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import stackwright.kubernetes as k8s
from stackwright.automation import templates
from stackwright.kubernetes.inputs import apiextensions_v1, apps_v1

REPO = Path(__file__).resolve().parents[2]

GOOD = """
import stackwright as sw
import stackwright.kubernetes as k8s
import stackwright.kx as kx
from lightkube.models.core_v1 import Container

config = sw.Config()
ns = k8s.core.v1.Namespace("apps")
settings = k8s.core.v1.ConfigMap(
    "settings", metadata={"namespace": ns.metadata["name"]}, data={"mode": "fast"}
)


def web_container(image: str) -> k8s.core.v1.ContainerDict:
    return {
        "name": "web",
        "image": image,
        "ports": [{"name": "http", "containerPort": 8080}],
        "resources": {"limits": {"cpu": "500m", "memory": 256}},
        "envFrom": [{"configMapRef": {"name": settings.metadata["name"]}}],
        "env": [{"name": "MODE", "value": sw.Output.format("{}-x", config.get("mode") or "a")}],
    }


labels = {"app": "web"}
web = k8s.apps.v1.Deployment(
    "web",
    metadata={"namespace": ns.metadata["name"], "labels": labels},
    spec={
        "replicas": config.get_int("replicas") or 2,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [web_container("nginx:1.27"), Container(name="side", image="busybox")],
                "volumes": [{"name": "cfg", "configMap": {"name": settings.metadata["name"]}}],
            },
        },
    },
)
svc = k8s.core.v1.Service(
    "web",
    metadata={"namespace": ns.metadata["name"]},
    spec={"selector": labels, "ports": [{"port": 80, "targetPort": "http"}]},
)
pod = kx.PodBuilder("api", containers=[{"image": "api:1", "ports": {"http": 8080}}])
api = k8s.apps.v1.Deployment("api", spec=pod.as_deployment_spec(replicas=2))
job = k8s.batch.v1.Job("migrate", spec=pod.as_job_spec(backoff_limit=1))
crd = k8s.apiextensions.v1.CustomResourceDefinition(
    "crontabs",
    spec={
        "group": "example.com",
        "names": {"kind": "CronTab", "plural": "crontabs"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
)
# A Patch gives any part of an object: a spec without the keys Deployment's own requires.
k8s.apps.v1.DeploymentPatch("scale", metadata={"name": "web", "namespace": "prod"}, spec={"replicas": 3})
# At any depth; an item of a list-map gives its merge key (a container its name), not a key
# the API server defaults (a port's protocol).
k8s.apps.v1.DeploymentPatch(
    "image",
    metadata={"name": "web"},
    spec={"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.30"}]}}},
)
k8s.core.v1.ServicePatch("port", metadata={"name": "web"}, spec={"ports": [{"port": 8080}]})
partial_spec: k8s.apps.v1.DeploymentSpecPatchDict = {"paused": True}
k8s.core.v1.ConfigMapPatch("tune", metadata={"name": "settings"}, data={"mode": "slow"})
sw.export("ip", svc.spec.cluster_ip)
sw.export("token", sw.Output.secret(config.get("token") or "t0ken"))
sw.export("tls", web.spec.template.spec.volumes[0].secret.secret_name)
sw.export("format", crd.spec.versions[0].schema.open_apiv3_schema.format.apply(str))
"""

#: Programs with one mistake each, on the line marked `# mistake`.
BAD = {
    "misspelt_key": """
import stackwright.kubernetes as k8s
k8s.apps.v1.Deployment("web", spec={"replicsa": 3})  # mistake
""",
    "wrong_type": """
import stackwright.kubernetes as k8s
k8s.apps.v1.Deployment("web", spec={"replicas": "three"})  # mistake
""",
    "deep_misspelt_key": """
import stackwright.kubernetes as k8s
k8s.core.v1.Pod(
    "web",
    spec={"containers": [{"name": "web", "image": "nginx", "imagePullPolicyy": "Always"}]},  # mistake
)
""",
    "wrong_type_in_annotated_helper": """
import stackwright.kubernetes as k8s
port: k8s.core.v1.ContainerPortDict = {"containerPort": "http"}  # mistake
""",
    "not_a_python_name_key": """
from stackwright.kubernetes.inputs.apiextensions_v1 import JSONSchemaPropsDict
schema: JSONSchemaPropsDict = {"x-kubernetes-list-type": 3}  # mistake
""",
    "missing_required_key": """
import stackwright.kubernetes as k8s
k8s.core.v1.Pod("web", spec={"containers": [{"image": "nginx"}]})  # mistake
""",
    "patch_wrong_type": """
import stackwright.kubernetes as k8s
k8s.core.v1.ConfigMapPatch("c", metadata={"name": "c"}, data=3)  # mistake
""",
    "patch_partial_without_patch": """
import stackwright.kubernetes as k8s
k8s.apps.v1.Deployment("scale", metadata={"name": "web"}, spec={"replicas": 3})  # mistake
""",
    "patch_wrong_type_in_spec": """
import stackwright.kubernetes as k8s
k8s.apps.v1.DeploymentPatch("p", metadata={"name": "web"}, spec={"replicas": "three"})  # mistake
""",
    "patch_misspelt_key_in_spec": """
import stackwright.kubernetes as k8s
k8s.apps.v1.DeploymentPatch("p", metadata={"name": "web"}, spec={"replicass": 3})  # mistake
""",
    "patch_list_item_without_its_merge_key": """
import stackwright.kubernetes as k8s
k8s.apps.v1.DeploymentPatch(
    "p",
    metadata={"name": "web"},
    spec={"template": {"spec": {"containers": [{"image": "x"}]}}},  # mistake
)
""",
    "patch_without_a_name": """
import stackwright.kubernetes as k8s
k8s.apps.v1.DeploymentPatch("p", metadata={"namespace": "prod"}, spec={"replicas": 3})  # mistake
""",
    "unknown_top_level_field": """
import stackwright.kubernetes as k8s
k8s.core.v1.ConfigMap("c", dta={"a": "b"})  # mistake
""",
}


def _examples() -> dict[str, str]:
    return {
        "example_" + re.sub(r"\W", "_", str(path.parent.relative_to(REPO / "examples"))): (
            path.read_text()
        )
        for path in sorted((REPO / "examples").rglob("__main__.py"))
    }


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[int]]:
    """Lines mypy --strict reports errors on, by program (one mypy run for all of them)."""
    if shutil.which("mypy", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("mypy is a test dependency: pip install -e '.[test]'")
    folder = tmp_path_factory.mktemp("programs")
    template = templates.files("kubernetes-python", "hello")["__main__.py"]
    programs = {"good": GOOD, "template": template, **BAD, **_examples()}
    for name, text in programs.items():
        (folder / f"{name}.py").write_text(text)
    # An editable install is found through an import hook, which mypy does not follow.
    env = {**os.environ, "MYPYPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(folder / ".cache"), "."],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    report: dict[str, list[int]] = {name: [] for name in programs}
    for line in done.stdout.splitlines():
        found = re.match(r"(\w+)\.py:(\d+): error:", line)
        if found:
            report[found[1]].append(int(found[2]))
        else:
            assert ": note:" in line or line.startswith(("Found ", "Success")), done.stdout
    return report


def test_a_program_using_dicts_models_outputs_and_kx_builders_type_checks(
    mypy_report: dict[str, list[int]],
) -> None:
    assert mypy_report["good"] == []


def test_every_example_and_the_new_project_template_type_check(
    mypy_report: dict[str, list[int]],
) -> None:
    assert mypy_report["template"] == []
    examples = {name: lines for name, lines in mypy_report.items() if name.startswith("example_")}
    assert len(examples) >= 8
    assert {name: lines for name, lines in examples.items() if lines} == {}


@pytest.mark.parametrize("name", sorted(BAD))
def test_mypy_reports_the_mistake_on_its_line(name: str, mypy_report: dict[str, list[int]]) -> None:
    lines = BAD[name].splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if line.endswith("# mistake")]
    assert mypy_report[name] == marked


def test_each_kind_module_names_its_typed_dicts_and_loads_them_on_first_use() -> None:
    assert k8s.apps.v1.DeploymentSpecDict is apps_v1.DeploymentSpecDict  # type: ignore[attr-defined]
    assert {"replicas", "selector", "template"} <= apps_v1.DeploymentSpecDict.__optional_keys__
    # Keys that are not Python names keep Kubernetes' spelling.
    assert {"$ref", "x-kubernetes-list-type", "not"} <= (
        apiextensions_v1.JSONSchemaPropsDict.__optional_keys__
    )
    with pytest.raises(
        AttributeError, match=r"'stackwright.kubernetes.apps.v1' has no .*'NopeDict'"
    ):
        _ = k8s.apps.v1.NopeDict  # type: ignore[attr-defined]
    code = (
        "import sys, stackwright.kubernetes as k8s; k8s.apps.v1.Deployment; "
        "assert not [m for m in sys.modules if '.inputs' in m], 'inputs loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
