"""Edge cases of adopting objects (`stackwright import` and the `import_` option): what the
printed code declares of an object that reads back with null fields, or whose creator left
no managedFields entry; what an import id names (a custom kind's scope, a bare name); the
name an imported resource keeps when it is replaced. One cluster for the module."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_import_custom_object import CRD
from test_import_declared_only import NAMESPACE, imported, with_namespace

import stackwright.automation.stack as workspace

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"


def test_a_role_that_reads_back_without_rules_is_printed_without_them(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server reads a Role made without rules back as `rules: null` (its Go field has
    no omitempty): printed, `rules=None`. The code says nothing the object does not, and
    pasted is no change. What it declares is worked out once per read of the object."""
    p = with_namespace(new_project)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": p.ns},
        "rules": None,
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(role))
    assert live(cluster, "role", "reader", p.ns)["rules"] is None
    counts = {"read": 0, "declared": 0}

    def counted(name: str, call: Any) -> Any:
        def count(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return call(*args, **kwargs)

        return count

    monkeypatch.setattr(
        workspace, "declared_fields", counted("declared", workspace.declared_fields)
    )
    monkeypatch.setattr(workspace, "_read_importable", counted("read", workspace._read_importable))
    code = imported(p, ROLE, "reader", "reader")
    assert counts["declared"] == counts["read"] > 0, counts
    assert "rules=" not in code, code
    assert p.resources()["reader"]["inputs"] == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": p.ns},
    }
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}


#: A cluster-scoped kind: test_import_custom_object's CRD under other names.
KNOB_CRD = copy.deepcopy(CRD)
KNOB_CRD["metadata"]["name"] = "knobs.edges.example.com"
KNOB_CRD["spec"].update(
    group="edges.example.com",
    scope="Cluster",
    names={"plural": "knobs", "singular": "knob", "kind": "Knob"},
)


def refused(p: Any, line: str) -> None:
    """`preview` and `up` refuse the program in one line (exit 2), changing nothing."""
    before = p.state()
    for run in (p.preview, p.up):
        done = run(rc=2)
        said = done.err.strip()
        assert "\n" not in said and line in said, said
    assert p.state()["resources"] == before["resources"]


def test_import_ids_that_name_another_object_than_the_program_are_refused_before_any_change(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A cluster-scoped custom kind's id with a namespace (its CRD in the cluster) adopted
    the object by its name and recorded the namespace; a name alone with a
    `metadata.namespace` adopted that namespace's object, though the id, as a Pulumi id,
    names the default namespace's."""
    cluster.kubectl("apply", "-f", "-", input=json.dumps(KNOB_CRD))
    p = with_namespace(new_project)
    knob = {"apiVersion": "edges.example.com/v1", "kind": "Knob", "metadata": {"name": "k1"}}
    cluster.kubectl("create", "-f", "-", input=json.dumps({**knob, "spec": {"size": 1}}))
    cluster.kubectl("create", "configmap", "web", "-n", p.ns, "--from-literal=a=1")
    adopting = 'k8s.apiextensions.CustomResource("k1", api_version="edges.example.com/v1", '
    adopting += 'kind="Knob", spec={"size": 1}, opts=sw.ResourceOptions(import_=%s))\n'
    p.program(NAMESPACE + adopting % 'NS + "/k1"')
    refused(p, "Knob is cluster-scoped, so its id is its name alone: 'k1'; nothing was changed")
    p.program(
        NAMESPACE + 'k8s.core.v1.ConfigMap("web", metadata={"namespace": NS}, data={"a": "1"}, '
        'opts=sw.ResourceOptions(import_="web"))\n'
    )
    refused(p, f"write the id as '{p.ns}/web', or drop metadata.namespace to adopt 'default/web'")
    for kind, name, ns in (("knobs.edges.example.com", "k1", None), ("configmap", "web", p.ns)):
        assert "stackwright.io/urn" not in (
            live(cluster, kind, name, ns)["metadata"].get("annotations") or {}
        )
    # Named as its scope has it, each is adopted.
    p.program(NAMESPACE + adopting % '"k1"')
    assert p.up().summary["counts"] == {"same": 1, "import": 1}
    assert p.resources()["k1"]["inputs"]["metadata"] == {"name": "k1"}
    p.sw("destroy", "--yes")
    cluster.kubectl("delete", "crd", KNOB_CRD["metadata"]["name"], "--wait=false", check=False)


def test_an_object_whose_creator_left_no_entry_declares_the_keys_no_entry_names(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`kubectl create` made it, a policy agent labelled it, and a client rewrote its
    managedFields to the agent's entry alone (the API server takes a write's managedFields
    as given): the agent passed for its creator, its label was printed and the ones the
    object was made with were not. The keys no entry names are the unknown creator's."""
    p = with_namespace(new_project)
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "made", "namespace": p.ns, "labels": {"tier": "web"}},
        "data": {"mode": "fast"},
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(config))
    cluster.kubectl(
        "label", "configmap", "made", "-n", p.ns, "zone=a", "--field-manager=policy-agent"
    )
    entries = live(cluster, "configmap", "made", p.ns)["metadata"]["managedFields"]
    agents = [e for e in entries if e["manager"] == "policy-agent"]
    rewrite = {"metadata": {"managedFields": agents}}
    cluster.kubectl(
        "patch", "configmap", "made", "-n", p.ns, "--type=merge", "-p", json.dumps(rewrite)
    )
    after = live(cluster, "configmap", "made", p.ns)["metadata"]
    assert [e["manager"] for e in after["managedFields"]] == ["policy-agent"]
    assert after["labels"] == {"tier": "web", "zone": "a"}

    code = imported(p, "kubernetes:core/v1:ConfigMap", "made", "made")
    assert "'labels': {'tier': 'web'}" in code, code
    assert "zone" not in code, code
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert live(cluster, "configmap", "made", p.ns)["metadata"]["labels"]["zone"] == "a"


def test_two_ids_naming_one_object_in_an_import_file_are_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`web` (the default namespace's) and `<ns>/web` name one object where the stack's
    namespace is `<ns>`: both entries were adopted, two resources managing one object."""
    p = with_namespace(new_project)
    p.sw("config", "set", "kubernetes:namespace", p.ns)
    cluster.kubectl("create", "configmap", "web", "-n", p.ns, "--from-literal=a=1")
    imports = {
        "resources": [
            {"type": "kubernetes:core/v1:ConfigMap", "name": "a", "id": "web"},
            {"type": "kubernetes:core/v1:ConfigMap", "name": "b", "id": f"{p.ns}/web"},
        ]
    }
    (p.root / "resources.json").write_text(json.dumps(imports))
    before = p.state()
    done = p.sw("import", "--file", "resources.json", "--yes", rc=2)
    assert done.err.strip() == (
        f"error: resources.json entry 2: ConfigMap {p.ns}/web is resources.json entry 1's "
        "too (nothing was imported)"
    )
    assert p.state() == before


@pytest.mark.parametrize("server_side", [False, True])
def test_generate_name_is_not_printed(
    new_project: Any, cluster: LiveCluster, server_side: bool
) -> None:
    """`generateName` means something only when the object is created: it exists under its
    name now, which the printed code says; pasted, the code is no change."""
    p = with_namespace(new_project)
    made = "apiVersion: v1\nkind: ConfigMap\ndata: {mode: fast}\nmetadata: {generateName: settings-"
    created = cluster.kubectl("create", "-n", p.ns, "-o", "json", "-f", "-", input=made + "}")
    name = json.loads(created.stdout)["metadata"]["name"]
    assert name.startswith("settings-") and name != "settings-"
    if server_side:  # an applier's entry names generateName too
        owned = f"{made}, name: {name}}}"
        cluster.kubectl("apply", "--server-side", "-n", p.ns, "-f", "-", input=owned)
    code = imported(p, "kubernetes:core/v1:ConfigMap", "settings", name)
    assert "generateName" not in code and "generate_name" not in code, code
    assert f"'name': '{name}'" in code, code
    assert "generateName" not in p.resources()["settings"]["inputs"]["metadata"]
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
