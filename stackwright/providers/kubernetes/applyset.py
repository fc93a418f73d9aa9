"""Which objects belong to a stack: DESIGN's labels, and ApplySets (KEP-3659).

Every object Stackwright manages carries `app.kubernetes.io/managed-by: stackwright`
and the annotations `stackwright.io/stack` and `stackwright.io/urn` (`managed_labels`).

Each stack also has one ApplySet parent per namespace it uses: a ConfigMap named
`stackwright-applyset-<project>.<stack>` (ConfigMaps and Secrets are the parent kinds the
KEP lets every tool recognise; a ConfigMap needs no Secret access to read). As the
KEP and kubectl's implementation specify:

- the parent's label `applyset.kubernetes.io/id` is
  `applyset-<base64url(sha256("<name>.<namespace>.<kind>.<group>")) without padding>-v1`
  (kubectl's V1ApplySetIdFormat; the `-v1` suffix is part of the spec's id format);
- its annotations are `applyset.kubernetes.io/tooling: stackwright/v<version>` and
  `applyset.kubernetes.io/contains-group-kinds`, the sorted `<Kind>.<group>` list
  (`ConfigMap,Deployment.apps`), plus `applyset.kubernetes.io/additional-namespaces`;
- every member carries the label `applyset.kubernetes.io/part-of: <id>`.

So `kubectl` and other tools can see a stack's objects, and pruning lists only the
recorded kinds with a label selector, never the whole cluster. Members may be in
the parent's namespace or cluster-scoped. Must never: change an ApplySet parent
that another tool manages or a ConfigMap of the parent's name that is not a parent
(a user's), accept a manifest that already claims another set, or delete a ConfigMap
that is not the stack's parent or a parent whose set has members.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from stackwright.model import STACK_ANNOTATION, URN_ANNOTATION
from stackwright.providers.kubernetes.discovery import split_api_version
from stackwright.providers.kubernetes.errors import InvalidObject, PermanentError, UnknownKind
from stackwright.version import VERSION

if TYPE_CHECKING:
    from stackwright.providers.kubernetes.provider import KubernetesProvider

__all__ = [
    "ADDITIONAL_NAMESPACES",
    "CONTAINS_GROUP_KINDS",
    "ID_LABEL",
    "MANAGED_BY",
    "MARK_ANNOTATIONS",
    "MARK_LABELS",
    "PARENT_PREFIX",
    "PART_OF",
    "STACK_ANNOTATION",
    "TOOLING",
    "TOOLING_VALUE",
    "URN_ANNOTATION",
    "ApplySet",
    "ManagedMetadata",
    "applyset_id",
    "check_parent",
    "ensure_parent",
    "group_kind",
    "list_members",
    "managed_labels",
    "parent_name",
    "read_parent",
    "remove_parent",
    "stamp",
    "unmark_command",
]

PART_OF = "applyset.kubernetes.io/part-of"
ID_LABEL = "applyset.kubernetes.io/id"
TOOLING = "applyset.kubernetes.io/tooling"
CONTAINS_GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
ADDITIONAL_NAMESPACES = "applyset.kubernetes.io/additional-namespaces"

MANAGED_BY = "app.kubernetes.io/managed-by"

#: What marks an object as a stack's (taken off an object a stack leaves behind).
MARK_LABELS = (PART_OF, MANAGED_BY)
MARK_ANNOTATIONS = (STACK_ANNOTATION, URN_ANNOTATION)


TOOLING_VALUE = f"stackwright/v{VERSION}"


def applyset_id(name: str, namespace: str, kind: str, group: str) -> str:
    """The id of the ApplySet whose parent is <kind>.<group> <namespace>/<name> (KEP-3659)."""
    digest = hashlib.sha256(f"{name}.{namespace}.{kind}.{group}".encode()).digest()
    encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return f"applyset-{encoded}-v1"


def group_kind(api_version: str, kind: str) -> str:
    """`Deployment.apps`; `ConfigMap` for the core group (the contains-group-kinds spelling)."""
    group, _ = split_api_version(api_version)
    return f"{kind}.{group}" if group else kind


_INVALID = re.compile(r"[^a-z0-9.-]+")

#: How the name of every parent Stackwright keeps starts; `<project>.<stack>` follows.
PARENT_PREFIX = "stackwright-applyset-"


def parent_name(stack: str) -> str:
    """`stackwright-applyset-<key>` (key: `<project>.<stack>`), made a valid object name whatever it is."""
    cleaned = _INVALID.sub("-", stack.lower()).strip("-.")
    name = f"{PARENT_PREFIX}{cleaned}" if cleaned else PARENT_PREFIX.rstrip("-")
    if cleaned != stack or len(name) > 253:
        # Two stack names that clean up to the same text must still get different parents.
        suffix = hashlib.sha256(stack.encode()).hexdigest()[:8]
        name = f"{name[: 253 - 9]}-{suffix}"
    return name


@dataclass(frozen=True)
class ApplySet:
    """One stack's set of objects in one namespace, and its parent ConfigMap.

    The parent is named after the project and the stack (`stackwright-applyset-web.dev`),
    so two projects that both have a stack `dev` in one namespace keep separate sets.
    """

    stack: str
    namespace: str
    project: str = ""

    # Worked out once per set (its fields never change): a set stamps each of its members.
    @cached_property
    def name(self) -> str:
        return parent_name(f"{self.project}.{self.stack}" if self.project else self.stack)

    @cached_property
    def id(self) -> str:
        return applyset_id(self.name, self.namespace, "ConfigMap", "")

    def member_labels(self) -> dict[str, str]:
        return {PART_OF: self.id}

    def selector(self) -> str:
        return f"{PART_OF}={self.id}"

    def parent(
        self, group_kinds: Iterable[str], additional_namespaces: Iterable[str] = ()
    ) -> dict[str, Any]:
        """The parent ConfigMap to server-side apply (no data: membership is in the labels)."""
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {ID_LABEL: self.id, MANAGED_BY: "stackwright"},
                "annotations": {
                    TOOLING: TOOLING_VALUE,
                    CONTAINS_GROUP_KINDS: ",".join(sorted(set(group_kinds))),
                    ADDITIONAL_NAMESPACES: ",".join(
                        sorted(set(additional_namespaces) - {self.namespace})
                    ),
                    STACK_ANNOTATION: self.stack,
                },
            },
        }


class ManagedMetadata(NamedTuple):
    labels: dict[str, str]
    annotations: dict[str, str]


def managed_labels(stack: str, urn: str) -> ManagedMetadata:
    """DESIGN's marks for a managed object: the managed-by label, the stack and URN annotations."""
    return ManagedMetadata(
        labels={MANAGED_BY: "stackwright"},
        annotations={STACK_ANNOTATION: stack, URN_ANNOTATION: urn},
    )


def stamp(
    obj: Mapping[str, Any], *, stack: str, urn: str, applyset: ApplySet | None = None
) -> dict[str, Any]:
    """A copy of `obj` with the managed labels / annotations (and ApplySet membership) added.

    Raises InvalidObject when the manifest already claims membership of another ApplySet.
    """
    marks = managed_labels(stack, urn)
    meta = dict(obj.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    annotations = dict(meta.get("annotations") or {})
    if applyset is not None:
        claimed = labels.get(PART_OF)
        if claimed is not None and claimed != applyset.id:
            raise InvalidObject(
                f"{meta.get('name', '(unnamed)')}: its label {PART_OF}={claimed} puts it in another "
                f"ApplySet; remove that label, Stackwright sets it"
            )
        labels.update(applyset.member_labels())
    labels.update(marks.labels)
    annotations.update(marks.annotations)
    meta["labels"] = labels
    meta["annotations"] = annotations
    return {**obj, "metadata": meta}


def check_parent(live: Mapping[str, Any], applyset: ApplySet, *, removing: bool = False) -> None:
    """Refuse what is not this set's parent: one another tool manages, one whose id label
    does not match its identity, or a ConfigMap with no id label (a user's that has the
    parent's name). Stackwright makes its parent with the label in one apply, so a parent
    of its own never lacks it.

    To be `removing` it, which no later apply undoes, all of the parent's marks must be as
    Stackwright writes them (the tooling and stack annotations too), and any that is not
    leaves it alone."""
    meta = live.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    where = f"ConfigMap {applyset.namespace}/{applyset.name}"
    tooling = str(annotations.get(TOOLING, ""))
    found = {
        ID_LABEL: (meta.get("labels") or {}).get(ID_LABEL),
        TOOLING: tooling.rsplit("/", 1)[0],
        STACK_ANNOTATION: annotations.get(STACK_ANNOTATION),
    }
    expected = {ID_LABEL: applyset.id, TOOLING: "stackwright", STACK_ANNOTATION: applyset.stack}
    if removing:
        differ = [key for key in expected if found[key] != expected[key]]
        if differ:
            raise PermanentError(
                f"{where} is not the ApplySet parent of stack {applyset.stack} (its {differ[0]} "
                f"is {found[differ[0]]!r}, expected {expected[differ[0]]!r}); Stackwright leaves "
                "it alone"
            )
        return
    if tooling and found[TOOLING] != expected[TOOLING]:
        raise PermanentError(
            f"{where} is an ApplySet parent managed by {tooling}; Stackwright will not change it: "
            "delete it or rename the stack"
        )
    if found[ID_LABEL] is None and tooling:
        raise PermanentError(
            f"{where} has lost its {ID_LABEL} label (someone removed it); "
            "delete the ConfigMap so Stackwright recreates it"
        )
    if found[ID_LABEL] is None:
        raise PermanentError(
            f"{where} is in the way: stack {applyset.stack} keeps its ApplySet parent under that "
            f"name, and this ConfigMap (no {ID_LABEL} label) is not one; Stackwright will not "
            "change it: rename or delete it, then run the command again"
        )
    if found[ID_LABEL] != expected[ID_LABEL]:
        raise PermanentError(
            f"{where} has {ID_LABEL}={found[ID_LABEL]}, but its identity gives {applyset.id}; "
            "someone changed the label: delete the ConfigMap so Stackwright recreates it"
        )
    owner = found[STACK_ANNOTATION]
    if owner is not None and owner != applyset.stack:
        # Project `a.b` with stack `c` and project `a` with stack `b.c` name one parent (and
        # so one id): sharing it would make each stack's objects members of the other's set.
        raise PermanentError(
            f"{where} is the ApplySet parent of stack {owner} of another project (its project "
            f"and stack names joined by a dot give the same name as project {applyset.project} "
            f"and stack {applyset.stack}); Stackwright will not share it: rename this stack "
            "(`stackwright stack rename`) or the project"
        )


def _split(value: str) -> set[str]:
    return {v for v in value.split(",") if v}


async def read_parent(provider: KubernetesProvider, applyset: ApplySet) -> dict[str, Any] | None:
    """The set's parent as the cluster has it (None: not made yet), refused by `check_parent`
    when what has its name is not this set's parent; a preview's check, writing nothing."""
    live = await provider.read("v1", "ConfigMap", applyset.namespace, applyset.name)
    if live is not None:
        check_parent(live, applyset)
    return live


async def ensure_parent(
    provider: KubernetesProvider,
    applyset: ApplySet,
    group_kinds: Iterable[str],
    *,
    additional_namespaces: Iterable[str] = (),
    prune: bool = False,
) -> dict[str, Any]:
    """Create or update the parent by server-side apply and return it.

    Before members are applied, call with `prune=False`: the recorded kinds become the
    union of what was there and `group_kinds` (the KEP's superset step, so a crash
    never leaves a member kind unrecorded). After pruning, call with `prune=True` to
    record exactly `group_kinds`.
    """
    kinds = set(group_kinds)
    namespaces = set(additional_namespaces)
    live = await read_parent(provider, applyset)
    if live is not None and not prune:
        annotations = (live.get("metadata") or {}).get("annotations") or {}
        kinds |= _split(str(annotations.get(CONTAINS_GROUP_KINDS, "")))
        namespaces |= _split(str(annotations.get(ADDITIONAL_NAMESPACES, "")))
    return await provider.apply(applyset.parent(kinds, namespaces))


async def list_members(
    provider: KubernetesProvider, applyset: ApplySet, group_kinds: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The set's members, kind by kind with a label selector (the parent's kinds when not given)."""
    if group_kinds is None:
        live = await read_parent(provider, applyset)
        if live is None:
            return []
        annotations = (live.get("metadata") or {}).get("annotations") or {}
        group_kinds = _split(str(annotations.get(CONTAINS_GROUP_KINDS, "")))
    members: list[dict[str, Any]] = []
    for entry in sorted(set(group_kinds)):
        kind, _, group = entry.partition(".")
        try:
            info = await provider.resource_info_for_group_kind(group, kind)
        except UnknownKind:
            continue  # its CRD is gone, and every object of it with it
        namespace = applyset.namespace if info.namespaced else None
        members.extend(
            await provider.list(
                info.api_version, kind, namespace, label_selector=applyset.selector()
            )
        )
    return members


def leave_set(member: Mapping[str, Any], namespace: str) -> str:
    """The kubectl command that takes `member` out of its ApplySet: its kind with its group
    (two CRDs may both name theirs `Gadget`), its name, the set's namespace."""
    name = str((member.get("metadata") or {}).get("name"))
    target = _kubectl_target(str(member.get("apiVersion", "")), str(member.get("kind", "")))
    return f"kubectl label {target} {name} -n {namespace} {PART_OF}-"


def unmark_command(api_version: str, kind: str, namespace: str | None, name: str) -> str:
    """The kubectl commands that take every mark `stamp` puts on an object off it."""
    target = f"{_kubectl_target(api_version, kind)} {name}"
    if namespace:
        target += f" -n {namespace}"
    labels = " ".join(f"{key}-" for key in MARK_LABELS)
    annotations = " ".join(f"{key}-" for key in MARK_ANNOTATIONS)
    return f"kubectl label {target} {labels} && kubectl annotate {target} {annotations}"


def _kubectl_target(api_version: str, kind: str) -> str:
    """How kubectl names a kind unambiguously: with its group (two CRDs may both name
    theirs `Gadget`), the core group's kinds alone."""
    group = api_version.rpartition("/")[0]
    return f"{kind.lower()}.{group}" if group else kind.lower()


async def remove_parent(provider: KubernetesProvider, applyset: ApplySet) -> None:
    """Delete the parent of a set that has no members left; nothing when it is gone.

    Raises PermanentError, deleting nothing, when the ConfigMap of that name is not this
    stack's parent (a user's, another tool's, or one whose id label does not match), or
    when objects still carry the set's label: tools would lose track of them.
    """
    live = await provider.read("v1", "ConfigMap", applyset.namespace, applyset.name)
    if live is None:
        return
    check_parent(live, applyset, removing=True)
    # The parent just read and checked names the kinds: no second read of it.
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    kinds = _split(str(annotations.get(CONTAINS_GROUP_KINDS, "")))
    where = f"ConfigMap {applyset.namespace}/{applyset.name}"
    members = await list_members(provider, applyset, kinds)
    if members:
        first = members[0].get("metadata") or {}
        # One another tool labelled keeps the label, as does one `state delete` forgot
        # while the cluster was out of reach. Out of the set, the next run removes the parent.
        release = leave_set(members[0], applyset.namespace)
        raise PermanentError(
            f"{where} still has {len(members)} member(s), such as {members[0].get('kind')} "
            f"{first.get('name')}; Stackwright keeps the parent so that tools still find them "
            f"(objects no stack records any more leave the set with `{release}`, and the next "
            "run removes the parent)"
        )
    await provider.delete("v1", "ConfigMap", applyset.namespace, applyset.name)
