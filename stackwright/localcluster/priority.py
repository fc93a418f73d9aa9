"""The Priority admission plugin, and the PriorityClasses every cluster starts with.

As kube-apiserver's plugin/pkg/admission/priority: a Pod's creation (a dry run's too)
resolves `spec.priorityClassName` to the class's `value` in `spec.priority` and its
`preemptionPolicy` in `spec.preemptionPolicy`; a pod naming no class gets the
`globalDefault` one (its name filled in), or priority 0 and PreemptLowerPriority when no
class is the default. A class that does not exist refuses the pod in the plugin's words
(`pods "web" is forbidden: no PriorityClass with name high was found`, 403), and so does
a pod stating a `priority` or a `preemptionPolicy` other than its class gives. A pod's
update keeps what its creation resolved. A PriorityClass marked `globalDefault` is
refused while another class is (`PriorityClass low is already marked as default. Only
one default can exist`). The classes' own rules (a user's value at most 1000000000,
`system-` names reserved, value and preemptionPolicy immutable) are validation's
(validation.py); deleting a system class is refused (cluster.py), as upstream's storage
refuses it.

`system-node-critical` and `system-cluster-critical` exist from the cluster's start, as
kube-apiserver's scheduling/bootstrap-system-priority-classes hook makes them. Since
Kubernetes 1.17 a pod in any namespace may name them (a ResourceQuota scoped to them is
how an administrator confines them); so does this cluster.

Must never: list the classes for a write. A pod's class is one look-up by name, and the
`globalDefault` classes are kept from the store's committed changes.
"""

from __future__ import annotations

from stackwright.localcluster import status
from stackwright.localcluster.store import DELETED, Change, Obj, Store
from stackwright.localcluster.validation import SYSTEM_PRIORITY_CLASSES

__all__ = ["CLASS_TYPE", "SYSTEM_CLASSES", "Priorities", "system_class_deleted"]

_GROUP = "scheduling.k8s.io"
CLASS_TYPE = (_GROUP, "priorityclasses")
POD_TYPE = ("", "pods")
#: A pod's priority when it names no class and none is the default
#: (scheduling.DefaultPriorityWhenNoDefaultClassExists), and its preemption policy.
_NO_CLASS = (0, "PreemptLowerPriority")
#: What the bootstrap hook writes of each system class beside its value.
_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their "
    "current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, "
    "but can be moved to another node if necessary.",
}
#: schedulingapiv1.SystemPriorityClasses, as the bootstrap hook creates them.
SYSTEM_CLASSES: tuple[Obj, ...] = tuple(
    {
        "apiVersion": f"{_GROUP}/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "description": _DESCRIPTIONS[name],
    }
    for name, value in SYSTEM_PRIORITY_CLASSES.items()
)


def system_class_deleted(name: str) -> status.Forbidden | None:
    """The refusal of a DELETE of a system class (the PriorityClass storage's Delete)."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return None
    return status.admission_forbidden(
        "priorityclasses", {"name": name},
        "this is a system priority class and cannot be deleted", group=_GROUP,
    )  # fmt: skip


class Priorities:
    """The Priority plugin over a store: the `globalDefault` classes (name → value) kept
    from its committed changes (a store listener), every other class read by its key."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._defaults: dict[str, int] = {}
        for klass in store.items(CLASS_TYPE):
            self._note(klass)
        store.add_listener(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.key != CLASS_TYPE:
            return
        self._defaults.pop(change.name, None)
        if change.type != DELETED:
            self._note(change.obj)

    def _note(self, klass: Obj) -> None:
        if klass.get("globalDefault") is True:
            self._defaults[klass["metadata"]["name"]] = _value(klass)

    def default_class(self) -> Obj | None:
        """getDefaultPriorityClass: the `globalDefault` class, the lowest-valued one when
        several are (two written at once can both pass admission)."""
        if not self._defaults:
            return None
        name = min(self._defaults, key=lambda n: (self._defaults[n], n))
        return self.store.get(CLASS_TYPE, "", name)

    # --- admission ------------------------------------------------------------------------

    def admit_pod(self, old: Obj | None, pod: Obj) -> None:
        """Admit (the mutating half): resolve a new pod's priority in place, or keep an
        updated pod's (an update that drops them would otherwise change the spec)."""
        spec = pod.setdefault("spec", {})
        if old is not None:
            old_spec = old.get("spec") or {}
            for field in ("priority", "preemptionPolicy"):
                if spec.get(field) is None and old_spec.get(field) is not None:
                    spec[field] = old_spec[field]
            return
        meta = pod["metadata"]
        name = spec.get("priorityClassName") or ""
        if name:
            klass = self.store.get(CLASS_TYPE, "", name)
            if klass is None:
                raise status.admission_forbidden(
                    "pods", meta, f"no PriorityClass with name {name} was found"
                )
        else:
            klass = self.default_class()
            if klass is not None:
                spec["priorityClassName"] = klass["metadata"]["name"]
        value, policy = (_value(klass), klass.get("preemptionPolicy")) if klass else _NO_CLASS
        given = spec.get("priority")
        if given is not None and given != value:
            raise status.admission_forbidden(
                "pods", meta,
                f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass name",
            )  # fmt: skip
        spec["priority"] = value
        if policy is None:
            return
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise status.admission_forbidden(
                "pods", meta,
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
                f"pod spec; priority admission controller computed {policy} from the given "
                "PriorityClass name",
            )  # fmt: skip
        spec["preemptionPolicy"] = policy

    def validate_class(self, old: Obj | None, klass: Obj) -> None:
        """Validate (the validating half, after the class's own validation): one
        `globalDefault` class at most; the default itself may be written again."""
        if klass.get("globalDefault") is not True:
            return
        current = self.default_class()
        if current is None:
            return
        name = current["metadata"]["name"]
        if old is None or name != klass["metadata"]["name"]:
            raise status.admission_forbidden(
                "priorityclasses", klass["metadata"],
                f"PriorityClass {name} is already marked as default. Only one default can exist",
                group=_GROUP,
            )  # fmt: skip


def _value(klass: Obj) -> int:
    return int(klass.get("value") or 0)
