"""What ending a journaled step does to a stack's resources: the rules, without storage.

A backend journals `begin(step, op, resource)` as a pending record and, when the
step ends, deletes that record and applies the effects computed here, in the
same transaction. Keeping the rules pure lets every backend share them and lets
tests read them as a table. Nothing here does I/O or knows about locks.

A row is identified by its URN and whether it awaits deletion after a
replacement; such old objects can share a URN (a replacement that failed to
delete its predecessor twice), so they are further told apart by cluster id.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackwright.model import Op, ResourceState


@dataclass(frozen=True)
class Target:
    """The row a step is about."""

    urn: str
    delete_pending: bool
    #: Only for rows awaiting deletion: which of the old objects of this URN.
    cluster_id: str | None = None

    @classmethod
    def of(cls, state: ResourceState) -> Target:
        if state.delete_pending:
            return cls(state.urn, True, state.id)
        return cls(state.urn, False)


@dataclass(frozen=True)
class Put:
    """Write `state` into the target row (inserting it when absent), last in order."""

    target: Target
    state: ResourceState


@dataclass(frozen=True)
class Remove:
    target: Target


@dataclass(frozen=True)
class Demote:
    """Mark the live row of `urn` as an old object awaiting deletion (no payload rewrite)."""

    urn: str


Effect = Put | Remove | Demote


def effects(op: Op, begun: ResourceState, result: ResourceState | None) -> tuple[Effect, ...]:
    """The changes ending (or resolving) a step makes.

    | op                  | result  | effect                                                     |
    | create-replacement  | a state | the old object awaits deletion; the new one is live, last  |
    | create-replacement  | None    | nothing: no replacement was made, the old object stays     |
    | create / import     | None    | nothing: nothing was made                                  |
    | any other           | a state | the begun row now holds `result`, moved last in order      |
    | any other           | None    | the begun row is removed: the object no longer exists      |

    Moving a rewritten row last keeps the stored order one where dependencies come
    first, since a step ends only after the steps it depends on. A result must keep
    the begun URN: renames go through `rename_resource`.
    """
    if result is not None and result.urn != begun.urn:
        raise ValueError(
            f"a step begun for {begun.urn} ended with a result for {result.urn}; "
            "rename resources with rename_resource instead"
        )
    if op is Op.CREATE_REPLACEMENT:
        if result is None:
            return ()
        return (Demote(begun.urn), Put(Target(begun.urn, False), result))
    if result is None:
        if op in (Op.CREATE, Op.IMPORT):
            return ()
        return (Remove(Target.of(begun)),)
    return (Put(Target.of(begun), result),)


def counted(op: Op, result: ResourceState | None) -> bool:
    """Whether an ended step did what it set out to do, for the operation's counts."""
    if op in (Op.DELETE, Op.DELETE_REPLACED):
        return result is None
    return result is not None
