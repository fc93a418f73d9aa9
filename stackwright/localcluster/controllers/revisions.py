"""ControllerRevisions: the template history of StatefulSets and DaemonSets.

As `pkg/controller/history` and the two controllers' use of it: a revision stores
the template as the patch `{"spec": {"template": {..., "$patch": "replace"}}}`
(what `kubectl rollout undo` applies back), numbered 1, 2, …; the revision equal
to the current template is reused (and renumbered to the newest when an old
template comes back); a name taken by a different template bumps the owner's
`collisionCount`. Old revisions beyond `revisionHistoryLimit` are deleted unless a
pod still runs them. Revisions without a controller that the owner's selector matches
(left by an owner of that name deleted with `propagationPolicy: Orphan`) are adopted
first, as ClaimControllerRevisions does: the same template keeps its revision, and the
Pods they left running are not rolled.

Must never: delete a revision in use (current, update, or a live pod's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.workload_common import (
    CONTROLLER_REVISION,
    MANAGER,
    OwnerIndex,
    claim_owned,
    copy_obj,
    owner_reference,
    selector,
)
from stackwright.localcluster.store import Obj


@dataclass(frozen=True)
class Revisions:
    current: Obj
    update: Obj
    collision_count: int
    all: list[Obj]


def template_patch(owner: Obj) -> dict[str, Any]:
    """The revision data of an owner's template (getPatch)."""
    template = copy_obj((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_of(revision: Obj) -> Obj:
    """The pod template a revision stores."""
    template = copy_obj(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def sync_revisions(
    cluster: Cluster,
    index: OwnerIndex,
    owner: Obj,
    *,
    name_and_labels: Callable[[Obj, dict[str, Any], int], tuple[str, dict[str, str]]],
) -> Revisions:
    """Find or make the revision of the owner's template; the current one from its status.

    `name_and_labels(owner, data, collision_count)` names a new revision and labels it
    (the two controllers hash differently).
    """
    rtype = cluster.type_for("apps", "v1", "controllerrevisions")
    meta = owner["metadata"]

    def write(revision: Obj) -> Obj:
        name = revision["metadata"]["name"]
        return cluster.update(
            rtype, meta["namespace"], name, revision, WriteOptions(field_manager=MANAGER)
        ).obj

    claim_owned(
        index, CONTROLLER_REVISION, owner, selector(owner["spec"].get("selector")), write,
        release=False,
    )  # fmt: skip
    revisions = sorted(index.owned(CONTROLLER_REVISION, meta["uid"]), key=_number)
    status = owner.get("status") or {}
    collisions = int(status.get("collisionCount") or 0)
    data = template_patch(owner)
    next_number = (_number(revisions[-1]) + 1) if revisions else 1
    equal = [r for r in revisions if r.get("data") == data]
    if equal and equal[-1] is revisions[-1]:
        update = revisions[-1]
    elif equal:
        # An old template is back (a rollback): it becomes the newest revision.
        renumbered = copy_obj(equal[-1])
        renumbered["revision"] = next_number
        update = cluster.update(
            rtype, meta["namespace"], renumbered["metadata"]["name"], renumbered,
            WriteOptions(field_manager=MANAGER),
        ).obj  # fmt: skip
    else:
        while True:
            name, labels = name_and_labels(owner, data, collisions)
            revision: Obj = {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": name,
                    "namespace": meta["namespace"],
                    "labels": labels,
                    "ownerReferences": [owner_reference(owner)],
                },
                "data": data,
                "revision": next_number,
            }
            if owner["metadata"].get("annotations"):
                revision["metadata"]["annotations"] = dict(owner["metadata"]["annotations"])
            try:
                update = cluster.create(
                    rtype, meta["namespace"], revision, WriteOptions(field_manager=MANAGER)
                ).obj
                break
            except api_status.AlreadyExists:
                clash = cluster.store.get(CONTROLLER_REVISION, meta["namespace"], name)
                if (
                    clash is not None
                    and clash.get("data") == data
                    and _owned_by(clash, meta["uid"])
                ):
                    update = clash
                    break
                collisions += 1
        revisions = [*revisions, update]
    current_name = status.get("currentRevision") or ""
    current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
    return Revisions(current=current, update=update, collision_count=collisions, all=revisions)


def truncate_history(
    cluster: Cluster, owner: Obj, revisions: Iterable[Obj], live: set[str]
) -> None:
    """Delete the oldest revisions beyond revisionHistoryLimit that nothing uses."""
    rtype = cluster.type_for("apps", "v1", "controllerrevisions")
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", 10))
    unused = [r for r in sorted(revisions, key=_number) if r["metadata"]["name"] not in live]
    for revision in unused[: max(len(unused) - limit, 0)]:
        with contextlib.suppress(api_status.NotFound):
            cluster.delete(
                rtype, owner["metadata"]["namespace"], revision["metadata"]["name"], DeleteOptions()
            )


def _number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def _owned_by(obj: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or ())
