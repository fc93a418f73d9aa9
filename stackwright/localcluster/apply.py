"""Server-side apply and managed fields, as structured-merge-diff v4 and kube-apiserver do them.

Every write records who owns which fields in `metadata.managedFields`: an apply
(`server_side_apply`) merges the applied configuration into the live object by
schema, removes what this manager applied before and no longer applies (unless
someone else still owns it), and refuses to change fields other managers own
unless forced; a create, update or patch (`track_update`) gives its manager the
fields it changed. Field sets travel as FieldsV1 tries (`f:`, `k:`, `v:`, `i:`,
`.`) and conflicts are reported with structured-merge-diff's path strings
(`.spec.template.spec.containers[name="web"].image`).

The semantics follow structured-merge-diff v4 (merge, ToFieldSet, Compare,
RemoveItems, prune) and the apiserver's fieldmanager stack (meta-field
stripping, manager identities, entry order, the cap of ten Update managers,
kubectl's client-side-apply upgrade path). Nothing here does I/O and no input is
mutated — except `track_update`, whose job is to set `new`'s managed fields.
Results share unchanged subtrees with `live` and `applied`: copy a subtree before
editing it in place. The only module state is a memo of derived schema facts,
keyed by schema node identity (nodes are immutable).

Errors:

    APIError
    ├── BadRequest (400)   managedFields or a wrong apiVersion in an apply body
    ├── Conflict (409)     "Apply failed with 1 conflict: conflict with ..."
    ├── Invalid (422)      a missing, too long or unprintable fieldManager
    └── _ServerError (500) an applied configuration structured-merge-diff cannot type
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from stackwright.localcluster import status
from stackwright.localcluster.patch import go_float
from stackwright.localcluster.schema import Node, builtin_schemas, items_node, types_of

__all__ = [
    "FIELD_MANAGER_MAX_LENGTH",
    "LAST_APPLIED_ANNOTATION",
    "Path",
    "default_manager",
    "drop_empty_fields",
    "drop_empty_metadata_fields",
    "field_set",
    "from_fields_v1",
    "path_string",
    "server_side_apply",
    "to_fields_v1",
    "track_update",
    "validate_field_manager",
]

Resolver = Callable[[Node | None], Node]

#: A path element: a field name (str), or ("k", ((key, value), ...)) for a list-map
#: item, ("v", value) for a set item, ("i", index) for a positional item.
PathElement = Any
Path = tuple[PathElement, ...]

FIELD_MANAGER_MAX_LENGTH = 128
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
# kubectl's server-side apply manager: the apiserver upgrades its client-side-apply
# ownership (lastAppliedManager / lastAppliedUpdater) only for this name.
_KUBECTL = "kubectl"
# The apiserver caps Update entries; the oldest merge into this bucket (capmanagers.go).
_MAX_UPDATE_MANAGERS = 10
_ANCIENT_CHANGES = "ancient-changes"
_TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

# Fields no manager ever owns: the apiserver's stripMetaManager set, plus
# deletionTimestamp and deletionGracePeriodSeconds, which only the server sets.
_STRIPPED: frozenset[Path] = frozenset(
    {
        ("apiVersion",),
        ("kind",),
        ("metadata",),
        ("metadata", "name"),
        ("metadata", "namespace"),
        ("metadata", "creationTimestamp"),
        ("metadata", "selfLink"),
        ("metadata", "uid"),
        ("metadata", "clusterName"),
        ("metadata", "generation"),
        ("metadata", "managedFields"),
        ("metadata", "resourceVersion"),
        ("metadata", "deletionTimestamp"),
        ("metadata", "deletionGracePeriodSeconds"),
    }
)

# List-map keys the official OpenAPI gives a default (SMD fills a missing key from it);
# the bundled definitions carry no defaults, so the few that matter are listed here.
_KEY_DEFAULTS: Mapping[str, Any] = {"protocol": "TCP"}

# Struct fields a zero-valued Go object carries even when empty (value structs, not
# pointers), besides `required` ones: a create compares against that zero object, so
# these are "present before" and get no `.` marker, as on a real server.
_VALUE_STRUCTS = frozenset({"metadata", "spec", "status", "template", "strategy", "updateStrategy"})


# --- sentinels ---------------------------------------------------------------------------

_ABSENT: Any = object()


class _Null:
    """A null the final object drops: one the applied config set, or a container prune emptied.

    It equals None, so comparisons treat it as the null structured-merge-diff sees;
    the typed round trip of a real server then drops it, and so does `_scrub`.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return other is None or other is self

    def __ne__(self, other: object) -> bool:
        return not (other is None or other is self)

    def __hash__(self) -> int:
        return hash(None)

    def __repr__(self) -> str:
        return "null"


_NULL: Any = _Null()


class _Frozen(str):
    """A hashable stand-in (its compact JSON) for a list or map used as a key or set value."""

    __slots__ = ()


class _ItemError(str):
    """Why a list item has no path element (SMD's listItemToPathElement error)."""

    __slots__ = ()


# --- schema facts ------------------------------------------------------------------------------

_MAP, _LIST, _SCALAR, _ANY = 0, 1, 2, 3


class _Type:
    """What structured-merge-diff needs to know about a schema node."""

    __slots__ = ("atomic", "elem", "key_defaults", "keys", "kind", "open", "props", "relation")

    def __init__(
        self,
        kind: int,
        *,
        atomic: bool = False,
        props: Mapping[str, Node] | None = None,
        elem: Node | None = None,
        open_: bool = True,
        relation: str = "atomic",
        keys: tuple[str, ...] = (),
        key_defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.kind = kind
        self.atomic = atomic
        self.props = props or {}
        self.elem = elem
        self.open = open_
        self.relation = relation
        self.keys = keys
        self.key_defaults = key_defaults or {}


_SCALAR_T = _Type(_SCALAR)
_ANY_T = _Type(_ANY)
_DEDUCED_MAP = _Type(_MAP)
_DEDUCED_LIST = _Type(_LIST)
_TYPES: dict[int, tuple[Node, _Type]] = {}


def _type_of(node: Node | None, resolve: Resolver) -> _Type:
    if node is None:
        return _ANY_T
    hit = _TYPES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    found = _compute_type(node, resolve)
    if len(_TYPES) > 200_000:  # CRD schemas come and go; keep the memo bounded
        _TYPES.clear()
    _TYPES[id(node)] = (node, found)
    return found


def _compute_type(raw: Node, resolve: Resolver) -> _Type:
    resolved = resolve(raw)

    def ext(name: str) -> Any:
        # A field-level extension overrides the referenced definition's (claimRef is granular).
        return raw[name] if name in raw else resolved.get(name)

    types = types_of(resolved)
    preserve = bool(ext("x-kubernetes-preserve-unknown-fields"))
    if "object" in types or "properties" in resolved or "additionalProperties" in resolved:
        props = resolved.get("properties") or {}
        extra = resolved.get("additionalProperties")
        elem = extra if isinstance(extra, Mapping) else None
        open_ = elem is not None or not props or preserve
        atomic = ext("x-kubernetes-map-type") == "atomic"
        return _Type(_MAP, atomic=atomic, props=props, elem=elem, open_=open_)
    if "array" in types:
        items = items_node(resolved)
        relation, keys = _list_relation(ext)
        defaults: dict[str, Any] = {}
        if keys and items is not None:
            item_props = resolve(items).get("properties") or {}
            for key in keys:
                declared = resolve(item_props[key]).get("default") if key in item_props else None
                if declared is not None:
                    defaults[key] = declared
                elif key in _KEY_DEFAULTS:
                    defaults[key] = _KEY_DEFAULTS[key]
        return _Type(
            _LIST, relation=relation, keys=tuple(sorted(keys)), key_defaults=defaults, elem=items
        )
    if types:
        return _SCALAR_T
    return _ANY_T


def _list_relation(ext: Callable[[str], Any]) -> tuple[str, tuple[str, ...]]:
    """The list's element relationship, as kube-openapi's schemaconv derives it."""
    declared = ext("x-kubernetes-list-type")
    if declared == "map":
        return "map", tuple(ext("x-kubernetes-list-map-keys") or ())
    if declared == "set":
        return "set", ()
    if declared:
        return "atomic", ()
    strategy = ext("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        merge_key = ext("x-kubernetes-patch-merge-key")
        return ("map", (str(merge_key),)) if merge_key else ("set", ())
    return "atomic", ()


def _shape(t: _Type, value: Any) -> _Type:
    """Untyped ("deduced") nodes take their shape from the value: maps granular, lists atomic."""
    if t.kind != _ANY:
        return t
    if isinstance(value, dict):
        return _DEDUCED_MAP
    if isinstance(value, list):
        return _DEDUCED_LIST
    return _SCALAR_T


def _field_node(t: _Type, key: str) -> Node | None:
    node = t.props.get(key)
    return node if node is not None else t.elem


_STRING: Node = {"type": "string"}
_ROOTS: dict[int, tuple[Node, Node]] = {}


def _typed_root(root: Node | None, resolve: Resolver) -> Node | None:
    """The root with the type meta and ObjectMeta every kind has (CRD schemas leave them implicit)."""
    if root is None:
        return None
    hit = _ROOTS.get(id(root))
    if hit is not None and hit[0] is root:
        return hit[1]
    resolved = resolve(root)
    props = dict(resolved.get("properties") or {})
    props.update(apiVersion=_STRING, kind=_STRING, metadata=_object_meta())
    wrapped: Node = {**resolved, "properties": props, "type": "object"}
    _ROOTS[id(root)] = (root, wrapped)
    return wrapped


@functools.cache
def _object_meta() -> Node:
    """ObjectMeta with every `$ref` inlined, so any resolver types it (custom resources' too)."""
    schemas = builtin_schemas()

    def inline(node: Any, depth: int) -> Any:
        if isinstance(node, Mapping):
            if ("$ref" in node or "allOf" in node) and depth < 12:
                siblings = {k: v for k, v in node.items() if k not in ("$ref", "allOf")}
                return {**inline(schemas.resolve(node), depth + 1), **siblings}
            return {k: inline(v, depth) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, depth) for v in node]
        return node

    meta = inline(schemas.definitions["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"], 0)
    assert isinstance(meta, dict)
    return meta


# --- path elements -------------------------------------------------------------------------------


def _freeze(value: Any) -> Any:
    if isinstance(value, dict | list):
        return _Frozen(json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False))
    if value is _NULL:
        return None
    return value


def _thaw(value: Any) -> Any:
    return json.loads(value) if isinstance(value, _Frozen) else value


def _item_element(t: _Type, item: Any) -> PathElement:
    """listItemToPathElement, or an _ItemError saying why the item has none."""
    if t.relation == "map":
        if item is None or item is _NULL:
            return _ItemError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            return _ItemError("associative list with keys may not have non-map elements")
        pairs = []
        for key in t.keys:
            if key in item:
                value = item[key]
            elif key in t.key_defaults:
                value = t.key_defaults[key]
            else:
                return _ItemError(
                    f"associative list with keys has an element that omits key field {_go_quote(key)} "
                    "(and doesn't have default value)"
                )
            pairs.append((key, _freeze(value)))
        return ("k", tuple(pairs))
    if isinstance(item, dict):
        return _ItemError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        return _ItemError("not supported: associative list with lists as elements")
    if item is None or item is _NULL:
        return _ItemError("associative list without keys has an element that's an explicit null")
    return ("v", _freeze(item))


def path_string(path: Iterable[PathElement]) -> str:
    """A path as structured-merge-diff prints it: `.spec.containers[name="web"].image`."""
    return "".join(_element_string(pe) for pe in path)


def _element_string(pe: PathElement) -> str:
    if isinstance(pe, str):
        return "." + pe
    tag, body = pe
    if tag == "k":
        return "[" + ",".join(f"{name}={_to_string(_thaw(v))}" for name, v in body) + "]"
    if tag == "v":
        return f"[={_to_string(_thaw(body))}]"
    return f"[{body}]"


def _to_string(value: Any) -> str:
    """value.ToString: strings quoted, numbers and booleans bare."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(_to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_to_string(v)}" for k, v in value.items())
    return str(value)


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _go_json(value: Any) -> str:
    """encoding/json's output: compact, sorted keys, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if any(c in text for c in "<>&\u2028\u2029"):
        text = (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    return text


def _element_sort_key(pe: PathElement) -> tuple[Any, ...]:
    """PathElement.Compare: fields < keys < values < indices, each in its own order."""
    if isinstance(pe, str):
        return (0, pe)
    tag, body = pe
    if tag == "k":
        return (1, tuple((name, _value_sort_key(v)) for name, v in body))
    if tag == "v":
        return (2, _value_sort_key(body))
    return (3, body)


def _value_sort_key(value: Any) -> tuple[Any, ...]:
    """value.Compare's total order: numbers < strings < booleans < lists < maps < null."""
    if isinstance(value, _Frozen):
        return (3 if value.startswith("[") else 4, str(value))
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    return (5, 0)


# --- FieldsV1 -----------------------------------------------------------------------------------


def _element_to_v1(pe: PathElement) -> str:
    if isinstance(pe, str):
        return "f:" + pe
    tag, body = pe
    if tag == "k":
        return "k:{" + ",".join(f"{_go_json(name)}:{_go_json(_thaw(v))}" for name, v in body) + "}"
    if tag == "v":
        return "v:" + _go_json(_thaw(body))
    return f"i:{body}"


def _element_from_v1(text: str) -> PathElement:
    tag, sep, body = text.partition(":")
    if sep:
        if tag == "f":
            return body
        if tag == "k":
            fields = json.loads(body)
            if not isinstance(fields, dict):
                raise ValueError(f"expected key value pairs in {text!r}")
            return ("k", tuple(sorted((str(k), _freeze(v)) for k, v in fields.items())))
        if tag == "v":
            return ("v", _freeze(json.loads(body)))
        if tag == "i":
            return ("i", int(body))
    raise ValueError(f"unknown path element type in {text!r}")


def from_fields_v1(fields: Mapping[str, Any]) -> set[Path]:
    """The paths a FieldsV1 trie names; `.` marks the enclosing path as a member itself."""
    out: set[Path] = set()
    _decode_v1(fields, (), out)
    return out


def _decode_v1(fields: Mapping[str, Any], prefix: Path, out: set[Path]) -> None:
    for text, children in fields.items():
        if text == ".":
            out.add(prefix)
            continue
        if not isinstance(children, Mapping):
            raise ValueError(f"expected an object under {text!r}")
        path = (*prefix, _element_from_v1(text))
        if children:
            _decode_v1(children, path, out)
        else:
            out.add(path)


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """The FieldsV1 trie of a set of paths, ordered as the API server serializes it."""
    return _encode_v1(_trie(paths))


def _encode_v1(trie: dict[PathElement, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pe in sorted(trie, key=_element_sort_key):
        member, children = trie[pe]
        if children:
            inner = _encode_v1(children)
            out[_element_to_v1(pe)] = {".": {}, **inner} if member else inner
        else:
            out[_element_to_v1(pe)] = {}
    return out


def _trie(paths: Iterable[Path]) -> dict[PathElement, list[Any]]:
    """Paths as a tree: element -> [is a member, children or None]."""
    root: dict[PathElement, list[Any]] = {}
    for path in paths:
        node = root
        last = len(path) - 1
        for depth, pe in enumerate(path):
            entry = node.get(pe)
            if entry is None:
                entry = node[pe] = [False, None]
            if depth == last:
                entry[0] = True
            else:
                if entry[1] is None:
                    entry[1] = {}
                node = entry[1]
    return root


def _iterate(paths: Iterable[Path]) -> list[Path]:
    """Set.Iterate's order: at each level its members, then each child's subtree."""
    out: list[Path] = []

    def walk(trie: dict[PathElement, list[Any]], prefix: Path) -> None:
        ordered = sorted(trie, key=_element_sort_key)
        for pe in ordered:
            if trie[pe][0]:
                out.append((*prefix, pe))
        for pe in ordered:
            if trie[pe][1]:
                walk(trie[pe][1], (*prefix, pe))

    walk(_trie(paths), ())
    return out


# --- ToFieldSet ------------------------------------------------------------------------------


def field_set(obj: Any, root: Node | None, resolve: Resolver) -> set[Path]:
    """The fields an object sets, as structured-merge-diff's ToFieldSet, minus never-managed metadata.

    Leaves, map keys and list items are members; struct fields that hold other
    fields are not (an apply owns `.spec.replicas`, not `.spec`).
    """
    out: set[Path] = set()
    _collect(obj, _typed_root(root, resolve), resolve, (), out, None)
    return out - _STRIPPED


def _collect(
    value: Any,
    node: Node | None,
    resolve: Resolver,
    path: Path,
    out: set[Path],
    errors: list[str] | None,
) -> None:
    """ToFieldSet of `value` into `out`; with `errors`, also validate it as an applied config."""
    t = _shape(_type_of(node, resolve), value)
    kind = t.kind
    if kind == _MAP:
        if t.atomic or not isinstance(value, dict):
            if t.atomic or (value is not None and value is not _NULL):
                out.add(path)
            if errors is not None and isinstance(value, dict):
                _collect_unowned(value, t, resolve, path, errors)
            return
        props = t.props
        for key, item in value.items():
            sub = props.get(key)
            child = (*path, key)
            if sub is not None:
                _collect(item, sub, resolve, child, out, errors)
                if item is None or item is _NULL or (isinstance(item, dict) and not item):
                    # A null or an empty map is a member itself (ToFieldSet's `IsNull() ||
                    # AsMap().Length() == 0`): its applier owns that it is so, as
                    # `f:annotations: {}`, not any key; a map pruning emptied (null) too.
                    out.add(child)
            elif t.open:
                _collect(item, t.elem, resolve, child, out, errors)
                out.add(child)
            elif errors is not None:
                errors.append(f"{path_string(child)}: field not declared in schema")
            else:
                _collect(item, None, resolve, child, out, errors)
                out.add(child)
        return
    if kind == _LIST:
        if t.relation == "atomic" or not isinstance(value, list):
            if t.relation == "atomic" or (value is not None and value is not _NULL):
                out.add(path)
            if errors is not None and isinstance(value, list):
                for index, item in enumerate(value):
                    _collect(item, t.elem, resolve, (*path, ("i", index)), set(), errors)
            return
        seen: set[PathElement] = set()
        for index, item in enumerate(value):
            pe = _item_element(t, item)
            if isinstance(pe, _ItemError):
                if errors is not None:
                    errors.append(f"{path_string(path)}: element {index}: {pe}")
                continue
            if pe in seen:
                if errors is not None:
                    errors.append(
                        f"{path_string(path)}: duplicate entries for key {_element_string(pe)}"
                    )
                continue
            seen.add(pe)
            child = (*path, pe)
            _collect(item, t.elem, resolve, child, out, errors)
            out.add(child)
        return
    out.add(path)


def _collect_unowned(
    value: dict[str, Any], t: _Type, resolve: Resolver, path: Path, errors: list[str]
) -> None:
    """Validate inside an atomic map: its contents are owned whole, but must still be declared."""
    scratch: set[Path] = set()
    for key, item in value.items():
        sub = t.props.get(key)
        if sub is None and not t.open:
            errors.append(f"{path_string((*path, key))}: field not declared in schema")
            continue
        _collect(item, sub if sub is not None else t.elem, resolve, (*path, key), scratch, errors)


# --- Go's omitempty -------------------------------------------------------------------------------


#: Optional list fields whose Go `json` tag has no `omitempty` (k8s.io/api types.go), by
#: definition: protobuf storage has no empty list, so `[]` comes back nil, which Go prints
#: as null (`rules: null`, as an aggregated ClusterRole shows before its rules are filled
#: in). Every other list field of a built-in kind is `omitempty` but the required ones
#: (the schema's `required`: kube-openapi makes a field required when its tag lacks
#: `omitempty` and it has no `+optional`), which come back null too.
_NULL_WHEN_EMPTY: Mapping[str, frozenset[str]] = {
    "io.k8s.api.rbac.v1.ClusterRole": frozenset({"rules"}),
    "io.k8s.api.rbac.v1.Role": frozenset({"rules"}),
    "io.k8s.api.discovery.v1.EndpointSlice": frozenset({"ports"}),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus": (
        frozenset({"conditions", "storedVersions"})
    ),
}


def drop_empty_fields(obj: Any, root: Node | None, resolve: Resolver) -> None:
    """Remove, in place, what a built-in object's round trip through the API server's Go
    types and protobuf storage drops: the empty maps of its map fields (`data: {}`, a pod
    template's `annotations: {}`) and the empty lists of its list fields (`finalizers: []`,
    a container's `env: []`), all `omitempty`, protobuf having neither; an empty list whose
    field is not `omitempty` comes back null (a Role's `rules: []`). An empty struct stays
    (`resources: {}`), as Go prints one. So an applier of `data: {}` (or of an atomic
    `command: []`) owns a field that is not there, and whoever adds it back adds that field.
    """
    _drop_empty_fields(obj, _typed_root(root, resolve), resolve)


def drop_empty_metadata_fields(obj: Any, resolve: Resolver) -> None:
    """`drop_empty_fields` for a custom object: its metadata alone (`labels: {}`,
    `finalizers: []`). The API server stores the rest as the JSON it is, empty maps and
    lists too, but decodes its metadata into ObjectMeta and back (apiextensions'
    `objectmeta.SetObjectMeta`), whose unstructured converter drops them (omitempty)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        _drop_empty_fields(meta, _object_meta(), resolve)


def _drop_empty_fields(value: Any, node: Node | None, resolve: Resolver) -> None:
    t = _type_of(node, resolve)
    if isinstance(value, dict) and t.kind == _MAP:
        for key in [*value]:
            item = value[key]
            sub = _field_node(t, key)
            if (item == {} or item == []) and sub is not None and key in t.props:
                inner = _type_of(sub, resolve)
                if item == {} and inner.kind == _MAP and inner.elem is not None and not inner.props:
                    del value[key]
                    continue
                if item == [] and inner.kind == _LIST:
                    if key in _kept_lists(resolve(node)):
                        value[key] = None
                    else:
                        del value[key]
                    continue
            if isinstance(item, dict | list):
                _drop_empty_fields(item, sub, resolve)
    elif isinstance(value, list) and t.kind == _LIST:
        for item in value:
            if isinstance(item, dict | list):
                _drop_empty_fields(item, t.elem, resolve)


def _kept_lists(struct: Node) -> frozenset[str]:
    """The list fields of a struct that Go prints when empty (as null): no `omitempty`."""
    name = _definition_names().get(id(struct))
    gvk = struct.get("x-kubernetes-group-version-kind")
    if name is None and gvk:  # a kind's root, copied by `_typed_root`
        name = builtin_schemas().definition_name(gvk[0]["group"], gvk[0]["version"], gvk[0]["kind"])
    kept = _NULL_WHEN_EMPTY.get(name or "", frozenset())
    return kept.union(struct.get("required") or ())


@functools.cache
def _definition_names() -> dict[int, str]:
    return {id(node): name for name, node in builtin_schemas().definitions.items()}


# --- merge (apply) ------------------------------------------------------------------------------


def _merge(lhs: Any, rhs: Any, node: Node | None, resolve: Resolver) -> Any:
    """typed.Merge with ruleKeepRHS: the applied value wins at leaves; maps and lists merge by schema."""
    if rhs is _ABSENT:
        return lhs
    if lhs is _ABSENT or lhs is rhs:
        return rhs
    t = _type_of(node, resolve)
    if t.kind == _ANY:
        if not (isinstance(lhs, dict) and isinstance(rhs, dict)):
            return rhs
        t = _DEDUCED_MAP
    if t.kind == _MAP:
        if t.atomic:
            return rhs
        left = lhs if isinstance(lhs, dict) and lhs else None
        right = rhs if isinstance(rhs, dict) and rhs else None
        if right is None:
            return lhs if left is not None else rhs
        if left is None:
            return rhs
        out: dict[str, Any] | None = None
        props, elem = t.props, t.elem
        for key, value in right.items():
            current = left.get(key, _ABSENT)
            if current is value:
                continue
            sub = props.get(key)
            merged = _merge(current, value, sub if sub is not None else elem, resolve)
            if merged is not current:
                if out is None:
                    out = dict(left)
                out[key] = merged
        return left if out is None else out
    if t.kind == _LIST:
        if t.relation == "atomic":
            return rhs
        left_list = lhs if isinstance(lhs, list) and lhs else None
        right_list = rhs if isinstance(rhs, list) and rhs else None
        if right_list is None:
            return lhs if left_list is not None else rhs
        if left_list is None:
            return rhs
        return _merge_list(left_list, right_list, t, resolve)
    return rhs


def _merge_list(lhs: list[Any], rhs: list[Any], t: _Type, resolve: Resolver) -> list[Any]:
    """visitListItems: live-only items stay where they were, applied items follow the applied order."""
    rhs_order: list[PathElement] = []
    rhs_items: dict[PathElement, Any] = {}
    for item in rhs:
        pe = _item_element(t, item)
        if not isinstance(pe, _ItemError) and pe not in rhs_items:
            rhs_order.append(pe)
            rhs_items[pe] = item
    lhs_order: list[PathElement] = []
    lhs_items: dict[PathElement, Any] = {}
    for index, item in enumerate(lhs):
        pe = _item_element(t, item)
        if isinstance(pe, _ItemError) or pe in lhs_items:
            if pe in rhs_items:
                continue  # a duplicate the applied item replaces
            pe = ("i", index)  # keep what cannot be keyed, in place
        lhs_order.append(pe)
        lhs_items[pe] = item
    shared = [pe for pe in rhs_order if pe in lhs_items]
    shared_at = 0
    next_shared = shared[0] if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []
    elem = t.elem
    li = ri = 0
    l_len, r_len = len(lhs_order), len(rhs_order)
    while li < l_len or ri < r_len:
        if li < l_len and ri < r_len:
            pe = lhs_order[li]
            if pe == rhs_order[ri]:
                merged_rhs.add(pe)
                out.append(_merge(lhs_items[pe], rhs_items[pe], elem, resolve))
                li += 1
                ri += 1
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
                continue
            if pe in rhs_items and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, but not the one due in this round
                continue
        if li < l_len:
            pe = lhs_order[li]
            if pe not in rhs_items:
                out.append(lhs_items[pe])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < r_len:
            pe = rhs_order[ri]
            merged_rhs.add(pe)
            out.append(_merge(lhs_items.get(pe, _ABSENT), rhs_items[pe], elem, resolve))
            ri += 1
            if next_shared is not None and next_shared == pe:
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
    if len(out) == len(lhs) and all(a is b for a, b in zip(out, lhs, strict=True)):
        return lhs
    return out


# --- compare ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Comparison:
    added: set[Path]
    modified: set[Path]
    removed: set[Path]


def _compare(lhs: Any, rhs: Any, root: Node | None, resolve: Resolver) -> _Comparison:
    result = _Comparison(set(), set(), set())
    _compare_into(lhs, rhs, root, resolve, (), result)
    return result


def _compare_into(
    lhs: Any, rhs: Any, node: Node | None, resolve: Resolver, path: Path, c: _Comparison
) -> None:
    """TypedValue.Compare for two present values: leaves modified, subtrees added or removed whole."""
    if lhs is rhs:
        return
    t = _type_of(node, resolve)
    if t.kind == _ANY:
        t = _DEDUCED_MAP if isinstance(lhs, dict) and isinstance(rhs, dict) else _SCALAR_T
    if t.kind == _MAP and not t.atomic:
        left = lhs if isinstance(lhs, dict) else None
        right = rhs if isinstance(rhs, dict) else None
        if left or right:
            if lhs == rhs:
                return
            left = left or {}
            right = right or {}
            props, elem = t.props, t.elem
            for key, value in left.items():
                sub = props.get(key)
                sub = sub if sub is not None else elem
                other = right.get(key, _ABSENT)
                if other is _ABSENT:
                    _all_paths(value, sub, resolve, (*path, key), c.removed)
                else:
                    _compare_into(value, other, sub, resolve, (*path, key), c)
            for key, value in right.items():
                if key not in left:
                    sub = props.get(key)
                    _all_paths(
                        value, sub if sub is not None else elem, resolve, (*path, key), c.added
                    )
            return
    elif t.kind == _LIST and t.relation != "atomic":
        left_list = lhs if isinstance(lhs, list) else None
        right_list = rhs if isinstance(rhs, list) else None
        if left_list or right_list:
            if lhs == rhs:
                return
            left_items = _index_items(left_list or [], t)
            right_items = _index_items(right_list or [], t)
            for pe, value in left_items.items():
                other = right_items.get(pe, _ABSENT)
                if other is _ABSENT:
                    _all_paths(value, t.elem, resolve, (*path, pe), c.removed)
                else:
                    _compare_into(value, other, t.elem, resolve, (*path, pe), c)
            for pe, value in right_items.items():
                if pe not in left_items:
                    _all_paths(value, t.elem, resolve, (*path, pe), c.added)
            return
    if lhs != rhs:
        c.modified.add(path)


def _index_items(items: list[Any], t: _Type) -> dict[PathElement, Any]:
    """Items by path element; unkeyable items are skipped and repeats ignored, as Compare does."""
    out: dict[PathElement, Any] = {}
    for item in items:
        pe = _item_element(t, item)
        if not isinstance(pe, _ItemError) and pe not in out:
            out[pe] = item
    return out


def _all_paths(
    value: Any, node: Node | None, resolve: Resolver, path: Path, out: set[Path]
) -> None:
    """Every path of a subtree: what Compare reports when one side lacks it."""
    out.add(path)
    t = _shape(_type_of(node, resolve), value)
    if t.kind == _MAP and not t.atomic and isinstance(value, dict):
        props, elem = t.props, t.elem
        for key, item in value.items():
            sub = props.get(key)
            _all_paths(item, sub if sub is not None else elem, resolve, (*path, key), out)
    elif t.kind == _LIST and t.relation != "atomic" and isinstance(value, list):
        for pe, item in _index_items(value, t).items():
            _all_paths(item, t.elem, resolve, (*path, pe), out)


# --- removal (prune) --------------------------------------------------------------------------


def _remove_items(
    value: Any, trie: dict[PathElement, list[Any]], node: Node | None, resolve: Resolver
) -> Any:
    """RemoveItems: drop every member path (with its subtree); what it empties becomes null."""
    t = _shape(_type_of(node, resolve), value)
    if t.kind == _MAP:
        if not isinstance(value, dict) or not value or t.atomic:
            return _NULL
        out: dict[str, Any] = {}
        for key, item in value.items():
            entry = trie.get(key)
            if entry is None:
                out[key] = item
                continue
            if entry[0]:
                continue
            if entry[1]:
                item = _remove_items(item, entry[1], _field_node(t, key), resolve)
            out[key] = item
        return out if out else _NULL
    if t.kind == _LIST:
        if not isinstance(value, list) or not value or t.relation == "atomic":
            return _NULL
        items: list[Any] = []
        for item in value:
            pe = _item_element(t, item)
            entry = None if isinstance(pe, _ItemError) else trie.get(pe)
            if entry is None:
                items.append(item)
                continue
            if entry[0]:
                continue
            if entry[1]:
                item = _remove_items(item, entry[1], t.elem, resolve)
            items.append(item)
        return items if items else _NULL
    return value


def _ensure_named(paths: set[Path], root: Node | None, resolve: Resolver) -> set[Path]:
    """EnsureNamedFieldsAreMembers: struct fields that hold owned fields count as owned too."""
    extra: list[Path] = []

    def walk(trie: dict[PathElement, list[Any]], node: Node | None, prefix: Path) -> None:
        t = _type_of(node, resolve)
        for pe, (member, children) in trie.items():
            if not children:
                continue
            path = (*prefix, pe)
            if isinstance(pe, str):
                if not member and pe in t.props:
                    extra.append(path)
                sub = _field_node(t, pe) if t.kind == _MAP else None
            else:
                sub = t.elem if t.kind == _LIST else None
            walk(children, sub, path)

    walk(_trie(paths), root, ())
    return paths.union(extra) if extra else paths


def _lenient_set(obj: Any, root: Node | None, resolve: Resolver) -> set[Path]:
    out: set[Path] = set()
    _collect(obj, root, resolve, (), out, None)
    return out


def _prune(
    merged: Any, managed: set[Path], last: set[Path], root: Node | None, resolve: Resolver
) -> Any:
    """Updater.prune: remove what the applier owned last time and nobody owns now."""
    last_e = _ensure_named(last, root, resolve)
    merged_e = _ensure_named(_lenient_set(merged, root, resolve), root, resolve)
    pruned = _remove_items(merged, _trie(last_e), root, resolve)
    pruned_e = _ensure_named(_lenient_set(pruned, root, resolve), root, resolve)
    managed_e = _ensure_named(managed, root, resolve)
    # addBackOwnedItems: put back whatever any manager (this applier's new set included) owns.
    pruned = _remove_items(merged, _trie(merged_e - (pruned_e | managed_e)), root, resolve)
    # addBackDanglingItems: only what this applier owned before may go.
    pruned_e = _ensure_named(_lenient_set(pruned, root, resolve), root, resolve)
    removal = (merged_e - pruned_e) & last_e
    if not removal:
        return merged
    return _remove_items(merged, _trie(removal), root, resolve)


def _scrub(value: Any) -> Any:
    """Drop the nulls `_NULL` marks (from the applied config or emptied by prune)."""
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, item in value.items():
            if item is _NULL:
                if out is None:
                    out = dict(value)
                del out[key]
                continue
            if isinstance(item, dict | list):
                cleaned = _scrub(item)
                if cleaned is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = cleaned
        return value if out is None else out
    if isinstance(value, list):
        items = [_scrub(item) for item in value if item is not _NULL]
        if len(items) == len(value) and all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items
    return value


def _mark_nulls(value: Any) -> Any:
    """The applied config with its null map members replaced by `_NULL` (copied where changed)."""
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, item in value.items():
            marked = _NULL if item is None else _mark_nulls(item)
            if marked is not item:
                if out is None:
                    out = dict(value)
                out[key] = marked
        return value if out is None else out
    if isinstance(value, list):
        items = [_mark_nulls(item) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items
    return value


# --- managers ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Manager:
    """One managedFields entry, decoded."""

    manager: str
    operation: str
    api_version: str
    subresource: str
    time: Any
    fields: set[Path] | frozenset[Path]
    source_fields: set[Path] | frozenset[Path] | None = None
    source_v1: Any = None

    @property
    def applied(self) -> bool:
        return self.operation == "Apply"

    def identity(self) -> str:
        return _identity(self.manager, self.operation, self.api_version, self.subresource)

    def describe(self) -> str:
        """printManager: how a conflict message names this manager."""
        text = _go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {_go_quote(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


def _identity(manager: str, operation: str, api_version: str, subresource: str) -> str:
    """BuildManagerIdentifier: the entry as JSON without time and fields; appliers without apiVersion."""
    parts = []
    if manager:
        parts.append(f'"manager":{_go_json(manager)}')
    if operation:
        parts.append(f'"operation":{_go_json(operation)}')
    if api_version and operation != "Apply":
        parts.append(f'"apiVersion":{_go_json(api_version)}')
    if subresource:
        parts.append(f'"subresource":{_go_json(subresource)}')
    return "{" + ",".join(parts) + "}"


class _DecodeError(Exception):
    pass


def _decode_managers(entries: Any) -> dict[str, _Manager]:
    """DecodeManagedFields: later entries with the same identity replace earlier ones."""
    managers: dict[str, _Manager] = {}
    if not entries:
        return managers
    if not isinstance(entries, list):
        raise _DecodeError("managedFields must be a list")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise _DecodeError(f"managed fields entry {index} is not an object")
        operation = entry.get("operation") or ""
        if operation not in ("Apply", "Update"):
            raise _DecodeError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise _DecodeError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if fields_type != "FieldsV1":
            if not fields_type:
                raise _DecodeError(f"missing fieldsType in managed fields entry {index}")
            raise _DecodeError(
                f"invalid fieldsType {_go_quote(str(fields_type))} in managed fields entry {index}"
            )
        raw = entry.get("fieldsV1")
        try:
            fields = frozenset(from_fields_v1(raw)) if raw else frozenset()
        except (ValueError, TypeError) as exc:
            raise _DecodeError(f"error decoding versioned set: {exc}") from None
        found = _Manager(
            manager=str(entry.get("manager") or ""),
            operation=operation,
            api_version=str(api_version),
            subresource=str(entry.get("subresource") or ""),
            time=entry.get("time"),
            fields=fields,
            source_fields=fields,
            source_v1=raw,
        )
        managers[found.identity()] = found
    return managers


def _encode_managers(managers: dict[str, _Manager]) -> list[dict[str, Any]]:
    """encodeManagedFields: every non-empty set, sorted by operation, time, manager, version, subresource."""
    ordered = sorted(
        (m for m in managers.values() if m.fields),
        key=lambda m: (m.operation, _seconds(m.time), m.manager, m.api_version, m.subresource),
    )
    out: list[dict[str, Any]] = []
    for m in ordered:
        if m.source_v1 is not None and m.fields == m.source_fields:
            fields_v1 = m.source_v1
        else:
            fields_v1 = to_fields_v1(m.fields)
        entry: dict[str, Any] = {
            "manager": m.manager,
            "operation": m.operation,
            "apiVersion": m.api_version,
        }
        if m.time is not None:
            entry["time"] = m.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = fields_v1
        if m.subresource:
            entry["subresource"] = m.subresource
        out.append(entry)
    return out


def _seconds(moment: Any) -> int:
    if not moment:
        return 0
    try:
        parsed = datetime.datetime.fromisoformat(str(moment))
    except ValueError:
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return int(parsed.timestamp())


def _cap_update_managers(managers: dict[str, _Manager]) -> None:
    """capUpdateManagers: past ten Update entries, the oldest fold into "ancient-changes"."""
    updaters = [ident for ident, m in managers.items() if not m.applied]
    if len(updaters) <= _MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda ident: (_seconds(managers[ident].time), ident))
    count = len(updaters)
    for ident in updaters:
        if count <= _MAX_UPDATE_MANAGERS:
            break
        oldest = managers[ident]
        bucket = _identity(_ANCIENT_CHANGES, "Update", oldest.api_version, "")
        if bucket == ident:
            continue
        existing = managers.get(bucket)
        del managers[ident]
        if existing is None:
            managers[bucket] = _Manager(
                _ANCIENT_CHANGES, "Update", oldest.api_version, "", oldest.time, oldest.fields
            )
        else:
            existing.fields = existing.fields | oldest.fields
            existing.time = oldest.time
            count -= 1


# --- public: field manager names ---------------------------------------------------------------------


def default_manager(user_agent: str) -> str:
    """prefixFromUserAgent: the User-Agent up to its first '/', printable, at most 128 bytes."""
    prefix = user_agent.split("/", 1)[0]
    out: list[str] = []
    size = 0
    for char in prefix:
        if not char.isprintable():
            continue
        width = len(char.encode("utf-8"))
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(char)
        size += width
    return "".join(out)


def validate_field_manager(
    field_manager: str | None, *, apply: bool = False, options_kind: str = "PatchOptions"
) -> None:
    """The request options' fieldManager checks, as a 422 on `<options_kind>.meta.k8s.io`."""
    causes: list[status.Cause] = []
    name = field_manager or ""
    if apply and not name:
        causes.append(status.required("fieldManager", "is required for apply patch"))
    if len(name.encode("utf-8")) > FIELD_MANAGER_MAX_LENGTH:
        causes.append(status.too_long("fieldManager", name, FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for char in name:
        if not char.isprintable():
            causes.append(
                status.invalid(
                    "fieldManager",
                    name,
                    f"invalid character U+{ord(char):04X} (at position {position})",
                )
            )
        position += len(char.encode("utf-8"))
    if causes:
        raise status.invalid_object(options_kind, "meta.k8s.io", "", causes)


# --- public: update tracking ----------------------------------------------------------------------


def track_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    root: Node | None,
    resolve: Resolver,
    api_version: str,
    now: str,
    subresource: str = "",
) -> None:
    """Set `new["metadata"]["managedFields"]` after a create, update or (non-apply) patch.

    The manager's Update entry gains every field added or changed between `old` and
    `new` (on create: every field of `new`, defaults included); every other manager
    loses the fields that changed or went away. A request may rewrite managedFields
    itself: its entries are used instead of the old ones, and `[]` or `[{}]` clears
    them. Writes to a subresource always start from the stored entries. An update of an
    object left without entries (cleared) records none, as the API server's
    skipNonAppliedManager does: it tracks an object again from its next apply.
    """
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        return
    root = _typed_root(root, resolve)
    manager = manager or "unknown"
    old_meta = old.get("metadata") if isinstance(old, dict) else None
    stored = old_meta.get("managedFields") if isinstance(old_meta, dict) else None
    given = meta.get("managedFields")
    try:
        if subresource:
            managers = _decode_managers(stored)
        elif isinstance(given, list) and _is_reset(given):
            managers = {}
        else:
            try:
                managers = _decode_managers(given)
            except _DecodeError:
                managers = {}
            if not managers:
                managers = _decode_managers(stored)
    except _DecodeError:
        return  # as decodeLiveOrNew's failure: the object goes through untouched
    if not managers and old is not None:
        # skipNonAppliedManager: an existing object without managedFields (cleared, or made
        # before they were kept) is not tracked by an update; only an apply starts again.
        meta.pop("managedFields", None)
        return
    before = _without_managed_fields(old) if old is not None else _zero_object(root, resolve)
    after = _without_managed_fields(new)
    comparison = _compare(before, after, root, resolve)
    changed = comparison.added | comparison.modified
    if changed or comparison.removed:
        for entry in managers.values():
            if entry.fields and not (
                changed.isdisjoint(entry.fields) and comparison.removed.isdisjoint(entry.fields)
            ):
                entry.fields = entry.fields - changed - comparison.removed
    taken = changed - _STRIPPED
    if taken:
        ident = _identity(manager, "Update", api_version, subresource)
        previous = managers.get(ident)
        if previous is None:
            managers[ident] = _Manager(manager, "Update", api_version, subresource, now, taken)
        else:
            previous.fields = previous.fields | taken
            previous.time = now
        _cap_update_managers(managers)
    encoded = _encode_managers(managers)
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)


def _is_reset(entries: list[Any]) -> bool:
    if not entries:
        return True
    return (
        len(entries) == 1
        and isinstance(entries[0], dict)
        and all(v in (None, "") for v in entries[0].values())
    )


def _without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = dict(obj)
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


_ZEROS: dict[int, tuple[Node | None, dict[str, Any]]] = {}


def _zero_object(root: Node | None, resolve: Resolver) -> dict[str, Any]:
    """The zero-valued object a create compares against: a built-in kind's value structs exist already."""
    if root is None or "x-kubernetes-group-version-kind" not in root:
        return {}
    hit = _ZEROS.get(id(root))
    if hit is not None and hit[0] is root:
        return hit[1]
    zero = _zero_struct(root, resolve, 0)
    _ZEROS[id(root)] = (root, zero)
    return zero


def _zero_struct(node: Node, resolve: Resolver, depth: int) -> dict[str, Any]:
    resolved = resolve(node)
    required = set(resolved.get("required") or ())
    out: dict[str, Any] = {}
    for name, sub in (resolved.get("properties") or {}).items():
        t = _type_of(sub, resolve)
        if t.kind == _MAP and t.props and (name in required or name in _VALUE_STRUCTS):
            out[name] = _zero_struct(sub, resolve, depth + 1) if depth < 4 else {}
        elif name in required and t.kind in (_MAP, _LIST):
            out[name] = None  # a required pointer or slice: present, as null
    return out


# --- public: server-side apply -------------------------------------------------------------------


class _ServerError(status.APIError):
    """An error the API server does not convert: 500 with no reason (StatusReasonUnknown)."""

    code, reason = 500, ""


class _Conflicts(Exception):
    def __init__(self, conflicts: dict[str, tuple[_Manager, set[Path]]]) -> None:
        super().__init__("conflicts")
        self.conflicts = conflicts


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    root: Node | None,
    resolve: Resolver,
    api_version: str,
    now: str,
    subresource: str = "",
) -> dict[str, Any]:
    """Merge an applied configuration into the live object (None: create); returns the new object.

    The result carries updated `metadata.managedFields`. Raises `status.Conflict`
    (409, with a FieldManagerConflict cause per field) when the apply would change
    a field another manager owns and `force` is false; with `force` the fields
    change hands. kubectl's own manager ("kubectl") may take over, without
    conflict, fields it set by client-side apply (the last-applied annotation),
    and keeps that annotation in step, as the API server does.
    """
    validate_field_manager(manager, apply=True)
    root = _typed_root(root, resolve)
    meta = applied.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise status.BadRequest("metadata.managedFields must be nil")
    given_version = applied.get("apiVersion")
    if given_version is not None and given_version != api_version:
        raise status.BadRequest(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {given_version}, expected: {api_version}"
        )
    try:
        managers = _decode_managers((live or {}).get("metadata", {}).get("managedFields"))
    except _DecodeError as exc:
        raise _ServerError(f"failed to decode managed fields: {exc}") from None
    config_set: set[Path] = set()
    errors: list[str] = []
    _collect(applied, root, resolve, (), config_set, errors)
    if errors:
        raise _ServerError(
            f"failed to create typed patch object ({_describe_object(applied)}): {_join_errors(errors)}"
        )
    base = _without_managed_fields(live) if live is not None else {}
    try:
        return _apply(
            base,
            applied,
            config_set,
            managers,
            manager,
            force,
            root,
            resolve,
            api_version,
            now,
            subresource,
        )
    except _Conflicts as exc:
        conflicts = exc.conflicts
    if manager == _KUBECTL and live is not None:
        allowed = _client_side_owned(base, root, resolve)
        remaining = {
            ident: (who, paths - allowed)
            for ident, (who, paths) in conflicts.items()
            if paths - allowed
        }
        if not remaining:
            return _apply(
                base,
                applied,
                config_set,
                managers,
                manager,
                True,
                root,
                resolve,
                api_version,
                now,
                subresource,
            )
        conflicts = remaining
    raise _conflict_error(conflicts)


def _apply(
    live: dict[str, Any],
    applied: dict[str, Any],
    config_set: set[Path],
    stored: dict[str, _Manager],
    manager: str,
    force: bool,
    root: Node | None,
    resolve: Resolver,
    api_version: str,
    now: str,
    subresource: str,
) -> dict[str, Any]:
    managers = {ident: _copy_manager(m) for ident, m in stored.items()}
    marked = _mark_nulls(applied) if _may_hold_null(applied) else applied
    # Only nulls from the config or from pruning need scrubbing out of the result.
    needs_scrub = marked is not applied
    merged = _merge(live, marked, root, resolve)
    ident = _identity(manager, "Apply", api_version, subresource)
    previous = managers.get(ident)
    last = previous.fields if previous is not None else frozenset()
    mine = _Manager(
        manager, "Apply", api_version, subresource, previous.time if previous else None, config_set
    )
    if previous is not None:
        mine.source_fields, mine.source_v1 = previous.source_fields, previous.source_v1
    managers[ident] = mine
    if last:
        everyone: set[Path] = set()
        for m in managers.values():
            everyone |= m.fields
        if not last <= everyone:
            merged = _prune(merged, everyone, set(last), root, resolve)
            needs_scrub = True
    comparison = _compare(live, merged, root, resolve)
    changed = comparison.added | comparison.modified
    conflicts: dict[str, tuple[_Manager, set[Path]]] = {}
    if changed:
        for other_ident, other in managers.items():
            if other_ident != ident and not changed.isdisjoint(other.fields):
                conflicts[other_ident] = (other, set(changed & other.fields))
    if conflicts and not force:
        raise _Conflicts(conflicts)
    for other, paths in conflicts.values():
        other.fields = other.fields - paths
    if comparison.removed:
        for other_ident, other in managers.items():
            if other_ident != ident and not comparison.removed.isdisjoint(other.fields):
                other.fields = other.fields - comparison.removed
    mine.fields = mine.fields - _STRIPPED
    if merged != live:
        mine.time = now
    result = _scrub(merged) if needs_scrub else merged
    result = dict(result) if result is live or result is applied else result
    new_meta = result.get("metadata")
    result["metadata"] = dict(new_meta) if isinstance(new_meta, dict) else {}
    if manager == _KUBECTL:
        _sync_last_applied(result["metadata"], applied)
    encoded = _encode_managers(managers)
    if encoded:
        result["metadata"]["managedFields"] = encoded
    else:
        result["metadata"].pop("managedFields", None)
    return result


def _may_hold_null(value: Any) -> bool:
    """A quick over-approximation (one C-level dump) of "the config sets some field to null"."""
    try:
        return b"null" in orjson.dumps(value, default=str)
    except TypeError:
        return True


def _copy_manager(m: _Manager) -> _Manager:
    return _Manager(
        m.manager,
        m.operation,
        m.api_version,
        m.subresource,
        m.time,
        m.fields,
        m.source_fields,
        m.source_v1,
    )


def _describe_object(obj: Mapping[str, Any]) -> str:
    """objectGVKNN: `namespace/name; group/version, Kind=Kind`."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}, Kind={obj.get('kind', '')}"


def _join_errors(errors: list[str]) -> str:
    if len(errors) == 1:
        return errors[0]
    return "\n".join(["errors:", *("  " + e for e in errors)])


def _conflict_error(conflicts: dict[str, tuple[_Manager, set[Path]]]) -> status.Conflict:
    """NewConflictError: the API server's message and one FieldManagerConflict cause per field."""
    causes: list[dict[str, str]] = []
    lines: list[str] = []
    total = 0
    single = ""
    for ident in sorted(conflicts):
        who, paths = conflicts[ident]
        ordered = _iterate(paths)
        total += len(ordered)
        lines.append(f"conflicts with {who.describe()}:")
        for path in ordered:
            shown = path_string(path)
            lines.append(f"- {shown}")
            causes.append(
                {
                    "reason": status.FIELD_MANAGER_CONFLICT,
                    "message": f"conflict with {who.describe()}",
                    "field": shown,
                }
            )
            single = f"conflict with {who.describe()}: {shown}"
    if total == 1:
        message = f"Apply failed with 1 conflict: {single}"
    else:
        message = f"Apply failed with {total} conflicts: " + "\n".join(lines)
    return status.Conflict(message, details={"causes": causes})


def _client_side_owned(live: dict[str, Any], root: Node | None, resolve: Resolver) -> set[Path]:
    """allowedConflictsFromLastApplied: fields the last-applied annotation set and live still holds."""
    annotations = live.get("metadata", {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED_ANNOTATION) if isinstance(annotations, dict) else None
    if not text:
        return set()
    try:
        last_applied = json.loads(text)
    except ValueError:
        return set()
    if not isinstance(last_applied, dict):
        return set()
    owned = _lenient_set(last_applied, root, resolve)
    differs = _compare(last_applied, live, root, resolve)
    return owned - differs.modified - differs.added - differs.removed


def _sync_last_applied(meta: dict[str, Any], applied: dict[str, Any]) -> None:
    """lastAppliedUpdater: kubectl's apply keeps an existing last-applied annotation current."""
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or LAST_APPLIED_ANNOTATION not in annotations:
        return
    config = dict(applied)
    config_meta = config.get("metadata")
    if isinstance(config_meta, dict):
        config_meta = dict(config_meta)
        config_annotations = config_meta.get("annotations")
        if isinstance(config_annotations, dict):
            config_meta["annotations"] = {
                k: v for k, v in config_annotations.items() if k != LAST_APPLIED_ANNOTATION
            }
        config["metadata"] = config_meta
    updated = dict(annotations)
    updated[LAST_APPLIED_ANNOTATION] = _go_json(config) + "\n"
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in updated.items())
    if size > _TOTAL_ANNOTATION_SIZE_LIMIT:
        del updated[LAST_APPLIED_ANNOTATION]
    meta["annotations"] = updated
