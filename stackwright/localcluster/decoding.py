"""What kube-apiserver's typed JSON decoder says about an object, before validation.

`decode_check` reports what the decoder refuses — a JSON type its field cannot hold
(`json: cannot unmarshal …`, a 400 BadRequest), in the server's words, and as `Mismatch`es
in a user's — and the unknown fields `fieldValidation` Strict / Warn / Ignore acts on;
`drop_unknown` removes those. `builtin_mismatches` is the check a client makes of a
built-in kind before it applies anything (`preview` and `up` make it for every program):
apart from validation.py, whose other stages (~5,100 lines: built-in validation, custom
resources) such a check does not need, so that it loads only this. validation.py
re-exports these names for the local cluster.

Pure functions over plain JSON objects: no I/O, inputs never mutated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stackwright.localcluster.schema import (
    Node,
    builtin_schemas,
    items_node,
    scalar_one_of_types,
    types_of,
)

if TYPE_CHECKING:
    from stackwright.localcluster.quantities import Quantity

__all__ = [
    "DecodeReport",
    "Mismatch",
    "Resolver",
    "base64_error",
    "builtin_mismatches",
    "decode_check",
    "deep_copy",
    "drop_unknown",
    "number_literal",
    "quantity",
    "undecodable",
]

Resolver = Callable[[Node | None], Node]


# =====================================================================================
# Decoding
# =====================================================================================


@dataclass
class DecodeReport:
    """What the typed JSON decoder would say about an object.

    `type_errors` are whole messages for a 400, prefixed as the API server prefixes them
    (`Deployment in version "v1" cannot be handled as a Deployment: json: …`) when the
    object names its kind; the first is the one the server reports. `unknown_fields` are
    dotted paths with list indices (`spec.template.spec.containers[0].imagePullPolcy`), in
    document order.
    """

    type_errors: list[str] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)
    #: The values of a JSON type their field cannot hold, in document order, in a user's
    #: words rather than Go's (for a client refusing them before the server would).
    mismatches: list[Mismatch] = field(default_factory=list)


@dataclass(frozen=True)
class Mismatch:
    """A `value` at `path` (`spec.ports[1].port`) whose JSON type (`found`: string, number,
    bool, object, array) the field cannot hold; `expected`: what it takes (`an integer`)."""

    path: str
    value: Any
    found: str
    expected: str


# Shape kinds: what a schema node decodes into.
_ANY, _STRUCT, _MAP, _ARRAY, _STRING, _BYTES, _INT, _NUMBER, _BOOL, _INTSTR, _QUANTITY = range(11)

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class _Shape:
    """A schema node compiled for decoding: one kind, its children, its Go names."""

    __slots__ = ("bounds", "elem", "fields", "free", "gotype_name", "kind", "struct")

    def __init__(self) -> None:
        self.kind = _ANY
        self.fields: dict[str, _Shape] = {}
        self.elem: _Shape | None = None
        self.struct = ""  # Go struct name, for "Go struct field <struct>.<path>"
        self.gotype_name = ""  # Go type of a named definition, e.g. "v1.Container"
        self.free = False  # preserves unknown fields (CRD x-kubernetes-preserve-unknown-fields)
        self.bounds = _INT64

    @property
    def gotype(self) -> str:
        """The Go type the decoder names in `of type …`."""
        kind = self.kind
        if self.gotype_name:
            return self.gotype_name
        if kind == _ARRAY:
            return "[]" + (self.elem.gotype if self.elem else "interface {}")
        if kind == _MAP:
            return "map[string]" + (self.elem.gotype if self.elem else "interface {}")
        if kind == _STRUCT:
            return "map[string]interface {}"
        if kind == _INT:
            return "int32" if self.bounds == _INT32 else "int64"
        return _SCALAR_GOTYPES.get(kind, "interface {}")


_SCALARS = frozenset({_STRING, _BYTES, _INT, _NUMBER, _BOOL})
_SCALAR_GOTYPES = {_STRING: "string", _BYTES: "[]uint8", _NUMBER: "float64", _BOOL: "bool"}

# Compiled shapes by the identity of their resolved schema node. Each entry holds the node
# itself, so an id is never reused while its entry lives.
_SHAPES: dict[int, tuple[Node, _Shape]] = {}


def _ref_name(raw: Node) -> str:
    ref = raw.get("$ref")
    if ref is None:
        all_of = raw.get("allOf")
        if all_of and len(all_of) == 1:
            ref = all_of[0].get("$ref")
    return str(ref).rsplit("/", 1)[-1] if ref else ""


def _compile(raw: Node | None, resolve: Resolver, name: str = "") -> _Shape:
    resolved = resolve(raw)
    hit = _SHAPES.get(id(resolved))
    if hit is not None and hit[0] is resolved:
        return hit[1]
    shape = _Shape()
    _SHAPES[id(resolved)] = (resolved, shape)  # before the children: definitions recurse
    name = name or (_ref_name(raw) if raw else "")
    if name:
        parts = name.split(".")
        shape.struct = parts[-1]
        shape.gotype_name = ".".join(parts[-2:]) if len(parts) > 1 else parts[-1]
    one_of = resolved.get("oneOf")
    types = scalar_one_of_types(resolved) if one_of else types_of(resolved)
    if (one_of and types == {"integer", "string"}) or resolved.get("x-kubernetes-int-or-string"):
        shape.kind, shape.gotype_name = _INTSTR, "int32"
    elif one_of and types == {"number", "string"}:
        shape.kind, shape.gotype_name = _QUANTITY, "resource.Quantity"
    elif resolved.get("x-kubernetes-preserve-unknown-fields") and not resolved.get("properties"):
        shape.kind = _ANY
    elif "object" in types:
        props = resolved.get("properties")
        extra = resolved.get("additionalProperties")
        if props:
            shape.kind = _STRUCT
            shape.free = bool(resolved.get("x-kubernetes-preserve-unknown-fields"))
            for key, child in props.items():
                shape.fields[key] = _compile(child, resolve)
        elif isinstance(extra, Mapping):
            shape.kind = _MAP
            shape.elem = _compile(extra, resolve)
        else:
            shape.kind = _ANY  # free-form objects: FieldsV1, RawExtension
    elif "array" in types:
        shape.kind = _ARRAY
        shape.elem = _compile(items_node(resolved), resolve)
    elif "string" in types:
        shape.kind = _BYTES if resolved.get("format") == "byte" else _STRING
    elif "integer" in types:
        shape.kind = _INT
        shape.bounds = _INT32 if resolved.get("format") == "int32" else _INT64
    elif "number" in types:
        shape.kind = _NUMBER
    elif "boolean" in types:
        shape.kind = _BOOL
    if shape.kind in _SCALARS:
        shape.gotype_name = ""  # named scalars (metav1.Time) decode as their Go scalar
    return shape


def _root_shape(root: Node, resolve: Resolver) -> _Shape:
    hit = _SHAPES.get(id(resolve(root)))
    if hit is not None and hit[0] is resolve(root):
        return hit[1]
    gvks = root.get("x-kubernetes-group-version-kind") or ()
    name = ""
    if gvks:
        name = f"{gvks[0].get('version', '')}.{gvks[0].get('kind', '')}"
    return _compile(root, resolve, name)


def json_kind(value: Any) -> str:
    """How Go's decoder names a JSON value it cannot store."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "number"


def number_literal(value: Any) -> str:
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


#: What a field of each shape takes, in a user's words.
_TAKES = {
    _STRUCT: "an object",
    _MAP: "a map",
    _ARRAY: "a list",
    _STRING: "a string",
    _BYTES: "a base64 string",
    _INT: "an integer",
    _NUMBER: "a number",
    _BOOL: "true or false",
    _INTSTR: "an integer or a string",
    _QUANTITY: 'a quantity (a string such as "500m" or "1Gi", or a number)',
}
#: What a quantity's string holds, said to one that holds something else ("1GB").
_QUANTITY_TEXT = 'a quantity: a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …: "1Gi")'


def _whole(value: Any, bounds: tuple[int, int]) -> bool:
    """Whether `value` decodes into a Go integer of `bounds`. Integral floats do: YAML's `1.0`
    reaches a real server as `1` through kubectl."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return bounds[0] <= value <= bounds[1]


class _Decoder:
    __slots__ = ("fatal", "mismatches", "saved", "unknown")

    def __init__(self) -> None:
        self.saved: list[str] = []
        self.fatal: list[str] = []
        self.unknown: list[str] = []
        self.mismatches: list[Mismatch] = []

    def mismatch(
        self,
        value: Any,
        struct: str,
        tpath: str,
        gotype: str,
        upath: str,
        kind: int,
        *,
        fatal: bool = False,
    ) -> None:
        """`value`, at the user's path `upath`, does not fit the field's shape `kind`."""
        found = what = json_kind(value)
        if found == "number" and kind in (_INT, _INTSTR):  # not whole, or out of range
            what = f"number {number_literal(value)}"
        where = f"Go struct field {struct}.{tpath}" if struct else "Go value"
        (self.fatal if fatal else self.saved).append(
            f"json: cannot unmarshal {what} into {where} of type {gotype}"
        )
        expected = _TAKES[kind]
        whole = not isinstance(value, float) or value.is_integer()
        if found == "number" and kind in (_INT, _INTSTR) and whole:
            low, high = _INT32 if gotype == "int32" else _INT64  # whole, but out of range
            expected = expected.replace("an integer", f"an integer from {low} to {high}")
        self.mismatches.append(Mismatch(upath, value, found, expected))

    def walk(self, value: Any, shape: _Shape, struct: str, tpath: str, upath: str) -> None:
        if value is None:
            return  # null leaves the Go zero value: treated as absent
        kind = shape.kind
        if kind == _STRUCT:
            if not isinstance(value, dict):
                self.mismatch(value, struct, tpath, shape.gotype, upath, kind)
                return
            fields = shape.fields
            inner = shape.struct or struct
            prefix = tpath + "." if tpath else ""
            uprefix = upath + "." if upath else ""
            for key, child_value in value.items():
                child = fields.get(key)
                if child is None:
                    if not shape.free:
                        self.unknown.append(uprefix + key)
                    continue
                if child_value is not None and child.kind != _ANY:
                    self.walk(child_value, child, inner, prefix + key, uprefix + key)
        elif kind == _ARRAY:
            if not isinstance(value, list):
                self.mismatch(value, struct, tpath, shape.gotype, upath, kind)
                return
            elem = shape.elem
            if elem is None or elem.kind == _ANY:
                return
            for index, item in enumerate(value):
                if item is not None:
                    self.walk(item, elem, struct, tpath, f"{upath}[{index}]")
        elif kind == _MAP:
            if not isinstance(value, dict):
                self.mismatch(value, struct, tpath, shape.gotype, upath, kind)
                return
            elem = shape.elem
            if elem is None or elem.kind == _ANY:
                return
            if elem.kind == _STRING:  # the common map[string]string: no recursion needed
                for key, item in value.items():
                    if item is not None and not isinstance(item, str):
                        self.mismatch(item, struct, tpath, "string", f"{upath}.{key}", _STRING)
                return
            for key, item in value.items():
                if item is not None:
                    self.walk(item, elem, struct, tpath, f"{upath}.{key}")
        elif kind == _STRING:
            if not isinstance(value, str):
                self.mismatch(value, struct, tpath, "string", upath, kind)
        elif kind == _INT:
            if not _whole(value, shape.bounds):
                self.mismatch(value, struct, tpath, shape.gotype, upath, kind)
        elif kind == _BOOL:
            if not isinstance(value, bool):
                self.mismatch(value, struct, tpath, "bool", upath, kind)
        elif kind == _NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.mismatch(value, struct, tpath, "float64", upath, kind)
        elif kind == _INTSTR:
            # IntOrString.UnmarshalJSON: strings as they are, anything else into an int32;
            # the error comes from a nested decoder and stops decoding (fatal).
            if isinstance(value, str):
                return
            if not _whole(value, _INT32):
                self.mismatch(value, struct, tpath, "int32", upath, kind, fatal=True)
        elif kind == _QUANTITY:
            if isinstance(value, str):
                text = value.strip()
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                text = number_literal(value)
            else:  # Quantity.UnmarshalJSON parses `true`, `{…}` as they are written
                text = json.dumps(value)
            try:
                _parse_quantity(text)
            except ValueError as err:
                self.fatal.append(str(err))  # Quantity.UnmarshalJSON's own error, unwrapped
                # No quantity: `true`, `{…}`, and the string "1GB" alike.
                takes = _QUANTITY_TEXT if isinstance(value, str) else _TAKES[kind]
                self.mismatches.append(Mismatch(upath, value, json_kind(value), takes))
        elif kind == _BYTES:
            if not isinstance(value, str):
                self.mismatch(value, struct, tpath, "[]uint8", upath, kind)
                return
            offset = base64_error(value)
            if offset is not None:
                self.saved.append(f"illegal base64 data at input byte {offset}")


def decode_check(obj: dict[str, Any], root: Node, resolve: Resolver) -> DecodeReport:
    """Type errors and unknown fields of `obj` against a built-in kind's schema.

    Walks the object (not the schema), with compiled schema nodes cached across calls.
    A fatal error (a Quantity or IntOrString that cannot be read) is reported first, as
    Go's decoder returns it in preference to the type errors it saved along the way.
    """
    decoder = _Decoder()
    decoder.walk(obj, _root_shape(root, resolve), "", "", "")
    errors = [undecodable(obj, e) for e in decoder.fatal + decoder.saved]
    return DecodeReport(errors, decoder.unknown, decoder.mismatches)


def undecodable(obj: dict[str, Any], error: str) -> str:
    """A decoding error as kube-apiserver words it for a body it cannot decode
    (transformDecodeError): `Deployment in version "v1" cannot be handled as a Deployment: …`."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not (isinstance(kind, str) and kind and isinstance(api_version, str)):
        return error
    version = api_version.rsplit("/", 1)[-1]
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {error}'


def drop_unknown(obj: dict[str, Any], root: Node, resolve: Resolver) -> dict[str, Any]:
    """A copy of `obj` without the fields `decode_check` calls unknown."""
    result = _copy_known(obj, _root_shape(root, resolve))
    return result if isinstance(result, dict) else {}


def _copy_known(value: Any, shape: _Shape) -> Any:
    kind = shape.kind
    if isinstance(value, dict):
        if kind == _STRUCT:
            out = {}
            for key, item in value.items():
                child = shape.fields.get(key)
                if child is not None:
                    out[key] = _copy_known(item, child)
                elif shape.free:
                    out[key] = deep_copy(item)
            return out
        if kind == _MAP and shape.elem is not None:
            return {key: _copy_known(item, shape.elem) for key, item in value.items()}
        return deep_copy(value)
    if isinstance(value, list):
        if kind == _ARRAY and shape.elem is not None:
            return [_copy_known(item, shape.elem) for item in value]
        return deep_copy(value)
    return value


def deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> int | None:
    """The byte offset Go's base64.StdEncoding reports for `text`, or None when it decodes.

    A port of encoding/base64's decodeQuantum, so that the offset in
    `illegal base64 data at input byte N` is the server's.
    """
    data = text.encode()
    n = len(data)
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == n:
                return None if j == 0 else si - j
            c = data[si]
            si += 1
            if c in _B64_ALPHABET:
                j += 1
                continue
            if c in (10, 13):
                continue
            if c != 61:  # '='
                return si - 1
            if j < 2:
                return si - 1
            if j == 2:
                while si < n and data[si] in (10, 13):
                    si += 1
                if si == n:
                    return n
                if data[si] != 61:
                    return si - 1
                si += 1
            while si < n and data[si] in (10, 13):
                si += 1
            return si if si < n else None


# =====================================================================================
# Quantities (parsed by quantities.py, which CEL's quantity library shares)
# =====================================================================================


def quantity(value: Any) -> Quantity | None:
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        text = number_literal(value)
    else:
        return None
    try:
        return _parse_quantity(text)
    except ValueError:
        return None


def _parse_quantity(text: str) -> Quantity:
    """`quantities.parse_quantity`, imported on first use: it loads fractions and decimal
    (~2 ms), which a check of objects with no quantity field (a ConfigMap) does without."""
    from stackwright.localcluster.quantities import parse_quantity

    return parse_quantity(text)


def builtin_mismatches(obj: dict[str, Any]) -> list[Mismatch]:
    """The values of `obj`, an object of a built-in kind, that their fields cannot hold (a
    string in an integer field), which the API server refuses with a 400; [] for a kind
    that is not built in. Int-or-string fields take either; a quantity a number or a string
    that reads as one ("1Gi", not "1GB"). For a client refusing them before it applies
    anything; a None value is taken as absent, so one not known yet is left out by giving
    None."""
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    schemas = builtin_schemas()
    root = schemas.root(group, version, str(obj.get("kind") or ""))
    return [] if root is None else decode_check(obj, root, schemas.resolve).mismatches
