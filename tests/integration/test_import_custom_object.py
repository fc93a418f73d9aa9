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
