"""Server-side apply and managed fields, checked against what kube-apiserver 1.33 answers."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster import status
from stackwright.localcluster.apply import (
    LAST_APPLIED_ANNOTATION,
    default_manager,
    drop_empty_fields,
    field_set,
    from_fields_v1,
    path_string,
    server_side_apply,
    to_fields_v1,
    track_update,
    validate_field_manager,
)
from stackwright.localcluster.schema import builtin_schemas, resolve_inline

SCHEMAS = builtin_schemas()
CONFIGMAP = SCHEMAS.root("", "v1", "ConfigMap")
DEPLOYMENT = SCHEMAS.root("apps", "v1", "Deployment")
T0, T1, T2, T3 = (f"2025-01-0{d}T00:00:00Z" for d in range(1, 5))

# A custom resource's schema, inline as in a CRD (no apiVersion/kind/metadata declared).
WIDGET: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["id"],
                    "items": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"},
                },
            },
        }
    },
}


def configmap(data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default", **meta},
    }
    if data is not None:
        obj["data"] = data
    return obj


def apply_cm(
    live: dict[str, Any] | None, applied: dict[str, Any], manager: str, now: str = T0, **kw: Any
) -> dict[str, Any]:
    return server_side_apply(
        live, applied, manager=manager, force=kw.pop("force", False), root=CONFIGMAP,
        resolve=SCHEMAS.resolve, api_version="v1", now=now, **kw,
    )  # fmt: skip


def apply_deploy(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    manager: str,
    now: str = T0,
    force: bool = False,
) -> dict[str, Any]:
    return server_side_apply(
        live, applied, manager=manager, force=force, root=DEPLOYMENT,
        resolve=SCHEMAS.resolve, api_version="apps/v1", now=now,
    )  # fmt: skip


def update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    root: Any = CONFIGMAP,
    api_version: str = "v1",
    now: str = T0,
    subresource: str = "",
) -> dict[str, Any]:
    new = copy.deepcopy(new)
    track_update(
        old, new, manager=manager, root=root, resolve=SCHEMAS.resolve,
        api_version=api_version, now=now, subresource=subresource,
    )  # fmt: skip
    return new


def entries(obj: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (e["manager"], e["operation"], e["fieldsV1"])
        for e in obj["metadata"].get("managedFields", [])
    ]


def owners(obj: dict[str, Any]) -> dict[str, set[str]]:
    """Each manager's fields, as SMD path strings."""
    return {
        e["manager"]: {path_string(p) for p in from_fields_v1(e["fieldsV1"])}
        for e in obj["metadata"].get("managedFields", [])
    }


def deployment(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {**spec, "template": {"spec": {"containers": containers}}},
    }


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


# --- field sets and FieldsV1 --------------------------------------------------------------------


def test_fields_v1_encoding_matches_the_api_server() -> None:
    obj = deployment(
        [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}],
        replicas=2,
        selector={"matchLabels": {"app": "web"}},
    )
    obj["metadata"]["labels"] = {"app": "web"}
    obj["metadata"]["finalizers"] = ["example.com/x"]
    encoded = to_fields_v1(field_set(obj, DEPLOYMENT, SCHEMAS.resolve))
    assert json.dumps(encoded, separators=(",", ":")) == (
        '{"f:metadata":{"f:finalizers":{"v:\\"example.com/x\\"":{}},"f:labels":{"f:app":{}}},'
        '"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:spec":{"f:containers":'
        '{"k:{\\"name\\":\\"web\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":'
        '{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}'
    )


def test_field_set_never_includes_server_owned_metadata() -> None:
    obj = configmap(
        {"a": "1"},
        uid="u",
        resourceVersion="7",
        generation=2,
        creationTimestamp="t",
        generateName="s-",
    )
    assert {path_string(p) for p in field_set(obj, CONFIGMAP, SCHEMAS.resolve)} == {
        ".data.a",
        ".metadata.generateName",
    }


def test_path_strings() -> None:
    assert path_string(
        ("spec", "template", "spec", "containers", ("k", (("name", "web"),)), "image")
    ) == ('.spec.template.spec.containers[name="web"].image')
    assert path_string(("spec", "ports", ("k", (("port", 80), ("protocol", "TCP"))))) == (
        '.spec.ports[port=80,protocol="TCP"]'
    )
    assert path_string(("metadata", "finalizers", ("v", "a"))) == '.metadata.finalizers[="a"]'
    assert path_string(("spec", "list", ("i", 3))) == ".spec.list[3]"


names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=6)
scalar_values = st.integers(-5, 5) | st.text(max_size=4) | st.booleans()
elements = (
    names
    | st.tuples(
        st.just("k"),
        st.dictionaries(names, scalar_values, min_size=1, max_size=2).map(
            lambda d: tuple(sorted(d.items()))
        ),
    )
    | st.tuples(st.just("v"), scalar_values)
    | st.tuples(st.just("i"), st.integers(0, 20))
)
path_sets = st.sets(st.lists(elements, min_size=1, max_size=4).map(tuple), max_size=12)


@given(path_sets)
def test_fields_v1_round_trip(paths: set[tuple[Any, ...]]) -> None:
    encoded = to_fields_v1(paths)
    assert from_fields_v1(orjson.loads(orjson.dumps(encoded))) == paths


data_maps = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9.-]{0,8}", fullmatch=True), st.text(max_size=5), max_size=8
)


@given(data_maps, data_maps)
def test_field_set_of_a_configmap_round_trips(data: dict[str, str], labels: dict[str, str]) -> None:
    obj = configmap(data, labels=labels)
    paths = field_set(obj, CONFIGMAP, SCHEMAS.resolve)
    # An empty map is a member itself (structured-merge-diff's ToFieldSet): `f:data: {}`.
    empty = {f".{path}" for path, keys in (("data", data), ("metadata.labels", labels)) if not keys}
    assert {path_string(p) for p in paths} == {f".data.{k}" for k in data} | {
        f".metadata.labels.{k}" for k in labels
    } | empty
    assert from_fields_v1(to_fields_v1(paths)) == paths


# --- apply: create, re-apply, removal ----------------------------------------------------------


def test_apply_creates_and_records_the_applier() -> None:
    applied = configmap({"a": "1", "b": "2"}, labels={"app": "web"})
    before = copy.deepcopy(applied)
    created = apply_cm(None, applied, "deployer")
    assert applied == before
    assert created["data"] == {"a": "1", "b": "2"}
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "deployer",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:data": {"f:a": {}, "f:b": {}},
                "f:metadata": {"f:labels": {"f:app": {}}},
            },
        }
    ]


def test_reapplying_the_same_config_changes_nothing() -> None:
    created = apply_cm(None, configmap({"a": "1"}), "deployer", T0)
    snapshot = copy.deepcopy(created)
    again = apply_cm(created, configmap({"a": "1"}), "deployer", T1)
    assert again == created
    assert again["metadata"]["managedFields"][0]["time"] == T0  # no change, no new time
    assert created == snapshot


def test_fields_no_longer_applied_are_removed() -> None:
    live = apply_cm(None, configmap({"a": "1", "b": "2"}, labels={"x": "1", "y": "2"}), "deployer")
    out = apply_cm(live, configmap({"a": "1"}, labels={"x": "1"}), "deployer", T1)
    assert out["data"] == {"a": "1"}
    assert out["metadata"]["labels"] == {"x": "1"}
    assert owners(out) == {"deployer": {".data.a", ".metadata.labels.x"}}
    assert out["metadata"]["managedFields"][0]["time"] == T1


def test_removal_keeps_fields_another_applier_also_owns() -> None:
    live = apply_cm(None, configmap({"a": "1", "b": "2"}), "first")
    live = apply_cm(live, configmap({"b": "2"}), "second", T1)  # same value: shared, no conflict
    assert owners(live) == {"first": {".data.a", ".data.b"}, "second": {".data.b"}}
    out = apply_cm(live, configmap({"a": "1"}), "first", T2)
    assert out["data"] == {"a": "1", "b": "2"}
    assert owners(out) == {"first": {".data.a"}, "second": {".data.b"}}


def test_removal_keeps_fields_an_updater_took_over() -> None:
    live = apply_cm(None, configmap({"a": "1", "b": "2"}), "deployer")
    edited = update(
        live, {**live, "data": {"a": "1", "b": "edited", "c": "3"}}, "kubectl-edit", now=T1
    )
    assert owners(edited) == {"deployer": {".data.a"}, "kubectl-edit": {".data.b", ".data.c"}}
    out = apply_cm(edited, configmap({"a": "1"}), "deployer", T2)
    assert out["data"] == {"a": "1", "b": "edited", "c": "3"}


def test_applying_an_empty_config_drops_the_entry_and_removes_its_fields() -> None:
    live = apply_cm(None, configmap({"a": "1"}), "deployer")
    out = apply_cm(live, configmap(), "deployer", T1)
    assert "data" not in out
    assert "managedFields" not in out["metadata"]


# --- apply: conflicts ------------------------------------------------------------------------


def test_conflict_with_an_update_manager_reads_like_the_api_server() -> None:
    live = update(None, configmap({"a": "1"}), "kubectl-client-side-apply")
    with pytest.raises(status.Conflict) as exc:
        apply_cm(live, configmap({"a": "2"}), "deployer", T1)
    assert exc.value.to_status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a',
        "reason": "Conflict",
        "code": 409,
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "kubectl-client-side-apply" using v1',
                    "field": ".data.a",
                }
            ]
        },
    }


def test_several_conflicts_are_listed_per_manager() -> None:
    live = update(None, configmap({"a": "1", "b": "1"}, labels={"app": "x"}), "editor")
    live = apply_cm(live, configmap({"c": "1"}), "other", T1)
    with pytest.raises(status.Conflict) as exc:
        apply_cm(
            live, configmap({"a": "2", "b": "2", "c": "2"}, labels={"app": "y"}), "deployer", T2
        )
    assert exc.value.message == (
        "Apply failed with 4 conflicts: "
        'conflicts with "editor" using v1:\n- .data.a\n- .data.b\n- .metadata.labels.app\n'
        'conflicts with "other":\n- .data.c'
    )
    assert [c["field"] for c in exc.value.to_status()["details"]["causes"]] == [
        ".data.a",
        ".data.b",
        ".metadata.labels.app",
        ".data.c",
    ]


def test_conflict_with_a_status_writer_names_the_subresource() -> None:
    live = update(None, configmap({"a": "1"}), "controller", subresource="status")
    with pytest.raises(
        status.Conflict,
        match=r'conflict with "controller" with subresource "status" using v1: \.data\.a',
    ):
        apply_cm(live, configmap({"a": "2"}), "deployer", T1)


def test_equal_values_are_shared_not_conflicting() -> None:
    live = update(None, configmap({"a": "1"}), "editor")
    out = apply_cm(live, configmap({"a": "1"}), "deployer", T1)
    assert owners(out) == {"deployer": {".data.a"}, "editor": {".data", ".data.a"}}
    # Nothing changed in the object, so the new Apply entry gets no time.
    assert [e.get("time") for e in out["metadata"]["managedFields"]] == [None, T0]


def test_force_takes_the_fields_over() -> None:
    live = update(None, configmap({"a": "1", "b": "1"}), "editor")
    out = apply_cm(live, configmap({"a": "2"}), "deployer", T1, force=True)
    assert out["data"] == {"a": "2", "b": "1"}
    assert owners(out) == {"deployer": {".data.a"}, "editor": {".data", ".data.b"}}


def test_apply_entries_come_before_update_entries() -> None:
    live = update(None, configmap({"z": "1"}), "zeta", now=T0)
    live = apply_cm(live, configmap({"a": "1"}), "alpha", T2)
    live = apply_cm(live, configmap({"b": "1"}), "beta", T1)
    assert [(m, op) for m, op, _ in entries(live)] == [
        ("beta", "Apply"),
        ("alpha", "Apply"),
        ("zeta", "Update"),
    ]


# --- apply: lists and maps ------------------------------------------------------------------------


def test_two_managers_merge_their_containers() -> None:
    live = apply_deploy(None, deployment([{"name": "web", "image": "nginx:1"}], replicas=2), "team")
    live = apply_deploy(live, deployment([{"name": "sidecar", "image": "envoy:1"}]), "mesh", T1)
    assert [c["name"] for c in containers_of(live)] == ["web", "sidecar"]
    assert live["spec"]["replicas"] == 2
    assert owners(live)["mesh"] == {
        '.spec.template.spec.containers[name="sidecar"]',
        '.spec.template.spec.containers[name="sidecar"].image',
        '.spec.template.spec.containers[name="sidecar"].name',
    }
    # The team re-applies its own container: the sidecar stays.
    live = apply_deploy(
        live, deployment([{"name": "web", "image": "nginx:2"}], replicas=2), "team", T2
    )
    assert containers_of(live) == [
        {"name": "web", "image": "nginx:2"},
        {"name": "sidecar", "image": "envoy:1"},
    ]
    # The mesh drops its container: only that one goes.
    live = apply_deploy(live, deployment([]), "mesh", T3)
    assert containers_of(live) == [{"name": "web", "image": "nginx:2"}]
    assert set(owners(live)) == {"team"}


def test_list_map_order_follows_the_applied_config() -> None:
    live = apply_deploy(
        None, deployment([{"name": n, "image": "i"} for n in ("a", "b", "c")]), "team"
    )
    live = apply_deploy(
        live, deployment([{"name": n, "image": "i"} for n in ("c", "a", "b")]), "team", T1
    )
    assert [c["name"] for c in containers_of(live)] == ["c", "a", "b"]


def test_container_ports_are_keyed_by_port_and_defaulted_protocol() -> None:
    live = apply_deploy(
        None, deployment([{"name": "web", "ports": [{"containerPort": 80}]}]), "team"
    )
    live = apply_deploy(
        live,
        deployment([{"name": "web", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]),
        "other",
        T1,
    )
    assert containers_of(live)[0]["ports"] == [
        {"containerPort": 80},
        {"containerPort": 80, "protocol": "UDP"},
    ]


def test_set_lists_union_and_remove_by_value() -> None:
    live = apply_cm(None, configmap(finalizers=["example.com/a"]), "one")
    live = apply_cm(live, configmap(finalizers=["example.com/b"]), "two", T1)
    assert live["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    assert owners(live)["two"] == {'.metadata.finalizers[="example.com/b"]'}
    live = apply_cm(live, configmap(), "one", T2)
    assert live["metadata"]["finalizers"] == ["example.com/b"]


def test_atomic_lists_are_replaced_whole_and_owned_as_one_field() -> None:
    live = apply_deploy(None, deployment([{"name": "web", "args": ["a", "b"]}]), "team")
    field = '.spec.template.spec.containers[name="web"].args'
    assert field in owners(live)["team"]
    with pytest.raises(status.Conflict, match=r"\.args$"):
        apply_deploy(live, deployment([{"name": "web", "args": ["c"]}]), "other", T1)
    out = apply_deploy(live, deployment([{"name": "web", "args": ["c"]}]), "other", T1, force=True)
    assert containers_of(out)[0]["args"] == ["c"]
    assert field not in owners(out)["team"]


def test_atomic_maps_are_replaced_whole() -> None:
    base = deployment([{"name": "web"}])
    live = apply_deploy(None, base, "team")
    live["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    spec = copy.deepcopy(base)
    spec["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    out = apply_deploy(live, spec, "team", T1, force=True)
    assert out["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}


def test_granular_maps_merge_per_key() -> None:
    live = apply_cm(None, configmap(labels={"a": "1"}, annotations={"x": "1"}), "one")
    live = apply_cm(live, configmap(labels={"b": "2"}), "two", T1)
    assert live["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert live["metadata"]["annotations"] == {"x": "1"}


def test_null_in_the_applied_config_unsets_and_owns_the_field() -> None:
    live = apply_deploy(None, deployment([{"name": "web"}], replicas=3, paused=True), "team")
    applied = deployment([{"name": "web"}], replicas=None, paused=True)
    out = apply_deploy(live, applied, "team", T1)
    assert "replicas" not in out["spec"]
    assert ".spec.replicas" in owners(out)["team"]
    assert applied["spec"]["replicas"] is None


def test_a_null_map_in_the_applied_config_is_owned_like_an_empty_one() -> None:
    """structured-merge-diff's ToFieldSet makes a field set to null a member whatever its
    type (`val.IsNull()`, its nested_test `struct_apply_remove_dangling`): the applier of
    `data: null` owns `.data`, though the map is gone, so another applier adding the map
    back conflicts, as it would with `data: {}`."""
    live = apply_cm(None, configmap({"a": "1"}, labels={"x": "1"}), "one")
    gone = apply_cm(live, {**configmap(labels=None), "data": None}, "one", T1)
    assert "data" not in gone and "labels" not in gone["metadata"]
    assert owners(gone)["one"] == {".data", ".metadata.labels"}
    with pytest.raises(status.Conflict, match=r'conflict with "one": \.data'):
        apply_cm(gone, configmap({}), "two", T2)
    # Replacing `data: {}` by null changes a value the applier alone owns: no conflict.
    empty = apply_cm(None, configmap({}), "one")
    assert owners(apply_cm(empty, {**configmap(), "data": None}, "one", T1))["one"] == {".data"}
    # Another manager's null over an empty map it does not own is a change: a conflict.
    with pytest.raises(status.Conflict, match=r'conflict with "one": \.data'):
        apply_cm(empty, {**configmap(), "data": None}, "two", T1)


def test_a_map_emptied_by_pruning_stays_owned_by_whoever_applied_it_empty() -> None:
    """One applier's `data: {}` and another's keys: when the second withdraws, RemoveItems
    empties the map into null, which is a member of the pruned object (ToFieldSet), so the
    map is not dangling and Compare reports only its keys removed: the first keeps `.data`
    (SMD's `addBackDanglingItems`). It never takes the other's keys away while they last."""
    live = apply_cm(None, configmap({"x": "1"}), "keys")
    live = apply_cm(live, configmap({}), "empty", T1)
    assert live["data"] == {"x": "1"}
    assert owners(live) == {"keys": {".data.x"}, "empty": {".data"}}
    # The empty map's applier re-applying it prunes nothing of the other's.
    assert apply_cm(live, configmap({}), "empty", T2)["data"] == {"x": "1"}
    # Withdrawing it leaves the other's keys and their map.
    kept = apply_cm(live, configmap(), "empty", T2)
    assert kept["data"] == {"x": "1"} and owners(kept) == {"keys": {".data.x"}}
    rest = apply_cm(live, configmap(), "keys", T2)
    assert "data" not in rest
    assert owners(rest) == {"empty": {".data"}}


def test_a_builtin_objects_empty_maps_go_as_its_go_type_drops_them_empty_structs_stay() -> None:
    """Every map field of a built-in kind is `omitempty` (annotations, a container's
    resource limits, a nodeSelector), and protobuf storage has no empty map; an empty
    struct (`resources: {}`, `securityContext: {}`) is printed by Go, so it stays."""
    container = {"name": "web", "resources": {"limits": {}, "requests": {"cpu": "1"}}}
    obj = deployment([container, {"name": "side", "resources": {}, "securityContext": {}}])
    obj["metadata"]["annotations"] = {}
    template = obj["spec"]["template"]
    template["metadata"] = {"labels": {}, "annotations": {"a": "1"}}
    template["spec"]["nodeSelector"] = {}
    drop_empty_fields(obj, DEPLOYMENT, SCHEMAS.resolve)
    assert obj["metadata"] == {"name": "web", "namespace": "default"}
    assert template["metadata"] == {"annotations": {"a": "1"}}
    assert template["spec"] == {
        "containers": [
            {"name": "web", "resources": {"requests": {"cpu": "1"}}},
            {"name": "side", "resources": {}, "securityContext": {}},
        ]
    }


def test_a_builtin_objects_empty_lists_go_unless_go_prints_them_then_they_come_back_null() -> None:
    """Nearly every optional list field of a built-in kind is `omitempty` (finalizers, owner
    references, a container's env, ports, volumeMounts and command, a pod spec's volumes
    and imagePullSecrets), and protobuf storage has no empty list. A field without it comes
    back nil, which Go prints as null: a Role's `rules` (`json:"rules"`), a required one
    (a PolicyRule's `verbs`, a NodeSelector's terms)."""
    container = {"name": "web", "env": [], "ports": [], "volumeMounts": [], "command": []}
    obj = deployment([container])
    obj["metadata"].update(finalizers=[], ownerReferences=[])
    spec = obj["spec"]["template"]["spec"]
    spec.update(volumes=[], imagePullSecrets=[])
    terms: dict[str, Any] = {"nodeSelectorTerms": []}
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}
    drop_empty_fields(obj, DEPLOYMENT, SCHEMAS.resolve)
    assert obj["metadata"] == {"name": "web", "namespace": "default"}
    assert spec["containers"] == [{"name": "web"}]
    assert [*spec] == ["containers", "affinity"] and terms == {"nodeSelectorTerms": None}

    role: dict[str, Any] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
    role["metadata"] = {"name": "reader", "finalizers": []}
    role["rules"] = []
    drop_empty_fields(
        role, SCHEMAS.root("rbac.authorization.k8s.io", "v1", "Role"), SCHEMAS.resolve
    )
    assert role["metadata"] == {"name": "reader"} and role["rules"] is None
    rule = {"apiGroups": [], "resources": ["pods"], "resourceNames": [], "verbs": []}
    role["rules"] = [rule]
    drop_empty_fields(
        role, SCHEMAS.root("rbac.authorization.k8s.io", "v1", "Role"), SCHEMAS.resolve
    )
    assert rule == {"resources": ["pods"], "verbs": None}


def test_pruning_a_whole_list_item_takes_its_defaulted_fields_along() -> None:
    live = apply_deploy(None, deployment([{"name": "web"}, {"name": "debug"}]), "team")
    live["spec"]["template"]["spec"]["containers"][1]["imagePullPolicy"] = (
        "Always"  # a default nobody owns
    )
    out = apply_deploy(live, deployment([{"name": "web"}]), "team", T1)
    assert containers_of(out) == [{"name": "web"}]


def test_inputs_are_never_mutated() -> None:
    live = apply_deploy(
        None, deployment([{"name": "web", "image": "a"}, {"name": "x"}], replicas=1), "team"
    )
    live = update(
        live, {**live, "spec": {**live["spec"], "replicas": 5}}, "scaler", DEPLOYMENT, "apps/v1", T1
    )
    applied = deployment([{"name": "web", "image": "b"}], replicas=5)
    live_before, applied_before = copy.deepcopy(live), copy.deepcopy(applied)
    out = apply_deploy(live, applied, "team", T2)
    assert (live, applied) == (live_before, applied_before)
    out["metadata"]["labels"] = {"changed": "yes"}
    assert live == live_before


# --- apply: request checks ------------------------------------------------------------------------


def test_apply_requires_a_valid_field_manager() -> None:
    with pytest.raises(status.Invalid) as exc:
        apply_cm(None, configmap(), "")
    assert exc.value.to_status()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    with pytest.raises(
        status.Invalid, match=r"fieldManager: Too long: may not be more than 128 bytes"
    ):
        apply_cm(None, configmap(), "m" * 129)


def test_validate_field_manager() -> None:
    validate_field_manager(None)
    validate_field_manager("m" * 128, apply=True)
    with pytest.raises(status.Invalid) as exc:
        validate_field_manager("a\tb", options_kind="CreateOptions")
    assert exc.value.message == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\tb": '
        "invalid character U+0009 (at position 1)"
    )


def test_apply_refuses_managed_fields_and_other_versions() -> None:
    with pytest.raises(status.BadRequest, match=r"^metadata.managedFields must be nil$"):
        apply_cm(None, configmap(managedFields=[]), "m")
    with pytest.raises(status.BadRequest) as exc:
        apply_cm(None, {**configmap(), "apiVersion": "v2"}, "m")
    assert exc.value.message == (
        "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"
    )


@pytest.mark.parametrize(
    ("containers", "message"),
    [
        (
            [{"name": "c", "env": [{"name": "FOO", "value": "1"}, {"name": "FOO", "value": "2"}]}],
            '.spec.template.spec.containers[name="c"].env: duplicate entries for key [name="FOO"]',
        ),
        (
            [{"image": "nameless"}],
            ".spec.template.spec.containers: element 0: associative list with keys has an element "
            'that omits key field "name" (and doesn\'t have default value)',
        ),
        (
            [{"name": "c", "imagee": "typo"}],
            '.spec.template.spec.containers[name="c"].imagee: field not declared in schema',
        ),
    ],
)
def test_untypable_configs_fail_like_the_api_server(containers: list[Any], message: str) -> None:
    with pytest.raises(status.APIError) as exc:
        apply_deploy(None, deployment(containers), "team")
    assert exc.value.code == 500
    assert exc.value.message == (
        f"failed to create typed patch object (default/web; apps/v1, Kind=Deployment): {message}"
    )


def test_several_typing_errors_are_listed() -> None:
    with pytest.raises(status.APIError) as exc:
        apply_deploy(None, {**deployment([{"name": "a"}, {"name": "a"}]), "extra": 1}, "team")
    assert exc.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:\n"
        '  .spec.template.spec.containers: duplicate entries for key [name="a"]\n'
        "  .extra: field not declared in schema"
    )


# --- kubectl's upgrade from client-side apply --------------------------------------------------


def csa_deployment(replicas: int) -> dict[str, Any]:
    """A Deployment created by `kubectl apply` (client side), annotation included."""
    config = deployment([{"name": "web", "image": "nginx:1"}], replicas=replicas)
    obj = copy.deepcopy(config)
    obj["metadata"]["annotations"] = {LAST_APPLIED_ANNOTATION: json.dumps(config)}
    return update(None, obj, "kubectl-client-side-apply", DEPLOYMENT, "apps/v1")


def test_kubectl_takes_over_what_it_applied_client_side() -> None:
    live = csa_deployment(2)
    applied = deployment([{"name": "web", "image": "nginx:2"}], replicas=3)
    with pytest.raises(status.Conflict) as exc:
        apply_deploy(live, applied, "someone-else", T1)
    assert exc.value.message == (
        "Apply failed with 2 conflicts: "
        'conflicts with "kubectl-client-side-apply" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="web"].image'
    )
    out = apply_deploy(live, applied, "kubectl", T1)
    assert out["spec"]["replicas"] == 3
    assert owners(out)["kubectl"] >= {
        ".spec.replicas",
        '.spec.template.spec.containers[name="web"].image',
    }
    assert out["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] == (
        json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
    )


def test_kubectl_still_conflicts_on_fields_changed_since_client_side_apply() -> None:
    live = csa_deployment(2)
    live = update(
        live,
        {**live, "spec": {**live["spec"], "replicas": 5}},
        "kubectl-scale",
        DEPLOYMENT,
        "apps/v1",
        T1,
    )
    with pytest.raises(
        status.Conflict,
        match=r'^Apply failed with 1 conflict: conflict with "kubectl-scale" using apps/v1: \.spec\.replicas$',
    ):
        apply_deploy(
            live, deployment([{"name": "web", "image": "nginx:1"}], replicas=3), "kubectl", T2
        )


# --- update tracking -------------------------------------------------------------------------------


def test_create_owns_every_field_like_kubectl_create() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.14.2",
                            "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {},
                        }
                    ],
                    "restartPolicy": "Always",
                    "securityContext": {},
                },
            },
        },
    }
    created = update(None, obj, "kubectl-create", DEPLOYMENT, "apps/v1")
    # What a 1.33 API server records for this create (value structs such as .spec,
    # .spec.strategy and .spec.template exist in the zero object: no "." for them).
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:strategy": {
                        "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                        "f:type": {},
                    },
                    "f:template": {
                        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"nginx"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:imagePullPolicy": {},
                                    "f:name": {},
                                    "f:ports": {
                                        ".": {},
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                            "f:protocol": {},
                                        },
                                    },
                                    "f:resources": {},
                                }
                            },
                            "f:restartPolicy": {},
                            "f:securityContext": {},
                        },
                    },
                },
            },
        }
    ]


def test_a_custom_resource_create_marks_new_structs() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1},
    }
    created = copy.deepcopy(obj)
    track_update(
        None,
        created,
        manager="m",
        root=WIDGET,
        resolve=resolve_inline,
        api_version="example.com/v1",
        now=T0,
    )
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {".": {}, "f:size": {}}
    }


def test_updates_take_changed_fields_from_other_managers() -> None:
    live = apply_cm(None, configmap({"a": "1", "b": "1"}, labels={"app": "x"}), "deployer")
    edited = update(
        live,
        configmap({"a": "2", "b": "1"}, managedFields=live["metadata"]["managedFields"]),
        "editor",
        now=T1,
    )
    assert owners(edited) == {"deployer": {".data.b"}, "editor": {".data.a"}}
    # The label went away: its owner loses it, nobody gains it.
    assert [(m, op) for m, op, _ in entries(edited)] == [
        ("deployer", "Apply"),
        ("editor", "Update"),
    ]


def test_an_update_keeps_the_managers_earlier_fields_and_time() -> None:
    live = update(None, configmap({"a": "1"}), "editor", now=T0)
    noop = update(live, live, "editor", now=T1)
    assert noop["metadata"]["managedFields"] == live["metadata"]["managedFields"]
    more = update(live, {**live, "data": {"a": "1", "b": "2"}}, "editor", now=T2)
    assert owners(more) == {"editor": {".data", ".data.a", ".data.b"}}
    assert more["metadata"]["managedFields"][0]["time"] == T2


def test_update_entries_differ_by_api_version_and_subresource() -> None:
    live = update(None, configmap({"a": "1"}), "ctrl", now=T0)
    live = update(live, {**live, "data": {"a": "2"}}, "ctrl", api_version="v1beta1", now=T1)
    live = update(live, {**live, "data": {"a": "3"}}, "ctrl", now=T2, subresource="status")
    live = update(
        live, {**live, "data": {"a": "3", "b": "1"}}, "ctrl", api_version="v1beta1", now=T3
    )
    assert [
        (e["apiVersion"], e.get("subresource"), e["time"], set(from_fields_v1(e["fieldsV1"])))
        for e in live["metadata"]["managedFields"]
    ] == [
        ("v1", None, T0, {("data",)}),
        ("v1", "status", T2, {("data", "a")}),
        ("v1beta1", None, T3, {("data", "b")}),
    ]


def test_a_request_may_rewrite_managed_fields() -> None:
    live = update(None, configmap({"a": "1"}), "editor")
    custom = [
        {
            "manager": "custom",
            "operation": "Apply",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    out = update(live, configmap({"a": "1"}, managedFields=custom), "editor", now=T1)
    assert out["metadata"]["managedFields"] == custom


def test_an_empty_managed_fields_list_resets_tracking() -> None:
    """Cleared, an object is not tracked by updates (the API server's skipNonAppliedManager:
    an existing object without managedFields records none until its next apply), the
    clearing update's own changes included; a create is tracked."""
    live = update(None, configmap({"a": "1"}), "editor")
    cleared = update(live, configmap({"a": "1"}, managedFields=[]), "editor", now=T1)
    assert "managedFields" not in cleared["metadata"]
    changed = update(live, configmap({"a": "1", "b": "2"}, managedFields=[{}]), "editor", now=T1)
    assert "managedFields" not in changed["metadata"]
    labelled = update(cleared, configmap({"a": "1", "c": "3"}), "labeller", now=T2)
    assert "managedFields" not in labelled["metadata"]
    assert owners(update(None, configmap({"a": "1"}), "maker")) == {"maker": {".data", ".data.a"}}


def test_managed_fields_the_request_drops_or_garbles_are_kept() -> None:
    live = update(None, configmap({"a": "1"}), "editor")
    for sent in (None, [{"manager": "x", "operation": "Bogus"}]):
        meta = {} if sent is None else {"managedFields": sent}
        out = update(live, configmap({"a": "1"}, **meta), "other", now=T1)
        assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_status_writes_start_from_the_stored_entries() -> None:
    live = update(None, configmap({"a": "1"}), "editor")
    out = update(
        live, configmap({"a": "2"}, managedFields=[]), "ctrl", now=T1, subresource="status"
    )
    assert [(e["manager"], e.get("subresource")) for e in out["metadata"]["managedFields"]] == [
        ("editor", None),
        ("ctrl", "status"),
    ]


def test_at_most_ten_update_managers() -> None:
    live = update(None, configmap({"k0": "0"}), "m00", now="2025-01-01T00:00:00Z")
    for n in range(1, 11):
        data = {**live["data"], f"k{n}": str(n)}
        live = update(live, {**live, "data": data}, f"m{n:02d}", now=f"2025-01-01T00:00:{n:02d}Z")
    managers = [e["manager"] for e in live["metadata"]["managedFields"]]
    assert len(managers) == 10
    assert managers[0] == "ancient-changes"
    assert owners(live)["ancient-changes"] == {".data", ".data.k0", ".data.k1"}


def test_default_manager_is_the_user_agent_product() -> None:
    assert default_manager("kubectl/v1.32.4 (linux/amd64) kubernetes/abc") == "kubectl"
    assert default_manager("Go-http-client/1.1") == "Go-http-client"
    assert default_manager("") == ""
    assert default_manager("bad\x00name/1") == "badname"
    assert default_manager("é" * 100) == "é" * 64


def test_an_unknown_manager_name_becomes_unknown() -> None:
    created = update(None, configmap({"a": "1"}), "")
    assert entries(created)[0][0] == "unknown"


# --- custom resources ----------------------------------------------------------------------------


def widget(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", **meta},
        "spec": spec,
    }


def apply_widget(
    live: dict[str, Any] | None, applied: dict[str, Any], manager: str, now: str = T0
) -> dict[str, Any]:
    return server_side_apply(
        live, applied, manager=manager, force=False, root=WIDGET, resolve=resolve_inline,
        api_version="example.com/v1", now=now,
    )  # fmt: skip


def test_custom_resource_lists_and_maps_follow_their_schema() -> None:
    live = apply_widget(
        None,
        widget(
            {
                "items": [{"id": "a", "value": "1"}],
                "tags": ["x"],
                "config": {"deep": {"k": 1}},
                "selector": {"a": "1"},
            },
            labels={"l": "1"},
        ),
        "one",
    )
    live = apply_widget(
        live,
        widget(
            {"items": [{"id": "b", "value": "2"}], "tags": ["y"], "config": {"deep": {"j": 2}}},
            labels={"m": "2"},
        ),
        "two",
        T1,
    )
    assert live["spec"] == {
        "items": [{"id": "a", "value": "1"}, {"id": "b", "value": "2"}],
        "tags": ["x", "y"],
        "config": {"deep": {"k": 1, "j": 2}},
        "selector": {"a": "1"},
    }
    assert live["metadata"]["labels"] == {"l": "1", "m": "2"}
    assert owners(live)["two"] == {
        '.spec.items[id="b"]',
        '.spec.items[id="b"].id',
        '.spec.items[id="b"].value',
        '.spec.tags[="y"]',
        ".spec.config.deep",
        ".spec.config.deep.j",
        ".metadata.labels.m",
    }
    with pytest.raises(status.Conflict, match=r'conflict with "one": \.spec\.selector'):
        apply_widget(live, widget({"selector": {"b": "2"}}), "two", T2)


def test_custom_resource_unknown_fields_cannot_be_applied() -> None:
    with pytest.raises(
        status.APIError,
        match=r"\(/w; example.com/v1, Kind=Widget\): \.spec\.colour: field not declared in schema",
    ):
        apply_widget(None, widget({"colour": "red"}), "one")


def test_without_a_schema_maps_are_granular_and_lists_atomic() -> None:
    def run(live: dict[str, Any] | None, applied: dict[str, Any], manager: str) -> dict[str, Any]:
        return server_side_apply(
            live,
            applied,
            manager=manager,
            force=True,
            root=None,
            resolve=resolve_inline,
            api_version="example.com/v1",
            now=T0,
        )

    live = run(None, widget({"a": {"x": 1}, "list": [1, 2]}), "one")
    live = run(live, widget({"a": {"y": 2}, "list": [3]}), "two")
    assert live["spec"] == {"a": {"x": 1, "y": 2}, "list": [3]}
    assert owners(live)["two"] == {".spec.a.y", ".spec.list", ".spec", ".spec.a"}


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=60)
@given(data_maps, data_maps, data_maps)
def test_apply_properties(
    first: dict[str, str], second: dict[str, str], labels: dict[str, str]
) -> None:
    live = apply_cm(None, configmap(first, labels=labels), "one")
    # Re-applying is a no-op.
    assert apply_cm(live, configmap(first, labels=labels), "one", T1) == live
    # A second applier with the same values shares them; it never changes the first's data.
    shared = {k: first.get(k, v) for k, v in second.items()}
    both = apply_cm(live, configmap(shared), "two", T1)
    assert both.get("data", {}) == {**first, **shared}
    # The first applier withdrawing everything leaves exactly what the second applied.
    rest = apply_cm(both, configmap(), "one", T2)
    assert rest.get("data", {}) == shared
    # The second applier's `data: {}` is a member; pruning the first's keys empties the map
    # into null, itself a member (ToFieldSet), so the second keeps it even once it is gone.
    owned = {f".data.{k}" for k in shared} or {".data"}
    assert {p for m in owners(rest).values() for p in m} == owned
