"""Type information for the API the local cluster serves.

The built-in kinds' schemas are the official OpenAPI definitions of one Kubernetes
version, as shipped by kubernetes-validate; custom kinds bring their own
`openAPIV3Schema`. Both are plain JSON-schema nodes (dicts), so everything that
needs type information — validation, pruning, strategic merge, server-side apply —
walks the same shape through the few functions here. Nothing here does I/O after
the definitions are loaded, and nothing here mutates a node.

Node conventions (those of the official definitions and of CRD schemas):
- `type` is a string or a list that may include "null";
- objects have `properties` (structs) or `additionalProperties` (maps);
- arrays have `items`;
- `$ref` ("#/$defs/NAME") points into the definitions;
- the `x-kubernetes-*` extensions carry list types, list-map keys, map types,
  patch strategies and merge keys, int-or-string and preserve-unknown-fields.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

#: The Kubernetes release whose API the local cluster serves and reports.
KUBERNETES_VERSION = "1.33.0"

Node = Mapping[str, Any]

_REF_PREFIX = "#/$defs/"
_EMPTY: Node = {}


class Schemas:
    """The definitions of one Kubernetes version, with `$ref` resolution."""

    def __init__(self, definitions: Mapping[str, Node]) -> None:
        self.definitions = definitions
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        for name, node in definitions.items():
            for gvk in node.get("x-kubernetes-group-version-kind", ()):
                self._by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name

    def definition_name(self, group: str, version: str, kind: str) -> str | None:
        """The definition name of a top-level kind, e.g. `io.k8s.api.apps.v1.Deployment`."""
        return self._by_gvk.get((group, version, kind))

    def root(self, group: str, version: str, kind: str) -> Node | None:
        """The schema of a built-in kind, or None when the kind is not built in."""
        name = self._by_gvk.get((group, version, kind))
        return self.definitions[name] if name else None

    def resolve(self, node: Node | None) -> Node:
        """Follow `$ref` (and a lone `allOf` wrapping one) to the node that says what a value is."""
        while node:
            ref = node.get("$ref")
            if ref is None:
                all_of = node.get("allOf")
                if all_of and len(all_of) == 1:
                    node = all_of[0]
                    continue
                return node
            node = self.definitions.get(ref[len(_REF_PREFIX) :], _EMPTY)
        return _EMPTY


#: A resolver for schemas that never use `$ref` (CRD schemas).
def resolve_inline(node: Node | None) -> Node:
    return node or _EMPTY


def types_of(node: Node) -> frozenset[str]:
    """The non-null JSON types a node allows; empty when it says nothing (any value)."""
    declared = node.get("type")
    if declared is None:
        if node.get("x-kubernetes-int-or-string") or _is_one_of_scalars(node):
            return frozenset({"integer", "string"})
        return frozenset()
    if isinstance(declared, str):
        return frozenset({declared})
    return frozenset(t for t in declared if t != "null")


def _is_one_of_scalars(node: Node) -> bool:
    one_of = node.get("oneOf")
    return bool(one_of) and all("type" in option for option in one_of or ())


def scalar_one_of_types(node: Node) -> frozenset[str]:
    """For IntOrString / Quantity style `oneOf` nodes, the scalar types allowed."""
    allowed: set[str] = set()
    for option in node.get("oneOf", ()):
        allowed |= types_of(option)
    return frozenset(allowed)


def property_node(resolved: Node, name: str) -> Node | None:
    """The schema of field `name` of an object node (struct field or map value)."""
    props = resolved.get("properties")
    if props and name in props:
        return props[name]  # type: ignore[no-any-return]
    extra = resolved.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    return None


def items_node(resolved: Node) -> Node | None:
    items = resolved.get("items")
    return items if isinstance(items, Mapping) else None


def is_map(resolved: Node) -> bool:
    """True when an object node is a map (free keys) rather than a struct."""
    return "properties" not in resolved and isinstance(
        resolved.get("additionalProperties"), Mapping
    )


def list_type(resolved: Node) -> str:
    """`atomic`, `set` or `map` — the server-side-apply list semantics of an array node."""
    declared = resolved.get("x-kubernetes-list-type")
    if declared:
        return str(declared)
    # Older definitions mark merge lists only with a patch strategy; SSA treats a list
    # with a merge key as a map keyed by it.
    if resolved.get("x-kubernetes-patch-merge-key"):
        return "map"
    return "atomic"


def list_map_keys(resolved: Node) -> tuple[str, ...]:
    keys = resolved.get("x-kubernetes-list-map-keys")
    if keys:
        return tuple(keys)
    merge_key = resolved.get("x-kubernetes-patch-merge-key")
    return (merge_key,) if merge_key else ()


def map_is_atomic(resolved: Node) -> bool:
    """True when a struct or map node is replaced whole by server-side apply."""
    return resolved.get("x-kubernetes-map-type") == "atomic"


@functools.cache
def builtin_schemas() -> Schemas:
    """The official definitions of `KUBERNETES_VERSION`, loaded once per process."""
    # Found without importing kubernetes_validate, whose import (jsonschema's) costs more
    # than reading the definitions: a preview that checks its objects' types pays for this.
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations, "kubernetes-validate is missing"
    path = Path(spec.submodule_search_locations[0]).joinpath(
        "kubernetes-json-schema", f"v{KUBERNETES_VERSION}-local", "_definitions.json"
    )
    document = orjson.loads(path.read_bytes())
    return Schemas(document["$defs"])
