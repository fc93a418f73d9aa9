"""Drift: the fields Stackwright applied that the live object no longer holds, and who
changed them (engine/drift.py, pure)."""

from __future__ import annotations

import base64

from stackwright.engine.drift import drifted
from stackwright.engine.events import DriftedField


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_secrets_string_data_is_compared_with_its_data_and_names_who_changed_it() -> None:
    recorded = {"apiVersion": "v1", "kind": "Secret", "stringData": {"pw": "old", "user": "u"}}
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "managedFields": [
                {
                    "manager": "stackwright",
                    "fieldsV1": {"f:stringData": {"f:pw": {}, "f:user": {}}},
                },
                {"manager": "kubectl-patch", "fieldsV1": {"f:data": {"f:pw": {}}}},
            ]
        },
        "data": {"pw": _b64("new"), "user": _b64("u")},
    }
    assert drifted(recorded, live) == [DriftedField("stringData.pw", "old", "new", "kubectl-patch")]


def test_another_managers_field_is_named_and_ignored_paths_are_not_drift() -> None:
    recorded = {"kind": "ConfigMap", "data": {"a": "1", "b": "1"}}
    live = {
        "kind": "ConfigMap",
        "metadata": {
            "managedFields": [{"manager": "kubectl-edit", "fieldsV1": {"f:data": {"f:a": {}}}}]
        },
        "data": {"a": "2", "b": "1", "c": "added"},
    }
    assert drifted(recorded, live) == [DriftedField("data.a", "1", "2", "kubectl-edit")]
    assert drifted(recorded, live, ignore=("data.a",)) == []


def test_an_empty_map_applied_claims_none_of_the_keys_the_live_map_has() -> None:
    """`annotations: {}` in a program: the marks Stackwright adds and the Deployment
    controller's revision are live keys the program never set."""
    recorded = {"kind": "Deployment", "metadata": {"name": "web", "annotations": {}}}
    live = {
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "annotations": {
                "stackwright.io/urn": "urn:sw:dev::app::kubernetes:apps/v1:Deployment::web",
                "deployment.kubernetes.io/revision": "1",
            },
        },
    }
    assert drifted(recorded, live) == []
    assert drifted(recorded, {"kind": "Deployment", "metadata": {"name": "web"}}) == []

    # Not any empty map: a deny-all NetworkPolicy (`podSelector: {}`, every pod) that someone
    # narrowed to some pods is drift (a LabelSelector is owned as a whole).
    policy = {"kind": "NetworkPolicy", "spec": {"podSelector": {}}}
    narrowed = {"kind": "NetworkPolicy", "spec": {"podSelector": {"matchLabels": {"app": "x"}}}}
    assert drifted(policy, narrowed) == [
        DriftedField("spec.podSelector", {}, {"matchLabels": {"app": "x"}}, "")
    ]


def test_items_another_manager_adds_to_a_list_are_not_drift_wherever_they_go() -> None:
    """A sidecar container, an env var or a port another manager adds (a strategic merge
    patch puts it first) shifts the program's items: they are found by their keys."""
    container = {
        "name": "web",
        "image": "nginx:1.29",
        "env": [{"name": "A", "value": "1"}],
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "volumeMounts": [{"name": "page", "mountPath": "/html"}],
    }
    recorded = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [container]}}}}
    live_container = {
        **container,
        "env": [{"name": "INJECTED", "value": "x"}, {"name": "A", "value": "1"}],
        "ports": [
            {"containerPort": 53, "protocol": "TCP"},
            {"containerPort": 53, "protocol": "UDP"},
            {"containerPort": 80, "protocol": "TCP"},
        ],
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "page", "mountPath": "/html"},
        ],
    }
    sidecar = {"name": "sidecar", "image": "busybox:1.36"}
    live = {
        "kind": "Deployment",
        "spec": {"template": {"spec": {"containers": [sidecar, live_container]}}},
    }
    assert drifted(recorded, live) == []

    # A change to the program's own item is still drift, at the program's index.
    changed = {**live_container, "image": "nginx:1.30", "env": [{"name": "A", "value": "2"}]}
    live["spec"]["template"]["spec"]["containers"] = [sidecar, changed]
    assert drifted(recorded, live) == [
        DriftedField("spec.template.spec.containers[0].image", "nginx:1.29", "nginx:1.30"),
        DriftedField("spec.template.spec.containers[0].env[0].value", "1", "2"),
    ]
    # The program's container gone: one drifted item, not a field each.
    live["spec"]["template"]["spec"]["containers"] = [sidecar]
    assert drifted(recorded, live) == [
        DriftedField("spec.template.spec.containers[0]", container, None)
    ]


def test_quantities_the_server_writes_its_own_way_are_not_drift() -> None:
    """The API server keeps a quantity in canonical form (0.5 → 500m, 1024Mi → 1Gi)."""
    recorded = {
        "kind": "Pod",
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "limits": {"cpu": "0.5", "memory": "1024Mi"},
                        "requests": {"cpu": 0.1, "memory": "1e9", "ephemeral-storage": 2},
                    },
                }
            ],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1.5Gi"}}],
        },
    }
    live = {
        "kind": "Pod",
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "1Gi"},
                        "requests": {"cpu": "100m", "memory": "1G", "ephemeral-storage": "2"},
                    },
                }
            ],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1536Mi"}}],
        },
    }
    assert drifted(recorded, live) == []
    live["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "2"
    assert drifted(recorded, live) == [
        DriftedField("spec.containers[0].resources.limits.cpu", "0.5", "2")
    ]
    # Elsewhere a string is a string: "0.5" and "500m" in a ConfigMap differ.
    assert drifted({"kind": "ConfigMap", "data": {"limits": "0.5"}}, {"data": {"limits": "500m"}})
