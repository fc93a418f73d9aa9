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

from stackwright.model import Op, ResourceState, released_auto_name


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


@dataclass(frozen=True)
class Release:
    """Remember that the state let go of `name`, an auto-name of `urn` whose object stays in
    the cluster: later auto-names of that URN avoid it (`Snapshot.released_names`)."""

    urn: str
    name: str


Effect = Put | Remove | Demote | Release


def effects(op: Op, begun: ResourceState, result: ResourceState | None) -> tuple[Effect, ...]:
    """The changes ending (or resolving) a step makes.

    | op                  | result  | effect                                                     |
    | create-replacement  | a state | the old object awaits deletion; the new one is live, last  |
    | create-replacement  | None    | nothing: no replacement was made, the old object stays     |
    | create / import     | None    | nothing: nothing was made                                  |
    | delete, retained    | None    | the begun row is removed; its auto-name is released        |
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
        removed = Remove(Target.of(begun))
        # Retained, the object stays under its name: a later create of the URN must not
        # take it for its own (Pulumi's would get a new random name).
        released = released_auto_name(begun) if op is Op.DELETE and begun.retain_on_delete else None
        return (removed,) if released is None else (removed, Release(begun.urn, released))
    return (Put(Target.of(begun), result),)


def counted(op: Op, result: ResourceState | None) -> bool:
    """Whether an ended step did what it set out to do, for the operation's counts."""
    if op in (Op.DELETE, Op.DELETE_REPLACED):
        return result is None
    return result is not None
