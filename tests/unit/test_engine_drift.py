"""Drift: the fields Stackwright applied that the live object no longer holds, and who
changed them (engine/drift.py, pure)."""

from __future__ import annotations

import base64
import json

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


def test_an_empty_map_deeper_claims_none_of_the_keys_its_managers_name_one_by_one() -> None:
    """A pod template's `annotations: {}` (or a ConfigMap's `data: {}`) that another manager
    filled since (`kubectl rollout restart`'s restartedAt) is not drift: that manager names
    the key, so the map is merged key by key. An atomic map whose managers own it whole (a
    `podSelector` narrowed by `kubectl patch`) still is, and names who changed it."""
    at = {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}
    recorded = {"kind": "Deployment", "spec": {"template": {"metadata": {"annotations": {}}}}}
    restart = {
        "f:spec": {"f:template": {"f:metadata": {"f:annotations": {f"f:{k}": {} for k in at}}}}
    }
    live = {
        "kind": "Deployment",
        "metadata": {"managedFields": [{"manager": "kubectl-rollout", "fieldsV1": restart}]},
        "spec": {"template": {"metadata": {"annotations": at}}},
    }
    assert drifted(recorded, live) == []
    filled = {
        "kind": "ConfigMap",
        "metadata": {"managedFields": [{"manager": "filler", "fieldsV1": {"f:data": {"f:a": {}}}}]},
        "data": {"a": "1"},
    }
    assert drifted({"kind": "ConfigMap", "data": {}}, filled) == []
    # No manager names its keys: the map's value is one, and what it holds now is drift.
    del live["metadata"]["managedFields"]
    assert drifted(recorded, live) == [
        DriftedField("spec.template.metadata.annotations", {}, at, "")
    ]
    patched = {"f:spec": {"f:podSelector": {}}}
    narrowed = {
        "kind": "NetworkPolicy",
        "metadata": {"managedFields": [{"manager": "kubectl-patch", "fieldsV1": patched}]},
        "spec": {"podSelector": {"matchLabels": {"app": "x"}}},
    }
    assert drifted({"kind": "NetworkPolicy", "spec": {"podSelector": {}}}, narrowed) == [
        DriftedField("spec.podSelector", {}, {"matchLabels": {"app": "x"}}, "kubectl-patch")
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


def _keyed(**keys: object) -> str:
    return "k:" + json.dumps(keys, separators=(",", ":"))


def test_the_manager_named_for_a_field_in_a_list_owns_that_item_not_another() -> None:
    """managedFields as the API server wrote them after `kubectl patch` added a sidecar
    (first in the list) and `kubectl patch --field-manager env-editor` changed MODE: the
    sidecar's owner owns part of `containers`, not the app's env."""
    recorded = {
        "kind": "Deployment",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "env": [
                                {"name": "MODE", "value": "a"},
                                {"name": "LEVEL", "value": "1"},
                            ],
                            "ports": [{"containerPort": 80}],
                        }
                    ]
                }
            }
        },
    }
    app = {
        "name": "app",
        "env": [{"name": "MODE", "value": "z"}, {"name": "LEVEL", "value": "2"}],
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
    }
    ours = {
        _keyed(name="app"): {
            ".": {},
            "f:name": {},
            "f:env": {
                _keyed(name="MODE"): {".": {}, "f:name": {}},
                _keyed(name="LEVEL"): {".": {}, "f:name": {}},
            },
            "f:ports": {_keyed(containerPort=80, protocol="TCP"): {".": {}, "f:containerPort": {}}},
        }
    }
    sidecar = {_keyed(name="sidecar"): {".": {}, "f:image": {}, "f:name": {}, "f:env": {}}}
    env_editor = {_keyed(name="app"): {"f:env": {_keyed(name="MODE"): {"f:value": {}}}}}
    by_position = {"i:1": {"f:env": {"i:1": {"f:value": {}}}}}

    def containers(fields: dict[str, object]) -> dict[str, object]:
        return {"f:spec": {"f:template": {"f:spec": {"f:containers": fields}}}}

    live = {
        "kind": "Deployment",
        "metadata": {
            "managedFields": [
                {"manager": "stackwright", "fieldsV1": containers(ours)},
                {"manager": "kubectl-patch", "fieldsV1": containers(sidecar)},
                {"manager": "kube-controller-manager", "fieldsV1": {}},
                {"manager": "env-editor", "fieldsV1": containers(env_editor)},
                {"manager": "by-position", "fieldsV1": containers(by_position)},
            ]
        },
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar"}, app]}}},
    }
    assert drifted(recorded, live) == [
        DriftedField("spec.template.spec.containers[0].env[0].value", "a", "z", "env-editor"),
        DriftedField("spec.template.spec.containers[0].env[1].value", "1", "2", "by-position"),
    ]
    # Nobody's entry covers a port renumbered by hand: no name rather than a wrong one.
    app["ports"] = [{"containerPort": 80, "protocol": "TCP", "name": "http"}]
    app["env"] = recorded["spec"]["template"]["spec"]["containers"][0]["env"]  # type: ignore[index]
    recorded["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] = "web"  # type: ignore[index]
    assert [f.manager for f in drifted(recorded, live)] == [""]


def test_a_manager_that_set_an_atomic_list_whole_is_named_for_a_field_in_it() -> None:
    """Tolerations are an atomic list: fieldsV1 holds `f:tolerations: {}`, no items."""
    recorded = {"kind": "Pod", "spec": {"tolerations": [{"key": "a", "effect": "NoSchedule"}]}}
    live = {
        "kind": "Pod",
        "metadata": {
            "managedFields": [
                {"manager": "stackwright", "fieldsV1": {"f:spec": {"f:tolerations": {}}}},
                {"manager": "kubectl-edit", "fieldsV1": {"f:spec": {"f:tolerations": {}}}},
            ]
        },
        "spec": {"tolerations": [{"key": "a", "effect": "NoExecute"}]},
    }
    assert drifted(recorded, live) == [
        DriftedField("spec.tolerations[0].effect", "NoSchedule", "NoExecute", "kubectl-edit")
    ]


def test_an_empty_list_the_server_returns_as_null_is_no_drift() -> None:
    """A Role's `rules: []` comes back `rules: null` (its field has no omitempty, protobuf
    storage no empty list); `env: []` comes back absent. Neither is a change; rules is."""
    recorded = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": []}
    assert drifted(recorded, {**recorded, "rules": None}) == []
    assert drifted(recorded, {k: v for k, v in recorded.items() if k != "rules"}) == []
    rule = [{"verbs": ["get"]}]
    assert [d.path for d in drifted(recorded, {**recorded, "rules": rule})] == ["rules"]


def test_an_atomic_value_another_manager_set_whole_with_more_in_it_drifted() -> None:
    """A Service's selector is one value: `kubectl patch` adding a key to it selects other
    pods (none), though the program's key is still there; a Role's rules grown by a rule
    likewise. Not a map merged key by key (a ConfigMap's data: a key others add is theirs),
    nor an atomic value the program's apply still holds whole (keys the server defaulted)."""
    selector = {"app": "web"}
    recorded = {"kind": "Service", "spec": {"selector": selector}}
    grown = {"app": "web", "tier": "none"}
    patched = {
        "kind": "Service",
        "metadata": {
            "managedFields": [
                {"manager": "stackwright", "fieldsV1": {"f:spec": {"f:ports": {}}}},
                {"manager": "kubectl-patch", "fieldsV1": {"f:spec": {"f:selector": {}}}},
            ]
        },
        "spec": {"selector": grown},
    }
    assert drifted(recorded, patched) == [
        DriftedField("spec.selector", selector, grown, "kubectl-patch")
    ]
    assert drifted(recorded, patched, ignore=("spec.selector",)) == []
    ours = [{"manager": "stackwright", "fieldsV1": {"f:spec": {"f:selector": {}}}}]
    assert drifted(recorded, {**patched, "metadata": {"managedFields": ours}}) == []

    role = {"kind": "Role", "rules": [{"verbs": ["get"]}]}
    edited = [{"manager": "kubectl-edit", "fieldsV1": {"f:rules": {}}}]
    more = {
        **role,
        "metadata": {"managedFields": edited},
        "rules": [*role["rules"], {"verbs": ["delete"]}],
    }
    assert [(d.path, d.manager) for d in drifted(role, more)] == [("rules", "kubectl-edit")]

    config = {"kind": "ConfigMap", "data": {"a": "1"}}
    keyed = [
        {"manager": "stackwright", "fieldsV1": {"f:data": {"f:a": {}}}},
        {"manager": "x", "fieldsV1": {"f:data": {"f:b": {}}}},
    ]
    added = {**config, "metadata": {"managedFields": keyed}, "data": {"a": "1", "b": "2"}}
    assert drifted(config, added) == []
