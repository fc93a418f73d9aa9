"""The contract every state backend keeps: `Backend` (stacks, locks, loads, edits) and `Operation`.

The engine and the front ends code against these protocols only; SQLite
implements them today and PostgreSQL / S3 will later. A backend must keep these
promises, whatever it stores in:

- One operation at a time per stack. `begin_operation` takes the stack's lock
  (owner, host, pid, kind, start, lease expiry) with a compare-and-set on the lock
  row, so among racers exactly one wins; a holder whose lease lapsed (its process
  died) is taken over the same way, and its history entry marked "interrupted".
  While the operation runs its lease is renewed every third of its length.
- Write-ahead, linear journal. `Operation.begin` durably records a pending step
  before the caller touches the cluster; `Operation.end` deletes that record and
  applies the step's effect (`_journal.effects`) in one transaction. A step writes
  its own rows only, never a snapshot; `bytes_written` counts the payload bytes.
  `begin_many` / `end_many` do the same for several steps in one transaction
  (group commit), so a backend pays its per-transaction cost once per batch.
- Fencing. Every journal write first checks, inside its transaction, that this
  operation still holds the lock, and raises `LockLost` (writing nothing) if not.
- Integrity. `load` refuses a damaged state with `StateCorrupt`, naming what is
  wrong; `import_` refuses a bad document with `UsageError` and replaces nothing.
- State edits (`delete_resource`, `unprotect`, `rename_resource`,
  `move_resource`, `import_`) run in one transaction that finds the stack's lock
  free (or lapsed) and records a history entry.
- Saved states. The transaction that ends a history entry (an operation's `finish`,
  a `cancel`, a takeover of a lapsed lock, a state edit) also saves the stack's state
  as it then is, under that entry (`_saved`: the export document, compressed, secrets
  sealed as stored), so `export(version=N)` can print it; `remove_stack` removes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, Self

from stackwright.errors import UsageError
from stackwright.model import ClusterIdentity, Op, PendingOperation, ResourceState
from stackwright.state._records import HistoryEntry, LockHolder, Snapshot, StackSummary


class Operation(Protocol):
    """One running operation on one stack: holds its lock and journals its steps.

    Misuse (ending a step never begun, beginning one twice, writing after finish)
    raises ValueError: a bug in the caller, not a user mistake.
    """

    @property
    def id(self) -> int:
        """The operation's history id (also its lock's fencing token)."""
        ...

    @property
    def project(self) -> str: ...

    @property
    def stack(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def took_over(self) -> LockHolder | None:
        """The holder whose lapsed lease this operation took over: its process died,
        so the snapshot may hold pending steps it left."""
        ...

    @property
    def locked_version(self) -> int:
        """The stack's version (`Snapshot.version`) when this operation took its lock: a
        snapshot of that version is the state it starts from, which no other operation
        can change while it holds the lock."""
        ...

    @property
    def bytes_written(self) -> int:
        """Payload bytes of the rows this operation inserted or updated (deletes write none)."""
        ...

    @property
    def finished(self) -> bool: ...

    def check_held(self) -> None:
        """Raise LockLost when the stack's lock is no longer this operation's (a `cancel`,
        a takeover after its lease lapsed); one read, nothing written."""
        ...

    def begin(self, step: int, op: Op, resource: ResourceState) -> None:
        """Durably record that step `step` is about to do `op` to `resource`.

        Call before sending anything to the cluster; for a create, `resource`
        carries the name the create will use, so a crash can be settled by a GET.
        Raises LockLost (recording nothing) when the lock was lost.
        """
        ...

    def end(self, step: int, result: ResourceState | None) -> None:
        """Record that step `step` is done and apply it to the stack's resources.

        `result` is the resource as it now is, or None when it no longer exists
        (a delete done; a create that failed having made nothing).
        """
        ...

    def begin_many(self, steps: Sequence[tuple[int, Op, ResourceState]]) -> None:
        """`begin` of each (step, op, resource), all in one transaction: all or none."""
        ...

    def end_many(self, steps: Sequence[tuple[int, ResourceState | None]]) -> None:
        """`end` of each (step, result), in one transaction, applied in the order given."""
        ...

    def fail_step(self, step: int) -> None:
        """Record that step `step` failed having changed nothing."""
        ...

    def resolve_pending(self, pending: PendingOperation, result: ResourceState | None) -> None:
        """Settle a step a crashed operation left pending, once the cluster was read.

        `pending` is one of `Snapshot.pending`; `result` is the object as the
        cluster has it (None when it does not exist). The effect is what `end` of
        that step with this result would have done. Raises ValueError when no such
        pending step is recorded (it was already resolved).
        """
        ...

    def rename(self, urn: str, new_urn: str) -> None:
        """Give a recorded resource a new URN (an alias in the program), rewriting references."""
        ...

    def set_outputs(self, outputs: Mapping[str, Any]) -> None:
        """Replace the stack's outputs."""
        ...

    def set_former_names(self, names: Sequence[str]) -> None:
        """Replace the stack's former names (`Snapshot.former_names`); empty forgets them."""
        ...

    def set_default_cluster(self, identity: ClusterIdentity) -> None:
        """Record the cluster the stack's default provider talks to (`Snapshot.default_cluster`)."""
        ...

    def finish(self, result: str = "succeeded", counts: Mapping[str, int] | None = None) -> None:
        """Record the operation in history and release the lock.

        `result` is "succeeded", "failed" or "cancelled"; `counts` defaults to the
        steps ended successfully, by op. Steps begun and not ended stay pending.
        """
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Finish: "failed" on an exception ("cancelled" on KeyboardInterrupt or
        task cancellation), "succeeded" otherwise, unless already finished."""
        ...


class Backend(Protocol):
    """Where stacks of projects keep their state."""

    @property
    def url(self) -> str:
        """The backend's URL, as a user would write it."""
        ...

    def create_stack(self, project: str, stack: str) -> None:
        """Raises UsageError when the stack exists or the name is not valid."""
        ...

    def has_stack(self, project: str, stack: str) -> bool: ...

    def list_stacks(self, project: str) -> list[StackSummary]:
        """The project's stacks, by name."""
        ...

    def remove_stack(self, project: str, stack: str, *, force: bool = False) -> None:
        """Forget a stack; refuses while it records resources or pending steps unless
        `force` (the objects stay in the cluster), and while it is locked."""
        ...

    def begin_operation(
        self, project: str, stack: str, *, kind: str, message: str = "", lease_seconds: float = 30.0
    ) -> Operation:
        """Take the stack's lock for an operation; raises StackLocked naming the holder."""
        ...

    def running(self, project: str, stack: str) -> LockHolder | None:
        """The operation running on the stack now: the holder of a live lease whose process
        is not known to be gone (one killed on this host is not, whatever its lease says)."""
        ...

    def cancel(self, project: str, stack: str) -> bool:
        """Clear the stack's lock at once; whether one was held. The operation that
        held it gets LockLost at its next journal write."""
        ...

    def load(self, project: str, stack: str) -> Snapshot:
        """The stack's state, checked; raises StateCorrupt saying what is damaged."""
        ...

    def history(self, project: str, stack: str, *, limit: int | None = None) -> list[HistoryEntry]:
        """The stack's operations, newest first."""
        ...

    def export(self, project: str, stack: str, *, version: int | None = None) -> dict[str, Any]:
        """The stack's state as a versioned JSON document (see `_document`); with `version`,
        the state the operation of that history entry (`HistoryEntry.id`) left, or a
        UsageError naming the versions that can be exported."""
        ...

    def import_(self, project: str, stack: str, document: Any, *, message: str = "") -> None:
        """Replace the stack's state with a document from `export` (creating the stack
        if needed); raises UsageError with the document's first problem."""
        ...

    def delete_resource(
        self,
        project: str,
        stack: str,
        urn: str,
        *,
        force: bool = False,
        target_dependents: bool = False,
        dry_run: bool = False,
    ) -> list[str]:
        """Forget a resource (the object stays in the cluster); the URNs forgotten.

        Refuses a protected resource unless `force`, and one that others refer to
        unless `target_dependents` (which forgets them too). With `dry_run`, every check
        (the stack's lock too) and the URNs it would forget, nothing written.
        """
        ...

    def unprotect(self, project: str, stack: str, urns: Sequence[str] | None) -> list[str]:
        """Clear the protection of the resources named (every resource: None); the URNs
        of those that were protected. A URN the stack has not is refused, nothing changed."""
        ...

    def rename_resource(self, project: str, stack: str, urn: str, new_name: str) -> str:
        """Give a resource a new name (the last part of its URN); the new URN."""
        ...

    def move_resource(
        self, project: str, src_stack: str, dst_stack: str, urns: Sequence[str]
    ) -> list[str]:
        """Move resources and their children to another stack of the project; the new URNs."""
        ...

    def recorded_elsewhere(self, project: str, stack: str, urn: str, object_id: str) -> list[str]:
        """The other stacks of `project` that record the object `object_id` as last seen
        marked with `urn`, a resource of `stack`: `move_resource` gave it to them, and the
        object keeps the old marks until their next operation applies it."""
        ...

    def rename_stack(self, project: str, stack: str, new_name: str) -> None:
        """Rename a stack, rewriting the stack part of its URNs; refuses a name in use."""
        ...

    def secrets_provider(self, project: str, stack: str) -> dict[str, Any] | None:
        """How the stack's data key is wrapped (the stack file's provider fields), as last
        recorded; read by stack references from other projects. Never the key itself."""
        ...

    def set_secrets_provider(self, project: str, stack: str, fields: Mapping[str, Any]) -> None: ...

    def close(self) -> None: ...


def require_stack(backend: Backend, project: str, stack: str) -> None:
    """Refuse a stack `backend` does not have (a typo in --stack), naming the project's
    stacks, before anything is written."""
    if not backend.has_stack(project, stack):
        names = [summary.name for summary in backend.list_stacks(project)]
        known = f" (its stacks: {', '.join(names)})" if names else ""
        raise UsageError(
            f"stack {stack} does not exist in project {project}{known}: create it with "
            f"`stackwright stack init {stack}`"
        )
