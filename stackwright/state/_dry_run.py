"""A journal that writes nothing: a preview's way to settle what a crash left pending.

`DryRunJournal` takes the calls an operation's journal takes and applies each
step's effects (`_journal.effects`, the rules every backend follows) to an
in-memory copy of a loaded snapshot, so that a preview can settle pending steps
exactly as the next `up` will and plan against the result. It must never touch a
backend: the state and its journal stay as the crash left them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stackwright.model import ClusterIdentity, Op, PendingOperation, ResourceState
from stackwright.state._integrity import check_and_order
from stackwright.state._journal import Demote, Effect, Put, Release, Remove, Target, effects
from stackwright.state._records import Snapshot


@dataclass
class _Row:
    state: ResourceState
    #: As a backend's sequence number: a rewritten row moves last (`effects`).
    seq: int

    def is_(self, target: Target) -> bool:
        state = self.state
        return (
            state.urn == target.urn
            and state.delete_pending == target.delete_pending
            and (not target.delete_pending or state.id == target.cluster_id)
        )


class DryRunJournal:
    """An operation's journal over a snapshot in memory; `snapshot()` is the state as a
    backend would hold it after the same calls."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._base = snapshot
        self._rows = [_Row(state, seq) for seq, state in enumerate(snapshot.resources)]
        self._seq = len(self._rows)
        self._pending = list(snapshot.pending)
        self._begun: dict[int, tuple[Op, ResourceState]] = {}
        self._outputs = snapshot.outputs
        self._former = snapshot.former_names
        self._cluster = snapshot.default_cluster
        self._released = dict(snapshot.released_names)

    def snapshot(self) -> Snapshot:
        """The stack's state after the calls so far (steps begun and not ended are not in it)."""
        rows = sorted(self._rows, key=lambda row: row.seq)
        return replace(
            self._base,
            resources=check_and_order([row.state for row in rows], self._pending),
            pending=list(self._pending),
            outputs=self._outputs,
            former_names=self._former,
            default_cluster=self._cluster,
            released_names=dict(self._released),
        )

    def begin(self, step: int, op: Op, resource: ResourceState) -> None:
        if step in self._begun:
            raise ValueError(f"step {step} was begun already")
        self._begun[step] = (op, resource)

    def end(self, step: int, result: ResourceState | None) -> None:
        if step not in self._begun:
            raise ValueError(f"step {step} was never begun")
        op, resource = self._begun.pop(step)
        self._apply(effects(op, resource, result))

    def begin_many(self, steps: Sequence[tuple[int, Op, ResourceState]]) -> None:
        for step, op, resource in steps:
            self.begin(step, op, resource)

    def end_many(self, steps: Sequence[tuple[int, ResourceState | None]]) -> None:
        for step, result in steps:
            self.end(step, result)

    def fail_step(self, step: int) -> None:
        if self._begun.pop(step, None) is None:
            raise ValueError(f"step {step} was never begun")

    def resolve_pending(self, pending: PendingOperation, result: ResourceState | None) -> None:
        if pending not in self._pending:
            raise ValueError(
                f"no pending {pending.op.value} of {pending.resource.urn} is recorded; "
                "was it resolved already?"
            )
        self._pending.remove(pending)
        self._apply(effects(pending.op, pending.resource, result))

    def rename(self, urn: str, new_urn: str) -> None:
        # Renames rewrite every reference (`rename_resource`); settling never renames.
        raise ValueError(f"a dry run does not rename {urn}")

    def set_outputs(self, outputs: Mapping[str, Any]) -> None:
        self._outputs = dict(outputs)

    def set_former_names(self, names: Sequence[str]) -> None:
        self._former = tuple(names)

    def set_default_cluster(self, identity: ClusterIdentity) -> None:
        self._cluster = identity

    def _apply(self, changes: Sequence[Effect]) -> None:
        for change in changes:
            if isinstance(change, Demote):
                for row in self._rows:
                    if row.state.urn == change.urn and not row.state.delete_pending:
                        row.state = replace(row.state, delete_pending=True)
                continue
            if isinstance(change, Release):
                had = self._released.get(change.urn, ())
                if change.name not in had:
                    self._released[change.urn] = (*had, change.name)
                continue
            if isinstance(change, Remove):
                self._rows = [row for row in self._rows if not row.is_(change.target)]
                continue
            assert isinstance(change, Put)
            state = replace(change.state, delete_pending=change.target.delete_pending)
            self._seq += 1
            found = [row for row in self._rows if row.is_(change.target)]
            for row in found:
                row.state, row.seq = state, self._seq
            if not found:
                self._rows.append(_Row(state, self._seq))
