"""Workloads that keep a ConfigMap's or Secret's former values after a run changes its data.

A container reads the ConfigMaps and Secrets of its environment (`envFrom`, env's
`valueFrom`) once, as it starts. Pulumi replaces a ConfigMap (or Secret) whose data
changes, so an auto-named one gets a new name and the workloads naming it roll;
Stackwright updates it in place, as `kubectl apply` and Helm do, so a workload whose pod
template this run leaves as it is keeps running with the former values. A run says so on
the workload's step, naming what to write to roll it. Planning only: no I/O.

Must never: warn of a workload whose pods this run restarts anyway (its template
changes), nor of one that only mounts the data as a volume (the kubelet updates it), nor
of one whose env reads only keys the run leaves as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackwright.engine.graph import environment_reads
from stackwright.engine.plan import Step
from stackwright.model import Op
from stackwright.sdk.spelling import PYTHON, Spelling

#: (provider URN, kind, id) of a ConfigMap or Secret: its id `namespace/name`.
ObjectKey = tuple[str, str, str]

#: Kinds whose data a container's environment reads, and the fields that hold it.
DATA_FIELDS: Mapping[str, tuple[str, ...]] = {
    "ConfigMap": ("data", "binaryData"),
    "Secret": ("data", "stringData"),
}

#: Kinds whose pods run from a template that a change of rolls; a Job's or CronJob's new
#: pods read the data afresh, and a bare Pod is never restarted by its controller.
ROLLED_FROM_TEMPLATE = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"})


#: What a run changes of a ConfigMap's or Secret's data: (field, key) pairs, the key None
#: for the field as a whole (`data` added or removed).
DataChanges = tuple[tuple[str, str | None], ...]


def data_updated(step: Step) -> tuple[ObjectKey, DataChanges] | None:
    """The ConfigMap or Secret whose data `step` changes in place, with what of it changes
    (`("data", "MODE")`, …), or None."""
    if step.op is not Op.UPDATE or step.new is None:
        return None
    kind = str(step.new.inputs.get("kind"))
    fields = DATA_FIELDS.get(kind, ())
    keys = [change.keys or tuple(change.path.split(".", 1)) for change in step.changes]
    changed = tuple(
        (str(k[0]), str(k[1]) if len(k) > 1 else None) for k in keys if k and k[0] in fields
    )
    return ((step.new.provider, kind, step.new.id), changed) if changed else None


def stale_readers(step: Step, updated: Mapping[ObjectKey, DataChanges]) -> dict[ObjectKey, str]:
    """Those of `updated` that the workload of `step` reads into its environment while
    `step` leaves its pod template as it is (so its running pods keep the former values),
    each with the field of it that changes."""
    new = step.new
    if new is None or step.op not in (Op.SAME, Op.UPDATE) or not updated:
        return {}
    if str(new.inputs.get("kind")) not in ROLLED_FROM_TEMPLATE:
        return {}
    if any(change.path.startswith("spec.template") for change in step.changes):
        return {}
    own_namespace = new.id.rpartition("/")[0]
    stale: dict[ObjectKey, str] = {}
    for (namespace, kind, name), read in environment_reads(new.inputs).items():
        key = (new.provider, kind, f"{namespace or own_namespace}/{name}")
        # A Secret's `stringData` key is read as its `data` key of the same name.
        found = [f for f, k in updated.get(key, ()) if read is None or k is None or k in read]
        if found:
            stale[key] = found[0]
    return dict(sorted(stale.items()))


def notice(stale: Mapping[ObjectKey, str], spelling: Spelling = PYTHON) -> str:
    """The warning on a workload that keeps the `stale` objects' former values, naming the
    option as the program's language (`spelling`) does."""
    named = ", ".join(f"{kind} {id_.rpartition('/')[2]}" for _, kind, id_ in stale)
    option = spelling.setting("replace_on_changes", sorted(set(stale.values())))
    return (
        f"its pods read {named} into their environment as they start, and this run changes "
        "that data but not the pod template: running pods keep the former values until they "
        "restart (Pulumi replaces a ConfigMap or Secret whose data changes, so a new name "
        f"rolls them; to do so here, give it {option} and no fixed "
        "name, or change the pod template, e.g. an annotation holding a hash of the data)"
    )
