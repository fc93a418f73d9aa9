"""Edge cases of adopting objects (`stackwright import` and the `import_` option): what the
printed code declares of an object that reads back with null fields, or whose creator left
no managedFields entry; what an import id names (a custom kind's scope, a bare name); the
name an imported resource keeps when it is replaced. One cluster for the module."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture
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
