"""Decoding the Kubernetes protobuf request bodies that Go clients send for a few core kinds.

client-go's typed clients write built-in objects as `application/vnd.kubernetes.protobuf`:
the four bytes `k8s\\0`, then a `runtime.Unknown` envelope (typeMeta = 1 with apiVersion = 1
and kind = 2; raw = 2, the object's own message; contentType = 4). kubectl's `create
configmap / secret / namespace / serviceaccount` and Helm's release storage (Secrets or
ConfigMaps) write this way, and neither can be told to send JSON. So the server decodes
the envelope and, for the kinds in `SCHEMAS`, the object into the same dict a JSON body
would give; other kinds get 415 naming the ones it can read (responses are always JSON,
which those clients accept).

Field numbers are the Kubernetes API's wire contract (`generated.proto` of k8s.io/api and
apimachinery), written out here for just the messages these kinds need. Fields this
server has no use for on a create (status, managedFields) are skipped, as unknown fields
are by any protobuf reader. Must never: guess at a kind it has no schema for.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from typing import Any

MAGIC = b"k8s\x00"

# A field is (JSON name, type); a type is a scalar name, ("map", value type),
# ("repeated", type) or a nested schema (a dict).
Schema = dict[int, tuple[str, Any]]

_TIME: Schema = {1: ("seconds", "int64"), 2: ("nanos", "int32")}

_OWNER_REFERENCE: Schema = {
    1: ("kind", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("controller", "bool"),
    7: ("blockOwnerDeletion", "bool"),
}

_OBJECT_META: Schema = {
    1: ("name", "string"),
    2: ("generateName", "string"),
    3: ("namespace", "string"),
    5: ("uid", "string"),
    6: ("resourceVersion", "string"),
    7: ("generation", "int64"),
    8: ("creationTimestamp", "time"),
    9: ("deletionTimestamp", "time"),
    10: ("deletionGracePeriodSeconds", "int64"),
    11: ("labels", ("map", "string")),
    12: ("annotations", ("map", "string")),
    13: ("ownerReferences", ("repeated", _OWNER_REFERENCE)),
    14: ("finalizers", ("repeated", "string")),
}

_LOCAL_OBJECT_REFERENCE: Schema = {1: ("name", "string")}
_OBJECT_REFERENCE: Schema = {
    1: ("kind", "string"),
    2: ("namespace", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("resourceVersion", "string"),
    7: ("fieldPath", "string"),
}

_SELECTOR_REQUIREMENT: Schema = {
    1: ("key", "string"),
    2: ("operator", "string"),
    3: ("values", ("repeated", "string")),
}
_SELECTOR_ATTRIBUTES: Schema = {
    1: ("rawSelector", "string"),
    2: ("requirements", ("repeated", _SELECTOR_REQUIREMENT)),
}
_ACCESS_REVIEW_SPEC: Schema = {  # authorization/v1 (Self)SubjectAccessReviewSpec
    1: ("resourceAttributes", {
        1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
        4: ("version", "string"), 5: ("resource", "string"), 6: ("subresource", "string"),
        7: ("name", "string"), 8: ("fieldSelector", _SELECTOR_ATTRIBUTES),
        9: ("labelSelector", _SELECTOR_ATTRIBUTES),
    }),
    2: ("nonResourceAttributes", {1: ("path", "string"), 2: ("verb", "string")}),
    3: ("user", "string"),
    4: ("groups", ("repeated", "string")),
    6: ("uid", "string"),
}  # fmt: skip

#: (apiVersion, kind) → the object's message.
SCHEMAS: dict[tuple[str, str], Schema] = {
    ("v1", "ConfigMap"): {
        1: ("metadata", _OBJECT_META),
        2: ("data", ("map", "string")),
        3: ("binaryData", ("map", "bytes")),
        4: ("immutable", "bool"),
    },
    ("v1", "Secret"): {
        1: ("metadata", _OBJECT_META),
        2: ("data", ("map", "bytes")),
        3: ("type", "string"),
        4: ("stringData", ("map", "string")),
        5: ("immutable", "bool"),
    },
    ("v1", "Namespace"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", {1: ("finalizers", ("repeated", "string"))}),
    },
    ("v1", "ServiceAccount"): {
        1: ("metadata", _OBJECT_META),
        2: ("secrets", ("repeated", _OBJECT_REFERENCE)),
        3: ("imagePullSecrets", ("repeated", _LOCAL_OBJECT_REFERENCE)),
        4: ("automountServiceAccountToken", "bool"),
    },
    # What `kubectl auth can-i` and `kubectl auth whoami` post.
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", _ACCESS_REVIEW_SPEC),
    },
    ("authorization.k8s.io/v1", "SubjectAccessReview"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", _ACCESS_REVIEW_SPEC),
    },
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", _ACCESS_REVIEW_SPEC),
    },
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", {1: ("namespace", "string")}),
    },
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {1: ("metadata", _OBJECT_META)},
}

#: meta/v1 DeleteOptions, the body of a typed client's delete (Helm's uninstall purges its
#: release Secrets this way); the envelope names it under the client's group version.
_DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", "int64"),
    2: ("preconditions", {1: ("uid", "string"), 2: ("resourceVersion", "string")}),
    3: ("orphanDependents", "bool"),
    4: ("propagationPolicy", "string"),
    5: ("dryRun", ("repeated", "string")),
}
#: Option bodies (not objects, so not in SCHEMAS' list of kinds): (apiVersion, kind) → message.
OPTIONS: dict[tuple[str, str], Schema] = {
    ("v1", "DeleteOptions"): _DELETE_OPTIONS,
    ("meta.k8s.io/v1", "DeleteOptions"): _DELETE_OPTIONS,
}

_ENVELOPE: Schema = {
    1: ("typeMeta", {1: ("apiVersion", "string"), 2: ("kind", "string")}),
    2: ("raw", "raw"),
    3: ("contentEncoding", "string"),
    4: ("contentType", "string"),
}


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf object this server can read."""


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf request body holds, as its JSON form."""
    if not body.startswith(MAGIC):
        raise ProtobufError("a protobuf body must start with the bytes k8s\\x00")
    envelope = _message(body[len(MAGIC) :], _ENVELOPE)
    type_meta = envelope.get("typeMeta") or {}
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    if envelope.get("contentEncoding"):
        raise ProtobufError(f"content encoding {envelope['contentEncoding']!r} is not supported")
    schema = SCHEMAS.get((api_version, kind)) or OPTIONS.get((api_version, kind))
    if schema is None:
        core_first = sorted(SCHEMAS, key=lambda vk: ("/" in vk[0], vk))
        known = ", ".join(f"{k} ({v})" for v, k in core_first)
        raise ProtobufError(
            f"this server reads protobuf bodies only for {known}, not {kind} ({api_version}); send JSON"
        )
    obj = _message(envelope.get("raw", b""), schema)
    return {"apiVersion": api_version, "kind": kind, **obj}


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value): varints as ints, length-delimited as bytes."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            length, at = _varint(data, at)
            if at + length > len(data):
                raise ProtobufError("truncated field")
            value, at = data[at : at + length], at + length
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        yield number, wire, value


def _message(data: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data):
        field = schema.get(number)
        if field is None:
            continue  # a field this server does not need
        name, kind = field
        if isinstance(kind, tuple) and kind[0] == "map":
            key, item = _map_entry(value, kind[1])
            out.setdefault(name, {})[key] = item
        elif isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(name, []).append(_value(value, wire, kind[1]))
        else:
            decoded = _value(value, wire, kind)
            if decoded not in ("", None):
                # Go writes a non-pointer field even when empty; its JSON omits it (omitempty).
                out[name] = decoded
    return out


def _map_entry(data: bytes, item_kind: Any) -> tuple[str, Any]:
    key, item = "", _value(b"", 2, item_kind)
    for number, wire, value in _fields(data):
        if number == 1:
            key = value.decode()
        elif number == 2:
            item = _value(value, wire, item_kind)
    return key, item


def _value(value: Any, wire: int, kind: Any) -> Any:
    if isinstance(kind, dict):
        return _message(value, kind)
    if kind == "string":
        return value.decode()
    if kind == "bytes":
        return base64.b64encode(value).decode()  # as JSON carries []byte
    if kind == "raw":
        return bytes(value)
    if kind == "bool":
        return bool(value)
    if kind in ("int64", "int32"):
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == "time":
        fields = _message(value, _TIME)
        if not fields.get("seconds"):
            return None  # the zero time: JSON's null
        moment = datetime.datetime.fromtimestamp(fields.get("seconds", 0), datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    raise ProtobufError(f"no decoder for {kind!r}")  # pragma: no cover - schema bug
