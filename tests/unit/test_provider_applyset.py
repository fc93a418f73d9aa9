"""ApplySet ids, parents and member marks (KEP-3659), and DESIGN's managed labels."""

from __future__ import annotations

from typing import Any

import pytest

from stackwright.providers.kubernetes.applyset import (
    ADDITIONAL_NAMESPACES,
    CONTAINS_GROUP_KINDS,
    ID_LABEL,
    PART_OF,
    STACK_ANNOTATION,
    TOOLING,
    TOOLING_VALUE,
    ApplySet,
    applyset_id,
    check_parent,
    group_kind,
    leave_set,
    managed_labels,
    parent_name,
    stamp,
)
from stackwright.providers.kubernetes.errors import InvalidObject, PermanentError


def test_id_matches_kubectls_worked_example_for_a_secret_parent() -> None:
    # kubectl's apply_test.go: Secret "my-set" in namespace "test".
    assert (
        applyset_id("my-set", "test", "Secret", "")
        == "applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1"
    )


def test_id_matches_kubectls_worked_example_for_a_cluster_scoped_custom_parent() -> None:
    # kubectl's apply_test.go: ApplySet.company.com "my-set", cluster-scoped.
    assert (
        applyset_id("my-set", "", "ApplySet", "company.com")
        == "applyset-rhp1a-HVAVT_dFgyEygyA1BEB82HPp2o10UiFTpqtAs-v1"
    )


def test_id_is_a_valid_label_value() -> None:
    value = ApplySet("a-very-long-stack-name-" * 5, "some-namespace").id
    assert len(value) <= 63
    assert value[0].isalnum() and value[-1].isalnum()
    assert "=" not in value and "+" not in value and "/" not in value


def test_group_kind_spelling() -> None:
    assert group_kind("v1", "ConfigMap") == "ConfigMap"
    assert group_kind("apps/v1", "Deployment") == "Deployment.apps"
    assert group_kind("cert-manager.io/v1", "Certificate") == "Certificate.cert-manager.io"


def test_parent_configmap_carries_id_tooling_and_sorted_group_kinds() -> None:
    applyset = ApplySet("dev", "web")
    parent = applyset.parent(
        ["Service", "Deployment.apps", "ConfigMap", "Service"], ["web", "jobs", "api"]
    )
    assert parent["apiVersion"] == "v1" and parent["kind"] == "ConfigMap"
    meta = parent["metadata"]
    assert (meta["name"], meta["namespace"]) == ("stackwright-applyset-dev", "web")
    assert meta["labels"][ID_LABEL] == applyset_id(
        "stackwright-applyset-dev", "web", "ConfigMap", ""
    )
    assert meta["annotations"][TOOLING] == TOOLING_VALUE
    assert TOOLING_VALUE.startswith("stackwright/v")
    assert meta["annotations"][CONTAINS_GROUP_KINDS] == "ConfigMap,Deployment.apps,Service"
    assert meta["annotations"][ADDITIONAL_NAMESPACES] == "api,jobs"
    assert applyset.member_labels() == {PART_OF: applyset.id}
    assert applyset.selector() == f"{PART_OF}={applyset.id}"


def test_parent_names_are_valid_and_distinct() -> None:
    assert parent_name("dev") == "stackwright-applyset-dev"
    odd = parent_name("Team_A/prod")
    assert odd.startswith("stackwright-applyset-team-a-prod-") and odd == odd.lower()
    assert parent_name("team-a-prod") != odd
    assert len(parent_name("x" * 400)) <= 253


def test_managed_labels_follow_design() -> None:
    marks = managed_labels("dev", "urn:sw:dev::web::kubernetes:v1:ConfigMap::settings")
    assert marks.labels == {"app.kubernetes.io/managed-by": "stackwright"}
    assert marks.annotations == {
        "stackwright.io/stack": "dev",
        "stackwright.io/urn": "urn:sw:dev::web::kubernetes:v1:ConfigMap::settings",
    }
    labels, annotations = marks  # a tuple too
    assert (labels, annotations) == (marks.labels, marks.annotations)


def test_stamp_adds_marks_without_touching_the_input() -> None:
    desired: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "labels": {"app": "web"}, "annotations": {"note": "x"}},
        "data": {"a": "1"},
    }
    applyset = ApplySet("dev", "default")
    stamped = stamp(
        desired,
        stack="dev",
        urn="urn:sw:dev::web::kubernetes:v1:ConfigMap::settings",
        applyset=applyset,
    )
    assert stamped["metadata"]["labels"] == {
        "app": "web",
        PART_OF: applyset.id,
        "app.kubernetes.io/managed-by": "stackwright",
    }
    assert stamped["metadata"]["annotations"]["note"] == "x"
    assert stamped["metadata"]["annotations"]["stackwright.io/stack"] == "dev"
    assert desired["metadata"]["labels"] == {"app": "web"}
    assert stamped["data"] is desired["data"]


def test_stamp_refuses_a_manifest_that_claims_another_applyset() -> None:
    desired = {"metadata": {"name": "settings", "labels": {PART_OF: "applyset-other-v1"}}}
    with pytest.raises(InvalidObject, match="puts it in another ApplySet; remove that label"):
        stamp(desired, stack="dev", urn="u", applyset=ApplySet("dev", "default"))


def test_check_parent_refuses_other_tools_and_forged_ids() -> None:
    applyset = ApplySet("dev", "default")
    mine = applyset.parent(["ConfigMap"])
    check_parent(mine, applyset)
    kubectl_owned = {
        "metadata": {"annotations": {TOOLING: "kubectl/v1.30"}, "labels": {ID_LABEL: applyset.id}}
    }
    with pytest.raises(
        PermanentError, match=r"managed by kubectl/v1\.30; Stackwright will not change it"
    ):
        check_parent(kubectl_owned, applyset)
    forged = {
        "metadata": {"annotations": {TOOLING: TOOLING_VALUE}, "labels": {ID_LABEL: "applyset-x-v1"}}
    }
    with pytest.raises(PermanentError, match="but its identity gives"):
        check_parent(forged, applyset)


def test_check_parent_refuses_a_users_configmap_of_the_parents_name() -> None:
    """A ConfigMap with no id label is not a parent Stackwright made (it writes the label
    with the parent, in one apply): it is in the way, and the message says how to clear it."""
    applyset = ApplySet("dev", "web", "shop")
    users = {"metadata": {"name": applyset.name, "labels": {"team": "a"}}, "data": {"k": "v"}}
    with pytest.raises(PermanentError) as refused:
        check_parent(users, applyset)
    assert str(refused.value) == (
        "ConfigMap web/stackwright-applyset-shop.dev is in the way: stack dev keeps its "
        f"ApplySet parent under that name, and this ConfigMap (no {ID_LABEL} label) is not "
        "one; Stackwright will not change it: rename or delete it, then run the command again"
    )
    # One of Stackwright's whose label someone removed: recreate it.
    unlabelled = {"metadata": {"annotations": {TOOLING: TOOLING_VALUE}, "labels": {}}}
    with pytest.raises(PermanentError, match=r"has lost its .* label .* delete the ConfigMap"):
        check_parent(unlabelled, applyset)
    check_parent(applyset.parent(["ConfigMap"]), applyset)  # its own parent passes


def test_a_parent_is_removed_only_with_all_its_marks() -> None:
    """Deleting is not undone by the next apply: a parent whose id label is right but whose
    tooling or stack annotation is not as Stackwright writes it is left alone."""
    applyset = ApplySet("dev", "web", "shop")
    mine = applyset.parent(["ConfigMap"])
    check_parent(mine, applyset, removing=True)
    annotations = mine["metadata"]["annotations"]
    untooled = {"metadata": {**mine["metadata"], "annotations": {**annotations, TOOLING: ""}}}
    check_parent(untooled, applyset)  # its id label is proof enough to update it
    with pytest.raises(PermanentError, match=f"its {TOOLING} is '', expected 'stackwright'"):
        check_parent(untooled, applyset, removing=True)
    other = {
        "metadata": {**mine["metadata"], "annotations": {**annotations, STACK_ANNOTATION: "x"}}
    }
    with pytest.raises(
        PermanentError,
        match=r"^ConfigMap web/stackwright-applyset-shop\.dev is not the ApplySet parent of "
        rf"stack dev \(its {STACK_ANNOTATION} is 'x', expected 'dev'\); Stackwright leaves it alone$",
    ):
        check_parent(other, applyset, removing=True)


def test_two_projects_with_the_same_stack_name_keep_separate_parents() -> None:
    web = ApplySet("dev", "shared", "web")
    api = ApplySet("dev", "shared", "api")
    assert (web.name, api.name) == ("stackwright-applyset-web.dev", "stackwright-applyset-api.dev")
    assert web.id != api.id
    assert web.parent([])["metadata"]["annotations"][STACK_ANNOTATION] == "dev"


def test_a_parent_shared_by_dotted_names_is_refused() -> None:
    """Project `a.b` / stack `c` and project `a` / stack `b.c` name the same parent (and
    id); the second to come may not take the first's set, or each stack's objects would
    be members of the other's."""
    first, second = ApplySet("c", "shared", "a.b"), ApplySet("b.c", "shared", "a")
    assert (first.name, first.id) == (second.name, second.id)
    with pytest.raises(
        PermanentError,
        match=r"^ConfigMap shared/stackwright-applyset-a\.b\.c is the ApplySet parent of stack c "
        r"of another project .* project a and stack b\.c\); Stackwright will not share it",
    ):
        check_parent(first.parent(["ConfigMap"]), second)
    check_parent(second.parent(["ConfigMap"]), second)


def test_leaving_the_set_names_the_kind_with_its_group() -> None:
    # Two CRDs may both call their kind Gadget: `kubectl label gadget ...` could pick the
    # other one.
    gadget = {"apiVersion": "gone.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    assert leave_set(gadget, "team") == (
        f"kubectl label gadget.gone.example.com g -n team {PART_OF}-"
    )
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}}
    assert leave_set(config, "team") == f"kubectl label configmap m -n team {PART_OF}-"
