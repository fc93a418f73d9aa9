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
    text = applied(
        metadata={"name": "web", "namespace": "shop", "labels": {"app": "web"}}, **MAIN_ONLY
    )
    live = deployment(annotations={LAST_APPLIED: text}, labels={"app": "web"})
    assert declared_fields(live) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        **MAIN_ONLY,  # the sidecar another manager added is found by name, and left out
    }


def annotated(by: str, operation: str, **keys: str) -> list[dict[str, Any]]:
    """A managedFields entry of `by` naming `keys` of the annotations."""
    fields = {"f:metadata": {"f:annotations": {f"f:{k}": {} for k in keys}}}
    return [{"manager": by, "operation": operation, "fieldsV1": fields}]


def test_only_the_owners_label_and_annotation_keys_are_declared() -> None:
    """A key the owners did not declare is a controller's (the Deployment controller's
    revision, another manager's Update): declared, `up` would take it over and write a
    stale value back. `kubectl annotate` / `label` are hand edits: kept. kubectl's own
    last-applied annotation never is."""
    text = applied(
        metadata={"name": "web", "namespace": "shop", "labels": {"app": "web"}, "annotations": {}},
        **MAIN_ONLY,
    )
    labels = {"app": "web", "example.com/zone": "a", "owner": "ops"}
    annotations = {LAST_APPLIED: text, "team": "a", "example.com/scanned": "yes"}
    managed = [
        *annotated("kubectl-annotate", "Update", team=""),
        *annotated("policy-agent", "Update", **{"example.com/scanned": ""}),
        {
            "manager": "kubectl-label",
            "operation": "Update",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:owner": {}}}},
        },
        {
            "manager": "policy-agent",
            "operation": "Update",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:example.com/zone": {}}}},
        },
    ]
    live = deployment(annotations=annotations, labels=labels, managedFields=managed)
    got = declared_fields(live)["metadata"]
    assert got["labels"] == {"app": "web", "owner": "ops"}
    assert got["annotations"] == {"team": "a"}
    # Applied server-side: the Apply entries name the keys.
    applies = [
        *annotated("kubectl", "Apply", team=""),
        *annotated(
            "kube-controller-manager", "Update", **{"deployment.kubernetes.io/revision": ""}
        ),
    ]
    revision = {"team": "a", "deployment.kubernetes.io/revision": "3", "other": "b"}
    got = declared_fields(deployment(annotations=revision, managedFields=applies))["metadata"]
    assert got == {"name": "web", "namespace": "shop", "annotations": {"team": "a"}}


def test_with_no_owner_information_every_key_but_the_tools_is_declared() -> None:
    """No managedFields at all: nothing tells one manager's key from another's; every key is
    kept, but kubectl's and the Deployment controller's."""
    keys = {"team": "a", LAST_APPLIED: "{not json", "deployment.kubernetes.io/revision": "1"}
    got = declared_fields(deployment(annotations=keys))["metadata"]
    assert got["annotations"] == {"team": "a"}


def update(manager: str, time: str, **fields: Any) -> dict[str, Any]:
    return {"manager": manager, "operation": "Update", "time": time, "fieldsV1": fields}


def keys(which: str, *names: str) -> dict[str, Any]:
    return {"f:metadata": {f"f:{which}": {f"f:{n}": {} for n in names}}}


def test_only_update_managers_the_creators_and_hand_edits_keys_are_declared() -> None:
    """`kubectl create` (or Helm 3) wrote the object, others labelled it since: its keys
    and a `kubectl label`'s are declared, not a policy agent's or a controller's, which
    `up` would take over. The creator is the one that wrote its spec."""
    labels = {"tier": "web", "owner": "ops", "example.com/zone": "a"}
    annotations = {"note": "mine", "example.com/scanned": "yes"}
    created = {
        "f:metadata": {
            "f:labels": {"f:tier": {}},
            "f:annotations": {"f:note": {}},
        },
        "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:dnsPolicy": {}}}},
    }
    managed = [
        update("policy-agent", "2026-01-01T00:00:00Z", **keys("labels", "example.com/zone")),
        update("kubectl-create", "2026-01-01T00:00:05Z", **created),
        update("kube-controller-manager", "2026-01-01T00:00:06Z", **keys("annotations", "x")),
        update(
            "policy-agent", "2026-01-01T00:00:07Z", **keys("annotations", "example.com/scanned")
        ),
        update("kubectl-label", "2026-01-01T00:00:08Z", **keys("labels", "owner")),
    ]
    live = deployment(labels=labels, annotations=annotations, managedFields=managed)
    got = declared_fields(live)
    assert got["metadata"] == {
        "name": "web",
        "namespace": "shop",
        "labels": {"tier": "web", "owner": "ops"},
        "annotations": {"note": "mine"},
    }
    assert got["spec"] == live["spec"]  # the whole object, defaults included, as before


def test_with_no_spec_written_the_earliest_update_manager_is_the_creator() -> None:
    managed = [
        update("helm", "2026-01-01T00:00:01Z", **keys("labels", "app")),
        update("policy-agent", "2026-01-01T00:00:02Z", **keys("labels", "zone")),
    ]
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app": "a", "zone": "z"}, "managedFields": managed},
    }
    assert declared_fields(live)["metadata"] == {"name": "c", "labels": {"app": "a"}}


def test_in_the_creators_second_the_entry_that_names_more_of_it_is_the_creator() -> None:
    """A manager that labels a new object within its creation's second ties with the creator
    on spec and time (the API server keeps seconds), and the server lists it first when its
    name sorts first (managedFields go by operation, time, manager): its key was declared
    and the creator's dropped. The creator's entry names its keys and the map itself (`.`)."""
    created = {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    managed = [
        update("aaa-labeller", "2026-01-01T00:00:01Z", **keys("labels", "zone")),
        update("kubectl-create", "2026-01-01T00:00:01Z", **created),
    ]
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app": "a", "zone": "z"}, "managedFields": managed},
    }
    assert declared_fields(live)["metadata"] == {"name": "c", "labels": {"app": "a"}}


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


def entry(manager: str, operation: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "fieldsV1": fields}


def in_template(**fields: Any) -> dict[str, Any]:
    """A fieldsV1 trie naming `fields` of the pod template's metadata."""
    return {"f:spec": {"f:template": {"f:metadata": fields}}}


RESTARTED = {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}


def test_an_empty_map_declared_deeper_is_the_map_not_its_live_keys() -> None:
    """A pod template's `annotations: {}` (fieldsV1 `f:annotations: {}`) declares the map,
    not the keys others wrote into it since: `kubectl rollout restart`'s restartedAt, which
    `up` would take over and write back stale. Their managers name them key by key, which
    tells a map server-side apply merges key by key from an atomic one (whole, below)."""
    live = deployment()
    live["spec"]["template"]["metadata"] = {"labels": {"app": "web"}, "annotations": RESTARTED}
    restart = {"f:kubectl.kubernetes.io/restartedAt": {}}
    live["metadata"]["managedFields"] = [
        entry("kubectl", "Apply", in_template(**{"f:annotations": {}, "f:labels": {"f:app": {}}})),
        entry("kubectl-rollout", "Update", in_template(**{"f:annotations": restart})),
    ]
    template = {"metadata": {"annotations": {}, "labels": {"app": "web"}}}
    assert declared_fields(live)["spec"] == {"template": template}

    # The last-applied annotation's `annotations: {}` (client-side apply) is the same.
    text = applied(metadata={"name": "web", "namespace": "shop"}, spec={"template": template})
    live["metadata"]["annotations"] = {LAST_APPLIED: text}
    assert declared_fields(live)["spec"] == {"template": template}

    # A ConfigMap's `data: {}` a controller fills.
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "filled",
            "managedFields": [
                entry("kubectl", "Apply", {"f:data": {}}),
                entry("filler", "Update", {"f:data": {"f:generated": {}}}),
            ],
        },
        "data": {"generated": "yes"},
    }
    assert declared_fields(configmap)["data"] == {}


def test_an_atomic_map_a_list_and_a_value_whose_node_is_empty_are_declared_whole() -> None:
    """An empty node is a whole value where no manager names keys in it: an atomic map (a
    Service's selector, a pod's nodeSelector, however many managers share it), an atomic
    list (a container's command), a value (its image)."""
    selector = {"app": "web", "tier": "front"}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "web",
            "managedFields": [
                entry("kubectl", "Apply", {"f:spec": {"f:selector": {}}}),
                entry("other", "Update", {"f:spec": {"f:selector": {}, "f:clusterIP": {}}}),
            ],
        },
        "spec": {"selector": selector, "clusterIP": "10.0.0.7"},
    }
    assert declared_fields(service)["spec"] == {"selector": selector}

    live = deployment()
    pod = live["spec"]["template"]["spec"]
    pod["nodeSelector"] = {"disk": "ssd"}
    pod["containers"][1]["command"] = ["nginx", "-g", "daemon off;"]
    main = {".": {}, "f:name": {}, "f:image": {}, "f:command": {}}
    applied_fields = {
        "f:spec": {
            "f:template": {
                "f:spec": {"f:nodeSelector": {}, "f:containers": {'k:{"name":"main"}': main}}
            }
        }
    }
    live["metadata"]["managedFields"] = [entry("kubectl", "Apply", applied_fields)]
    container = {"name": "main", "image": "nginx", "command": ["nginx", "-g", "daemon off;"]}
    assert declared_fields(live)["spec"]["template"]["spec"] == {
        "nodeSelector": {"disk": "ssd"},
        "containers": [container],
    }


def test_a_field_that_reads_back_null_is_not_declared() -> None:
    """A null is the API server's "no value" (a Role's `rules`, a pod template's
    `creationTimestamp`): the printed code would say `rules=None`, declaring nothing."""
    live = deployment()
    live["spec"]["template"]["metadata"] = {"creationTimestamp": None, "labels": {"app": "web"}}
    live["spec"]["paused"] = None
    got = declared_fields(live)
    assert got["spec"]["template"]["metadata"] == {"labels": {"app": "web"}}
    assert "paused" not in got["spec"]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": None}
    assert declared_fields({**role, "metadata": {"name": "r"}}) == {
        **{k: v for k, v in role.items() if k != "rules"},
        "metadata": {"name": "r"},
    }


def test_without_its_creators_entry_the_keys_no_entry_names_are_declared() -> None:
    """An object whose creator left no managedFields entry (its entries rewritten, or its
    creator's fields all taken over) took the next Update manager as its creator: a policy
    agent's label was declared as if it had made the object, and the labels it was made
    with were dropped. Its creator is unknown: the keys no entry names are its."""
    managed = [
        update("policy-agent", "2026-01-01T00:00:07Z", **keys("labels", "example.com/zone")),
        update("kubectl-label", "2026-01-01T00:00:08Z", **keys("labels", "owner")),
    ]
    labels = {"tier": "web", "owner": "ops", "example.com/zone": "a"}
    live = deployment(labels=labels, managedFields=managed)
    got = declared_fields(live)
    assert got["metadata"]["labels"] == {"tier": "web", "owner": "ops"}
    assert got["spec"] == live["spec"]
    # An object with nothing but metadata: the same.
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app": "a", "zone": "z"}, "managedFields": managed},
    }
    managed[:] = [update("policy-agent", "2026-01-01T00:00:02Z", **keys("labels", "zone"))]
    assert declared_fields(config)["metadata"] == {"name": "c", "labels": {"app": "a"}}


def test_a_manager_that_wrote_only_metadata_is_not_the_creator_of_an_object_with_a_spec() -> None:
    """No entry names the spec: its writer, the creator, left none; a manager that labelled
    the object is not it, though every label key has an owner."""
    managed = [update("policy-agent", "2026-01-01T00:00:07Z", **keys("labels", "zone"))]
    live = deployment(labels={"zone": "a"}, managedFields=managed)
    assert "labels" not in declared_fields(live)["metadata"]
