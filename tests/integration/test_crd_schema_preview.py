"""A custom object in the same program as its CRD, on a cluster that does not serve the kind
yet: the server cannot dry-run it, so the preview checks it against the schema the program
declares, in the API server's words, before `up` creates the CRD and fails on the object."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import get
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

CRD = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.apiextensions.v1.CustomResourceDefinition(
    "databases",
    metadata={"name": "databases.schema.example.com"},
    spec={
        "group": "schema.example.com",
        "scope": "Namespaced",
        "names": {"plural": "databases", "singular": "database", "kind": "Database"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "required": ["size"], "properties": {
                    "size": {"type": "integer", "minimum": 1},
                    "engine": {"type": "string", "enum": ["postgres", "mysql"]},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                }}}}},
        }],
    },
)
"""


def _database(spec: str) -> str:
    return f"""
k8s.apiextensions.CustomResource(
    "db", api_version="schema.example.com/v1", kind="Database",
    metadata={{"name": "db", "namespace": NS}}, spec={spec},
)
"""


def test_an_object_its_new_crd_refuses_fails_the_preview_in_the_servers_words(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(CRD + _database('{"engine": "oracle"}'))
    done = p.preview(rc=2)
    (failure,) = done.summary["failures"]
    declared = {"oracle": failure}
    # Bad input (exit 2, nothing changed), at the resource's line, as the server's refusal is.
    assert failure.startswith("__main__.py:"), failure
    assert 'Database.schema.example.com "db" is invalid: ' in failure, failure
    assert "spec.size: Required value" in failure, failure
    assert (
        'spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql"' in failure
    ), failure
    # `up --yes` previews nothing: it refuses before creating anything, the CRD included.
    refused = p.sw("up", "--yes", rc=2)
    (line,) = refused.err.strip().splitlines()
    assert "__main__.py:" in line and "kubernetes:schema.example.com/v1:Database db: " in line
    assert "spec.size: Required value" in line and "nothing was changed" in line, line
    assert get(cluster, "customresourcedefinitions", "databases.schema.example.com") is None
    assert get(cluster, "namespace", p.ns) is None

    # A field the schema does not declare, as server-side apply refuses it.
    p.program(CRD + _database('{"size": 1, "colour": "red", "extra": {"free": 1}}'))
    (failure,) = p.preview(rc=2).summary["failures"]
    assert ".spec.colour: field not declared in schema" in failure, failure
    declared["colour"] = failure
    assert "extra" not in failure
    assert ".spec.colour: field not declared in schema" in p.sw("up", "--yes", rc=2).err

    # A type the schema does not allow.
    p.program(CRD + _database('{"size": "big"}'))
    (failure,) = p.preview(rc=2).summary["failures"]
    assert (
        'spec.size: Invalid value: "string": spec.size in body must be of type integer' in failure
    ), failure

    # A valid object previews and applies; with the CRD served, the server answers.
    p.program(CRD + _database('{"size": 2, "engine": "mysql", "extra": {"free": 1}}'))
    assert p.preview().changed() == {"ns": "create", "databases": "create", "db": "create"}
    p.up()
    p.program(CRD + _database('{"engine": "oracle"}'))
    # The server's own dry run now answers, in the same words as the declared schema did.
    for spec, which in (
        ('{"engine": "oracle"}', "oracle"),
        ('{"size": 1, "colour": "red"}', "colour"),
    ):
        p.program(CRD + _database(spec))
        (served,) = p.preview(rc=2).summary["failures"]
        assert served == declared[which]
    # A CRD the run changes: its objects are checked against the schema it is about to have.
    stricter = CRD.replace('"required": ["size"]', '"required": ["size", "engine"]')
    p.program(stricter + _database('{"size": 2}'))
    (failure,) = p.preview(rc=2).summary["failures"]
    assert failure.endswith('"db" is invalid: spec.engine: Required value'), failure
    assert "spec.engine: Required value" in p.sw("up", "--yes", rc=2).err
    crd = get(cluster, "customresourcedefinitions", "databases.schema.example.com")
    assert crd is not None
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"]["required"] == ["size"]  # not changed
    p.sw("destroy", "--yes")


def test_an_up_changing_a_crd_leaves_a_patch_of_its_kind_to_the_server(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A Patch of an object whose CRD the same `up` changes sets some fields of it: the
    declared schema's `required` is the whole object's, which the server judges merged (as
    the preview leaves it to the server, so does `up`), not the Patch's fields alone."""
    p = new_project()
    p.program(CRD)
    p.up()
    made = {"apiVersion": "schema.example.com/v1", "kind": "Database",
            "metadata": {"name": "db", "namespace": p.ns}, "spec": {"size": 2}}  # fmt: skip
    cluster.kubectl("create", "-f", "-", input=json.dumps(made))
    changed = CRD.replace(
        '"scope": "Namespaced",', '"scope": "Namespaced", "preserveUnknownFields": False,'
    )
    assert changed != CRD
    p.program(
        changed
        + """
k8s.apiextensions.CustomResourcePatch(
    "db", api_version="schema.example.com/v1", kind="Database",
    metadata={"name": "db", "namespace": NS}, spec={"engine": "mysql"},
)
"""
    )
    assert p.preview().changed() == {"databases": "update", "db": "create"}
    p.up()
    live = get(cluster, "databases.schema.example.com", "db", p.ns)
    assert live is not None and live["spec"] == {"size": 2, "engine": "mysql"}
    p.sw("destroy", "--yes")


SCALER_CRD = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.apiextensions.v1.CustomResourceDefinition(
    "scalers",
    metadata={"name": "scalers.rules.example.com"},
    spec={
        "group": "rules.example.com",
        "scope": "Namespaced",
        "names": {"plural": "scalers", "singular": "scaler", "kind": "Scaler"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [{
                        "rule": "self.minReplicas <= self.maxReplicas",
                        "message": "minReplicas must not exceed maxReplicas",
                    }],
                    "properties": {
                        "minReplicas": {"type": "integer"},
                        "maxReplicas": {"type": "integer"},
                        "name": {"type": "string", "x-kubernetes-validations": [
                            {"rule": "self == oldSelf", "message": "immutable"},
                        ]},
                    },
                }}}},
        }],
    },
)
"""


def _scaler(low: int, high: int, name: str) -> str:
    spec = {"minReplicas": low, "maxReplicas": high, "name": name}
    return f"""
k8s.apiextensions.CustomResource(
    "web", api_version="rules.example.com/v1", kind="Scaler",
    metadata={{"name": "web", "namespace": NS}}, spec={spec!r},
)
"""


def test_the_crds_validation_rules_refuse_an_object_as_the_server_does(
    new_project: Any, cluster: LiveCluster
) -> None:
    """CEL rules (`x-kubernetes-validations`): the declared schema's refuse an object before
    its CRD exists; once served, the server's own dry run and apply refuse it, a transition
    rule (`self == oldSelf`) an update of what it keeps."""
    p = new_project()
    invalid = 'Scaler.rules.example.com "web" is invalid: '
    exceeds = 'spec: Invalid value: "object": minReplicas must not exceed maxReplicas'
    p.program(SCALER_CRD + _scaler(5, 3, "a"))
    (failure,) = p.preview(rc=2).summary["failures"]
    assert failure.endswith(invalid + exceeds), failure

    p.program(SCALER_CRD + _scaler(1, 3, "a"))
    p.up()
    p.program(SCALER_CRD + _scaler(5, 3, "b"))
    both = f'{invalid}[{exceeds}, spec.name: Invalid value: "string": immutable]'
    for refused in (p.preview(rc=2), p.up(rc=2)):
        (failure,) = refused.summary["failures"]
        assert both in failure, failure
    live = get(cluster, "scalers.rules.example.com", "web", p.ns)
    assert live is not None and live["spec"] == {"minReplicas": 1, "maxReplicas": 3, "name": "a"}
    p.sw("destroy", "--yes")
