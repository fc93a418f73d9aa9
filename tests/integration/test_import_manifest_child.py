"""An object a YAML program's manifests declare (a ConfigFile's, ConfigGroup's, Chart's) that
exists already, made outside the stack: `up` says how to adopt it in the YAML program's terms (it
has no transformations), and that way works: the next `up` manages the same object."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster, create, live, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_resource_options_cli import yaml_project

MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {ns}}}\ndata: {{a: '1'}}\n"
#: A chart of that one object, in the namespace it is installed in.
CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: settings\nversion: 0.1.0\n",
    "chart/templates/settings.yaml": MANIFEST.replace("{ns}", "{{{{ .Release.Namespace }}}}"),
}


@pytest.mark.parametrize(
    ("type_", "properties"),
    [
        ("kubernetes:yaml/v2:ConfigFile", "{file: app.yaml}"),
        ("kubernetes:yaml/v2:ConfigGroup", "{files: [app.yaml]}"),
        ("kubernetes:helm.sh/v4:Chart", "{chart: ./chart, namespace: NS}"),
    ],
    ids=["file", "group", "chart"],  # short: the project's name is the test's, cut at 40 characters
)
def test_a_child_is_adopted_as_up_says(
    new_project: Any, cluster: LiveCluster, type_: str, properties: str
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    create(cluster, "ConfigMap", "settings", p.ns, data={"a": "1"})
    uid = live(cluster, "configmap", "settings", p.ns)["metadata"]["uid"]
    for path, text in {"app.yaml": MANIFEST, **CHART}.items():
        (p.root / path).parent.mkdir(exist_ok=True)
        (p.root / path).write_text(text.format(ns=p.ns))
    given = properties.replace("NS", p.ns)
    yaml_project(p, f"files:\n  type: {type_}\n  properties: {given}\n")

    (failure,) = p.up(rc=1).summary["failures"]
    child = f"ConfigMap:{p.ns}/settings"
    command = (
        f"stackwright import kubernetes:core/v1:ConfigMap {child} {p.ns}/settings "
        f"--parent {p.urn(type_, 'files')}"
    )
    assert "already exists (it is not this stack's: made outside it, or forgotten by " in failure
    assert f"adopt it with `{command}`, or give this resource another name" in failure, failure
    assert "transformation" not in failure and "ResourceOptions" not in failure
    assert "stackwright.io/urn" not in live(cluster, "configmap", "settings", p.ns)["metadata"].get(
        "annotations", {}
    )

    said = failure.split("`")[-2]
    imported = p.sw(*shlex.split(said)[1:], "--yes")
    child_urn = p.urn(f"{type_}$kubernetes:core/v1:ConfigMap", child)
    assert f"as {child_urn}." in imported.out and "declare it" in imported.out, imported.out

    # The next `up` declares the object by the URN it was adopted under: the same resource.
    done = p.up()
    assert done.summary["counts"] == {"same": 2}, done.out
    now = live(cluster, "configmap", "settings", p.ns)
    assert now["metadata"]["uid"] == uid
    assert now["metadata"]["annotations"]["stackwright.io/urn"] == child_urn
    recorded = {r["urn"]: r for r in p.state()["resources"]}
    assert recorded[child_urn]["parent"] == p.urn(type_, "files")
    assert not recorded[child_urn].get("protect")
    assert p.preview().summary["counts"] == {"same": 2}


def test_a_mistaken_parent_is_one_line_and_imports_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    create(cluster, "ConfigMap", "settings", p.ns, data={"a": "1"})
    yaml_project(p, "other:\n  type: kubernetes:core/v1:ConfigMap\n")
    adopt = ("import", "kubernetes:core/v1:ConfigMap", "settings", f"{p.ns}/settings", "--yes")
    for parent, said in [
        ("files", "--parent: 'files' is not a Stackwright URN: it must start with 'urn:sw:'"),
        (
            p.urn("kubernetes:yaml/v2:ConfigFile", "files"),
            f"--parent {p.urn('kubernetes:yaml/v2:ConfigFile', 'files')} is no resource of "
            "stack dev: give the URN of the ConfigFile, ConfigGroup or Chart that declares",
        ),
    ]:
        refused = p.sw(*adopt, "--parent", parent, rc=2)
        assert said in one_line(refused), refused.err
    (p.root / "objs.yaml").write_text("[]\n")
    refused = p.sw("import", "--file", "objs.yaml", "--parent", "files", "--yes", rc=2)
    assert "import: --parent goes with TYPE NAME ID, not --file" in one_line(refused)
    assert p.state()["resources"] == []
    assert "stackwright.io/urn" not in live(cluster, "configmap", "settings", p.ns)["metadata"].get(
        "annotations", {}
    )


def test_a_parent_whose_children_the_program_declares_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Only manifests declare a child the program does not write: a component's children (or
    # a ConfigMap's, which has none) adopted under it were no resource of the next up, which
    # refused to delete them (protected), while import had said the manifests declare them.
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    create(cluster, "ConfigMap", "settings", p.ns, data={"a": "1"})
    p.program(
        """
        class Shop(sw.ComponentResource):
            def __init__(self, name):
                super().__init__("acme:index:Shop", name, None, None)
        Shop("shop")
        """
    )
    p.up()
    comp = p.urn("acme:index:Shop", "shop")
    refused = p.sw(
        "import", "kubernetes:core/v1:ConfigMap", "settings", f"{p.ns}/settings",
        "--parent", comp, "--yes", rc=2,
    )  # fmt: skip
    assert (
        f"--parent {comp} is a acme:index:Shop, whose children the program declares itself: "
        "adopt the object where it is declared, with ResourceOptions(import_='ID')"
    ) in one_line(refused)
    assert [r["urn"] for r in p.state()["resources"]] == [comp]
    assert "stackwright.io/urn" not in live(cluster, "configmap", "settings", p.ns)["metadata"].get(
        "annotations", {}
    )


def test_a_name_the_manifests_do_not_give_the_object_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Adopted under a NAME the manifests do not give it (a typo, or the ID of an object in
    # another namespace than the name's), it was no resource of the next up, which refused
    # to delete it (protected), while import had said `up` manages it from now on.
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    create(cluster, "ConfigMap", "settings", p.ns, data={"a": "1"})
    (p.root / "app.yaml").write_text(MANIFEST.format(ns=p.ns))
    yaml_project(
        p, "files:\n  type: kubernetes:yaml/v2:ConfigFile\n  properties: {file: app.yaml}\n"
    )
    p.up(rc=1)
    files = p.urn("kubernetes:yaml/v2:ConfigFile", "files")
    for name, object_id in [
        ("settings", f"{p.ns}/settings"),
        ("ConfigMap:elsewhere/settings", f"{p.ns}/settings"),
    ]:
        refused = p.sw(
            "import", "kubernetes:core/v1:ConfigMap", name, object_id, "--parent", files, "--yes",
            rc=2,
        )  # fmt: skip
        assert (
            f"import kubernetes:core/v1:ConfigMap: NAME {name!r} is not what the manifests of "
            f"{files} name {p.ns}/settings: ConfigMap:{p.ns}/settings (or PREFIX-ConfigMap:"
            f"{p.ns}/settings with a resourcePrefix), as `stackwright up` says"
        ) in one_line(refused)
    assert [r["urn"] for r in p.state()["resources"]] == [files]
    # A prefixed name (resourcePrefix) is one the manifests may give it.
    prefixed = f"shop-ConfigMap:{p.ns}/settings"
    adopted = p.sw("import", "kubernetes:core/v1:ConfigMap", prefixed, f"{p.ns}/settings",
                   "--parent", files, "--yes", "--json")  # fmt: skip
    urn = p.urn("kubernetes:yaml/v2:ConfigFile$kubernetes:core/v1:ConfigMap", prefixed)
    assert json.loads(adopted.out) == {"event": "imported", "urn": urn, "code": ""}
