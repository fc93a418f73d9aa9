"""The checks a stack's resources must pass, and the order they are handed out in.

Shared by loading (a failure means the stored state is damaged) and importing (a
failure means the document is bad), so an imported state always loads. Pure
functions over model values; reporting and wording of the fix is the caller's.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from stackwright.model import STACK_TYPE, PendingOperation, ResourceState, parse_urn
from stackwright.state._codec import Invalid


def references(state: ResourceState) -> Iterator[tuple[str, str]]:
    """(URN, how this resource refers to it), in the words of a message."""
    if state.parent:
        yield state.parent, "has parent"
    if state.provider:
        yield state.provider, "uses provider"
    for dependency in state.dependencies:
        yield dependency, "depends on"


def _is_stack_root(urn: str) -> bool:
    # The stack's own root resource is implicit: children may name it as their
    # parent whether or not the engine records it.
    try:
        return parse_urn(urn).type == STACK_TYPE
    except ValueError:
        return False


def check_and_order(
    resources: Sequence[ResourceState], pending: Sequence[PendingOperation] = ()
) -> list[ResourceState]:
    """`resources` (in the order their steps ended) checked and in dependency order.

    Raises Invalid for a URN held by two live resources, a reference to a URN that
    is neither a resource nor a pending step, or a dependency cycle.
    """
    live: set[str] = set()
    for state in resources:
        if state.delete_pending:
            continue
        if state.urn in live:
            raise Invalid(f"resource {state.urn} appears twice")
        live.add(state.urn)
    stored = {state.urn for state in resources}
    present = stored | {p.resource.urn for p in pending}
    for state in resources:
        for ref, how in references(state):
            if ref == state.urn and how != "uses provider":
                raise Invalid(f"resource {state.urn} {how} itself")
            if ref not in present and not (how == "has parent" and _is_stack_root(ref)):
                raise Invalid(f"resource {state.urn} {how} {ref} which is not in the state")
    if _in_order(resources, stored):
        return list(resources)
    return _topological(resources, stored)


def _in_order(resources: Sequence[ResourceState], stored: set[str]) -> bool:
    seen: set[str] = set()
    for state in resources:
        for ref, _ in references(state):
            if ref in stored and ref not in seen:
                return False
        seen.add(state.urn)
    return True


def _topological(resources: Sequence[ResourceState], stored: set[str]) -> list[ResourceState]:
    # Stable: among resources whose references are all out, the one that ended
    # earliest goes first, so the result departs from the stored order only where
    # it must (a resource whose dependency was rewritten after it, by a step that
    # moved the dependency last).
    waiting: list[set[str]] = []
    dependents: dict[str, list[int]] = {}
    ready: list[int] = []
    for index, state in enumerate(resources):
        refs = {ref for ref, _ in references(state) if ref in stored}
        waiting.append(refs)
        for ref in refs:
            dependents.setdefault(ref, []).append(index)
        if not refs:
            ready.append(index)
    heapq.heapify(ready)
    out: list[ResourceState] = []
    emitted: set[str] = set()
    while ready:
        index = heapq.heappop(ready)
        state = resources[index]
        out.append(state)
        if state.urn in emitted:
            continue
        emitted.add(state.urn)
        for other in dependents.get(state.urn, ()):
            waiting[other].discard(state.urn)
            if not waiting[other]:
                heapq.heappush(ready, other)
    if len(out) < len(resources):
        raise Invalid(_cycle(resources, waiting))
    return out


def _cycle(resources: Sequence[ResourceState], waiting: list[set[str]]) -> str:
    blocked = {resources[i].urn: sorted(refs) for i, refs in enumerate(waiting) if refs}
    path = [min(blocked)]
    while True:
        following = next(ref for ref in blocked[path[-1]] if ref in blocked)
        if following in path:
            cycle = [*path[path.index(following) :], following]
            return "resources depend on each other in a cycle: " + " → ".join(cycle)
        path.append(following)
