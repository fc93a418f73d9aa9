"""`destroy --preview-only`, as Pulumi's: what the destroy would delete, and nothing changed
(no question, so no --yes outside a terminal); it was "No such option"."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def test_destroy_preview_only_shows_the_deletes_and_changes_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": ns.metadata["name"]},
                              data={"k": "v"})
        """
    )
    p.up()
    before = p.state()
    history = p.sw("stack", "history", "--json").out

    shown = p.sw("destroy", "--preview-only", "--json")

    summary = shown.events[-1]
    assert summary["event"] == "summary" and summary["dryRun"] is True
    assert summary["counts"] == {"delete": 2}
    assert {e["name"] for e in shown.events if e.get("op") == "delete"} == {"ns", "cm"}
    assert live(cluster, "configmap", "cm", p.ns)["data"] == {"k": "v"}
    assert p.state() == before and p.sw("stack", "history", "--json").out == history

    refused = p.sw("destroy", "--preview-only", "--remove", rc=2)
    assert refused.err == (
        "error: --preview-only changes nothing, and --remove would remove the stack: leave one "
        "out; nothing was changed\n"
    )
    p.sw("destroy", "--yes")
