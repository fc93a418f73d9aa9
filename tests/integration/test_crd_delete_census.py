"""Deleting a CustomResourceDefinition deletes every object of its kind in the cluster,
other stacks', other tools' and people's too: a run that deletes one says, on the CRD's
step, how many objects of its kind exist and how many are not this stack's — in
`preview`, and in `up --yes` / `destroy --yes` before the delete. It never blocks."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_crd_dropped import CRD, GIZMO, NAMESPACE

pytestmark = pytest.mark.integration

LiveCluster = Any

NAME = "gizmos.dropped.example.com"


def _hand_made(cluster: LiveCluster, name: str, namespace: str) -> None:
    cluster.kubectl(
        "apply",
        "-f",
        "-",
        input=(
            "apiVersion: dropped.example.com/v1\nkind: Gizmo\n"
            f"metadata: {{name: {name}, namespace: {namespace}}}\nspec: {{size: 2}}\n"
        ),
    )


def _census(result: Any) -> list[dict[str, Any]]:
    return [e for e in result.of("diagnostic") if f"deleting CRD {NAME}" in e["message"]]


def test_deleting_a_crd_says_how_many_objects_of_its_kind_go_with_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    other = f"{p.ns}-other"
    cluster.kubectl("create", "namespace", other)
    p.program(NAMESPACE + "RETAIN = False\n" + CRD + GIZMO)
    up = p.up()
    assert not _census(up)  # creating a CRD lists nothing
    # Two objects of its kind made outside the stack, by kubectl.
    _hand_made(cluster, "hand1", p.ns)
    _hand_made(cluster, "hand2", other)
    expected = (
        f"deleting CRD {NAME} deletes every Gizmo in the cluster: 3 objects in 2 namespaces, "
        f"2 of them not this stack's ({p.ns}/hand1, {other}/hand2)"
    )

    # The CRD and its object dropped from the program: the preview warns on the CRD's step.
    p.program(NAMESPACE)
    preview = p.preview()
    assert preview.changed() == {"gizmos": "delete", "g1": "delete"}
    (warning,) = _census(preview)
    assert warning["message"] == expected and warning["severity"] == "warning"
    assert warning["urn"] == p.urn(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "gizmos"
    )
    assert live(cluster, NAME, "hand1", p.ns)  # a preview changes nothing

    # `up --yes` says it too, before it deletes anything, in the terminal's words (once);
    # it does not block.
    done = p.sw("up", "--yes")
    text = " ".join(done.out.split())
    assert text.count("deleting CRD") == 1 and f"warning: gizmos: {expected}" in text, done.out
    assert text.index("deleting CRD") < text.index("- delete"), done.out
    assert cluster.kubectl("get", "crd", NAME, check=False).returncode != 0

    # `destroy --yes` likewise, with --json a diagnostic event before the CRD's delete.
    p.program(NAMESPACE + "RETAIN = False\n" + CRD + GIZMO)
    p.up()
    _hand_made(cluster, "hand1", p.ns)  # the CRD's delete took them: made anew
    _hand_made(cluster, "hand2", other)
    destroy = p.sw("destroy", "--yes", "--json")
    (warning,) = _census(destroy)
    assert warning["message"] == expected, warning
    assert destroy.events.index(warning) < destroy.index("step-started", "g1")
    cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)


def test_a_kind_that_cannot_be_listed_makes_the_count_unknown_not_the_run_fail(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(NAMESPACE + "RETAIN = False\n" + CRD)
    p.up()
    cluster.kubectl("delete", "crd", NAME)  # its kind is no longer served
    destroy = p.sw("destroy", "--yes", "--json")
    (warning,) = _census(destroy)
    assert warning["severity"] == "warning"
    assert (
        "deletes every Gizmo in the cluster; how many exist is unknown: listing them failed"
        in (warning["message"])
    )
    assert destroy.summary["ok"] and destroy.summary["counts"]["delete"] == 2


def test_replacing_a_crd_says_so_too(new_project: Any, cluster: LiveCluster) -> None:
    """A CRD renamed (another group) is replaced: the old one's delete takes its kind's
    objects with it, which the preview and the `up --yes` say on the CRD's step."""
    p = new_project()
    p.program(NAMESPACE + "RETAIN = False\n" + CRD)
    p.up()
    _hand_made(cluster, "hand1", p.ns)
    p.program(
        NAMESPACE + "RETAIN = False\n" + CRD.replace("dropped.example.com", "moved.example.com")
    )
    expected = (
        f"deleting CRD {NAME} deletes every Gizmo in the cluster: 1 object in 1 namespace, "
        f"1 of them not this stack's ({p.ns}/hand1)"
    )
    preview = p.preview()
    assert preview.changed() == {"gizmos": "replace"}
    assert [w["message"] for w in _census(preview)] == [expected]
    up = p.up()
    assert [w["message"] for w in _census(up)] == [expected]
    assert cluster.kubectl("get", "crd", NAME, check=False).returncode != 0
    p.sw("destroy", "--yes")
