"""JSON patch, merge patch and strategic merge patch, checked against kube-apiserver's behaviour."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster import status
from stackwright.localcluster.patch import (
    PATCH_TYPES,
    apply_patch,
    go_float,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)
from stackwright.localcluster.schema import builtin_schemas, resolve_inline

SCHEMAS = builtin_schemas()
DEPLOYMENT = SCHEMAS.root("apps", "v1", "Deployment")
POD = SCHEMAS.root("", "v1", "Pod")


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1",
                            "args": ["x", "y"],
                            "ports": [{"containerPort": 80}],
                        },
                        {"name": "sidecar", "image": "envoy:1"},
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                }
            },
        },
    }


def smp(obj: dict[str, Any], patch: Any, root: Any = DEPLOYMENT) -> dict[str, Any]:
    return strategic_merge_patch(obj, patch, root, SCHEMAS.resolve)


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def status_of(exc: pytest.ExceptionInfo[status.APIError]) -> dict[str, Any]:
    return exc.value.to_status()


# --- JSON patch -------------------------------------------------------------------------


def test_json_patch_operations() -> None:
    doc = {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1, 2, 3]}}
    out = json_patch(
        doc,
        [
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "replace", "path": "/spec/list/0", "value": 10},
            {"op": "add", "path": "/spec/list/-", "value": 4},
            {"op": "add", "path": "/spec/list/1", "value": 15},
            {"op": "move", "from": "/spec/list/4", "path": "/spec/last"},
            {"op": "copy", "from": "/metadata/labels", "path": "/spec/labels"},
            {"op": "test", "path": "/spec/labels", "value": {"b": "2"}},
        ],
    )
    assert out == {
        "metadata": {"labels": {"b": "2"}},
        "spec": {"list": [10, 15, 2, 3], "last": 4, "labels": {"b": "2"}},
    }
    assert doc == {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1, 2, 3]}}


def test_json_pointer_escaping() -> None:
    doc = {"metadata": {"annotations": {"a/b": "1", "c~d": "2"}}}
    out = json_patch(
        doc,
        [
            {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "x"},
            {"op": "remove", "path": "/metadata/annotations/c~0d"},
            {"op": "add", "path": "/metadata/annotations/e~01", "value": "y"},
        ],
    )
    assert out == {"metadata": {"annotations": {"a/b": "x", "e~1": "y"}}}


def test_json_patch_keeps_the_library_quirks() -> None:
    doc = {"spec": {"list": ["a", "b", "c"]}}
    # Negative indices count from the end; replace of a missing object key adds it.
    out = json_patch(
        doc,
        [
            {"op": "remove", "path": "/spec/list/-1"},
            {"op": "replace", "path": "/spec/new", "value": 1},
            {"op": "copy", "from": "/spec/missing", "path": "/spec/copied"},
            {"op": "test", "path": "/spec/absent", "value": None},
        ],
    )
    assert out == {"spec": {"list": ["a", "b"], "new": 1, "copied": None}}


def test_json_patch_does_not_share_values_with_the_patch() -> None:
    ops = [
        {"op": "add", "path": "/a", "value": {"x": 1}},
        {"op": "add", "path": "/a/y", "value": 2},
    ]
    before = copy.deepcopy(ops)
    assert json_patch({}, ops) == {"a": {"x": 1, "y": 2}}
    assert ops == before


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            [{"op": "test", "path": "/spec/replicas", "value": 2}],
            "testing value /spec/replicas failed: test failed",
        ),
        (
            [{"op": "test", "path": "/spec/replicas", "value": True}],
            "testing value /spec/replicas failed: test failed",
        ),
        (
            [{"op": "remove", "path": "/metadata/labels/x"}],
            "error in remove for path: '/metadata/labels/x': Unable to remove nonexistent key: x: missing value",
        ),
        (
            [{"op": "add", "path": "/spec/missing/x", "value": 1}],
            'add operation does not apply: doc is missing path: "/spec/missing/x": missing value',
        ),
        (
            [{"op": "replace", "path": "/spec/list/5", "value": 1}],
            "replace operation does not apply: doc is missing key: /spec/list/5: missing value",
        ),
        (
            [{"op": "add", "path": "/spec/list/9", "value": 1}],
            "error in add for path: '/spec/list/9': Unable to access invalid index: 9: invalid index referenced",
        ),
        (
            [{"op": "add", "path": "/spec/list/x", "value": 1}],
            "error in add for path: '/spec/list/x': value was not a proper array index: 'x': "
            'strconv.Atoi: parsing "x": invalid syntax',
        ),
        ([{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate"),
        ([{"path": "/a"}], "Unexpected kind: unknown"),
        ([{"op": "add", "value": 1}], "add operation failed to decode path: missing value"),
        (
            [{"op": "replace", "value": 1}],
            "replace operation failed to decode path: operation missing path field: missing value",
        ),
        (
            [{"op": "move", "path": "/a"}],
            "move operation failed to decode from: operation, missing from field: missing value",
        ),
        (
            [{"op": "remove", "path": "/spec/replicas/x"}],
            'remove operation does not apply: doc is missing path: "/spec/replicas/x": missing value',
        ),
    ],
)
def test_json_patch_errors_are_kube_apiservers_generic_422(ops: list[Any], message: str) -> None:
    """The answer is kube-apiserver's NewGenericServerResponse(422, ..., false): its generic
    words and details with no cause; the library's message (kept here, as evanphx words it)
    is what the server decided on, and is not sent."""
    doc = {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [1]}}
    with pytest.raises(status.Invalid) as exc:
        json_patch(doc, ops)
    assert status_of(exc) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid",
        "code": 422,
        "details": {},
    }
    assert str(exc.value.__context__) == message


def test_json_patch_document_must_be_a_list_of_objects() -> None:
    with pytest.raises(
        status.BadRequest, match=r"cannot unmarshal object into Go value of type jsonpatch.Patch"
    ):
        json_patch({}, {"op": "add"})
    with pytest.raises(
        status.BadRequest,
        match=r"cannot unmarshal string into Go value of type jsonpatch.Operation",
    ):
        json_patch({}, ["add"])


def test_json_patch_operation_limit() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * 10001
    with pytest.raises(status.APIError) as exc:
        json_patch({"a": 1}, ops)
    assert exc.value.code == 413
    assert exc.value.message == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
objects = st.dictionaries(st.text(max_size=4), json_values, max_size=5)


def pointer(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


@given(objects, st.text(max_size=6), json_values)
def test_json_patch_add_then_test_then_remove(doc: dict[str, Any], key: str, value: Any) -> None:
    added = json_patch(doc, [{"op": "add", "path": pointer(key), "value": value}])
    assert added[key] == value
    json_patch(added, [{"op": "test", "path": pointer(key), "value": value}])
    removed = json_patch(added, [{"op": "remove", "path": pointer(key)}])
    expected = dict(doc)
    expected.pop(key, None)
    assert removed == expected


# --- JSON merge patch ------------------------------------------------------------------------

RFC7386_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC7386_EXAMPLES)
def test_merge_patch_rfc7386_examples(target: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy(target)
    assert merge_patch(target, patch) == result
    assert target == before


@pytest.mark.parametrize("patch", [None, "bar", 1, True])
def test_merge_patch_must_be_an_object_or_array(patch: Any) -> None:
    with pytest.raises(status.BadRequest, match=r"^Invalid JSON Patch$"):
        merge_patch({"a": "foo"}, patch)


def merge_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The merge patch taking `old` to `new` (for documents without nulls)."""
    patch: dict[str, Any] = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key in old and isinstance(old[key], dict) and isinstance(value, dict):
            inner = merge_diff(old[key], value)
            if inner:
                patch[key] = inner
        elif old.get(key, object()) != value or key not in old:
            patch[key] = value
    return patch


null_free = st.recursive(
    st.booleans() | st.integers(-100, 100) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
null_free_objects = st.dictionaries(st.text(max_size=3), null_free, max_size=5)


@given(null_free_objects, null_free_objects)
def test_merge_patch_round_trips_a_diff(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert merge_patch(old, merge_diff(old, new)) == new


# Nulls nested in arrays are pruned only on some paths (an evanphx quirk the API server
# keeps), so idempotence holds for patches whose nulls are object members.
patches = st.dictionaries(st.text(max_size=3), st.none() | null_free, max_size=5)


@given(objects, patches)
def test_merge_patch_is_idempotent(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(doc, patch)
    assert merge_patch(once, patch) == once


# --- strategic merge patch -----------------------------------------------------------------------


def test_smp_merges_containers_by_name_and_puts_new_items_first() -> None:
    obj = deployment()
    out = smp(
        obj,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "new", "image": "busybox"},
                            {"name": "web", "image": "nginx:2"},
                        ]
                    }
                }
            }
        },
    )
    assert containers(out) == [
        {"name": "new", "image": "busybox"},
        {"name": "web", "image": "nginx:2", "args": ["x", "y"], "ports": [{"containerPort": 80}]},
        {"name": "sidecar", "image": "envoy:1"},
    ]
    assert obj == deployment()


def test_smp_patch_delete_directive_removes_the_item() -> None:
    out = smp(
        deployment(),
        {"spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}}}},
    )
    assert containers(out) == [{"name": "sidecar", "image": "envoy:1"}]


def test_smp_patch_replace_directive_on_a_list_and_a_map() -> None:
    out = smp(
        deployment(),
        {
            "metadata": {"labels": {"$patch": "replace", "tier": "db"}},
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}
                }
            },
        },
    )
    assert out["metadata"]["labels"] == {"tier": "db"}
    assert containers(out) == [{"name": "only", "image": "x"}]


def test_smp_patch_delete_directive_on_a_map_empties_it() -> None:
    out = smp(deployment(), {"metadata": {"labels": {"$patch": "delete"}}})
    assert out["metadata"]["labels"] == {}


def test_smp_set_element_order_orders_the_merged_list() -> None:
    out = smp(
        deployment(),
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}],
                        "containers": [{"name": "web", "image": "nginx:3"}],
                    }
                }
            }
        },
    )
    assert [c["name"] for c in containers(out)] == ["sidecar", "web"]
    assert containers(out)[1]["image"] == "nginx:3"


def test_smp_set_element_order_for_a_primitive_list() -> None:
    out = smp(
        deployment(),
        {"metadata": {"$setElementOrder/finalizers": ["b", "c", "a"], "finalizers": ["c"]}},
    )
    assert out["metadata"]["finalizers"] == ["b", "c", "a"]


def test_smp_set_element_order_must_agree_with_the_patch_list() -> None:
    with pytest.raises(status.APIError) as exc:
        smp(
            deployment(),
            {
                "spec": {
                    "template": {
                        "spec": {
                            "$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}],
                            "containers": [
                                {"name": "sidecar", "image": "a"},
                                {"name": "web", "image": "b"},
                            ],
                        }
                    }
                }
            },
        )
    assert exc.value.code == 500
    assert exc.value.message.startswith("The order in patch list:\n")


def test_smp_retain_keys_clears_fields_not_listed() -> None:
    out = smp(deployment(), {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_smp_retain_keys_must_list_every_patched_field() -> None:
    with pytest.raises(status.BadRequest, match=r"^invalid patch format of retainKeys$"):
        smp(deployment(), {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}})


def test_smp_merge_retain_keys_list_items() -> None:
    out = smp(
        deployment(),
        {
            "spec": {
                "template": {
                    "spec": {
                        "volumes": [
                            {
                                "name": "data",
                                "$retainKeys": ["name", "hostPath"],
                                "hostPath": {"path": "/x"},
                            }
                        ]
                    }
                }
            }
        },
    )
    assert out["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "hostPath": {"path": "/x"}}
    ]


def test_smp_primitive_merge_list_is_a_union_with_new_items_first() -> None:
    out = smp(deployment(), {"metadata": {"finalizers": ["c", "a"]}})
    assert out["metadata"]["finalizers"] == ["c", "a", "b"]


def test_smp_delete_from_primitive_list() -> None:
    out = smp(deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out["metadata"]["finalizers"] == ["b"]


def test_smp_null_deletes_and_lists_without_strategy_are_replaced() -> None:
    out = smp(
        deployment(),
        {
            "metadata": {"labels": {"app": None}},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "args": ["z"]}]}}},
        },
    )
    assert out["metadata"]["labels"] == {}
    assert containers(out)[0]["args"] == ["z"]


def test_smp_merge_key_is_the_patch_merge_key_not_the_list_map_keys() -> None:
    # Container ports merge by containerPort alone (issue 108255): the protocol does not split them.
    out = smp(
        deployment(),
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "web", "ports": [{"containerPort": 80, "protocol": "UDP"}]}
                        ]
                    }
                }
            }
        },
    )
    assert containers(out)[0]["ports"] == [{"containerPort": 80, "protocol": "UDP"}]


def test_smp_errors() -> None:
    with pytest.raises(status.APIError) as exc:
        smp(
            deployment(),
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "merge"}]}}}},
        )
    assert (exc.value.code, exc.value.message) == (
        500,
        "merging lists cannot yet be specified in the patch",
    )
    with pytest.raises(status.APIError) as exc:
        smp(deployment(), {"spec": {"template": {"spec": {"containers": [{"image": "no-name"}]}}}})
    assert exc.value.message == "map: map[image:no-name] does not contain declared merge key: name"
    with pytest.raises(status.BadRequest, match="invalid patch format of primitive list"):
        smp(deployment(), {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}})
    with pytest.raises(status.BadRequest, match="cannot unmarshal array"):
        smp(deployment(), [])


def test_smp_without_a_schema_is_a_merge_patch() -> None:
    obj = deployment()
    patch = {
        "metadata": {"labels": {"app": None, "x": "y"}},
        "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    assert strategic_merge_patch(obj, patch, None, resolve_inline) == merge_patch(obj, patch)


def test_smp_does_not_mutate_its_inputs() -> None:
    obj = deployment()
    patch = {
        "spec": {
            "$retainKeys": ["replicas", "template", "strategy"],
            "template": {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}},
        }
    }
    before = copy.deepcopy(patch)
    smp(obj, patch)
    assert obj == deployment()
    assert patch == before


# --- dispatch ---------------------------------------------------------------------------------


def test_patch_types_name_every_content_type() -> None:
    assert PATCH_TYPES == {
        "application/json-patch+json": "json",
        "application/merge-patch+json": "merge",
        "application/strategic-merge-patch+json": "strategic",
        "application/apply-patch+yaml": "apply",
    }


def test_apply_patch_dispatches_by_content_type() -> None:
    obj = deployment()
    out = apply_patch(
        "application/merge-patch+json; charset=utf-8",
        obj,
        b'{"spec":{"replicas":3}}',
        DEPLOYMENT,
        SCHEMAS.resolve,
    )
    assert out["spec"]["replicas"] == 3
    out = apply_patch(
        "application/json-patch+json",
        obj,
        [{"op": "replace", "path": "/spec/replicas", "value": 4}],
        DEPLOYMENT,
        SCHEMAS.resolve,
    )
    assert out["spec"]["replicas"] == 4
    out = apply_patch(
        "application/strategic-merge-patch+json",
        obj,
        '{"metadata":{"finalizers":["z"]}}',
        DEPLOYMENT,
        SCHEMAS.resolve,
    )
    assert out["metadata"]["finalizers"] == ["z", "a", "b"]
    with pytest.raises(ValueError, match="server_side_apply"):
        apply_patch("application/apply-patch+yaml", obj, b"{}", DEPLOYMENT, SCHEMAS.resolve)


def test_unknown_content_types_are_415_with_the_accepted_list() -> None:
    with pytest.raises(status.UnsupportedMediaType) as exc:
        apply_patch("application/json", {}, {}, DEPLOYMENT, SCHEMAS.resolve)
    assert exc.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )
    # Custom resources (inline schemas) take no strategic merge patch.
    with pytest.raises(status.UnsupportedMediaType) as exc:
        apply_patch(
            "application/strategic-merge-patch+json", {}, {}, {"type": "object"}, resolve_inline
        )
    assert exc.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    assert exc.value.to_status()["code"] == 415


def test_undecodable_merge_patch_bodies_are_invalid_json_patches() -> None:
    with pytest.raises(status.BadRequest, match=r"^Invalid JSON Patch$"):
        apply_patch("application/merge-patch+json", {}, b"{nope", DEPLOYMENT, SCHEMAS.resolve)


@settings(max_examples=50)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_go_float_round_trips(value: float) -> None:
    assert float(go_float(value)) == value


def test_results_are_private_copies() -> None:
    obj = deployment()
    for out in (
        merge_patch(obj, {"spec": {"replicas": 2}}),
        json_patch(obj, [{"op": "replace", "path": "/spec/replicas", "value": 2}]),
        smp(obj, {"spec": {"replicas": 2}}),
    ):
        out["metadata"]["labels"]["edited"] = "yes"
        containers(out)[0]["image"] = "edited"
    assert obj == deployment()
