"""Whether this stack may take an object in the cluster: a create over an object that is
not the stack's is refused, saying what would adopt it (`check_free`); an import's object
must be there, be the one its id names, and be managed by no other resource or stack
(`check_importable`, `check_import_id`, and the pure checks `operations` runs first).

Owns the marks a run lists once per kind and namespace for those checks, the namespaces it
created (nothing else can be in them yet), and the uids of the objects it adopts. Must
never: write to the cluster, or let an object pass that another stack's resource manages.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stackwright.engine.failures import DeclarationRefused
from stackwright.engine.records import (
    IMPORT_OF_ONE_BEING_DELETED,
    being_deleted,
    describe,
    is_kubernetes,
    mark_of,
    metadata_of,
    object_ref,
)
from stackwright.engine.shared_work import SharedWork
from stackwright.kubernetes.fields import KINDS
from stackwright.model import CLUSTER_SCOPED, ResourceState, urn_name
from stackwright.sdk.resource import Resource, is_object_id

if TYPE_CHECKING:
    from stackwright.engine.execute import Run
    from stackwright.engine.ports import Provider


def import_done(object_id: str, old: ResourceState | None) -> bool:
    """Whether `old` records the object the import id names: its import is done, and the
    option no longer acts. A bare name in a namespaced kind's id is its default namespace's."""
    if old is None or old.external:
        return False
    return old.id == object_id or ("/" not in object_id and old.id.endswith(f"/{object_id}"))


def builtin_namespaced(api_version: str, kind: str) -> bool | None:
    """Whether a kind of Kubernetes' own is namespaced; None for one that is not built in (a
    CRD's kind, whose CustomResourceDefinition says: `spec.scope`)."""
    group, _, version = api_version.rpartition("/")
    if kind not in KINDS.get(group, {}).get(version, ()):
        return None
    return kind not in CLUSTER_SCOPED


def import_id_problem(object_id: str, kind: str = "", namespaced: bool | None = None) -> str | None:
    """Why an import id names no object, or None: an empty part (`/web` would read the
    default namespace's `web`, `team/` no name at all), more than two, or a namespace for a
    cluster-scoped kind (`namespaced` False; its read ignores it: `x/team` adopts Namespace
    `team`). A kind whose scope is not known (None) is let through."""
    if not is_object_id(object_id):
        return "write it as NAMESPACE/NAME, or NAME for a cluster-scoped kind"
    namespace, _, name = object_id.rpartition("/")
    if namespace and namespaced is False:
        return f"{kind} is cluster-scoped, so its id is its name alone: {name!r}"
    return None


def import_disagreement(
    resource: Resource,
    meta: Mapping[str, Any],
    old: ResourceState | None,
    namespaced: bool | None,
    default_namespace: str,
) -> str | None:
    """Why the `metadata` of a resource that imports an object names another one, or None.
    The import's id (`team/web`; a cluster-scoped kind's has no slash) names the object it
    adopts: a `metadata.namespace` or `metadata.name` of the program's that differs from it
    would win and adopt another object, silently. A name alone, for a namespaced kind, is
    the provider's default namespace's (`default_namespace`; "" when not known yet), as a
    Pulumi id is. Values not known yet (Outputs), a kind whose scope is not known
    (`namespaced` None) and a resource recorded with that id (`import_done`) are let
    through; the run checks the one at its inputs (`Adoption.check_import_id`), what
    `operations` checks first."""
    object_id = resource.opts.import_
    if not object_id or import_done(object_id, old):
        return None
    if not (resource.custom and is_kubernetes(resource)):
        return None
    kind = resource.resource_type.rpartition(":")[2]
    unnamed = import_id_problem(object_id, kind, namespaced)
    if unnamed is not None:
        return f"import id {object_id!r} names no object: {unnamed}"
    namespace, slash, name = object_id.rpartition("/")
    named = [("namespace", namespace)] if slash else []
    alone = not slash and namespaced and default_namespace
    if alone:  # `web` is the default namespace's
        named.append(("namespace", default_namespace))
    for key, expected in (*named, ("name", name)):
        given = meta.get(key)
        if not (isinstance(given, str) and given and given != expected):
            continue
        if alone and key == "namespace":
            return (
                f"metadata.namespace {given!r} is not the namespace its import id "
                f"{object_id!r} names: a name alone is the provider's default namespace's "
                f"({expected!r}), as a Pulumi id is; write the id as {f'{given}/{name}'!r}, "
                f"or drop metadata.namespace to adopt {f'{expected}/{name}'!r}"
            )
        return (
            f"metadata.{key} {given!r} is not the {key} {expected!r} its import id "
            f"{object_id!r} names, and the object adopted would not be the one named: "
            f"make them agree, or drop metadata.{key}: the import's id gives it"
        )
    return None


#: What `Adoption.check_free` and `manager_of` read of an object that may be in the way.
_IDENTITY_METADATA = ("name", "namespace", "labels", "annotations")


def _identity(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object's apiVersion, kind, name, namespace, labels and annotations: enough to
    tell whose it is, without its data or managed fields."""
    meta = metadata_of(obj)
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in _IDENTITY_METADATA if k in meta},
    }


class Adoption:
    """A run's checks that the objects it creates or adopts are its to take."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: (provider URN, apiVersion, kind, namespace) → name → its object's identity and
        #: marks: one LIST per kind and namespace for the creates' checks.
        self._marks: dict[
            tuple[str, str, str, str | None], SharedWork[dict[str, Mapping[str, Any]] | None]
        ] = {}
        #: Namespaces this run created (per provider): nothing else can be in them yet.
        self.new_namespaces: set[tuple[str, str]] = set()
        #: Objects of a file, chart or kustomization: their options come from a transformation.
        self.from_manifests: set[str] = set()
        #: URN → the uid of the object its `import_` adopts in this run (`check_importable`).
        self.adopted: dict[str, Any] = {}

    def check_import_id(
        self, resource: Resource, desired: ResourceState, old: ResourceState | None
    ) -> None:
        """Refuse an import whose id names another object than the resource's inputs do, as
        `operations` does before the run for the values it knows: here with the Outputs
        resolved, and the kind's scope as the object's id tells it (a custom kind's, from
        its CRD in the cluster, for any provider)."""
        if not resource.opts.import_ or desired.provider in self.run.unknown_providers:
            return
        default = self.run.provider_for(desired.provider).default_namespace
        namespaced = "/" in desired.id
        found = import_disagreement(resource, metadata_of(desired.inputs), old, namespaced, default)
        if found is not None:
            raise DeclarationRefused(found)

    async def check_free(self, provider: Provider, new: ResourceState) -> None:
        """Refuse to create over an object that already exists and is not this stack's: server-
        side apply would merge into it silently, and a later delete would remove it (as
        Pulumi's provider refuses unless asked to upsert). An object marked as one of this
        stack's resources (a crashed run's, or one passed from a renamed resource) is ours;
        whether another of the program's resources keeps it, `Run._claim` has said already."""
        api_version, kind, namespace, name = object_ref(new)
        if namespace is not None and (new.provider, namespace) in self.new_namespaces:
            return  # in a namespace this run made
        key = (new.provider, api_version, kind, namespace)
        marks = self._marks.get(key)
        if marks is None:
            marks = SharedWork(self._list_marks(provider, api_version, kind, namespace))
            self._marks[key] = marks
        listed = await marks.result()
        live: Mapping[str, Any] | None
        if listed is None:  # the kind could not be listed: ask for the one object
            async with self.run.sem:
                live = await provider.read(api_version, kind, namespace, name)
        else:
            live = listed.get(name)
        if live is None:
            return
        owner = mark_of(live)
        if owner == new.urn and self.run.recorded_elsewhere is not None:
            # Marked as this resource, yet another stack records it: a `state move` gave
            # it away, and only that stack's next `up` marks it as its own.
            holders = self.run.recorded_elsewhere(new.urn, new.id)
            if holders:
                raise DeclarationRefused(
                    f"{kind} {new.id} already exists: stack {holders[0]} records it (a "
                    "`stackwright state move` gave it there); remove this resource from the "
                    "program, or give it another name"
                )
        if owner == new.urn or owner in self.run.old:
            return
        held = (
            self.run.managed_by(live, new.urn) if owner and self.run.managed_by is not None else ""
        )
        if held:
            # Adopting is refused too (`check_importable`): say what would work.
            raise DeclarationRefused(
                f"{kind} {new.id} already exists: {held}, or give this resource another name"
            )
        whose = (
            f"resource {owner} manages it"
            if owner
            else "it is not this stack's: made outside it, or forgotten by `state delete`"
        )
        adopt = f"{self.import_option(new.id)} or `stackwright import`"
        if new.urn in self.from_manifests:
            adopt = self._adopt_from_manifests(new)
        raise DeclarationRefused(
            f"{kind} {new.id} already exists ({whose}): adopt it with {adopt}, or give this "
            "resource another name"
        )

    async def check_importable(self, provider: Provider, new: ResourceState) -> None:
        """Refuse to adopt (`import_`) an object that is not there, or that another stack's
        resource manages: both stacks would own its fields and undo each other's applies.
        `stackwright import` refuses the same. One a resource of this stack manages that the
        program dropped (a rename done as an import) passes on, as a create's name does
        (`check_free`): the adopter holds it, so the dropped one's delete keeps the object
        and removes only its record (`Deletes._holder`)."""
        live = await self.run.read_object(provider, new)
        if live is None:
            raise DeclarationRefused(
                f"cannot import {new.id}: no {new.inputs.get('kind')} of that name exists in "
                "the cluster"
            )
        said = being_deleted(live)
        if said:
            raise DeclarationRefused(
                f"cannot import {new.id}: it {said}; {IMPORT_OF_ONE_BEING_DELETED}"
            )
        self.adopted[new.urn] = metadata_of(live).get("uid")
        owner = mark_of(live)
        if owner in self.run.old and owner != new.urn:
            if self.run.program is None or owner not in self.run.program.by_urn:
                return
            raise DeclarationRefused(
                f"cannot import {new.id}: {describe(owner)}{self.run.line_of(owner)}, which the "
                "program still declares, manages it; drop that resource from the program to "
                "pass the object on (its delete then keeps it), or import another object"
            )
        refused = self.run.managed_by(live, new.urn) if self.run.managed_by is not None else ""
        if refused:
            raise DeclarationRefused(f"cannot import {new.id}: {refused}")

    async def _list_marks(
        self, provider: Provider, api_version: str, kind: str, namespace: str | None
    ) -> dict[str, Mapping[str, Any]] | None:
        """Name → what the creates' checks read of each object of a kind in a namespace
        (`check_free`: its kind, name, labels and annotations); None if it cannot be listed
        (a kind not served yet, a user who may get but not list). Not the whole objects:
        kept for the run, a namespace's Helm release Secrets would stay in memory with it."""
        try:
            async with self.run.sem:
                found = await provider.list(api_version, kind, namespace)
        except Exception:
            return None
        return {str(metadata_of(obj).get("name", "")): _identity(obj) for obj in found}

    def import_option(self, object_id: str) -> str:
        """The resource option that adopts `object_id`, as the program's language writes it."""
        adopt = self.run.spelling.options("import_", object_id)
        return f"`{adopt}`" if self.run.spelling.yaml else adopt

    def _adopt_from_manifests(self, new: ResourceState) -> str:
        """What adopts an object of manifests (a ConfigFile's, ConfigGroup's or Chart's),
        whose options are not written in the program: a Python program's transformation
        gives them; a YAML program has none, so the import command adopts it, as its
        parent's child (the URN the next `up` declares it by)."""
        if not self.run.spelling.yaml:
            return f"a transformation that returns ResourceOptions(import_={new.id!r})"
        command = shlex.join(
            ["stackwright", "import", new.type, urn_name(new.urn), new.id, "--parent", new.parent]
        )
        return f"`{command}`"
