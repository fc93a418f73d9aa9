"""Settling what a crash left: the steps a run began and never ended (pending in the
journal) resolved by reading the cluster, with no manual repair: each becomes the record its
object, as found, says (or none), before the next run plans anything.

Owns only that resolution; the records forgotten along the way go through the run's
deletes and refresh (`Deletes.forget_held`, `Refresh.forget_gone`). Must never: write to
the cluster (a Namespace being deleted is waited for, not deleted), or resolve a step
without reading what it reached.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stackwright.engine.events import Diagnostic
from stackwright.engine.failures import ADOPTION_INTERRUPTED, INTERRUPTED, adoption_cut_short
from stackwright.engine.generated import is_generated
from stackwright.engine.records import (
    describe,
    is_kubernetes,
    is_patch,
    is_release,
    mark_of,
    metadata_of,
    object_ref,
    release_spec,
    replaced_since,
    with_outputs,
)
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.model import Op, PendingOperation, ResourceState

if TYPE_CHECKING:
    from stackwright.engine.execute import Run

_DELETES = (Op.DELETE, Op.DELETE_REPLACED)
#: Steps that, settled as having made nothing, leave no record to remove.
_MADE = (Op.CREATE, Op.CREATE_REPLACEMENT, Op.IMPORT)


class Settlement:
    """The settling of one run's pending steps (`Run.settle_pending`)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def settle_pending(self, pending: list[PendingOperation]) -> None:
        """Resolve steps begun and never ended by reading the cluster; no manual repair.
        A preview's run resolves them into a `DryRunJournal`, so it writes nothing."""
        assert self.run.journal is not None
        # Every object is read at once (bounded as the run's API calls are), then resolved
        # in the journal's order: the records forgotten and the diagnostics follow it.
        reads = [asyncio.create_task(self._read_pending(item)) for item in pending]
        try:
            for item, read in zip(pending, reads, strict=True):
                await self._settle(item, await read)
        finally:
            for read in reads:
                read.cancel()
            await asyncio.gather(*reads, return_exceptions=True)

    async def _read_pending(self, item: PendingOperation) -> Any:
        """What the cluster holds of a pending step's resource: its object, or its Helm
        release (None: none, or nothing the cluster holds)."""
        state = item.resource
        if is_generated(state.type) or not state.custom or state.type == PROVIDER_TYPE:
            return None
        provider = self.run.provider_for(state.provider)
        async with self.run.sem:
            if is_release(state):
                return await provider.release_read(release_spec(state))
            return await provider.read(*object_ref(state))

    async def _settle(self, item: PendingOperation, found: Any) -> None:
        """Resolve one pending step by what `_read_pending` found."""
        assert self.run.journal is not None
        state = item.resource
        result: ResourceState | None
        if is_generated(state.type):
            # Nothing outside the state: a create that did not end made nothing; an
            # update that did not end leaves the value recorded before it.
            result = (
                None if item.op in _DELETES or item.op is Op.CREATE else self.run.old.get(state.urn)
            )
        elif not state.custom or state.type == PROVIDER_TYPE:
            result = None if item.op in _DELETES else state
        elif is_release(state):
            result = self._settled_release(item, found)
        elif is_patch(state):
            result = self._settled_patch(item, found)
        else:
            result = await self._settled_object(item, found)
        if result is None and item.op in _DELETES and state.custom and is_kubernetes(state):
            self.run.deletes.forget_held(state, "whose delete was interrupted")
        if result is None and item.op not in _MADE and not state.delete_pending:
            # Its record goes: what still refers to it stops doing so first.
            self.run.refreshes.forget_gone({state.urn: state}, record=True)
        self.run.journal.resolve_pending(item, result)
        # A preview cannot tell a step a crash left pending from one that an operation
        # running now has under way (it takes no lock): it says "pending" of either.
        settled = (
            "would settle the pending" if self.run.options.dry_run else "settled an interrupted"
        )
        self.run.emit(
            Diagnostic(state.urn, f"{settled} {item.op.value} of {describe(state.urn)}", "info")
        )

    def _settled_release(
        self, item: PendingOperation, found: dict[str, Any] | None
    ) -> ResourceState | None:
        """What an interrupted step of a Helm release leaves recorded, by the release found."""
        state = item.resource
        if item.op in _DELETES:
            return state if found is not None else None
        if found is None:
            return None
        # Helm may or may not have upgraded it: keep the inputs recorded before, so the
        # next plan upgrades it again (a no-op upgrade is harmless).
        before = state if item.op is Op.CREATE else self.run.old.get(state.urn, state)
        return with_outputs(before, found)

    def _settled_patch(
        self, item: PendingOperation, live: dict[str, Any] | None
    ) -> ResourceState | None:
        """What an interrupted step of a Patch leaves recorded, by its object read: none when
        the object is gone (its fields went with it); else, whether its apply or its giving
        up landed or not, the Patch recorded as not ready: the next run applies it again if
        the program still declares it, or gives its fields up again if not (server-side
        apply of the same fields changes nothing twice)."""
        state = item.resource
        if live is None:
            return None
        mine = item.op in _MADE or item.op in _DELETES  # else an update: the former inputs
        before = state if mine else self.run.old.get(state.urn, state)
        return replace(with_outputs(before, live), init_errors=(INTERRUPTED,))

    async def _settled_object(
        self, item: PendingOperation, live: dict[str, Any] | None
    ) -> ResourceState | None:
        """What an interrupted step of a Kubernetes object leaves recorded, by its object
        read from the cluster (None: no record)."""
        state = item.resource
        api_version, kind, namespace, name = object_ref(state)
        if live is not None and replaced_since(item, self.run.old.get(state.urn), live):
            live = None  # the recorded object is gone; the one there is not the stack's
        if item.op in _DELETES and live is not None and metadata_of(live).get("deletionTimestamp"):
            # Being deleted (a Namespace Terminating, an object held by finalizers):
            # gone soon, so wait for it as its delete step would, skip-await included (a
            # preview shows it gone without waiting); kept, its record (and its riders')
            # would claim an object the cluster is removing. The delete of a
            # delete-before-replace (its record not yet demoted) waits whatever the object
            # says: the new object takes the name next.
            if not self.run.options.dry_run:
                await self.run.provider_for(state.provider).await_deleted(
                    api_version,
                    kind,
                    namespace,
                    name,
                    timeout=state.delete_timeout,
                    reusing_name=item.op is Op.DELETE_REPLACED and not state.delete_pending,
                )
            live = None
        if live is None:
            return None
        if item.op in _DELETES:
            # Recorded as read: a retained object's release may have taken its marks off,
            # which the next run then puts back if the program still declares it.
            return with_outputs(state, live)
        if item.op in (Op.CREATE, Op.CREATE_REPLACEMENT) and mark_of(live) != state.urn:
            # Every create marks its object: one without this URN's mark was made by someone
            # else after this create failed to land (`Adoption.check_free` had found the name free),
            # and is not the stack's to update or delete.
            return None
        if item.op in (Op.CREATE, Op.CREATE_REPLACEMENT):
            # Made, but never seen ready: the next run waits for it again.
            return replace(with_outputs(state, live), init_errors=(INTERRUPTED,))
        # An update or import may or may not have reached the server: keep the inputs
        # recorded before it, so the next plan sends it again. An update is applied again
        # even when the program is back to those inputs: the object may hold the ones sent;
        # so is an import, whose apply may have landed without its takeover of the fields.
        before = self.run.old.get(state.urn, state)
        settled = with_outputs(before, live)
        if item.op is Op.IMPORT or adoption_cut_short(before):
            return replace(settled, init_errors=(ADOPTION_INTERRUPTED,))
        return replace(settled, init_errors=(INTERRUPTED,)) if item.op is Op.UPDATE else settled
