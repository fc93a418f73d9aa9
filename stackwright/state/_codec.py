"""How a resource becomes a row's bytes and back, and the strict check of a resource's shape.

One encoding for every backend: compact JSON (orjson) of `ResourceState.to_dict()`
without the fields left at their defaults, so a step writes little more than the
object itself. The same field-by-field check serves loading (where a failure
means the state is damaged) and importing (where it means the document is bad);
it reports the exact path of the first problem and never guesses a fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import orjson

from stackwright.errors import UsageError
from stackwright.model import (
    PROPAGATION_POLICIES,
    Op,
    PendingOperation,
    ResourceState,
    URNParts,
    parse_urn,
)


class Invalid(ValueError):
    """A value does not have the shape the state needs; `problem` says where and why."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


#: Field → (expected kind, default). The defaults are left out of stored rows.
_FIELDS: Final[dict[str, tuple[str, Any]]] = {
    "urn": ("a string", None),
    "type": ("a string", None),
    "id": ("a string", ""),
    "inputs": ("an object", {}),
    "outputs": ("an object", {}),
    "parent": ("a string", ""),
    "dependencies": ("a list of strings", []),
    "provider": ("a string", ""),
    "custom": ("a boolean", True),
    "protect": ("a boolean", False),
    "retainOnDelete": ("a boolean", False),
    "deletedWith": ("a string", ""),
    "secretPaths": ("a list of strings", []),
    "deletePending": ("a boolean", False),
    "initErrors": ("a list of strings", []),
    "external": ("a boolean", False),
    "ignoreChanges": ("a list of strings", []),
    # Left out by older Stackwrights' records and exports: no custom_timeouts.delete.
    "deleteTimeout": ("a positive number of seconds", None),
    # Likewise: no stackwright.io/deletion-propagation annotation (Background).
    "deletionPropagation": (f"one of {', '.join(PROPAGATION_POLICIES)}", None),
}

_OPS: Final = {op.value: op for op in Op}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    if value is None:
        return "null"
    return type(value).__name__


def _check(value: Any, kind: str) -> bool:
    if kind == "a string":
        return isinstance(value, str)
    if kind == "a boolean":
        return isinstance(value, bool)
    if kind == "an object":
        return isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
    if kind == "a positive number of seconds":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value > 0
        )
    if kind == _FIELDS["deletionPropagation"][0]:
        return value in PROPAGATION_POLICIES
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def stack_urn(urn: str, where: str, *, project: str, stack: str, field: str = "") -> URNParts:
    """The parts of `urn` (at `where`, in its `field` if any), a URN of this project's
    stack; Invalid saying what is wrong."""
    try:
        parts = parse_urn(urn)
    except ValueError as error:
        raise Invalid(
            f"{where}: field {field!r}: {error}" if field else f"{where}: {error}"
        ) from None
    if (parts.stack, parts.project) != (stack, project):
        raise Invalid(
            f"{where}: {urn} belongs to stack {parts.stack} of project {parts.project}, "
            f"not to stack {stack} of project {project}"
        )
    return parts


def resource_from_dict(data: Any, where: str, *, project: str, stack: str) -> ResourceState:
    """A ResourceState from its dict form, or Invalid naming the first bad field.

    `where` prefixes problems (`resources[3]`); the URN must belong to `stack` of
    `project`, since a resource of another stack in this one means damage or a
    document meant for elsewhere.
    """
    if not isinstance(data, Mapping):
        raise Invalid(f"{where}: must be an object, got {_kind_of(data)}")
    for key in data:
        if key not in _FIELDS:
            known = ", ".join(_FIELDS)
            raise Invalid(f"{where}: unknown field {key!r} (fields: {known})")
    for key in ("urn", "type"):
        if key not in data:
            raise Invalid(f"{where}: the field {key!r} is missing")
    for key, (kind, _) in _FIELDS.items():
        if key in data and not _check(data[key], kind):
            raise Invalid(f"{where}: field {key!r} must be {kind}, got {_kind_of(data[key])}")
    urn = data["urn"]
    parts = stack_urn(urn, where, project=project, stack=stack, field="urn")
    if data["type"] != parts.type:
        raise Invalid(f"{where}: field 'type' is {data['type']!r}, but its URN says {parts.type!r}")
    for key in ("parent", "provider", "deletedWith"):
        ref = data.get(key, "")
        if ref:
            try:
                parse_urn(ref)
            except ValueError as error:
                raise Invalid(f"{where}: field {key!r}: {error}") from None
    for index, ref in enumerate(data.get("dependencies") or ()):
        try:
            parse_urn(ref)
        except ValueError as error:
            raise Invalid(f"{where}: field 'dependencies' item {index}: {error}") from None
    return ResourceState.from_dict(
        {
            **data,
            "inputs": dict(data.get("inputs") or {}),
            "outputs": dict(data.get("outputs") or {}),
        }
    )


def pending_from_dict(data: Any, where: str, *, project: str, stack: str) -> PendingOperation:
    if not isinstance(data, Mapping):
        raise Invalid(f"{where}: must be an object, got {_kind_of(data)}")
    unknown = sorted(set(data) - {"op", "resource"})
    if unknown:
        raise Invalid(f"{where}: unknown field {unknown[0]!r} (fields: op, resource)")
    op = data.get("op")
    if op not in _OPS:
        raise Invalid(f"{where}: field 'op' must be one of {', '.join(_OPS)}, got {op!r}")
    resource = resource_from_dict(
        data.get("resource"), f"{where}.resource", project=project, stack=stack
    )
    return PendingOperation(_OPS[op], resource)


def pending_to_dict(pending: PendingOperation) -> dict[str, Any]:
    return {"op": pending.op.value, "resource": pending.resource.to_dict()}


def op_named(value: str) -> Op:
    try:
        return _OPS[value]
    except KeyError:
        raise Invalid(f"unknown operation {value!r}") from None


def encode_resource(state: ResourceState, *, keep_delete_pending: bool = False) -> bytes:
    """A row's payload: the dict form without the fields left at their defaults.

    A resource row leaves out `deletePending` too: a column holds it, so demoting
    an old object after its replacement rewrites no payload. A pending row keeps it
    (`keep_delete_pending`), since it says which row the step is about.
    """
    compact = {
        key: value
        for key, value in state.to_dict().items()
        if value != _FIELDS[key][1] and (keep_delete_pending or key != "deletePending")
    }
    return encode_json(compact, f"resource {state.urn}")


def decode_resource(
    blob: bytes, where: str, *, project: str, stack: str, delete_pending: bool | None = None
) -> ResourceState:
    """The inverse of `encode_resource`; `delete_pending` (a resource row's column)
    overrides the payload when given."""
    try:
        data = orjson.loads(blob)
    except orjson.JSONDecodeError as error:
        raise Invalid(f"{where} is not JSON ({error})") from None
    if isinstance(data, dict) and delete_pending is not None:
        data["deletePending"] = delete_pending
    return resource_from_dict(data, where, project=project, stack=stack)


def encode_json(value: Any, what: str) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError as error:
        raise UsageError(
            f"{what} cannot be recorded in the state: it is not JSON ({error})"
        ) from error
