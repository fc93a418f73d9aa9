"""Refresh: reading the recorded objects back from the cluster into the records, with the
drift found said; `--retarget`'s forgetting of the objects a moved provider leaves behind;
and the rewriting of records the cluster did not change (a record forgotten, what referred
to it made to refer elsewhere, and back), which settling and deletes-first use too.

Must never: write to the cluster, or leave a record that names a resource whose record
went (a state that does not load).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stackwright.engine import drift as drift_rules
from stackwright.engine.clusters import CLUSTER_OUTPUT
from stackwright.engine.events import Diagnostic, Drift, DriftedField, mask_at
from stackwright.engine.failures import failure_text
from stackwright.engine.records import (
    MIN_SECRET_PART,
    ClusterOf,
    SecretTexts,
    applied_fields,
    being_deleted,
    describe,
    is_patch,
    is_release,
    made_again,
    metadata_of,
    object_ref,
    recorded_closure,
    release_spec,
    secret_texts,
    through_kubernetes,
    with_outputs,
)
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.model import Op, ResourceState

if TYPE_CHECKING:
    from stackwright.engine.execute import Options, Run


class Refresh:
    """A run's reads of what it recorded, and its record rewrites that change no object."""

    def __init__(self, run: Run) -> None:
        self.run = run
        #: Resources whose object a refresh before the steps could not read (a failure
        #: already): their steps are not tried on a state the refresh did not confirm.
        self.unread: set[str] = set()

    def retarget(self, *, record: bool) -> None:
        """`--retarget`: forget the objects recorded through each provider that now reaches
        another cluster, saying so (they stay on that cluster: it may be unreachable, and
        a stack deletes nothing it cannot see go); the plan then creates them anew."""
        for moved in self.run.clusters.moved.values():
            self.run.emit(Diagnostic(moved.provider, moved.notice(), "warning"))
        providers = set(self.run.clusters.moved)
        gone = {
            urn: state
            for urn, state in self.run.old.items()
            if state.custom
            and state.type != PROVIDER_TYPE
            and through_kubernetes(state)
            and state.provider in providers
        }
        for state in gone.values():
            self.rerecord(state, None, record=record)
            self.run.outcome.counts["retargeted"] += 1
        self.forget_gone(gone, record=record)

    async def refresh(self, *, record: bool) -> None:
        """Read every object; report drift; with `record`, write what was read to the state."""
        run = self.run
        states = list(run.old.values())
        every_secret = SecretTexts.of(
            text
            for state in states
            for text in secret_texts(state)
            if len(text) >= MIN_SECRET_PART  # a short one only where it was put
        )

        async def one(state: ResourceState) -> None:
            if state.type == PROVIDER_TYPE:
                self._refresh_provider(state, record=record)
                return
            if not state.custom or not through_kubernetes(state):
                return
            try:
                async with run.sem:
                    if is_release(state):
                        live = await run.provider_for(state.provider).release_read(
                            release_spec(state)
                        )
                    else:
                        api_version, kind, namespace, name = object_ref(state)
                        live = await run.provider_for(state.provider).read(
                            api_version, kind, namespace, name
                        )
            except Exception as exc:
                run.outcome.failures.append(f"{describe(state.urn)}: {failure_text(exc)}")
                run.emit(Diagnostic(state.urn, f"could not read it: {failure_text(exc)}", "error"))
                self.unread.add(state.urn)
                return
            if live is not None and not is_patch(state) and made_again(state, live):
                run.emit(
                    Diagnostic(
                        state.urn,
                        f"the object named {state.id} is now another one, made outside this "
                        f"stack: adopt it with {run.adoption.import_option(state.id)} to manage it",
                        "warning",
                    )
                )
                live = None
            now: ResourceState | None = None
            if live is None and drift_rules.removed_by_its_ttl(state.outputs):
                run.emit(
                    Diagnostic(
                        state.urn,
                        "finished, and deleted by its ttlSecondsAfterFinished: kept as done",
                        "info",
                    )
                )
                run.outcome.counts["in-sync"] += 1
                return
            if live is None:
                run.emit(Drift(state.urn, gone=True))
                run.outcome.counts["deleted-outside"] += 1
                run.old.pop(state.urn, None)
            else:
                # A release's live state is Helm's status, not its inputs, and an object
                # only read has no inputs of its own: no field drift.
                # A Patch's drift is in the fields it applies alone (its manager's), not in
                # the rest of an object that is someone else's.
                fields = (
                    []
                    if is_release(state) or state.external
                    else drift_rules.drifted(
                        applied_fields(state), live, ignore=state.ignore_changes
                    )
                )
                if not (is_release(state) or state.external or is_patch(state)):
                    fields += self._being_deleted(state, live)
                paths = state.secret_paths
                hidden = [
                    replace(
                        f,
                        recorded=mask_at(f.path, f.recorded, paths),
                        live=mask_at(f.path, f.live, paths),
                    )
                    for f in fields
                ]
                if hidden:
                    run.outcome.drift[state.urn] = hidden
                    run.outcome.counts["drifted"] += 1
                    run.emit(Drift(state.urn, tuple(hidden)))
                else:
                    run.outcome.counts["in-sync"] += 1
                now = run.old[state.urn] = with_outputs(state, live, every_secret)
                if now == state:
                    return  # read as recorded: no record to rewrite
            if record:  # in the transactions of the reads that end together
                assert run.commits is not None
                number = run.next_step()
                await run.commits.begin(number, Op.REFRESH, state)
                await run.commits.end(number, now)

        opts = run.options
        if opts.kind == "refresh":  # `refresh --target / --exclude` read only those, as Pulumi's
            states = [
                s
                for s in states
                if (not opts.targets or s.urn in opts.targets) and s.urn not in opts.excludes
            ]
        elif opts.targets or opts.excludes:
            # `up --refresh` with a selection reads only what that `up` may change (Pulumi's
            # #4174): one outside it found deleted would otherwise leave the state, and not
            # be made again by this `up`, which leaves it alone.
            chosen = _selected(states, opts, run.clusters.cluster_of)
            states = [s for s in states if s.urn in chosen]
        await asyncio.gather(*(one(s) for s in states))
        self.forget_gone({s.urn: s for s in states if s.urn not in run.old}, record=record)

    def _being_deleted(self, state: ResourceState, live: Mapping[str, Any]) -> list[DriftedField]:
        """An object someone deleted that finalizers still hold (Terminating): drift, so a
        drift gate sees the delete now, not once the finalizers let it go; `up` cannot make
        it again while it is there."""
        said = being_deleted(live)
        if not said or drift_rules.removed_by_its_ttl(state.outputs):
            return []  # a finished Job its TTL deletes is kept as done once gone, not drift
        self.run.emit(
            Diagnostic(
                state.urn,
                f"its object {said}; once it is gone, `up --refresh` makes it again",
                "warning",
            )
        )
        since = metadata_of(live)["deletionTimestamp"]
        return [DriftedField(drift_rules.BEING_DELETED, None, since)]

    def _refresh_provider(self, state: ResourceState, *, record: bool) -> None:
        """A provider whose recorded settings reach another cluster than recorded (a
        kubeconfig file rewritten): a refresh reads its objects there, so that one is
        recorded, and the next run plans against it."""
        recorded = state.outputs.get(CLUSTER_OUTPUT)
        cluster = self.run.provider_for(state.urn).cluster
        if recorded is None or recorded == cluster:
            return
        # The identity stays: the same cluster (a refresh reaching another is refused).
        now = replace(state, outputs={**state.outputs, CLUSTER_OUTPUT: cluster})
        self.rerecord(state, now, record=record)
        self.run.emit(
            Diagnostic(
                state.urn, f"its settings reach {cluster} now, no longer {recorded}", "warning"
            )
        )

    def forget_gone(
        self, gone: dict[str, ResourceState], *, record: bool
    ) -> dict[str, ResourceState]:
        """Drop the references to resources whose records go (found deleted by a refresh,
        settled as gone, deleted to be replaced) from what refers to them (a dependency, a
        parent: the gone one's own parent takes its place), as Pulumi's refresh does: a
        state whose resource names one it lacks does not load. Returns the records it
        changed as they were (`refer_again`)."""

        changed: dict[str, ResourceState] = {}
        if not gone:
            return changed  # a refresh that found everything: nothing refers to a gone one

        def parent_of(urn: str) -> str:
            while urn in gone:
                urn = gone[urn].parent
            return urn

        for urn, state in list(self.run.old.items()):
            if state.parent not in gone and not any(d in gone for d in state.dependencies):
                continue
            if urn in self.run.deleted_first or urn in gone:
                continue  # no record any more (or none after this)
            kept = replace(
                state,
                parent=parent_of(state.parent),
                dependencies=tuple(d for d in state.dependencies if d not in gone),
            )
            self.rerecord(state, kept, record=record)
            changed[urn] = state
        return changed

    def refer_again(self, before: Mapping[str, ResourceState]) -> None:
        """After a resource deleted first is made again under its URN: the records
        `forget_gone` took its references from refer to it again, as they did — those the
        run does not record anew itself (outside `--target`) would lack it until the next
        full `up`, and a `destroy` meanwhile would not delete them before it."""
        for urn, was in before.items():
            now = self.run.old.get(urn)
            if now is not None:
                again = replace(now, parent=was.parent, dependencies=was.dependencies)
                self.rerecord(now, again, record=True)

    def rerecord(self, state: ResourceState, now: ResourceState | None, *, record: bool) -> None:
        """`state`'s record is `now` (None: forgotten), no object changed (journaled, as a
        refresh's, when `record`)."""
        if now is None:
            del self.run.old[state.urn]
        else:
            self.run.old[state.urn] = now
        if record:
            assert self.run.journal is not None
            number = self.run.next_step()
            self.run.journal.begin(number, Op.REFRESH, state)
            self.run.journal.end(number, now)


def _selected(states: list[ResourceState], options: Options, cluster_of: ClusterOf) -> set[str]:
    """The recorded resources an `up` with `--target` / `--exclude` may change: the
    targets and what they need (with `--target-dependents`, what needs them too), less the
    excluded (with `--exclude-dependents`, and what needs them), as `Run._allowed` selects
    them in the program's graph, which a refresh before the program runs does not have."""
    urns = {s.urn for s in states}
    if options.targets:
        chosen: set[str] = set(options.targets)
        if options.target_dependents:
            chosen = recorded_closure(chosen, states, upward=False, cluster_of=cluster_of)
        urns = recorded_closure(chosen, states, upward=True, cluster_of=cluster_of)
    if options.excludes:
        excluded: set[str] = set(options.excludes)
        if options.exclude_dependents:
            excluded = recorded_closure(excluded, states, upward=False, cluster_of=cluster_of)
        urns -= excluded
    return urns
