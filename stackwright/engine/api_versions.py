"""Built-in aliases between the API versions of one kind (Pulumi's `kubernetes:apps/v1beta1:
Deployment` ↔ `kubernetes:apps/v1:Deployment`): a resource the program now declares with
another apiVersion of the same group and kind, name, parent chain and provider as a recorded
one is that resource moved to a new type, not a new object beside a deleted one — the API
server serves one object under each of the kind's versions.

Must never: match across groups or kinds, match an old record an explicit alias names or the
program still declares, or give one old record to two resources (nor two to one): each of
those stays what it was without this — a create and a delete.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from stackwright.engine.records import is_kubernetes, metadata_of
from stackwright.model import ResourceState, parse_urn


class Declared(NamedTuple):
    """A program resource as the matching sees it: its URN, its provider's URN ("" for the
    default one) and its metadata with values not known yet as "" (`_static`)."""

    urn: str
    provider: str
    metadata: Mapping[str, Any]


def _kind_key(urn: str) -> tuple[str, ...] | None:
    """The URN's parts but its type's version, or None for a URN that is no
    `kubernetes:<group>/<version>:<Kind>` object."""
    parts = parse_urn(urn)
    prefix, _, own = parts.qualified_type.rpartition("$")
    package, _, rest = own.partition(":")
    group_version, _, kind = rest.partition(":")
    group, _, version = group_version.rpartition("/")
    if package != "kubernetes" or not group or not version or not kind:
        return None
    return parts.stack, parts.project, prefix, group, kind, parts.name


def version_change(old_urn: str, new_urn: str) -> str:
    """How a move between versions reads: `apiVersion acme.io/v1beta1 → acme.io/v1`."""

    def api_version(urn: str) -> str:
        group_version = parse_urn(urn).type.split(":")[1]
        return group_version.removeprefix("core/")  # `core/v1` is spelt `v1`

    return f"apiVersion {api_version(old_urn)} → {api_version(new_urn)}"


def _same_object(metadata: Mapping[str, Any], old: ResourceState) -> bool:
    """Whether what the program writes of the name and namespace may be the recorded
    object's: a value not known yet ("") may be, and so may a name left out (an auto-name,
    reused from the record); a namespace left out where one was written (or the reverse)
    may be another, and a value written otherwise is another object: a replacement."""
    recorded = metadata_of(old.inputs)
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return (not name or name == recorded.get("name")) and (
        namespace == "" or namespace == recorded.get("namespace")
    )


def version_moves(
    declared: Iterable[Declared], old: Mapping[str, ResourceState], reserved: set[str]
) -> dict[str, str]:
    """Program URN → the old URN it moves from, for each program resource not in the state
    that matches exactly one recorded object of another version of its kind, which nothing
    else matches; `reserved` holds the URNs the program declares or names as aliases."""
    recorded: dict[tuple[str, ...], list[ResourceState]] = defaultdict(list)
    for urn, state in old.items():
        keyed = _kind_key(urn) if is_kubernetes(state) else None
        if (
            keyed is None
            or urn in reserved
            or not state.custom
            or state.external
            or state.delete_pending
        ):
            continue
        recorded[keyed].append(state)
    if not recorded:
        return {}
    claims: dict[str, list[str]] = defaultdict(list)  # program URN → old URNs
    for resource in declared:
        keyed = _kind_key(resource.urn)
        if keyed is None or resource.urn in old:
            continue
        for state in recorded.get(keyed, ()):
            if state.provider == resource.provider and _same_object(resource.metadata, state):
                claims[resource.urn].append(state.urn)
    claimed = Counter(u for olds in claims.values() for u in olds)
    return {
        urn: olds[0] for urn, olds in claims.items() if len(olds) == 1 and claimed[olds[0]] == 1
    }
