"""PodDisruptionBudgets: how many of the selected pods may be disrupted right now.

As kube-controller-manager's disruption controller: `expectedPods` is the number
of selected pods (minAvailable as a number) or the replicas of the controllers
owning them (a percentage, or maxUnavailable — percentages round up);
`desiredHealthy` follows from it; `currentHealthy` counts Ready pods that are not
being deleted and not recently evicted (`disruptedPods`, kept for two simulated
minutes); `disruptionsAllowed` is the difference, never negative. The
DisruptionAllowed condition says SufficientPods or InsufficientPods (SyncFailed
when a selected pod has no controller with a scale). The eviction endpoint reads
`disruptionsAllowed`.

Must never: evict or delete anything itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.workload_common import (
    DEPLOYMENT,
    MANAGER,
    PDB,
    POD,
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    STATEFUL_SET,
    BadIntOrPercent,
    OwnerIndex,
    controller_ref,
    copy_obj,
    is_ready,
    labels_of,
    parse_time,
    scaled_value,
    selector,
    set_condition,
    spec_seconds,
)
from stackwright.localcluster.store import Change, Obj

#: How long an evicted pod stays out of currentHealthy if it is not deleted (DeletionTimeout).
DELETION_TIMEOUT = 120.0

_SCALED_KINDS = {DEPLOYMENT, REPLICA_SET, REPLICATION_CONTROLLER, STATEFUL_SET}


class _NoScale(Exception):
    pass


class DisruptionController(Controller):
    name = "disruption-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "controllermanager")
        self.pdbs = cluster.type_for("policy", "v1", "poddisruptionbudgets")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == PDB:
            return [(change.namespace, change.name)]
        if change.key not in _SCALED_KINDS and change.key != POD:
            return []
        budgets = self.index.in_namespace(PDB, change.namespace)
        if not budgets:
            return []
        if change.key != POD:
            return [(change.namespace, b["metadata"]["name"]) for b in budgets]
        keys: list[Hashable] = []
        for budget in budgets:
            sel = selector((budget.get("spec") or {}).get("selector"))
            if any(
                obj is not None and sel.matches(labels_of(obj)) for obj in (change.obj, change.old)
            ):
                keys.append((change.namespace, budget["metadata"]["name"]))
        return keys

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, b["metadata"]["name"])
            for ns in self.index.namespaces(PDB)
            for b in self.index.in_namespace(PDB, ns)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        pdb = self.cluster.store.get(PDB, namespace, name)
        if pdb is None or pdb["metadata"].get("deletionTimestamp"):
            return
        spec = pdb.get("spec") or {}
        sel = selector(spec.get("selector"))
        pods = [p for p in self.index.in_namespace(POD, namespace) if sel.matches(labels_of(p))]
        old: dict[str, Any] = pdb.get("status") or {}
        status: dict[str, Any] = copy_obj(old)
        conditions: list[dict[str, Any]] = status.setdefault("conditions", [])
        now = self.cluster.clock()
        now_text = timestamp(now)
        status["observedGeneration"] = pdb["metadata"].get("generation", 1)
        try:
            expected, desired = self._expected(spec, pods)
        except (_NoScale, BadIntOrPercent) as exc:
            self.events.record(
                pdb,
                WARNING,
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {exc}",
            )
            status["disruptionsAllowed"] = 0
            set_condition(
                conditions, "DisruptionAllowed", "False", "SyncFailed", str(exc), now_text
            )
            self._write(pdb, status)
            return
        disrupted = self._disrupted(key, status.get("disruptedPods") or {}, pods, now)
        healthy = sum(
            1 for p in pods
            if is_ready(p) and not p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] not in disrupted
        )  # fmt: skip
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status.update(
            {
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": expected,
                "disruptionsAllowed": allowed,
            }
        )
        if disrupted:
            status["disruptedPods"] = disrupted
        else:
            status.pop("disruptedPods", None)
        if allowed > 0:
            set_condition(conditions, "DisruptionAllowed", "True", "SufficientPods", "", now_text)
        else:
            set_condition(
                conditions, "DisruptionAllowed", "False", "InsufficientPods", "", now_text
            )
        self._write(pdb, status)

    def _expected(self, spec: dict[str, Any], pods: list[Obj]) -> tuple[int, int]:
        """getExpectedPodCount: (expectedPods, desiredHealthy)."""
        min_available = spec.get("minAvailable")
        max_unavailable = spec.get("maxUnavailable")
        if max_unavailable is None and isinstance(min_available, int):
            return len(pods), min_available
        expected = self._expected_scale(pods)
        if max_unavailable is not None:
            unavailable = scaled_value(max_unavailable, expected, round_up=True)
            return expected, max(expected - unavailable, 0)
        if min_available is not None:
            return expected, scaled_value(min_available, expected, round_up=True)
        return expected, 0

    def _expected_scale(self, pods: list[Obj]) -> int:
        """The replicas of every controller owning a selected pod, each counted once."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                raise _NoScale(f'found no controller ref for pod "{pod["metadata"]["name"]}"')
            namespace = pod["metadata"]["namespace"]
            kind = ref.get("kind")
            owner: Obj | None = None
            if kind == "ReplicaSet":
                owner = self.cluster.store.get(REPLICA_SET, namespace, str(ref.get("name")))
                parent = controller_ref(owner) if owner is not None else None
                if owner is not None and parent is not None and parent.get("kind") == "Deployment":
                    owner = (
                        self.cluster.store.get(DEPLOYMENT, namespace, str(parent.get("name")))
                        or owner
                    )
            elif kind == "ReplicationController":
                owner = self.cluster.store.get(
                    REPLICATION_CONTROLLER, namespace, str(ref.get("name"))
                )
            elif kind == "StatefulSet":
                owner = self.cluster.store.get(STATEFUL_SET, namespace, str(ref.get("name")))
            else:
                raise _NoScale(f"{kind}s does not implement the scale subresource")
            if owner is None:
                raise _NoScale(f'{str(kind).lower()}s "{ref.get("name")}" not found')
            scales[owner["metadata"]["uid"]] = int((owner.get("spec") or {}).get("replicas", 1))
        return sum(scales.values())

    def _disrupted(
        self, key: Hashable, recorded: dict[str, str], pods: list[Obj], now: Any
    ) -> dict[str, str]:
        """disruptedPods still pending: evicted, not yet deleted, within the deletion timeout."""
        by_name = {p["metadata"]["name"]: p for p in pods}
        kept: dict[str, str] = {}
        timeout = spec_seconds(self.pace, DELETION_TIMEOUT)
        for name, when in recorded.items():
            pod = by_name.get(name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            since = parse_time(when)
            if since is None:
                continue
            left = (since - now).total_seconds() + timeout
            if left <= 0:
                continue
            kept[name] = when
            # The eviction may never be followed by a deletion: count the pod again then.
            self.enqueue_after(key, left + 0.05)
        return kept

    def _write(self, pdb: Obj, status: dict[str, Any]) -> None:
        if (pdb.get("status") or {}) == status:
            return
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.pdbs, pdb["metadata"]["namespace"], pdb["metadata"]["name"], {**pdb, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip


__all__ = ["DisruptionController"]
