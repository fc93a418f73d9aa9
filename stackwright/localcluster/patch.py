"""PATCH bodies: JSON patch, JSON merge patch and strategic merge patch, as kube-apiserver applies them.

Each patch kind is a pure function from (object, patch) to a new object, with the
semantics — and the error wording — of the libraries kube-apiserver 1.33 uses:
RFC 6902 JSON patch as `gopkg.in/evanphx/json-patch.v4` implements it, RFC 7386
merge patch as the same library does, and strategic merge patch as
`k8s.io/apimachinery/pkg/util/strategicpatch` does, driven by the
`x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` extensions of the
schema. Server-side apply (`application/apply-patch+yaml`) is not here: it lives in
`stackwright.localcluster.apply`.

This module never does I/O and never mutates its inputs; every result is a
private copy the caller may edit in place.

Errors are `status.APIError`s, as the API server answers them:

    APIError
    ├── BadRequest (400)            undecodable patch, malformed directives
    ├── _TooLarge (413)             more than 10,000 JSON patch operations
    ├── UnsupportedMediaType (415)  a content type this resource cannot be patched with
    ├── Invalid (422)               a JSON patch operation that does not apply
    └── _ServerError (500)          strategic-merge failures the API server reports raw
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import orjson

from stackwright.localcluster import status
from stackwright.localcluster.schema import (
    Node,
    items_node,
    property_node,
    resolve_inline,
)

__all__ = [
    "PATCH_TYPES",
    "apply_patch",
    "go_float",
    "json_patch",
    "merge_patch",
    "strategic_merge_patch",
]

Resolver = Callable[[Node | None], Node]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: The patch content types of the API, by the name `types.PatchType` gives them.
#: Apply (`apply`) is dispatched by the caller to `apply.server_side_apply`.
PATCH_TYPES: Mapping[str, str] = {
    JSON_PATCH: "json",
    MERGE_PATCH: "merge",
    STRATEGIC_MERGE_PATCH: "strategic",
    APPLY_PATCH: "apply",
}

# kube-apiserver refuses JSON patches with more operations than this (patch.go).
MAX_JSON_PATCH_OPERATIONS = 10000


class _TooLarge(status.APIError):
    code, reason = 413, "RequestEntityTooLarge"


class _ServerError(status.APIError):
    """An error the API server passes through unconverted: 500 with no reason (StatusReasonUnknown)."""

    code, reason = 500, ""


# --- dispatch ---------------------------------------------------------------------


def apply_patch(
    content_type: str,
    obj: dict[str, Any],
    patch: Any,
    root: Node | None,
    resolve: Resolver,
    *,
    strategic: bool | None = None,
) -> Any:
    """Apply a JSON, merge or strategic merge patch to `obj`; returns the patched document.

    `patch` is the request body (bytes or str) or the document already parsed from it.
    `strategic` says whether the resource accepts strategic merge patches; by
    default only built-in kinds do (custom resources, whose schemas resolve inline,
    answer 415 as the API server does for them).
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if strategic is None:
        strategic = resolve is not resolve_inline
    accepted = [
        JSON_PATCH,
        MERGE_PATCH,
        *([STRATEGIC_MERGE_PATCH] if strategic else []),
        APPLY_PATCH,
    ]
    if media not in accepted:
        raise status.UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(accepted)
        )
    if media == APPLY_PATCH:
        raise ValueError("server-side apply patches are applied by apply.server_side_apply")
    document = _parse(patch, media)
    if media == JSON_PATCH:
        return json_patch(obj, document)
    if media == MERGE_PATCH:
        return merge_patch(obj, document)
    return strategic_merge_patch(obj, document, root, resolve)


def _parse(patch: Any, media: str) -> Any:
    if not isinstance(patch, bytes | bytearray | memoryview | str):
        return patch
    try:
        return orjson.loads(patch)
    except orjson.JSONDecodeError as exc:
        if media == MERGE_PATCH:
            # evanphx's MergePatch reports every syntax error as ErrBadJSONPatch.
            raise status.BadRequest("Invalid JSON Patch") from None
        raise status.BadRequest(str(exc)) from None


# --- JSON patch (RFC 6902, evanphx/json-patch v4) ------------------------------------

_MISSING = object()


class _OpError(Exception):
    """A failed operation; rendered as the 422 kube-apiserver answers."""


def json_patch(obj: Any, ops: Any) -> Any:
    """Apply RFC 6902 operations to a copy of `obj`, as kube-apiserver does.

    The API server uses evanphx/json-patch v4, whose quirks are kept: negative
    array indices count from the end, `replace` of a missing object key adds it,
    `copy` from a missing key copies null, and a `test` for null passes on a
    missing key. A failing operation is a 422 with kube-apiserver's generic message
    and, as there, none of the library's words.
    """
    patch = _decode_operations(ops)
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise _TooLarge(
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(patch)}"
        )
    holder = [_deep_copy(obj)]
    try:
        for op in patch:
            _apply_operation(holder, op)
    except _OpError:
        # kube-apiserver's words alone: its patch handler answers with
        # NewGenericServerResponse(422, ..., isUnexpectedResponse=false): details with no cause,
        # the library's message ("testing value ... failed") left out.
        raise status.Invalid(
            "the server rejected our request due to an error in our request", details={}
        ) from None
    return holder[0]


def _decode_operations(ops: Any) -> list[dict[str, Any] | None]:
    if not isinstance(ops, list):
        raise status.BadRequest(
            f"json: cannot unmarshal {_json_kind(ops)} into Go value of type jsonpatch.Patch"
        )
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise status.BadRequest(
                f"json: cannot unmarshal {_json_kind(op)} into Go value of type jsonpatch.Operation"
            )
    return ops


def _json_kind(value: Any) -> str:
    """How Go's encoding/json names a JSON value's kind in an UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def _apply_operation(holder: list[Any], op: dict[str, Any] | None) -> None:
    op = op or {}
    kind = op.get("op")
    if not isinstance(kind, str):
        kind = "unknown"
    if kind == "add":
        path = _op_path(op, f"{kind} operation failed to decode path: missing value")
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(
                f'add operation does not apply: doc is missing path: "{path}": missing value'
            )
        try:
            _add(container, key, _deep_copy(op.get("value")))
        except _OpError as exc:
            raise _OpError(f"error in add for path: '{path}': {exc}") from None
    elif kind == "remove":
        path = _op_path(op, "remove operation failed to decode path: missing value")
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(
                f'remove operation does not apply: doc is missing path: "{path}": missing value'
            )
        try:
            _remove(container, key)
        except _OpError as exc:
            raise _OpError(f"error in remove for path: '{path}': {exc}") from None
    elif kind == "replace":
        path = _op_path(op, None, "replace operation failed to decode path")
        if path == "":
            value = op.get("value")
            if not isinstance(value, dict | list):
                # errors.Wrapf(nil, ...) is nil in pkg/errors, so the library lets this through
                # without changing the document.
                return
            holder[0] = _deep_copy(value)
            return
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(
                f"replace operation does not apply: doc is missing path: {path}: missing value"
            )
        try:
            _get(container, key)
        except _OpError:
            raise _OpError(
                f"replace operation does not apply: doc is missing key: {path}: missing value"
            ) from None
        try:
            _set(container, key, _deep_copy(op.get("value")))
        except _OpError as exc:
            raise _OpError(f"error in remove for path: '{path}': {exc}") from None
    elif kind == "move":
        source = _op_from(op, "move operation failed to decode from")
        container, key = _find(holder[0], source)
        if container is None:
            raise _OpError(
                f"move operation does not apply: doc is missing from path: {source}: missing value"
            )
        try:
            value = _get(container, key)
            _remove(container, key)
        except _OpError as exc:
            raise _OpError(f"error in move for path: '{key}': {exc}") from None
        path = _op_path(op, None, "move operation failed to decode path")
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(
                f"move operation does not apply: doc is missing destination path: {path}: missing value"
            )
        try:
            _add(container, key, value)
        except _OpError as exc:
            raise _OpError(f"error in move for path: '{path}': {exc}") from None
    elif kind == "copy":
        source = _op_from(op, "copy operation failed to decode from")
        container, key = _find(holder[0], source)
        if container is None:
            raise _OpError(
                f"copy operation does not apply: doc is missing from path: {source}: missing value"
            )
        try:
            value = _get(container, key)
        except _OpError as exc:
            raise _OpError(f"error in copy for from: '{source}': {exc}") from None
        path = _op_path(op, "copy operation failed to decode path: missing value")
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(
                f"copy operation does not apply: doc is missing destination path: {path}: missing value"
            )
        try:
            _add(container, key, _deep_copy(value))
        except _OpError as exc:
            raise _OpError(f"error while adding value during copy: {exc}") from None
    elif kind == "test":
        path = _op_path(op, None, "test operation failed to decode path")
        expected = op.get("value", _MISSING)
        if path == "":
            if expected is _MISSING or not _json_equal(holder[0], expected):
                raise _OpError(f"testing value {path} failed: test failed")
            return
        container, key = _find(holder[0], path)
        if container is None:
            raise _OpError(f"test operation does not apply: is missing path: {path}: missing value")
        try:
            actual = _get(container, key)
        except _OpError as exc:
            raise _OpError(f"error in test for path: '{path}': {exc}") from None
        if actual is None:
            # The library treats a missing key and a null alike, and both match null.
            if expected is None or expected is _MISSING:
                return
            raise _OpError(f"testing value {path} failed: test failed")
        if expected is _MISSING or not _json_equal(actual, expected):
            raise _OpError(f"testing value {path} failed: test failed")
    else:
        raise _OpError(f"Unexpected kind: {kind}")


def _op_path(op: dict[str, Any], fixed: str | None, prefix: str = "") -> str:
    """The op's `path`; `fixed` is the whole message for ops that discard the cause."""
    return _op_string(op, "path", "operation missing path field: missing value", fixed, prefix)


def _op_from(op: dict[str, Any], prefix: str) -> str:
    return _op_string(op, "from", "operation, missing from field: missing value", None, prefix)


def _op_string(op: dict[str, Any], field: str, missing: str, fixed: str | None, prefix: str) -> str:
    value = op.get(field)
    if isinstance(value, str):
        return value
    if fixed is not None:
        raise _OpError(fixed)
    cause = (
        missing
        if value is None
        else f"json: cannot unmarshal {_json_kind(value)} into Go value of type string"
    )
    raise _OpError(f"{prefix}: {cause}")


def _find(doc: Any, path: str) -> tuple[Any, str]:
    """The container holding the last token of `path`, and that token (findObject)."""
    parts = path.split("/")
    if len(parts) < 2:
        return None, ""
    # The first token is dropped unexamined, as the library does: "a/b" means "/b".
    current = doc
    for part in parts[1:-1]:
        try:
            current = _get(current, _unescape(part))
        except _OpError:
            return None, ""
        if not isinstance(current, dict | list):
            return None, ""
    return current, _unescape(parts[-1])


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


_ATOI = re.compile(r"[+-]?[0-9]+\Z")


def _atoi(key: str) -> int:
    """strconv.Atoi, with its error text."""
    if not _ATOI.match(key):
        raise _OpError(f"strconv.Atoi: parsing {json.dumps(key)}: invalid syntax")
    number = int(key)
    if not -(2**63) <= number < 2**63:
        raise _OpError(f"strconv.Atoi: parsing {json.dumps(key)}: value out of range")
    return number


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    index = _atoi(key)
    if index < 0:
        if index < -len(container):
            raise _OpError(f"Unable to access invalid index: {index}: invalid index referenced")
        index += len(container)
    if index >= len(container):
        raise _OpError(f"Unable to access invalid index: {index}: invalid index referenced")
    return container[index]


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    index = _atoi(key)
    if index < 0:
        index += len(container)
    container[index] = value


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _OpError as exc:
        raise _OpError(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if index >= size or index < -size:
        raise _OpError(f"Unable to access invalid index: {index}: invalid index referenced")
    if index < 0:
        index += size
    container.insert(index, value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
        return
    index = _atoi(key)
    if index >= len(container) or index < -len(container):
        raise _OpError(f"Unable to access invalid index: {index}: invalid index referenced")
    del container[index]


def _json_equal(left: Any, right: Any) -> bool:
    """JSON equality: unlike Python's, true is not 1."""
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(_json_equal(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(right, dict | list):
        return False
    return bool(left == right)


def _deep_copy(value: Any) -> Any:
    """A private copy of a JSON document; an orjson round trip is far cheaper than copy.deepcopy."""
    if isinstance(value, dict | list):
        try:
            return orjson.loads(orjson.dumps(value))
        except TypeError:
            return _copy_slow(value)
    return value


def _copy_slow(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_slow(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_slow(v) for v in value]
    return value


# --- JSON merge patch (RFC 7386, evanphx/json-patch v4 MergePatch) -----------------------


def merge_patch(obj: Any, patch: Any) -> Any:
    """RFC 7386 merge patch: objects merge, null deletes, anything else replaces.

    As in evanphx's MergePatch (which kube-apiserver uses): a null, string, number
    or boolean patch is "Invalid JSON Patch" (400); an array patch replaces the
    whole document; nulls are pruned from values the patch introduces.
    """
    if patch is None or not isinstance(patch, dict | list):
        raise status.BadRequest("Invalid JSON Patch")
    if isinstance(patch, list):
        return _pruned(patch)
    if not isinstance(obj, dict):
        return _pruned(patch)
    # Callers edit the result in place (name, defaults), so it shares nothing with `obj`.
    return _merge_docs(_deep_copy(obj), patch)


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
            continue
        current = out.get(key)
        if not isinstance(current, dict):
            # Absent, null or not an object: the patch value goes in, pruned of nulls.
            out[key] = _pruned(value)
        elif not isinstance(value, dict):
            # The library returns a non-object patch value over an object unpruned.
            out[key] = _deep_copy(value)
        else:
            out[key] = _merge_docs(current, value)
    return out


def _pruned(value: Any) -> Any:
    """A copy without null object members (pruneNulls: nulls inside arrays stay)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


# --- strategic merge patch (k8s.io/apimachinery strategicpatch) -------------------------------

_DIRECTIVE = "$patch"
_REPLACE = "replace"
_DELETE = "delete"
_MERGE = "merge"
_RETAIN_KEYS_DIRECTIVE = "$retainKeys"
_RETAIN_KEYS_STRATEGY = "retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

# mergepatch's sentinel errors, and the status interpretStrategicMergePatchError gives each.
_BAD_JSON_DOC = "invalid JSON document"
_NO_LIST_OF_LISTS = "lists of lists are not supported"
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"


class _SMPError(Exception):
    """A strategic merge failure; `kind` picks the status the API server answers with."""

    def __init__(self, message: str, kind: str = "raw") -> None:
        super().__init__(message)
        self.kind = kind


def _bad(message: str) -> _SMPError:
    return _SMPError(message, "bad")


def strategic_merge_patch(
    obj: dict[str, Any], patch: Any, root: Node | None, resolve: Resolver
) -> dict[str, Any]:
    """Kubernetes strategic merge patch of `obj` by `patch`, guided by the schema at `root`.

    Lists whose field says `x-kubernetes-patch-strategy: merge` merge by their
    `x-kubernetes-patch-merge-key` (lists of scalars: set union); other lists are
    replaced. The directives `$patch` (replace / delete, and on list items merge),
    `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`
    work as in apimachinery. With no schema (`root` None) every list is replaced, so
    the patch behaves as a JSON merge patch that also honours map directives.
    """
    if patch is None:
        return _deep_copy(obj)  # type: ignore[no-any-return]
    if not isinstance(patch, dict):
        raise status.BadRequest(
            f"json: cannot unmarshal {_json_kind(patch)} into Go value of type map[string]interface {{}}"
        )
    original = _deep_copy(obj)
    document = _deep_copy(patch)
    try:
        return _merge_map(original, document, _PatchSchema(root, resolve))
    except _SMPError as exc:
        message = str(exc)
        if exc.kind == "bad":
            raise status.BadRequest(message) from None
        if exc.kind == "invalid":
            # As a JSON patch's (`json_patch`): the generic words, no cause.
            raise status.Invalid(
                "the server rejected our request due to an error in our request", details={}
            ) from None
        raise _ServerError(message) from None


class _PatchSchema:
    """LookupPatchMeta over a JSON-schema node: the patch strategy and merge key of each field."""

    __slots__ = ("node", "resolve")

    def __init__(self, node: Node | None, resolve: Resolver) -> None:
        self.node = node
        self.resolve = resolve

    def field(self, key: str) -> tuple[Node | None, list[str], str]:
        if self.node is None:
            return None, [], ""
        raw = property_node(self.resolve(self.node), key)
        if raw is None:
            return None, [], ""
        resolved = self.resolve(raw)
        strategy = raw.get("x-kubernetes-patch-strategy") or resolved.get(
            "x-kubernetes-patch-strategy"
        )
        merge_key = raw.get("x-kubernetes-patch-merge-key") or resolved.get(
            "x-kubernetes-patch-merge-key"
        )
        strategies = str(strategy).split(",") if strategy else []
        return raw, strategies, str(merge_key or "")

    def for_struct(self, key: str) -> tuple[_PatchSchema, list[str]]:
        raw, strategies, _ = self.field(key)
        return _PatchSchema(raw, self.resolve), strategies

    def for_slice(self, key: str) -> tuple[_PatchSchema, list[str], str]:
        raw, strategies, merge_key = self.field(key)
        items = items_node(self.resolve(raw)) if raw is not None else None
        return _PatchSchema(items, self.resolve), strategies, merge_key


def _merge_map(
    original: dict[str, Any] | None, patch: dict[str, Any], schema: _PatchSchema
) -> dict[str, Any]:
    """mergeMap: edits `original` and `patch` in place (both are private copies)."""
    if _DIRECTIVE in patch:
        return _directive_in_map(patch[_DIRECTIVE], patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_set_element_order(original, patch, schema)
    for key, patch_value in list(patch.items()):
        is_delete_list = False
        if key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
            key = _extract_key(key, _DELETE_FROM_PRIMITIVE_LIST)
            is_delete_list = True
        if patch_value is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not is_delete_list:
                _discard_nulls(patch_value)
                original[key] = patch_value
            continue
        current = original[key]
        if _go_kind(current) != _go_kind(patch_value):
            if not is_delete_list:
                _discard_nulls(patch_value)
                original[key] = patch_value
            continue
        if isinstance(current, dict):
            sub, strategies = schema.for_struct(key)
            _, strategy = _retain_keys_strategy(strategies)
            if strategy == _REPLACE:
                original[key] = patch_value
            else:
                original[key] = _merge_map(current, patch_value, sub)
        elif isinstance(current, list):
            items, strategies, merge_key = schema.for_slice(key)
            _, strategy = _retain_keys_strategy(strategies)
            original[key] = _merge_slice_handler(
                current, patch_value, items, strategy, merge_key, is_delete_list
            )
        else:
            original[key] = patch_value
    return original


def _go_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    return "scalar"


def _directive_in_map(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    if directive == _REPLACE:
        # Replace the map by the patch, as given: nested directives are not interpreted.
        del patch[_DIRECTIVE]
        return patch
    if directive == _DELETE:
        return {}
    raise _SMPError(f"unknown patch type: {_go_format(directive)} in map: {_go_format(patch)}")


def _retain_keys_strategy(strategies: list[str]) -> tuple[bool, str]:
    if not strategies:
        return False, ""
    if len(strategies) == 1:
        if strategies[0] == _RETAIN_KEYS_STRATEGY:
            return True, ""
        return False, strategies[0]
    if len(strategies) == 2:
        if strategies[0] == _RETAIN_KEYS_STRATEGY:
            return True, strategies[1]
        if strategies[1] == _RETAIN_KEYS_STRATEGY:
            return True, strategies[0]
    raise _SMPError(f"unexpected patch strategy: {_go_format(strategies)}")


def _extract_key(key: str, prefix: str) -> str:
    head, _, rest = key.partition("/")
    if not _ or head != prefix:
        if prefix == _DELETE_FROM_PRIMITIVE_LIST:
            raise _bad(_BAD_PRIMITIVE_LIST)
        raise _bad(_BAD_SET_ELEMENT_ORDER)
    return rest


def _discard_nulls(value: Any) -> None:
    """discardNullValuesFromPatch: drop null map members everywhere below `value`."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            _discard_nulls(item)
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS_DIRECTIVE not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS_DIRECTIVE)
    if not isinstance(retain, list):
        raise _bad(_BAD_RETAIN_KEYS)
    kept = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if key not in kept:
            raise _bad(_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in kept]:
        del original[key]


def _merge_set_element_order(
    original: dict[str, Any], patch: dict[str, Any], schema: _PatchSchema
) -> None:
    """mergePatchIntoOriginal: merge each list that has a `$setElementOrder`, then order it."""
    for key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _SMPError(f"expected a slice, but received a {_go_type_name(order)}")
        field = _extract_key(key, _SET_ELEMENT_ORDER)
        found_original, found_patch = field in original, field in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[field], list):
                raise _SMPError(
                    f"expected a slice, but received a {_go_type_name(original[field])}"
                )
            original_list = original[field]
        if found_patch:
            if not isinstance(patch[field], list):
                raise _SMPError(f"expected a slice, but received a {_go_type_name(patch[field])}")
            patch_list = patch[field]
        items, strategies, merge_key = schema.for_slice(field)
        _, strategy = _retain_keys_strategy(strategies)
        _validate_set_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged = patch_list
        elif found_original and found_patch:
            merged = _merge_slice_handler(
                original_list, patch_list, items, strategy, merge_key, False
            )
        else:
            continue
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_primitives(merged, order)
        is_map = _slice_element_kind(original_list, patch_list) == "map"
        original[field] = _normalize_element_order(
            patch_items, server_only, order, original_list, merge_key, is_map
        )
        patch.pop(field, None)


def _validate_set_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    non_delete = _split_deletions(patch_list)[0] if merge_key else patch_list
    patch_index = order_index = 0
    while patch_index < len(non_delete) and order_index < len(order):
        item = non_delete[patch_index]
        if isinstance(item, dict) and _DIRECTIVE in item:
            patch_index += 1
            continue
        if _merge_key_value_equal(item, order[order_index], merge_key):
            patch_index += 1
        order_index += 1
    if patch_index < len(non_delete) and order_index >= len(order):
        raise _SMPError(
            f"The order in patch list:\n{_go_format(patch_list)}\n doesn't match "
            f"{_SET_ELEMENT_ORDER} list:\n{_go_format(order)}\n"
        )


def _merge_key_value_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return bool(left == right)
    if not isinstance(left, dict):
        raise _SMPError(f"expected a map, but received a {_go_type_name(left)}")
    if not isinstance(right, dict):
        raise _SMPError(f"expected a map, but received a {_go_type_name(right)}")
    for side in (left, right):
        if merge_key not in side:
            raise _no_merge_key(side, merge_key)
    return bool(left[merge_key] == right[merge_key])


def _no_merge_key(item: Any, merge_key: str) -> _SMPError:
    return _SMPError(f"map: {_go_format(item)} does not contain declared merge key: {merge_key}")


def _split_deletions(items: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    delete: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise _SMPError(f"expected a map, but received a {_go_type_name(item)}")
        (delete if item.get(_DIRECTIVE) == _DELETE else keep).append(item)
    return keep, delete


def _merge_slice_handler(
    original: list[Any],
    patch: list[Any],
    items: _PatchSchema,
    strategy: str,
    merge_key: str,
    is_delete_list: bool,
) -> list[Any]:
    if strategy == _MERGE or is_delete_list:
        return _merge_slice(original, patch, items, merge_key, is_delete_list)
    # Replaced lists keep no null members: the typed decode after the patch drops them.
    _discard_nulls(patch)
    return patch


def _slice_element_kind(*slices: list[Any]) -> str | None:
    """sliceElementType: every element of every slice has one Go type, and lists of lists are refused."""
    kind: str | None = None
    type_of: type | None = None
    for items in slices:
        for item in items:
            if type_of is None:
                type_of = type(item)
                kind = _go_kind(item)
                if kind == "slice":
                    raise _SMPError(_NO_LIST_OF_LISTS, "invalid")
            elif type(item) is not type_of:
                raise _SMPError(f"list element types are not identical: {_go_format(list(slices))}")
    if type_of is None:
        raise _SMPError("no elements in any of the given slices")
    return kind


def _merge_slice(
    original: list[Any], patch: list[Any], items: _PatchSchema, merge_key: str, is_delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    is_map = _slice_element_kind(original, patch) == "map"
    if not is_map:
        if is_delete_list:
            return _delete_from_slice(original, patch)
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise _SMPError("cannot merge lists without merge key for " + _schema_name(items))
        original, patch = _merge_special_elements(original, patch, merge_key)
        merged = _merge_without_special_elements(original, patch, merge_key, items)
    if merge_key:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    else:
        patch_items, server_only = _partition_primitives(merged, patch)
    return _normalize_element_order(patch_items, server_only, patch, original, merge_key, is_map)


def _schema_name(schema: _PatchSchema) -> str:
    node = schema.node or {}
    ref = node.get("$ref", "")
    return str(ref).rsplit("/", 1)[-1] if ref else ""


def _delete_from_slice(current: list[Any], to_delete: list[Any]) -> list[Any]:
    return [item for item in current if not any(_json_equal(item, d) for d in to_delete)]


def _deduplicate(items: list[Any]) -> list[Any]:
    """deduplicateScalars, including the order its swap-with-last removal leaves (reordered later)."""
    items = list(items)
    length = len(items) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _json_equal(items[i], items[j]):
                items[j] = items[length]
                items = items[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return items


def _merge_special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: `$patch: delete` items delete, `$patch: replace` replaces."""
    without: list[Any] = []
    replace = False
    for item in patch:
        directive = item.get(_DIRECTIVE, _MISSING)
        if directive is _MISSING:
            without.append(item)
        elif directive == _DELETE:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            value = item[merge_key]
            original = [o for o in original if not _key_matches(o, merge_key, value)]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise _SMPError("merging lists cannot yet be specified in the patch")
        else:
            raise _SMPError(
                f"unknown patch type: {_go_format(directive)} in map: {_go_format(item)}"
            )
    if replace:
        return without, []
    return original, without


def _key_matches(item: Any, merge_key: str, value: Any) -> bool:
    if not isinstance(item, dict):
        raise _SMPError("value for key is not a map")
    return merge_key in item and bool(item[merge_key] == value)


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _SMPError(f"value for key {index} is not a map")
        if merge_key in item and item[merge_key] == value:
            return index
    return -1


def _merge_without_special_elements(
    original: list[Any], patch: list[Any], merge_key: str, items: _PatchSchema
) -> list[Any]:
    original = list(original)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        index = _find_by_key(original, merge_key, item[merge_key])
        if index >= 0:
            original[index] = _merge_map(original[index], item, items)
        else:
            # New items go in as given, but without nulls: the typed decode drops them.
            _discard_nulls(item)
            original.append(item)
    return original


def _partition_primitives(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    patch_items: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        (patch_items if any(_json_equal(item, b) for b in by) else server_only).append(item)
    return patch_items, server_only


def _partition_maps(
    merged: list[Any], by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    patch_items: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise _SMPError(f"expected a map, but received a {_go_type_name(item)}")
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        found = _find_by_key(by, merge_key, item[merge_key]) >= 0
        (patch_items if found else server_only).append(item)
    return patch_items, server_only


def _order_index(order: list[Any], item: Any, merge_key: str, is_map: bool) -> int:
    """index(): where `item` sits in `order`, by merge key for maps; -1 if absent."""
    if is_map:
        wanted = item.get(merge_key) if isinstance(item, dict) else None
        for position, candidate in enumerate(order):
            value = candidate.get(merge_key) if isinstance(candidate, dict) else None
            if _json_equal(value, wanted):
                return position
        return -1
    for position, candidate in enumerate(order):
        if _json_equal(candidate, item):
            return position
    return -1


def _normalize_slice_order(
    items: list[Any], order: list[Any], merge_key: str, is_map: bool
) -> list[Any]:
    deletions: list[Any] = []
    if is_map:
        for collection in (items, order):
            for item in collection:
                if not isinstance(item, dict):
                    raise _SMPError(f"expected a map, but received a {_go_type_name(item)}")
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        items, deletions = _split_deletions(items)

    # A stable sort by position in `order`; items not in it keep their place after those that are.
    def rank(pair: tuple[int, Any]) -> tuple[int, int]:
        position = _order_index(order, pair[1], merge_key, is_map)
        return (0, position) if position >= 0 else (1, pair[0])

    return [item for _, item in sorted(enumerate(items), key=rank)] + deletions


def _normalize_element_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    is_map: bool,
) -> list[Any]:
    """Patch items in patch order, server-only items in live order, interleaved as the live list had them."""
    right = _normalize_slice_order(patch_items, patch_order, merge_key, is_map)
    left = _normalize_slice_order(server_only, server_order, merge_key, is_map)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _order_index(server_order, left[i], merge_key, is_map)
            ri = _order_index(server_order, right[j], merge_key, is_map)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


# --- Go's %v, for error messages that quote values ------------------------------------------


def _go_type_name(value: Any) -> str:
    """reflect.Kind names, as mergepatch.ErrBadArgType prints them."""
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "invalid"


def _go_format(value: Any) -> str:
    """A value as Go's fmt %v prints the decoded JSON (maps with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_format(v) for v in value) + "]"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): Go's %v of a float64 (1e+06, 0.5, 1.5e-07)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(str(d) for d in digits)
    point = len(text) + exponent  # digits before the decimal point
    exp = point - 1
    prefix = "-" if sign else ""
    # Shortest formatting switches to an exponent below 1e-4 and from 1e6 (eprec 6).
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{prefix}{text}{'0' * (point - len(text))}"
    return f"{prefix}{text[:point]}.{text[point:]}"
