"""What `stackwright import` declares of a live object: the fields its owners declared
(kubectl's last-applied annotation, else the server-side appliers' managedFields), or all
of it when only `Update` managers wrote it (their fields include the server's defaults)."""

from __future__ import annotations

import json
from typing import Any

from stackwright.automation.stack import declared_fields

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def deployment(**meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", **meta},
        "spec": {
            "replicas": 2,
            "revisionHistoryLimit": 10,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "side", "image": "envoy", "imagePullPolicy": "Always"},
                        {"name": "main", "image": "nginx", "imagePullPolicy": "IfNotPresent"},
                    ],
                    "dnsPolicy": "ClusterFirst",
                }
            },
        },
        "status": {"replicas": 2},
    }


MAIN_ONLY = {
    "spec": {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}},
    }
}


def applied(**declared: Any) -> str:
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", **declared})


def test_the_last_applied_annotation_is_what_was_declared() -> None:
    text = applied(metadata={"name": "web", "namespace": "shop"}, **MAIN_ONLY)
    got = declared_fields(deployment(annotations={LAST_APPLIED: text, "team": "a"}))
    assert got == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "annotations": {"team": "a"}},
        **MAIN_ONLY,  # the sidecar another manager added is found by name, and left out
    }


def test_an_annotation_that_does_not_parse_or_names_another_object_is_ignored() -> None:
    for text in (
        "{not json",
        '"a string"',
        applied(metadata={"name": "other"}, **MAIN_ONLY),
        applied(metadata={"name": "web", "namespace": "elsewhere"}, **MAIN_ONLY),
    ):
        live = deployment(annotations={LAST_APPLIED: text})
        assert declared_fields(live)["spec"] == live["spec"], text


def test_server_side_appliers_fields_are_declared_and_update_managers_fields_are_not() -> None:
    main = {"f:image": {}, "f:name": {}, ".": {}}
    managed = [
        {
            "manager": "argocd-controller",
            "operation": "Apply",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        },
        {
            "manager": "flux",
            "operation": "Apply",
            "fieldsV1": {
                "f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"main"}': main}}}}
            },
        },
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "fieldsV1": {"f:spec": {"f:revisionHistoryLimit": {}}},
        },
    ]
    got = declared_fields(deployment(managedFields=managed))
    assert got["spec"] == MAIN_ONLY["spec"]
    assert got["metadata"] == {"name": "web", "namespace": "shop"}


def test_only_update_managers_leave_the_whole_object() -> None:
    managed = [{"manager": "kubectl-create", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    live = deployment(managedFields=managed)
    assert declared_fields(live)["spec"] == live["spec"]


def test_a_set_item_is_found_by_its_value() -> None:
    live = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "shop"},
        "spec": {"finalizers": ["kubernetes", "example.com/keep"]},
    }
    fields = {"f:spec": {"f:finalizers": {'v:"example.com/keep"': {}}}}
    live["metadata"]["managedFields"] = [{"manager": "m", "operation": "Apply", "fieldsV1": fields}]
    assert declared_fields(live)["spec"] == {"finalizers": ["example.com/keep"]}


def test_a_list_item_two_owners_name_differently_keeps_both_owners_fields() -> None:
    """The last-applied annotation names a container by its place (`i:1`), Stackwright's
    own apply entry (a stack held the object) by its name (`k:{"name":"main"}`): both are
    the one container, and what each declared of it is declared. Only the first key was
    read: the pull policy Stackwright had applied was dropped."""
    text = applied(metadata={"name": "web", "namespace": "shop"}, **MAIN_ONLY)
    ours = {
        "f:spec": {
            "f:template": {
                "f:spec": {
                    "f:containers": {'k:{"name":"main"}': {".": {}, "f:imagePullPolicy": {}}}
                }
            }
        }
    }
    managed = [{"manager": "stackwright", "operation": "Apply", "fieldsV1": ours}]
    got = declared_fields(deployment(annotations={LAST_APPLIED: text}, managedFields=managed))
    assert got["spec"]["template"]["spec"]["containers"] == [
        {"name": "main", "image": "nginx", "imagePullPolicy": "IfNotPresent"}
    ]


def test_a_field_changed_by_kubectl_edit_after_the_last_apply_is_declared() -> None:
    """`kubectl edit` (or patch, set, scale) leaves the last-applied annotation as it was:
    the field it changed was left out of the printed program, though the live object holds
    it. Its Update entry names just that field; `kubectl create`'s (defaults and all) still
    declares nothing."""
    text = applied(metadata={"name": "web", "namespace": "shop"}, **MAIN_ONLY)
    edited = {"f:spec": {"f:revisionHistoryLimit": {}}}
    managed = [
        {"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsV1": {"f:spec": {}}},
        {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": edited},
    ]
    got = declared_fields(deployment(annotations={LAST_APPLIED: text}, managedFields=managed))
    assert got["spec"] == {**MAIN_ONLY["spec"], "revisionHistoryLimit": 10}
    # Applied server-side, then scaled by hand: the same.
    applies = [
        {"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {"f:template": {}}}},
        {
            "manager": "kubectl-scale",
            "operation": "Update",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        },
    ]
    got = declared_fields(deployment(managedFields=applies))
    assert set(got["spec"]) == {"template", "replicas"}
