"""Preview: each step of a preview asked of the API server as a dry run, with no write
anywhere, after the checks the step's `up` makes first; what its dependents may read of it
meanwhile (the fields the program gives its object, or what the server says the update
leaves; never a value the server's dry run picks for a field the program left out); the
schema a CRD the preview creates declares, which its objects are checked against instead of
the server.
Also the dry run `up` makes before a delete-first replacement (`check_replacement`).

Must never: send a write, or ask the server about what only this preview would create.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from stackwright.engine.declared_schemas import DeclaredSchemas, SchemaRefused
from stackwright.engine.events import Diagnostic
from stackwright.engine.graph import group_and_kind
from stackwright.engine.plan import Step
from stackwright.engine.records import (
    is_patch,
    is_release,
    live_outputs,
    metadata_of,
    release_spec,
    unchanged_by,
    unknown_paths,
)
from stackwright.engine.rendering import file_of
from stackwright.errors import InputsRejected
from stackwright.model import Op, ResourceState
from stackwright.sdk.output import Partial, partly_known

if TYPE_CHECKING:
    from stackwright.engine.execute import Run
    from stackwright.engine.ports import Provider


class Preview:
    """A preview's dry runs of a run's steps."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: The schemas of the CRDs in `Run.previewed_kinds`, which their objects are checked
        #: against.
        self._declared_schemas = DeclaredSchemas()

    async def preview(self, step: Step, kube: bool, force: bool) -> None:
        """What a step would do, asked of the API server as a dry run (a Helm release's
        render, an object's apply, a Patch's), after the checks its `up` makes first; what
        dependents may read of it meanwhile. Nothing the server cannot answer for yet (a
        namespace or kind this preview only creates, a rendering provider's file) is asked."""
        new = step.new
        assert new is not None
        self.run.live[step.urn] = self._known_before(step, kube)
        if step.op is Op.REPLACE and step.old is not None:
            self.run.deletes.say_file_removed(step.old, instead=new)
        if unknown_paths(new.inputs) or new.provider in self.run.unknown_providers:
            return
        if is_release(new) and new.custom:
            if new.id.rpartition("/")[0] in self.run.previewed_namespaces:
                return  # the server cannot dry-run into a namespace this run only creates
            async with self.run.sem:  # Helm renders the chart and dry-runs it: template errors now
                await self.run.provider_for(new.provider).release_preview(release_spec(new))
            return
        patch = is_patch(new)
        if not (kube or patch):
            return
        kind = new.inputs.get("kind")
        if patch:
            pass  # it creates nothing that the server could not dry-run against
        elif kind == "Namespace" and step.op is not Op.UPDATE:
            self.run.previewed_namespaces.add(str(metadata_of(new.inputs).get("name")))
        elif kind == "CustomResourceDefinition":
            spec = new.inputs.get("spec") or {}
            served = (str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", "")))
            self.run.previewed_kinds[served] = spec.get("scope") != "Cluster"
            self._declared_schemas.declare(*served, spec)
        namespace = new.id.rpartition("/")[0] or None
        declared = group_and_kind(new.inputs) in self.run.previewed_kinds
        if (
            declared and not patch
        ):  # the server cannot answer for it yet: the schema the program declares does
            refusal = self._declared_schemas.refusal(new.inputs)
            if refusal is not None:
                raise SchemaRefused(refusal)
        if new.provider in self.run.rendering and not patch:
            # What the file would hold, which dependents read as they will after the up.
            body = self.run.provider_for(new.provider).stamp(
                new.inputs, stack=self.run.stack, urn=new.urn, namespace=namespace
            )
            meta = {k: v for k, v in metadata_of(body).items() if k != "namespace"}
            self.run.live[step.urn] = {
                **body,
                "metadata": {**meta, **({"namespace": namespace} if namespace else {})},
            }
            written = file_of(self.run.rendering[new.provider], body, namespace)
            verb = "rewrites" if step.op is Op.UPDATE else "writes"
            self.run.emit(Diagnostic(step.urn, f"{verb} {written}", "info"))
            return
        if declared or namespace in self.run.previewed_namespaces:
            return  # the server cannot dry-run into a namespace or a kind this run only creates
        if step.op is Op.REPLACE and step.old is not None and step.old.id == new.id:
            # Deleted first, then created under the same name.
            if not patch:
                await self.check_replacement(self.run.provider_for(new.provider), step)
            return
        provider = self.run.provider_for(new.provider)
        try:
            if patch:
                # Dry-run against the object there now, also when the stack holds it (a Patch
                # conflicting with the stack's own fields fails the preview as it would the
                # up); only one this run makes first (through any provider of its cluster)
                # is not there to dry-run against yet.
                made_first = self.run.held_after(new) is not None
                previewed = await self.run.patches.patched(
                    provider, provider.preview, new, made_first=made_first
                )
                if previewed is None:
                    return
            else:
                previewed = await self._preview_object(provider, step, namespace, force)
        except Exception:
            if step.op is Op.UPDATE and step.old is not None:
                # The update fails (a field another manager owns): its object stays as
                # recorded where the update would not change it, and outputs read from there
                # are known, as in Pulumi's preview of an update that fails.
                self.run.live[step.urn] = unchanged_by(step)
            raise
        if step.op is Op.UPDATE and isinstance(previewed, dict):
            # The server's dry run of an update is the object as the update leaves it (a
            # Service keeps its clusterIP): dependents read that, as Pulumi's preview does,
            # rather than finding it unknown. Its status is the controllers' to change yet.
            known = live_outputs(new, previewed)  # with a Secret's write-only stringData
            self.run.live[step.urn] = Partial({k: v for k, v in known.items() if k != "status"})

    @staticmethod
    def _known_before(step: Step, kube: bool) -> Partial:
        """What dependents may read of a step's object in a preview, before (or without) its
        dry run. An object the step applies holds the fields the program gives it, as in
        Pulumi's preview, whose outputs of a create are its inputs: those are known (an
        Output's unknown value stays unknown); what the cluster decides (the uid, status, a
        Service's clusterIP, a default) is not. Never the dry run's values for fields the
        program did not give: the server picks them anew (a random clusterIP) at the up. Of
        anything else (an import, a Patch's object, a release, a component) only the
        identity is known."""
        new = step.new
        assert new is not None
        if kube and step.op in (Op.CREATE, Op.REPLACE, Op.UPDATE):
            return cast(Partial, partly_known(new.inputs, planned=True))
        known: dict[str, Any] = {
            k: new.inputs[k] for k in ("apiVersion", "kind") if k in new.inputs
        }
        known["metadata"] = Partial(metadata_of(new.inputs))
        return Partial(known)

    async def check_replacement(self, provider: Provider, step: Step) -> None:
        """Refuse a delete-first replacement whose new object the server would refuse, while
        the old one is still there: dry-run over the old object, the server refuses the
        fields that cannot change once set, which force the replacement (the plan's
        `forcing` names them) and which the new object will not meet; anything else it names (a
        `replicas: -1`) would refuse the new object once the old was deleted. A refusal
        that does not say field by field is no verdict: the replacement goes ahead."""
        new = step.new
        assert new is not None
        try:
            await self._dry_run(provider, new, new.id.rpartition("/")[0] or None, force=True)
        except InputsRejected as refused:
            beyond = refused.beyond_immutable(step.forcing)
            if beyond is not None:
                raise InputsRejected(
                    f"{beyond} (a replacement that deletes the object first: it is left as it is)"
                ) from refused

    async def _preview_object(
        self, provider: Provider, step: Step, namespace: str | None, force: bool
    ) -> dict[str, Any]:
        """The server's dry run of an object's apply, after the checks its up makes first."""
        new = step.new
        assert new is not None
        if step.op is Op.CREATE:  # an object in the way fails the preview as it would the up
            await self.run.adoption.check_free(provider, new)
        elif step.op is Op.IMPORT:
            await self.run.adoption.check_importable(provider, new)
        if namespace is not None:  # and so does a ConfigMap in the way of the set's parent
            await self.run.ensure_applyset(provider, new.provider, namespace)
        return await self._dry_run(provider, new, namespace, force, warn=self.run.warner(new.urn))

    async def _dry_run(
        self,
        provider: Provider,
        new: ResourceState,
        namespace: str | None,
        force: bool,
        warn: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """The server's dry run of `new`'s apply, stamped with the stack's marks."""
        body = provider.stamp(new.inputs, stack=self.run.stack, urn=new.urn, namespace=namespace)
        async with self.run.sem:
            return await provider.preview(body, force=force, warn=warn)
