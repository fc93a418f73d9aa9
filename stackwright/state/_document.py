"""The versioned JSON document of `stackwright stack export` / `stack import`.

    {"version": 2, "project": "web", "stack": "dev",
     "resources": [ResourceState.to_dict(), ...],   # in dependency order
     "outputs": {...},
     "pending": [{"op": "create", "resource": {...}}, ...],
     "formerNames": ["staging"],                     # only when there are any
     "releasedNames": {"urn:sw:dev::web::…::cache": ["cache-1a2b3c4d"]},  # likewise
     "defaultCluster": {"uid": "…", "server": "https://…", "context": "prod"}}  # likewise

`formerNames` are the names the stack had before `stack rename` whose ApplySet
parents the next `up` removes. `defaultCluster` is the cluster the stack's default
provider last talked to (its `kube-system` uid; an explicit provider's is in its
resource's outputs): an import carries it, so the stack still refuses to run against
another cluster. Version 2 added it; a version-1 document (an older Stackwright's
export, which has none) is still read, and the stack records it on its next operation.
A resource's `deleteTimeout` (its `custom_timeouts.delete`) and `deletionPropagation` (its
`stackwright.io/deletion-propagation` annotation: Orphan, Background or Foreground) are
written only when set, so an export without them is still a document older Stackwrights
read (the version stays 2); a document without them means no timeout and Background.
`releasedNames` are, per URN, the auto-names the state let go of with their objects left
in the cluster (a retained delete, `state delete`), which later auto-names avoid. Version 3
added them; a document without any is still written as version 2, which older
Stackwrights read, so only a stack that holds some needs a Stackwright that knows them.

Building and checking the document is pure; the backend stores what `parse`
returns. A document is checked completely before anything is replaced, and a bad
one is refused with the path of its first problem (`resources[3].dependencies[0]`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from stackwright.errors import UsageError
from stackwright.model import ClusterIdentity, PendingOperation, ResourceState
from stackwright.state._codec import (
    Invalid,
    pending_from_dict,
    pending_to_dict,
    resource_from_dict,
    stack_urn,
)
from stackwright.state._integrity import check_and_order
from stackwright.state._records import Snapshot

VERSION: Final = 3
#: The versions `parse` reads: 1 lacks `defaultCluster`, 2 `releasedNames`, and each means
#: the same otherwise.
READS: Final = (1, 2, 3)
#: The version of a document with no released names: what an older Stackwright reads.
_WITHOUT_RELEASED: Final = 2
_KEYS: Final = (
    "version",
    "project",
    "stack",
    "resources",
    "outputs",
    "pending",
    "formerNames",
    "defaultCluster",
    "releasedNames",
)


@dataclass(frozen=True)
class Parsed:
    """What a document holds, checked; resources in dependency order."""

    resources: list[ResourceState]
    pending: list[PendingOperation]
    outputs: dict[str, Any]
    former_names: tuple[str, ...]
    default_cluster: ClusterIdentity | None
    released_names: dict[str, tuple[str, ...]]


def version_for(released_names: Mapping[str, Any]) -> int:
    """The version a document is written as: the oldest that holds what it carries."""
    return VERSION if released_names else _WITHOUT_RELEASED


def released_from(raw: Any, *, project: str, stack: str) -> dict[str, tuple[str, ...]]:
    """A document's `releasedNames`, checked: this stack's URNs, each with a list of names;
    Invalid naming the first problem."""
    if not isinstance(raw, Mapping):
        raise Invalid("the document's 'releasedNames' must be an object of URN → list of names")
    released = {}
    for urn, names in raw.items():
        stack_urn(urn, "the document's 'releasedNames'", project=project, stack=stack)
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n for n in names)
        ):
            raise Invalid(f"the document's 'releasedNames' of {urn} must be a list of names")
        released[urn] = tuple(dict.fromkeys(names))
    return released


def build(snapshot: Snapshot) -> dict[str, Any]:
    document: dict[str, Any] = {
        "version": version_for(snapshot.released_names),
        "project": snapshot.project,
        "stack": snapshot.stack,
        "resources": [state.to_dict() for state in snapshot.resources],
        "outputs": snapshot.outputs,
        "pending": [pending_to_dict(p) for p in snapshot.pending],
    }
    if snapshot.former_names:
        document["formerNames"] = list(snapshot.former_names)
    if snapshot.default_cluster is not None:
        document["defaultCluster"] = snapshot.default_cluster.to_dict()
    if snapshot.released_names:
        document["releasedNames"] = {
            urn: list(names) for urn, names in snapshot.released_names.items()
        }
    return document


def parse(document: Any, *, project: str, stack: str) -> Parsed:
    """What a document holds.

    Raises UsageError naming the first problem; nothing is stored by this function.
    """
    try:
        return _parse(document, project=project, stack=stack)
    except Invalid as invalid:
        raise UsageError(f"cannot import into stack {stack}: {invalid.problem}") from None


def _parse(document: Any, *, project: str, stack: str) -> Parsed:
    if not isinstance(document, Mapping):
        raise Invalid("the document must be a JSON object made by `stackwright stack export`")
    unknown = [key for key in document if key not in _KEYS]
    if unknown:
        raise Invalid(
            f"the document has an unknown field {unknown[0]!r} (fields: {', '.join(_KEYS)})"
        )
    # What an export always writes: a document missing resources or pending steps (cut
    # short, or edited) would empty the stack and forget objects a crash left under way.
    for key in ("version", "resources", "pending"):
        if key not in document:
            raise Invalid(
                f"the document has no {key!r}; is it the output of `stackwright stack export`?"
            )
    version = document["version"]
    if version not in READS or isinstance(version, bool):
        raise Invalid(
            f"the document has version {version!r}; this Stackwright reads versions "
            f"{', '.join(map(str, READS[:-1]))} and {READS[-1]} (a newer version needs a "
            "newer Stackwright)"
        )
    for key in ("project", "stack"):
        if not isinstance(document.get(key), str):
            raise Invalid(f"the document's {key!r} must be a string naming the {key} it came from")
    if (document["project"], document["stack"]) != (project, stack):
        # Two stacks recording the same objects would each delete or change them: a copy
        # of a stack is not made so.
        move = (
            "; to move resources to another stack of the project, run `stackwright state move`"
            if document["project"] == project
            else ""
        )
        raise Invalid(
            f"the document is the state of stack {document['stack']} of project "
            f"{document['project']}, not of stack {stack} of project {project}; import it into "
            f"that stack{move}"
        )
    raw_resources = document["resources"]
    if not isinstance(raw_resources, list):
        raise Invalid("the document's 'resources' must be a list")
    raw_pending = document["pending"]
    if not isinstance(raw_pending, list):
        raise Invalid("the document's 'pending' must be a list")
    outputs = document.get("outputs", {})
    if not isinstance(outputs, Mapping) or not all(isinstance(k, str) for k in outputs):
        raise Invalid("the document's 'outputs' must be an object")
    former = document.get("formerNames", [])
    if not isinstance(former, list) or not all(isinstance(n, str) and n for n in former):
        raise Invalid("the document's 'formerNames' must be a list of stack names")
    cluster = None
    if document.get("defaultCluster") is not None:
        try:
            cluster = ClusterIdentity.from_dict(document["defaultCluster"])
        except ValueError as error:
            raise Invalid(f"the document's 'defaultCluster' {error}") from None
    resources = [
        resource_from_dict(item, f"resources[{i}]", project=project, stack=stack)
        for i, item in enumerate(raw_resources)
    ]
    pending = [
        pending_from_dict(item, f"pending[{i}]", project=project, stack=stack)
        for i, item in enumerate(raw_pending)
    ]
    released = released_from(document.get("releasedNames", {}), project=project, stack=stack)
    ordered = check_and_order(resources, pending)
    _one_object_each(ordered)
    return Parsed(ordered, pending, dict(outputs), tuple(former), cluster, released)


def _one_object_each(resources: list[ResourceState]) -> None:
    """Refuse two live resources recording one object (the same type, provider and id).

    Checked on import only: a document is edited by hand, and a copied resource whose id
    was kept would leave its own object untracked and delete the other's with it. A run
    passing a name between two resources may leave that briefly, so `load` allows it.
    """
    seen: dict[tuple[str, str, str], str] = {}
    for state in resources:
        if state.delete_pending or not state.custom or not state.id or state.external:
            continue  # a read object may also be managed (here or elsewhere): no clash
        key = (state.type, state.provider, state.id)
        if key in seen:
            raise Invalid(
                f"resources {seen[key]} and {state.urn} both record the object {state.id}; "
                "each must record its own (its namespace/name)"
            )
        seen[key] = state.urn
