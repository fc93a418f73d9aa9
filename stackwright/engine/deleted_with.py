"""Which deletes ride on another's (`ResourceOptions(deleted_with=...)`): planning only.

A resource deleted with another one in the same delete (its Namespace, or the CRD of its
kind) makes no delete call of its own: deleting that one (its carrier) removes its object.
Its record is removed only once the carrier's object is gone, so a carrier that fails to
go leaves every rider recorded, and the rider is then deleted on its own (Pulumi removes
the rider's record first, which loses track of its object when the carrier's delete
fails).

A rider rides only where the cluster is sure to remove its object with the carrier's,
and where waiting for the carrier cannot deadlock the delete order; everything else is
deleted as usual. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from stackwright.engine.graph import Graph, defined_kind
from stackwright.model import ResourceState


def carriers(
    states: Sequence[ResourceState],
    keys: Sequence[str],
    graph: Graph,
    deletes_object: Callable[[ResourceState], bool],
) -> dict[str, str]:
    """Rider key → carrier key among `states` (keyed by `keys` in `graph`, the delete's
    recorded graph). `deletes_object(state)` says whether deleting the state makes a
    delete call of its own (not protected, retained, read, or held by another resource)."""
    by_key = dict(zip(keys, states, strict=True))
    by_urn: dict[str, list[str]] = {}
    for key, state in by_key.items():
        by_urn.setdefault(state.urn, []).append(key)
    riding: dict[str, str] = {}
    for key, state in by_key.items():
        if not state.deleted_with or not deletes_object(state):
            continue
        for candidate in by_urn.get(state.deleted_with, ()):
            carrier = by_key[candidate]
            if (
                candidate != key
                and carrier.provider == state.provider
                and deletes_object(carrier)
                and holds(carrier, state)
            ):
                riding[key] = candidate
                break
    riding = _without_deadlocks(riding, graph)
    while True:  # a safety net: whatever else would make the delete wait in a loop
        looped = {riding.get(key, key) for key in _loop(waits(riding, graph))}
        kept = {rider: carrier for rider, carrier in riding.items() if carrier not in looped}
        if len(kept) == len(riding):
            return riding
        riding = kept


def holds(carrier: ResourceState, rider: ResourceState) -> bool:
    """Whether deleting `carrier`'s object removes `rider`'s: a Namespace the objects in
    it, a CustomResourceDefinition the objects of its kind."""
    kind = carrier.inputs.get("kind")
    if kind == "Namespace" and carrier.inputs.get("apiVersion") == "v1":
        return rider.id.rpartition("/")[0] == carrier.id != ""
    if kind == "CustomResourceDefinition":
        group = str(rider.inputs.get("apiVersion", "")).rpartition("/")[0]
        return defined_kind(carrier.inputs) == (group, rider.inputs.get("kind"))
    return False


def _without_deadlocks(riding: dict[str, str], graph: Graph) -> dict[str, str]:
    """`riding` less the riders whose record must wait for something their carrier's delete
    waits for: a rider's record goes after its carrier's object, and what the rider refers
    to (a ConfigMap it mounts) goes after the rider's record; were that ConfigMap one the
    carrier is deleted after (one in the Namespace, not riding), neither could go first.
    Such a rider is deleted on its own, before the carrier, as without `deleted_with`."""
    while True:
        groups: dict[str, set[str]] = {}
        for rider, carrier in riding.items():
            groups.setdefault(carrier, set()).add(rider)
        stuck: set[str] = set()
        for carrier, riders in groups.items():
            waited = _waited_for(graph, {carrier, *riders}) - riders - {carrier}
            for rider in riders:
                if any(need in waited for need in graph.needs[rider]):
                    stuck.add(rider)
        if not stuck:
            return riding
        riding = {rider: carrier for rider, carrier in riding.items() if rider not in stuck}


#: A delete's milestones: ("ready", key) once what it waits for is done (a rider's
#: dependents; a carrier's dependents and riders), ("gone", key) once the carrier's object
#: is gone, ("done", key) once the record is removed (or the delete failed).
Milestone = tuple[str, str]


def waits(riding: Mapping[str, str], graph: Graph) -> dict[Milestone, list[Milestone]]:
    """What each milestone of each delete waits for, given the riders: the order
    `Run.delete_all` follows, and which `carriers` checks for loops."""
    carried: dict[str, list[str]] = {}
    for rider, carrier in riding.items():
        carried.setdefault(carrier, []).append(rider)

    def first(key: str) -> list[Milestone]:
        found: list[Milestone] = []
        for dependent in graph.dependents[key]:
            same = riding.get(dependent)
            # A rider's dependents among its carrier's riders need only be ready: their
            # records go after its object, with theirs.
            fellow = same is not None and (same == key or same == riding.get(key))
            found.append(("ready" if fellow else "done", dependent))
        found.extend(("ready", rider) for rider in carried.get(key, ()))
        return found

    edges: dict[Milestone, list[Milestone]] = {}
    for key in graph.dependents:
        mine = riding.get(key)
        if mine is not None:
            edges["ready", key] = first(key)
            edges["done", key] = [
                ("ready", key),
                ("gone", mine),
                *(("done", d) for d in graph.dependents[key] if riding.get(d) == mine),
            ]
        elif key in carried:
            edges["ready", key] = first(key)
            edges["gone", key] = [("ready", key)]
            edges["done", key] = [("gone", key), *(("done", r) for r in carried[key])]
        else:
            edges["ready", key] = edges["done", key] = first(key)
    return edges


def _loop(edges: Mapping[Milestone, list[Milestone]]) -> set[str]:
    """The keys on a loop of `edges`, if there is one (else none)."""
    state: dict[Milestone, int] = {}  # 1: on the path, 2: finished
    for start in edges:
        if start in state:
            continue
        path: list[tuple[Milestone, int]] = [(start, 0)]
        state[start] = 1
        while path:
            node, index = path[-1]
            following = edges.get(node, [])
            if index == len(following):
                path.pop()
                state[node] = 2
                continue
            path[-1] = (node, index + 1)
            nxt = following[index]
            if state.get(nxt) == 1:
                looped = [n for n, _ in path[[n for n, _ in path].index(nxt) :]]
                return {key for _, key in looped}
            if nxt not in state:
                state[nxt] = 1
                path.append((nxt, 0))
    return set()


def _waited_for(graph: Graph, keys: set[str]) -> set[str]:
    """`keys` and what their deletes wait for, directly or not: their dependents (by every
    edge a delete follows, the ordering rules' too), theirs, and so on."""
    found: set[str] = set()
    pending = list(keys)
    while pending:
        key = pending.pop()
        if key not in found:
            found.add(key)
            pending.extend(graph.dependents.get(key, ()))
    return found
