"""The schemas of the CustomResourceDefinitions a preview creates or changes, for checking
their objects: the server cannot dry-run an object of a kind it does not serve yet (or
serves with the schema about to change), so the preview checks it against the
`openAPIV3Schema` the program declares, in the API server's words.

The check is the local cluster's own (`localcluster.validation.check_custom`, pure: no
I/O), imported on first use so that a program without a CRD pays nothing for it.

`up --yes` previews nothing, so `check_before_up` refuses such an object before the run
changes anything, rather than creating the CRD and failing on the object. It refuses, in
`preview` and `up` alike, a secret the program puts where it would be in plain text (a
name, a label, a selector: `secret_in_plain_field`) when that is known before applying,
rather than applying the objects declared before it; one whose secret only an applied
object's outputs make known is refused when its step runs.

Must never: call a cluster, or refuse an object the declared schema does not cover (a
version the CRD does not list, a CRD without a schema), nor a Patch by it (its fields are
merged into an object the check does not see: a `required` field it leaves out is the
object's): the run reports those as it would, as its preview does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from stackwright.engine.graph import defined_kind
from stackwright.engine.policy_gate import planned_reader
from stackwright.engine.records import (
    describe,
    from_origin,
    is_kubernetes,
    is_patch,
    provider_urn,
    secret_in_plain_field,
    unknown_as_null,
    unknown_paths,
    unwrapped,
)
from stackwright.errors import InputsRejected, UsageError, located
from stackwright.model import ResourceState
from stackwright.sdk.context import Program
from stackwright.sdk.output import StateReader, resolve
from stackwright.sdk.resource import Resource


class DeclaredSchemas:
    """(group, kind) → the versions' schemas of a CRD this preview creates or changes."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}

    def declare(self, group: str, kind: str, spec: Mapping[str, Any]) -> None:
        """Record the schemas of the CRD whose `spec` serves `kind` in `group`."""
        versions = spec.get("versions")
        schemas: dict[str, Mapping[str, Any]] = {}
        for version in versions if isinstance(versions, list) else ():
            if not isinstance(version, Mapping) or not version.get("served", True):
                continue
            schema = version.get("schema")
            root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
            if isinstance(root, Mapping):
                schemas[str(version.get("name", ""))] = root
        self._schemas[group, kind] = schemas

    def refusal(self, obj: Mapping[str, Any]) -> str | None:
        """What the API server would answer an apply of `obj` once its CRD is as declared:
        None when it would take it (or when no declared schema covers it)."""
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        root = self._schemas.get((group, str(obj.get("kind", ""))), {}).get(version)
        if root is None:
            return None
        from stackwright.localcluster.validation import check_custom

        return check_custom(dict(obj), root)


class SchemaRefused(InputsRejected):
    """An object the schema its CRD declares refuses: the server's message, for the inputs the
    server will refuse once it serves the kind."""


def check_before_up(
    program: Program,
    recorded: Mapping[str, ResourceState],
    chosen: Callable[[str], bool],
    *,
    applying: bool,
) -> None:
    """Refuse (exit 2, nothing changed) a `preview` or `up` that would put a known secret
    where it is shown in plain text, and an `up` (`applying`) that would create or change
    a CRD and then apply an object of its kind that the CRD's declared schema refuses.
    `recorded`: the stack's resources by URN (a CRD recorded as declared is the server's
    to answer for); `chosen`: whether the run touches a URN (`--target`, `--exclude`)."""
    read = planned_reader()
    declared: dict[str, DeclaredSchemas] = {}
    for resource in program.resources:
        if not resource.custom or resource.is_read or not chosen(resource.urn):
            continue
        if not is_kubernetes(resource.resource_type):  # an object, a Patch: not a release
            continue
        known = _inputs(resource, read)  # resolved once for every check of it
        if known is None:
            continue
        old = recorded.get(resource.urn)
        _check_secret_placement(resource, known)
        _check_types(resource, known, old)
        served = defined_kind(resource.props) if applying else None
        if served is None:
            continue
        inputs = known[0]
        if unknown_paths(inputs) or (old is not None and old.inputs.get("spec") == inputs["spec"]):
            continue
        declared.setdefault(provider_urn(resource), DeclaredSchemas()).declare(
            *served, inputs["spec"]
        )
    for resource in program.resources if declared else ():
        schemas = declared.get(provider_urn(resource))
        if schemas is None or not resource.custom or not chosen(resource.urn):
            continue
        if defined_kind(resource.props) is not None or resource.is_read or is_patch(resource):
            continue
        obj, _ = unwrapped(resource, resolve(resource.props, read))
        if unknown_paths({k: v for k, v in obj.items() if k != "metadata"}):
            continue  # what it will be is known at apply only: the server answers then
        refusal = schemas.refusal(obj)
        if refusal is not None:
            said = refusal.replace("\n  ", " ")
            raise UsageError(
                located(
                    resource.declared_at,
                    f"{describe(resource.urn)}{from_origin(resource)}: "
                    f"the schema its CustomResourceDefinition declares refuses it: {said}. Fix the "
                    "object (or the schema); nothing was changed",
                )
            )


def _inputs(resource: Resource, read: StateReader) -> tuple[Any, list[str]] | None:
    """`resource`'s inputs as far as they are known, and their secret paths; None when a
    callback of the program's raises on them: its step fails, saying so, not the command.

    Inputs with no Output and no Secret (most objects: their marks say so) are taken as
    JSON has them, as the checks read them, in C: not walked in Python to be resolved here
    and again as their step begins."""
    if resource.input_marks.plain:
        return orjson.loads(orjson.dumps(resource.props)), []
    try:
        return unwrapped(resource, resolve(resource.props, read))
    except Exception:
        return None


def _check_secret_placement(resource: Resource, known: tuple[Any, list[str]]) -> None:
    """Refuse a secret that `resource` puts in a field shown in plain text, as its step
    would (the same message), when the program alone says it is there. `known`: its
    inputs as far as they are known, and their secret paths (`_inputs`)."""
    # Most objects hold no secret: the Outputs' own marks say so (and the walk that finds
    # them serves the dependency graph too).
    if not is_kubernetes(resource) or not resource.input_marks.secret:
        return
    inputs, found = known
    refusal = secret_in_plain_field(found, inputs)
    if refusal is not None:
        raise UsageError(
            located(
                resource.declared_at,
                f"{describe(resource.urn)}{from_origin(resource)}: {refusal}; nothing was changed",
            )
        )


def _check_types(
    resource: Resource, known: tuple[Any, list[str]], old: ResourceState | None
) -> None:
    """Refuse a value of a built-in kind's inputs that its field cannot hold (a string in
    an integer field: `replicas: "three"`), as the API server would, before anything is
    applied: its preview's dry run is skipped when the same run creates its namespace, and
    an `up` would have applied the objects before it. Values known once applied only are
    the server's to judge, and inputs as `old` recorded them the server has taken already
    (a no-op run checks nothing, and loads no schema). `known`: as `_check_secret_placement`."""
    inputs, secret_paths = known
    if old is not None and _as_recorded(inputs, old.inputs):
        return
    if resource.input_marks.plain:
        obj = inputs  # a copy as JSON has it already (`_inputs`), nothing unknown in it
    else:
        try:  # what is not known yet is absent to the check
            obj = orjson.loads(orjson.dumps(inputs, default=unknown_as_null))
        except orjson.JSONEncodeError:
            return  # not JSON: the run says so, as it would without this check
    from stackwright.localcluster.decoding import builtin_mismatches

    found = next(iter(builtin_mismatches(obj)), None)
    if found is None:
        return
    what = _JSON_TYPES.get(found.found, found.found)
    if any(_within(found.path, secret) for secret in secret_paths):
        shown = f"a {what} ([secret])"
    elif found.found in ("object", "array"):
        shown = f"an {what}" if what == "object" else f"a {what}"
    else:
        shown = f"the {what} {json.dumps(found.value)[:60]}"
    raise UsageError(
        located(
            resource.declared_at.of_field(found.path),
            f"{describe(resource.urn)}"
            f"{from_origin(resource)}: {found.path} is {shown}, where a {obj['kind']} takes "
            f"{found.expected}; nothing was changed",
        )
    )


#: A JSON type as a message names it.
_JSON_TYPES = {"bool": "boolean", "array": "list"}


def _as_recorded(inputs: Mapping[str, Any], recorded: Mapping[str, Any]) -> bool:
    """Whether `inputs` are the `recorded` ones, the name the run gave an object the
    program names not aside."""
    if inputs == recorded:
        return True
    meta, named = inputs.get("metadata"), recorded.get("metadata")
    if not isinstance(meta, Mapping) or "name" in meta or not isinstance(named, Mapping):
        return False
    return {**inputs, "metadata": {**meta, "name": named.get("name")}} == recorded


def _within(path: str, outer: str) -> bool:
    """Whether `path` is `outer` or inside it (`spec.replicas` in `spec`)."""
    return not outer or path == outer or path.startswith((outer + ".", outer + "["))
