"""`stackwright import` of a custom resource (a CRD's kind) prints code that runs: the SDK's
class for objects of any kind, which declares exactly what was adopted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.imports.example.com"},
    "spec": {
        "group": "imports.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                        },
                    }
                },
            }
        ],
    },
}


def test_the_printed_code_of_an_imported_custom_object_runs_unchanged(
    new_project: Any, cluster: LiveCluster
) -> None:
    cluster.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    gadget = {
        "apiVersion": "imports.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g1", "namespace": p.ns, "labels": {"team": "a"}},
        "spec": {"size": 3, "colors": ["red", "blue"], "maxItems": 2},
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(gadget))
    uid = live(cluster, "gadgets.imports.example.com", "g1", p.ns)["metadata"]["uid"]

    done = p.sw("import", "--yes", "kubernetes:imports.example.com/v1:Gadget", "g1", f"{p.ns}/g1")
    code = done.out.split("Add this to your program:", 1)[1].strip()
    assert code.startswith(
        "k8s.apiextensions.CustomResource(\n    'g1',\n"
        "    api_version='imports.example.com/v1',\n    kind='Gadget',\n"
    ), code

    # The printed code, as the program, declares exactly what was adopted.
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    adopted = live(cluster, "gadgets.imports.example.com", "g1", p.ns)
    assert adopted["metadata"]["uid"] == uid
    assert adopted["spec"] == gadget["spec"]
    # Protected by the import and by the printed code: unprotected to be destroyed.
    p.sw("state", "unprotect", "--yes", p.urn("kubernetes:imports.example.com/v1:Gadget", "g1"))
    p.sw("destroy", "--yes")
    cluster.kubectl("delete", "crd", "gadgets.imports.example.com", "--wait=false", check=False)


def _crd(kind: str, plural: str) -> dict[str, Any]:
    """A CRD of `kind` in the group the tests above use, its objects free-form."""
    names = {"plural": plural, "singular": plural.removesuffix("s"), "kind": kind}
    return {
        **CRD,
        "metadata": {"name": f"{plural}.imports.example.com"},
        "spec": {**CRD["spec"], "names": names},
    }


def test_a_patch_of_a_custom_kind_is_refused_as_a_built_in_patch_is_and_a_kind_named_patch_is_imported(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`TrinketPatch` where the cluster serves Trinket and no TrinketPatch is a Patch (what a
    program's CustomObjectPatch of Trinket is typed): refused as `ConfigMapPatch` is, naming
    the object to import instead, nothing recorded. Where the cluster serves a kind named
    `SprocketPatch`, the token names that kind's objects, which import as any other."""
    for kind, plural in (("Trinket", "trinkets"), ("SprocketPatch", "sprocketpatches")):
        cluster.kubectl("apply", "-f", "-", input=json.dumps(_crd(kind, plural)))
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    for kind, name in (("Trinket", "t1"), ("SprocketPatch", "s1")):
        made = {
            "apiVersion": "imports.example.com/v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": p.ns},
            "spec": {"size": 1},
        }
        cluster.kubectl("create", "-f", "-", input=json.dumps(made))

    patch = "kubernetes:imports.example.com/v1:TrinketPatch"
    refused = p.sw("import", "--yes", patch, "t1", f"{p.ns}/t1", rc=2)
    assert refused.err.strip().endswith(
        f"type {patch!r} is a Patch, which has no object of its own to import: import the "
        "object as kubernetes:imports.example.com/v1:Trinket, or declare the Patch in the program"
    ), refused.err
    assert "Traceback" not in refused.err
    token = "kubernetes:imports.example.com/v1:SprocketPatch"
    p.sw("import", "--yes", token, "s1", f"{p.ns}/s1")
    urns = p.sw("stack", "export").out
    assert p.urn(token, "s1") in urns and "TrinketPatch" not in urns

    p.sw("state", "unprotect", "--yes", p.urn(token, "s1"))
    p.sw("destroy", "--yes")
    for plural in ("trinkets", "sprocketpatches"):
        crd = f"{plural}.imports.example.com"
        cluster.kubectl("delete", "crd", crd, "--wait=false", check=False)
