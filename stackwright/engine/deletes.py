"""Deletes: what a run removes, dependents first, and how. An object is deleted by its
recorded uid (another under its name is left in place), a Patch's fields are given up, a
retained object unmarked, a Helm release uninstalled; a delete that rides on another's
(`deleted_with`) makes no call of its own; a CRD's delete says first what goes with it; the
objects a Namespace or CRD took with it lose their records; what the program dropped that
depends on a delete-before-replace goes before it. A preview says all this with no call.

Owns the deletes' own bookkeeping (CRDs warned about, ApplySets left on a cluster a provider
moved off, the dropped resources); reads the run's claims (`Run.held_after`) to keep an
object another resource holds now. Must never: delete an object the journal has not
recorded the delete of first, a protected resource's object, or one another resource holds.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from stackwright.engine.crd_deletes import census
from stackwright.engine.deleted_with import Milestone, carriers, holds, waits
from stackwright.engine.events import Diagnostic, StepDone, StepProgress, StepStarted, plural
from stackwright.engine.failures import failure_text
from stackwright.engine.graph import Graph, defined_kind
from stackwright.engine.plan import Step, plan_delete
from stackwright.engine.records import (
    applyset_of,
    as_applied,
    describe,
    is_kubernetes,
    is_patch,
    is_release,
    made_again,
    mark_of,
    metadata_of,
    object_key,
    object_ref,
    protected,
    recorded_closure,
    recorded_graph,
    release_spec,
    relinquishing_body,
    uid_of,
    unknown_paths,
)
from stackwright.engine.rendering import file_of
from stackwright.errors import InputsRejected, StackwrightError, UsageError
from stackwright.kubernetes.base import PATCH_FORCE
from stackwright.kubernetes.provider import RENDER_SETTING
from stackwright.model import Op, ResourceState

if TYPE_CHECKING:
    from stackwright.engine.execute import Run

#: How often a delete follows a copy of its object made again under its name, marked as the
#: resource (restored from a backup: deleted as it is now), before it says something keeps
#: making it.
_DELETE_ROUNDS = 5


class PatchGiveUpRefused(StackwrightError):
    """The API server refused a Patch's giving up of its fields: one it holds alone (taken
    over with patch-force) would go, as server-side apply removes a field no manager owns,
    and the object needs it (a container's image)."""

    status = 422  # refused: nothing changed (`records.refused`)

    def __init__(self, refusal: BaseException, *, renamed: bool = False) -> None:
        # Renamed, the program's retain_on_delete is the one that counts (`_as_program_says`);
        # dropped, the one its record holds: set by an `up` before the Patch goes.
        how = (
            "set it along with the new name"
            if renamed
            else "set it, run `up`, then drop the Patch or destroy"
        )
        super().__init__(
            f"{refusal}: giving up the Patch's fields would remove one the object needs, which "
            f"only the Patch holds (taken over with {PATCH_FORCE}); keep its fields on the "
            f"object with `retain_on_delete` ({how})"
        )


def _acts_on_delete(state: ResourceState, op: Op, *, keep_object: bool) -> bool:
    """Whether deleting `state` in `op` reaches its object at all: not one kept (read, never
    managed; or another resource holds it now), nor one retained."""
    return (
        state.custom
        and not state.external
        and not keep_object
        and not (state.retain_on_delete and op is Op.DELETE)
    )


def _deletes_object(state: ResourceState, op: Op, *, keep_object: bool) -> bool:
    """Whether deleting `state` in `op` sends a delete of its Kubernetes object."""
    return is_kubernetes(state) and _acts_on_delete(state, op, keep_object=keep_object)


def _gives_fields_up(state: ResourceState, op: Op, *, keep_object: bool) -> bool:
    """Whether deleting `state` in `op` gives a Patch's fields up (an empty apply as its
    manager). `retain_on_delete` keeps them when the Patch moves to another object too (as
    Pulumi's retainOnDelete keeps a replaced resource): the old object's fields go nowhere."""
    if state.retain_on_delete and op is Op.DELETE_REPLACED:
        return False
    return is_patch(state) and _acts_on_delete(state, op, keep_object=keep_object)


class Deletes:
    """A run's deletes, and what goes with them."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: The CRDs whose delete this run has warned about already (`warn_crd_deletes`).
        self._censused: set[str] = set()
        #: (provider URN, namespace) of each ApplySet this run deleted objects of through
        #: the provider's former settings: on the cluster it moved off (`Run.former_applysets`).
        self.moved_off: set[tuple[str, str]] = set()
        #: The recorded URNs the program no longer declares, found at the first
        #: delete-before-replace (`delete_dropped_dependents`); the run adds none after its
        #: aliases are applied, so each later one looks them up instead of scanning the state.
        self._dropped: tuple[str, ...] | None = None

    def forget_held(self, carrier: ResourceState, how: str, *, keep: Collection[str] = ()) -> None:
        """Remove the records of the objects that went with `carrier`'s, now gone (`holds`:
        a Namespace's objects, a CRD's custom objects), as recorded through its provider;
        kept, a plan would take them for there. Riders' records (`deleted_with`) go only
        after their carrier's object (`delete_all`), as do those in a Namespace replaced
        delete-first (`_execute`), so a crash in between leaves them recorded: a pending
        carrier's delete settled as done does this again. Before the carrier's own record
        goes: a crash in here leaves the carrier's step pending, and the next run does this
        again. `keep`: records a preview leaves, whose deletes `up` runs before the carrier's."""
        held = {urn: state for urn, state in self._held(carrier).items() if urn not in keep}
        if not held:
            return
        record = self.run.journal is not None  # a preview's plan forgets them without a journal
        self.run.refreshes.forget_gone(held, record=record)
        if self.run.journal is not None:
            steps = [(self.run.next_step(), state) for state in held.values()]
            self.run.journal.begin_many([(number, Op.DELETE, state) for number, state in steps])
            self.run.journal.end_many([(number, None) for number, _ in steps])
        removed = "record would be removed" if self.run.options.dry_run else "record removed"
        for urn in held:
            del self.run.old[urn]
            self.run.emit(
                Diagnostic(
                    urn, f"its object went with {describe(carrier.urn)}'s, {how}: {removed}", "info"
                )
            )

    def _held(self, carrier: ResourceState) -> dict[str, ResourceState]:
        """The recorded resources whose objects go with `carrier`'s (`holds`), as recorded
        through any provider of its cluster (a CRD through one, its objects through another
        with its own default namespace); none when that provider moved to another cluster:
        what it held moves too, each replaced by its own step (whose delete on the former
        cluster finds the object gone, and which checks its own protection)."""
        former, cluster_of = self.run.former_providers, self.run.clusters.cluster_of
        if carrier.provider in former or is_patch(carrier):
            return {}
        cluster = cluster_of(carrier.provider)
        return {
            urn: state
            for urn, state in self.run.old.items()
            if urn != carrier.urn
            and state.provider not in former
            and cluster_of(state.provider) == cluster
            and holds(carrier, state)
        }

    def refuse_deleting_protected_within(self, carrier: ResourceState) -> None:
        """Refuse a delete-first replacement of a Namespace (or CRD) whose delete would take
        a protected resource's object with it: the cluster deletes what it holds, and
        `protect` promises no delete of that object."""
        guarded = sorted(urn for urn, state in self._held(carrier).items() if state.protect)
        if guarded:
            others = f" (and {plural(len(guarded) - 1, 'other')})" if len(guarded) > 1 else ""
            raise UsageError(
                "replacing it deletes it first, and with it the object of protected "
                f"resource {guarded[0]}{others}: run `stackwright state unprotect "
                f"{shlex.quote(guarded[0])}` first if that may go, or change the program so "
                "that it is not replaced"
            )

    async def delete_object(
        self,
        state: ResourceState,
        op: Op,
        *,
        keep_object: bool = False,
        when_gone: Callable[[], Awaitable[None]] | None = None,
        reusing_name: bool = False,
    ) -> dict[str, Any] | None:
        """Delete a state's object (unless kept) and then its record; `when_gone` runs in
        between (a carrier's riders' records go before the carrier's). `reusing_name`: a
        new object takes its name next, so the delete is waited for even under skip-await.
        Returns the object left in place under its name (`_delete_recorded`), if any."""
        assert self.run.journal is not None
        keep_object = keep_object or state.external  # read, never managed: never deleted
        if state.protect and op is Op.DELETE:
            raise UsageError(protected(state.urn))
        if _deletes_object(state, op, keep_object=keep_object):
            await self.crd_census(state)  # said before the delete, which `--yes` runs unasked
        number = self.run.next_step()
        assert self.run.commits is not None
        await self.run.commits.begin(number, op, state)
        left = None
        try:
            if _deletes_object(state, op, keep_object=keep_object):
                left = await self._delete_recorded(state, reusing_name=reusing_name)
                member = applyset_of(state)
                if member is not None and state.provider in self.run.former_providers:
                    self.moved_off.add(member)
            elif _gives_fields_up(state, op, keep_object=keep_object):
                await self.relinquish(state, renamed=op is Op.DELETE_REPLACED)
            elif state.custom and is_kubernetes(state) and not keep_object:
                # Retained: left in the cluster, but no longer marked as the stack's (an
                # ApplySet prune would otherwise still count it a member).
                api_version, kind, namespace, name = object_ref(state)
                async with self.run.sem:
                    await self.run.provider_for(state.provider).unmark(
                        api_version, kind, namespace, name
                    )
            elif (
                state.custom
                and is_release(state)
                and not (state.retain_on_delete and op is Op.DELETE)
                and not keep_object
            ):
                async with self.run.sem:
                    await self.run.provider_for(state.provider).release_uninstall(
                        release_spec(state), timeout=state.delete_timeout
                    )
        except BaseException as exc:
            self.run.failed_write(number, exc)
            raise
        if when_gone is not None:
            await when_gone()
        await self.run.commits.end(number, None)
        return left

    async def _delete_recorded(
        self, state: ResourceState, *, reusing_name: bool
    ) -> dict[str, Any] | None:
        """Delete a state's object, and no other: the uid its record keeps rides on the
        delete as a precondition. Another object under its name (deleted and made again by
        hand; or, its kind's scope changed, a cluster-wide one of that name) is left, its
        record's object counted as gone; unless it carries the resource's mark (a copy
        restored from a backup or applied again is still its object), which is deleted as
        it is now. A record written before uids were kept deletes by name, as then.
        Returns the object left in place, if any."""
        api_version, kind, namespace, name = object_ref(state)
        provider = self.run.deleting_provider(state.provider)
        uid = uid_of(state.outputs) or None
        for _ in range(_DELETE_ROUNDS):
            async with self.run.sem:
                found = await provider.delete(
                    api_version,
                    kind,
                    namespace,
                    name,
                    # The object's own timeout-seconds still comes first (the provider's).
                    timeout=state.delete_timeout,
                    on_status=lambda message: self.run.emit(StepProgress(state.urn, message)),
                    reusing_name=reusing_name,
                    propagation=state.deletion_propagation,
                    uid=uid,
                )
            if found is None:
                return None
            if made_again(state, found):
                self.run.emit(
                    Diagnostic(
                        state.urn,
                        f"the object named {state.id} is now another one, made outside this "
                        "stack: left in place",
                        "warning",
                    )
                )
                return found
            uid = uid_of(found)  # its mark says it is this resource's: deleted as it is now
        raise StackwrightError(
            f"{describe(state.urn)}: the object named {state.id} was made again under its name, "
            f"marked as this resource, each of the {_DELETE_ROUNDS} times it was deleted (a "
            "controller or another tool applying a copy of it?): stop that, then run again"
        )

    async def relinquish(
        self, state: ResourceState, *, dry_run: bool = False, renamed: bool = False
    ) -> None:
        """Give up the fields a Patch's manager owns (an empty apply as that manager), the
        object kept; an object that is gone took them with it (and is not made again).
        `dry_run`: the server's dry run of it, as a preview says what the delete would do."""
        provider = self.run.deleting_provider(state.provider)
        body = relinquishing_body(state)
        namespace = object_ref(state)[2]
        if namespace is not None:
            body["metadata"]["namespace"] = namespace
        send = provider.preview if dry_run else provider.apply
        try:
            await self.run.patches.send_patch(provider, send, state, body)
        except InputsRejected as exc:
            # A field the Patch took with patch-force is its alone: given up, it is removed
            # (as Pulumi's), which the API server refuses where the object needs it.
            raise PatchGiveUpRefused(exc, renamed=renamed) from exc

    async def delete_all(self, states: list[ResourceState], *, blocked: bool = False) -> set[str]:
        """Delete `states` in reverse dependency order (dependents first), concurrently;
        returns the URNs that were not deleted."""
        run = self.run
        if not states:
            return set()
        steps = {
            id(s): (
                as_applied(plan_delete(s))
                if not s.delete_pending
                else Step(Op.DELETE_REPLACED, s.urn, s, None)
            )
            for s in states
        }
        if blocked:
            for state in states:
                step = steps[id(state)]
                said = f"{step.op.value} {describe(state.urn)}: not started after a failure"
                run.skip(step, "not started: an earlier step failed", said)
            return {s.urn for s in states}
        if run.options.dry_run:
            await self._preview_deletes(states, [steps[id(s)] for s in states])
            return set()
        graph, keys, _ = recorded_graph(states, run.clusters.cluster_of)
        riding = self._riders(states, keys, graph)
        edges = waits(riding, graph)
        events: dict[Milestone, asyncio.Event] = {}
        for key in keys:
            events["ready", key] = asyncio.Event()
            events["done", key] = (
                events["ready", key]
                if edges["ready", key] is edges["done", key]
                else asyncio.Event()
            )
            if ("gone", key) in edges:
                events["gone", key] = asyncio.Event()
        failed: set[str] = set()
        gone: set[str] = set()  # carriers whose object is gone
        states_by_key = dict(zip(keys, states, strict=True))

        async def reached(milestones: list[Milestone]) -> bool:
            """Wait for `milestones`; whether none of their deletes failed."""
            await asyncio.gather(*(events[m].wait() for m in milestones))
            return not any(key in failed for what, key in milestones if what != "gone")

        async def one(key: str) -> None:
            state = states_by_key[key]
            step = steps[id(state)]
            carrier = riding.get(key)
            started = run.clock()
            try:
                if not await reached(edges["ready", key]):
                    failed.add(key)
                    run.skip(
                        step,
                        "a resource that depends on it could not be deleted",
                        f"delete {describe(state.urn)}: a dependent could not be deleted",
                    )
                    return
                started = run.clock()  # the step starts once its dependents are deleted
                run.emit(StepStarted(step))
                run.check_planned(step)
                if carrier is not None:
                    events["ready", key].set()
                    fellows = await reached(edges["done", key][1:])  # its carrier's, theirs
                    if not fellows and carrier not in gone:
                        raise UsageError("a resource that depends on it could not be deleted")
                    await self._delete_rider(state, step, states_by_key[carrier], carrier in gone)
                    run.outcome.counts[step.op.value] += 1
                    run.emit(StepDone(step, True, run.clock() - started))
                    return
                holder = await self._holder(state)

                async def when_gone() -> None:  # a carrier: its riders' records go first
                    gone.add(key)
                    events["gone", key].set()
                    await reached(edges["done", key][1:])

                await self.delete_object(
                    state,
                    step.op,
                    keep_object=holder is not None,
                    when_gone=when_gone if ("gone", key) in events else None,
                )
                run.outcome.counts[step.op.value] += 1
                run.emit(StepDone(step, True, run.clock() - started))
            except Exception as exc:
                failed.add(key)
                self._failed(state, step, exc, run.clock() - started)
            finally:
                for what in ("ready", "gone", "done"):
                    if (what, key) in events:
                        events[what, key].set()

        await asyncio.gather(*(one(key) for key in keys))
        return {key.rpartition("#")[0] for key in failed}

    def _failed(self, state: ResourceState, step: Step, exc: Exception, elapsed: float) -> None:
        """A delete step failed (or, in a preview, what it reads): said in the summary and
        by the step's event, as one resource's failure, never the run's."""
        self.run.outcome.failures.append(f"{describe(state.urn)}: {failure_text(exc)}")
        self.run.emit(StepDone(step, False, elapsed, failure_text(exc)))

    async def _holder(self, state: ResourceState) -> str | None:
        """The resource that holds the object of `state`, being deleted, after this run (a
        name passed on, manifests moved from a ConfigFile to a Chart), said as a diagnostic:
        its delete removes only the record."""
        if not state.custom or state.external or is_patch(state):
            return None  # a Patch gives its fields up whoever holds the object
        holder = self.run.held_after(state) or await self._adopter(state)
        if holder is not None:
            self.run.emit(
                Diagnostic(
                    state.urn,
                    f"kept {state.id}: {describe(holder)} holds that object now; "
                    "only the old record is removed",
                    "info",
                )
            )
        return holder

    async def _adopter(self, state: ResourceState) -> str | None:
        """Another resource of this stack that adopted (`import_`) the object of `state` in an
        earlier run, or in this one through another provider reaching it (a rename by
        import): the live object is marked with its URN, or, before a preview's import
        marks it, is the very object (its uid) that resource's import read. Read only when another
        resource names an object of that kind and name, so a plain delete reads nothing."""
        if not is_kubernetes(state):
            return None
        named = object_key(state)[1:]
        recorded = {
            urn
            for urn in self.run.old.naming.get(named, ())
            if urn != state.urn and self.run.old[urn].custom
        }
        held = set(self.run.held_naming.get(named, {}).values()) - {state.urn}
        if not recorded | held:
            return None
        live = await self.run.read_object(self.run.deleting_provider(state.provider), state)
        if live is None:
            return None
        owner = mark_of(live)
        if owner in recorded | held:
            return owner
        uid = metadata_of(live).get("uid")
        return next((urn for urn in held if self.run.adoption.adopted.get(urn) == uid), None)

    async def _preview_deletes(self, states: list[ResourceState], steps: list[Step]) -> None:
        """What a preview says of `states`' deletes: which ride on another's, and, in the
        words the real delete fails with, which are protected."""
        graph, keys, _ = recorded_graph(states, self.run.clusters.cluster_of)
        for rider, carrier in self._riders(states, keys, graph).items():
            self.run.emit(
                Diagnostic(
                    rider.rpartition("#")[0],
                    f"deleted with {describe(carrier.rpartition('#')[0])}: "
                    "no delete call of its own",
                    "info",
                )
            )
        # Listed in the order `up` deletes them, dependents first, as Pulumi's preview does:
        # a provider or a CRD before what goes through it would read as the wrong order.
        by_key = dict(zip(keys, zip(states, steps, strict=True), strict=True))
        for state, step in (by_key[key] for key in reversed(graph.order)):
            self.run.emit(StepStarted(step))
            if state.protect and step.op is Op.DELETE:
                # Bad input, as `up` and `destroy` refuse it (exit 2) before any change;
                # counted as failed, not as a delete, as a refused replacement is.
                self.run.outcome.rejected += 1
                self.run.outcome.failures.append(f"{describe(state.urn)}: {protected(state.urn)}")
                self.run.emit(StepDone(step, False, 0.0, protected(state.urn)))
                continue
            try:  # a cluster that does not answer fails this step, as the delete would
                kept = await self._holder(state) is not None
                if _deletes_object(state, step.op, keep_object=kept):
                    await self.crd_census(state)
            except Exception as exc:
                self._failed(state, step, exc, 0.0)
                continue
            if _deletes_object(state, step.op, keep_object=kept):
                self.say_file_removed(state)
            elif _gives_fields_up(state, step.op, keep_object=kept):
                try:  # refused where a forced field the object needs would go
                    await self.relinquish(state, dry_run=True)
                except PatchGiveUpRefused as exc:
                    error = failure_text(exc)
                    self.run.outcome.failures.append(f"{describe(state.urn)}: {error}")
                    self.run.emit(StepDone(step, False, 0.0, error))
                    continue  # counted as failed, not as a delete, as `up` counts it
            self.run.outcome.counts[step.op.value] += 1

    def say_file_removed(self, state: ResourceState, instead: ResourceState | None = None) -> None:
        """Say, in a preview, which file the delete of a rendered object removes; none when
        its replacement `instead` is written to that same file (or may be: its name is not
        known yet)."""
        directory = self._rendered_from(state.provider)
        if directory is None:
            return
        removed = file_of(directory, state.inputs, state.id.rpartition("/")[0])
        target = self._rendered_to(instead.provider) if instead is not None else None
        if instead is not None and target is not None:
            if unknown_paths(instead.inputs):
                return
            if file_of(target, instead.inputs, instead.id.rpartition("/")[0]) == removed:
                return
        self.run.emit(Diagnostic(state.urn, f"removes {removed}", "info"))

    def _rendered_to(self, provider: str) -> str | None:
        """The directory a provider renders to (the program's, else its record's), or None."""
        if provider in self.run.rendering:
            return self.run.rendering[provider]
        recorded = self.run.old.get(provider)
        found = recorded.inputs.get(RENDER_SETTING) if recorded is not None else None
        return str(found) if found else None

    def _rendered_from(self, provider: str) -> str | None:
        """The directory a provider's recorded objects are in (its record's, which a change
        of its settings in this run has not moved them from; else the program's), or None."""
        recorded = self.run.old.get(provider)
        if recorded is None:
            return self.run.rendering.get(provider)
        found = recorded.inputs.get(RENDER_SETTING)
        return str(found) if found else None

    async def warn_crd_deletes(self, states: Iterable[ResourceState]) -> None:
        """Warn, before a run changes anything, what deleting each CRD among `states` takes
        with it; their deletes do not warn again."""
        for state in states:
            if _deletes_object(state, Op.DELETE, keep_object=False) and not state.protect:
                await self.crd_census(state)

    async def crd_census(self, state: ResourceState) -> None:
        """Warn (on the CRD's URN, once a run) what deleting `state` takes with it when it
        is a CRD: every object of its kind in the cluster (`crd_deletes`; one LIST, for
        CRDs alone, so other deletes cost nothing more)."""
        if state.urn in self._censused or is_patch(state) or not defined_kind(state.inputs):
            return
        if self._rendered_to(state.provider) is not None:
            return  # a file removed: the files of its kind stay
        self._censused.add(state.urn)
        async with self.run.sem:
            diagnostic = await census(self.run.deleting_provider(state.provider), state)
        if diagnostic is not None:
            self.run.emit(diagnostic)

    def _riders(self, states: list[ResourceState], keys: list[str], graph: Graph) -> dict[str, str]:
        """The deletes that ride on another's (`deleted_with`): rider key → carrier key."""
        if not any(state.deleted_with for state in states):
            return {}

        def deletes_object(state: ResourceState) -> bool:
            op = Op.DELETE_REPLACED if state.delete_pending else Op.DELETE
            if state.protect and op is Op.DELETE:
                return False  # its delete fails (`delete_object`): nothing may ride on it
            # Held through another provider of its cluster too: its delete keeps the
            # object, so nothing rides on it (what did would be left behind, untracked).
            held = state.custom and self.run.held_after(state) is not None
            return _deletes_object(state, op, keep_object=held)

        return carriers(states, keys, graph, deletes_object)

    async def _delete_rider(
        self, state: ResourceState, step: Step, carrier: ResourceState, carried: bool
    ) -> None:
        """Remove the record of a resource deleted with `carrier`, whose object went with the
        carrier's (`carried`); else delete it on its own, as without `deleted_with`."""
        if carried:
            why = (
                f"deleted with {describe(carrier.urn)}: its object went with it, no call of its own"
            )
        else:
            why = f"{describe(carrier.urn)} was not deleted: deleting it on its own"
        self.run.emit(Diagnostic(state.urn, why, "info"))
        await self.delete_object(state, step.op, keep_object=carried)

    async def delete_dropped_dependents(self, old: ResourceState) -> None:
        """Before the old object of a delete-before-replace goes, delete what the program
        dropped that depends on it, as Pulumi does: left to the end of the run, a dropped
        Deployment still mounting an old claim would hold the claim's deletion for good."""
        dropped, needing = self.dropped_dependents(old)
        if not dropped:
            return
        waits = [self.run.deleted_first[s.urn] for s in dropped if s.urn in self.run.deleted_first]
        doomed = [s for s in dropped if s.urn in needing and s.urn not in self.run.deleted_first]
        if doomed:
            task = asyncio.ensure_future(self.delete_all(doomed))
            for state in doomed:
                self.run.deleted_first[state.urn] = task
            waits.append(task)
        left = set().union(*(await asyncio.gather(*waits))) & needing
        if left:
            raise UsageError(
                f"not deleted first, {', '.join(sorted(map(describe, left)))} still "
                "depends on it: its old object stays until that goes"
            )

    def dropped_dependents(self, old: ResourceState) -> tuple[list[ResourceState], set[str]]:
        """What the program dropped (still recorded), and the URNs of those of it that
        depend on `old`: deleted before the old object of its delete-before-replace goes."""
        assert self.run.program is not None
        if self._dropped is None:
            by_urn = self.run.program.by_urn
            self._dropped = tuple(urn for urn in self.run.old if urn not in by_urn)
        dropped = [self.run.old[urn] for urn in self._dropped if urn in self.run.old]
        if not dropped:
            return [], set()
        needing = recorded_closure(
            [old.urn], [old, *dropped], upward=False, cluster_of=self.run.clusters.cluster_of
        )
        return dropped, needing - {old.urn}

    async def preview_replaced(self, old: ResourceState, deleted_first: bool) -> None:
        """What a preview of a replacement says of what goes with the old object, as `up`
        would: its CRD's objects; when deleted first, what is in it, and what depends on it
        that the program dropped (up deletes that first)."""
        await self.crd_census(old)
        if _gives_fields_up(old, Op.DELETE_REPLACED, keep_object=False):
            # A renamed Patch gives its fields up on the old object first: refused where a
            # forced field the object needs would go, which `up` would fail on.
            await self.relinquish(old, dry_run=True, renamed=True)
        if deleted_first:  # what is in it is made anew, as by up
            self.refuse_deleting_protected_within(old)
            # What the program dropped that depends on it: up deletes it first.
            dropped = self.dropped_dependents(old)[1]
            self.forget_held(old, "replaced (deleted first)", keep=dropped)
