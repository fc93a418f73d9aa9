"""What an adopted object's creator gives up: fieldsV1 set arithmetic (`managed_fields`).

Checked against the local cluster's own fieldsV1 codec, an independent reading of the
format: the trie left is the set difference of the paths, in the server's shape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stackwright.localcluster.apply import from_fields_v1, to_fields_v1
from stackwright.providers.kubernetes.managed_fields import fields_without, taken_over

PORT = 'k:{"port":8000,"protocol":"TCP"}'


def test_a_keyed_item_and_the_fields_the_creator_alone_wrote() -> None:
    creator = {
        "f:spec": {
            "f:ports": {".": {}, PORT: {".": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}},
            "f:type": {},
        }
    }
    stack = {"f:spec": {"f:ports": {PORT: {".": {}, "f:port": {}, "f:targetPort": {}}}}}
    # The list itself (`.` of f:ports) and the defaulted protocol stay the creator's;
    # the item as a member is the stack's now.
    assert fields_without(creator, stack) == {
        "f:spec": {"f:ports": {".": {}, PORT: {"f:protocol": {}}}, "f:type": {}}
    }


def test_a_member_taken_keeps_its_children_and_a_leaf_taken_goes() -> None:
    labels = {"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}}
    assert fields_without(labels, {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}) == {
        "f:metadata": {"f:labels": {"f:b": {}}}
    }
    # Taken as a value (an atomic map set whole): its own membership goes, its keys stay.
    assert fields_without(labels, {"f:metadata": {"f:labels": {}}}) == {
        "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}
    }
    assert fields_without({"f:data": {"f:k": {}}}, {"f:data": {"f:k": {}}}) == {}


def test_value_items_and_positions_are_keys_like_any_other() -> None:
    finalizers = {"f:metadata": {"f:finalizers": {".": {}, 'v:"a"': {}, 'v:"b"': {}}}}
    taken = {"f:metadata": {"f:finalizers": {'v:"a"': {}}}}
    assert fields_without(finalizers, taken) == {
        "f:metadata": {"f:finalizers": {".": {}, 'v:"b"': {}}}
    }
    assert fields_without({"f:args": {"i:0": {}, "i:1": {}}}, {"f:args": {"i:1": {}}}) == {
        "f:args": {"i:0": {}}
    }


# --- property: the set difference of the paths ----------------------------------------------------

_STEPS = st.sampled_from(
    [
        "f:spec",
        "f:ports",
        "f:name",
        'k:{"port":80,"protocol":"TCP"}',
        'k:{"name":"web"}',
        'v:"a"',
        "v:1",
        "i:0",
    ]
)


def _paths() -> st.SearchStrategy[frozenset[tuple[str, ...]]]:
    return st.frozensets(st.lists(_STEPS, min_size=1, max_size=4).map(tuple), max_size=12)


def _decoded(paths: frozenset[tuple[str, ...]]) -> set[Any]:
    """The paths as the local cluster's codec reads them."""
    return from_fields_v1(_trie(paths))


def _trie(paths: frozenset[tuple[str, ...]]) -> dict[str, Any]:
    """The fieldsV1 of `paths`, in the server's shape."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for step in path:
            node = node.setdefault(step, {})
        node.setdefault(".", {})
    return _canonical(root)


def _canonical(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, child in node.items():
        if key == ".":
            continue
        inner = _canonical(child)
        out[key] = ({".": {}, **inner} if "." in child else inner) if inner else {}
    return out


@given(_paths(), _paths())
def test_what_is_left_is_the_difference_of_the_paths(
    owned: frozenset[tuple[str, ...]], taken: frozenset[tuple[str, ...]]
) -> None:
    left = fields_without(_trie(owned), _trie(taken))
    assert from_fields_v1(left) == _decoded(owned) - _decoded(taken)
    assert left == to_fields_v1(from_fields_v1(left)), "in the server's shape"
    assert json.loads(json.dumps(left)) == left


# --- which entries give up what -------------------------------------------------------------------


def _entry(manager: str, operation: str, fields: dict[str, Any], **more: str) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        **more,
    }


def test_only_other_managers_updates_of_the_main_resource_give_fields_up() -> None:
    ours = _entry("stackwright", "Apply", {"f:data": {"f:a": {}, "f:b": {}}})
    creator = _entry("kubectl-create", "Update", {"f:data": {".": {}, "f:a": {}, "f:c": {}}})
    applier = _entry("argocd", "Apply", {"f:data": {"f:a": {}}})
    status = _entry("controller", "Update", {"f:data": {"f:b": {}}}, subresource="status")
    labeller = _entry("kubectl-label", "Update", {"f:data": {"f:b": {}}})
    strategy = _entry("stackwright", "Update", {"f:data": {"f:b": {}}})
    entries = [ours, creator, applier, status, labeller, strategy]
    assert taken_over(entries, "stackwright") == [
        ours,
        {**creator, "fieldsV1": {"f:data": {".": {}, "f:c": {}}}},
        applier,
        status,
        strategy,  # the labeller's entry, left empty, is dropped
    ]


def test_nothing_shared_asks_for_no_write() -> None:
    ours = _entry("stackwright", "Apply", {"f:data": {"f:a": {}}})
    controller = _entry("controller", "Update", {"f:metadata": {"f:labels": {"f:x": {}}}})
    assert taken_over([ours, controller], "stackwright") is None
    assert taken_over([controller], "stackwright") is None  # nothing applied: nothing to take
