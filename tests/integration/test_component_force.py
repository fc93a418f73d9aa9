"""`force` on a component that declares manifests (ConfigFile, ConfigGroup, Chart,
Directory) takes over the fields another manager owns in every object it declares, as
`kubectl apply --server-side --force-conflicts -f app.yaml` does for every object in the
file: the conflict's advice to set `force` must work where the program can set it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

CONFIG_MAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\n"
    "data:\n  mode: {mode!r}\n"
)

#: Each component: the files it reads (`{ns}`, `{mode}` filled in), and its declaration.
COMPONENTS: dict[str, tuple[dict[str, str], str]] = {
    "ConfigFile": (
        {"app.yaml": CONFIG_MAP},
        'k8s.yaml.ConfigFile("app", file="app.yaml", opts=OPTS)',
    ),
    "ConfigGroup": (
        {"app.yaml": CONFIG_MAP},
        'k8s.yaml.ConfigGroup("app", files=["app.yaml"], opts=OPTS)',
    ),
    "Chart": (
        {
            "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
            "charts/app/templates/settings.yaml": (
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
                "data:\n  mode: {mode!r}\n"
            ),
        },
        'k8s.helm.Chart("app", chart="charts/app", namespace=NS, opts=OPTS)',
    ),
    "Directory": (
        {"app/kustomization.yaml": "resources: [settings.yaml]\n", "app/settings.yaml": CONFIG_MAP},
        'k8s.kustomize.Directory("app", directory="app", opts=OPTS)',
    ),
}


@pytest.mark.parametrize("component", sorted(COMPONENTS))
def test_forced_component(component: str, new_project: Any, cluster: LiveCluster) -> None:
    # A short name: each project's namespace is named after the test's first 40
    # characters, its parameter included, which keeps them apart.
    files, declaration = COMPONENTS[component]
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)

    def declare(mode: str, force: bool) -> None:
        for name, text in files.items():
            path = p.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.format(ns=p.ns, mode=mode))
        p.program(f"OPTS = sw.ResourceOptions(force={force})\n{declaration}\n")

    declare("1", force=False)
    p.up()
    # Another field manager takes `data.mode` over (as `kubectl apply --server-side` does).
    taken = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": p.ns},
        "data": {"mode": "2"},
    }
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-",
        input=json.dumps(taken),
    )  # fmt: skip

    declare("3", force=False)
    (error,) = [e["error"] for e in p.up(rc=1).of("step-done") if not e["ok"]]
    assert "conflict on .data.mode with manager other" in error, error
    assert "set `force` on the resource" in error, error

    declare("3", force=True)
    forced = p.up()
    assert forced.summary["ok"], forced.out
    settings = live(cluster, "configmap", "settings", p.ns)
    assert settings["data"]["mode"] == "3"
    owners = {
        entry["manager"]
        for entry in settings["metadata"]["managedFields"]
        if "f:mode" in json.dumps(entry.get("fieldsV1", {}))
    }
    assert owners == {"stackwright"}, settings["metadata"]["managedFields"]
