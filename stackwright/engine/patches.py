"""Patches: applying a Patch's fields to an object someone else owns, as the Patch's own
field manager, bound to the uid just read so that an object deleted meanwhile is never made
again; a conflict names the stack's own managers as the resources they are.

Owns the field managers this run applied Patches as. Must never: create the object a Patch
changes, or force fields the Patch's annotation does not say to take over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stackwright.engine.records import (
    describe,
    is_kubernetes,
    is_patch,
    metadata_of,
    patch_body,
    patch_field_manager,
    patch_forced,
)
from stackwright.errors import InputsRejected, StackwrightError
from stackwright.kubernetes.base import PATCH_FORCE
from stackwright.model import FIELD_MANAGER, ResourceState

if TYPE_CHECKING:
    from stackwright.engine.execute import Run
    from stackwright.engine.ports import Provider


class PatchConflict(StackwrightError):
    """A Patch's apply met fields another manager owns: the way out is the Patch's own
    annotation, not `--force-conflicts` (which never forces a Patch)."""

    status = 409  # refused: nothing changed (`records.refused`)

    def __init__(self, conflicts: Sequence[Any], owners: Mapping[str, str]) -> None:
        # A manager this stack's resource applies as is named as that resource: which
        # Patch (or which object of the stack) to change is what the user needs.
        listed = ", ".join(
            f"{c.field} (manager {c.manager}"
            + (f", {describe(owners[c.manager])} of this stack)" if c.manager in owners else ")")
            for c in conflicts
        )
        super().__init__(
            f"conflict on {listed}: another manager owns it; leave the field out of the "
            f'Patch, or annotate the Patch {PATCH_FORCE}: "true" to take it over'
        )


#: How many times a Patch's apply reads its object again when the object was deleted (and
#: perhaps made again) between the read and the apply, before it reports the failure.
_PATCH_ATTEMPTS = 3


def _missing_target(new: ResourceState) -> InputsRejected:
    # The program's to fix at the Patch's line, as inputs the cluster refused: a preview
    # whose only failures are such exits 2 (bad input), an up that may have changed others 1.
    return InputsRejected(
        f"{new.inputs.get('kind')} {new.id} does not exist: a Patch changes an existing object "
        "and creates none; create it first (or declare it in the program: the Patch follows "
        "it), or name an object that exists"
    )


class Patches:
    """A run's applies (and dry runs) of Patches."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: The field manager of each Patch this run applied (manager → URN), for conflicts.
        self._patch_managers: dict[str, str] = {}

    async def check_target(self, provider: Provider, new: ResourceState) -> dict[str, Any]:
        """The object a Patch changes, as read now; refused when not there: as Pulumi's, a
        Patch changes an existing object and creates none (server-side apply alone would
        create it). Refused before the step is journaled, so nothing is left pending."""
        live = await self.run.read_object(provider, new)
        if live is None:
            raise _missing_target(new)
        return live

    async def patched(
        self,
        provider: Provider,
        send: Callable[..., Awaitable[dict[str, Any]]],
        state: ResourceState,
        *,
        made_first: bool = False,
        read: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """A Patch's fields applied (or dry-run: `send`) to its object, forced only when its
        `stackwright.io/patch-force` annotation says so. An object not there is refused, or
        None when this run makes it first (`made_first`, a preview's). `read`: the object as
        this step read it already (see `send_patch`)."""
        body, force = patch_body(state.inputs), patch_forced(state.inputs)
        old = self.run.old.get(state.urn)
        former = patch_field_manager(old.urn, old.inputs, None) if old and is_patch(old) else None
        live = await self.send_patch(
            provider, send, state, body, force=force, former=former, read=read
        )
        if live is None and not made_first:
            raise _missing_target(state)
        return live

    async def send_patch(
        self,
        provider: Provider,
        send: Callable[..., Awaitable[dict[str, Any]]],
        state: ResourceState,
        body: Mapping[str, Any],
        *,
        force: bool = False,
        former: str | None = None,
        read: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """`body` (a Patch's fields, or the empty patch that gives them up) applied as the
        Patch's own field manager to the object of its name there is now, and to that one
        only: the apply names the uid just read, which the API server holds it to (it
        refuses an apply naming a uid no object has, rather than create one). An object
        deleted since it was read is not made again; one made again under its name is read
        and applied to. None: there is no object. Fields the Patch's `former` manager holds
        (its annotation named another since) are its own to take over, not a conflict.

        `read`: the object as the step read it already, to refuse a missing one before
        journaling; one read serves both, as the uid binds the apply to that read however
        long ago it was (the journal's begin in between): an object deleted or made again
        since makes the apply fail, and the loop reads again."""
        manager = patch_field_manager(state.urn, state.inputs, None)
        self._patch_managers[manager] = state.urn
        live = read if read is not None else await self.run.read_object(provider, state)
        attempt = 0
        while live is not None:
            uid = metadata_of(live).get("uid")
            bound = {**body, "metadata": {**metadata_of(body), "uid": uid}}
            attempt += 1
            try:
                async with self.run.sem:
                    return await send(
                        bound, force=force, warn=self.run.warner(state.urn), field_manager=manager
                    )
            except StackwrightError as exc:
                conflicts = getattr(exc, "conflicts", ())
                if conflicts and not force and {c.manager for c in conflicts} == {former}:
                    force = True  # the Patch's own fields, under its former manager
                    continue
                if conflicts:
                    raise PatchConflict(conflicts, self._managers_of(state)) from exc
                # Refused for naming a uid the object no longer has, or for its own reasons.
                live = await self.run.read_object(provider, state)
                same = live is not None and metadata_of(live).get("uid") == uid
                if same or (live is not None and attempt == _PATCH_ATTEMPTS):
                    raise
        return None

    def _managers_of(self, state: ResourceState) -> dict[str, str]:
        """The field managers of the object a Patch changes that are this stack's (manager →
        URN): each Patch's own, recorded or applied in this run, and Stackwright's when a
        resource of the stack holds the object."""
        owners = {
            patch_field_manager(old.urn, old.inputs, None): old.urn
            for old in self.run.old.values()
            if old.custom and is_patch(old)
        }
        owners.update(self._patch_managers)
        # Held through any provider reaching the object's cluster (`Run.claim_key`), not only
        # the Patch's own: the stack's default one and an explicit one for the same context.
        key = self.run.claim_key(state)
        holders = (
            old.urn
            for old in self.run.old.values()
            if is_kubernetes(old) and not is_patch(old) and self.run.claim_key(old) == key
        )
        holder = self.run.held_after(state) or next(holders, None)
        if holder is not None:
            owners[FIELD_MANAGER] = holder
        return owners
