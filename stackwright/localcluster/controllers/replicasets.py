"""ReplicaSets (and ReplicationControllers): keep `replicas` pods of a template running.

A port of `pkg/controller/replicaset`, which serves both kinds: the pods a set
controls, plus orphans its selector matches (adopted) minus those it no longer
matches (released); too few active pods and it creates `<name>-<5 random>` pods
with a controller reference, too many and it deletes the cheapest first
(unscheduled, then pending, then not ready, then most recently ready); failed or
deleted pods no longer count, so they are replaced. Status carries replicas,
fullyLabeledReplicas, readyReplicas, availableReplicas (after minReadySeconds,
counted in simulated seconds), observedGeneration and a ReplicaFailure condition
when pods cannot be created.

Must never: create or delete pods for a set that is being deleted, or count a
terminating or finished pod as one of its replicas.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.workload_common import (
    MANAGER,
    POD,
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    OwnerIndex,
    available_in,
    claim_owned,
    deletion_rank,
    is_active,
    is_ready,
    labels_of,
    map_selector,
    now_text,
    omit_zero,
    pod_from_template,
    pod_owner_keys,
    selector,
    set_condition,
    spec_seconds,
)
from stackwright.localcluster.selectors import LabelSelector
from stackwright.localcluster.store import Change, Obj, TypeKey

#: At most this many pods created or deleted in one pass (the controller's burstReplicas).
BURST = 500


@dataclass(frozen=True)
class _Kind:
    key: TypeKey
    group: str
    version: str
    plural: str
    kind: str
    component: str


REPLICA_SET_KIND = _Kind(
    REPLICA_SET, "apps", "v1", "replicasets", "ReplicaSet", "replicaset-controller"
)
REPLICATION_CONTROLLER_KIND = _Kind(
    REPLICATION_CONTROLLER,
    "",
    "v1",
    "replicationcontrollers",
    "ReplicationController",
    "replication-controller",
)


class ReplicaSetController(Controller):
    """Keeps pods for ReplicaSets; `ReplicationControllerController` reuses it for RCs."""

    name = "replicaset-controller"
    kind = REPLICA_SET_KIND

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, self.kind.component)
        self.sets = cluster.type_for(self.kind.group, self.kind.version, self.kind.plural)
        self.pods = cluster.type_for("", "v1", "pods")

    def selector_of(self, rs: Obj) -> LabelSelector:
        return selector((rs.get("spec") or {}).get("selector"))

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == self.kind.key:
            return [(change.namespace, change.name)]
        if change.key != POD:
            return []
        return list(
            pod_owner_keys(
                change,
                self.kind.kind,
                self.index.in_namespace(self.kind.key, change.namespace),
                self.selector_of,
            )
        )

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, rs["metadata"]["name"])
            for ns in self.index.namespaces(self.kind.key)
            for rs in self.index.in_namespace(self.kind.key, ns)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        rs = self.cluster.store.get(self.kind.key, namespace, name)
        if rs is None:
            return
        pods = self._claim_pods(rs)
        active = [p for p in pods if is_active(p)]
        failure: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            failure = self._manage(rs, active)
            rs = self.cluster.store.get(self.kind.key, namespace, name) or rs
            pods = self.index.owned(POD, rs["metadata"]["uid"])
            active = [p for p in pods if is_active(p)]
        self._write_status(rs, active, failure)

    # --- pods -------------------------------------------------------------------------------

    def _claim_pods(self, rs: Obj) -> list[Obj]:
        """ClaimPods: owned pods that still match, plus orphans that match (adopted)."""
        return claim_owned(self.index, POD, rs, self.selector_of(rs), self._write_pod)

    def _write_pod(self, pod: Obj) -> Obj:
        meta = pod["metadata"]
        return self.cluster.update(
            self.pods, meta["namespace"], meta["name"], pod, WriteOptions(field_manager=MANAGER)
        ).obj

    def _manage(self, rs: Obj, active: list[Obj]) -> str | None:
        """manageReplicas: create or delete pods until `replicas` are active; the failure, if any."""
        spec = rs.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
        diff = len(active) - wanted
        if diff < 0:
            return self._create_pods(rs, min(-diff, BURST))
        if diff > 0:
            doomed = sorted(active, key=deletion_rank)[: min(diff, BURST)]
            for pod in doomed:
                self._delete_pod(rs, pod)
        return None

    def _create_pods(self, rs: Obj, count: int) -> str | None:
        template = (rs.get("spec") or {}).get("template") or {}
        namespace = rs["metadata"].get("namespace", "")
        for _ in range(count):
            pod = pod_from_template(template, rs)
            try:
                created = self.cluster.create(
                    self.pods, namespace, pod, WriteOptions(field_manager=MANAGER)
                ).obj
            except api_status.AlreadyExists:
                raise Retry(0.0) from None  # a generated name taken: try again at once
            except api_status.APIError as exc:
                message = f"Error creating: {exc}"
                self.events.record(rs, WARNING, "FailedCreate", message)
                return str(exc)
            self.events.record(
                rs, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
            )
        return None

    def _delete_pod(self, rs: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            self.cluster.delete(self.pods, pod["metadata"]["namespace"], name, DeleteOptions())
        except api_status.NotFound:
            return
        self.events.record(rs, NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")

    # --- status ------------------------------------------------------------------------------

    def _write_status(self, rs: Obj, active: list[Obj], failure: str | None) -> None:
        """calculateStatus: counts over active pods; ReplicaFailure while creating fails."""
        spec = rs.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = spec_seconds(self.pace, float(spec.get("minReadySeconds") or 0))
        now = self.cluster.clock()
        ready = available = fully_labeled = 0
        soonest: float | None = None
        for pod in active:
            labels = labels_of(pod)
            if all(labels.get(k) == v for k, v in template_labels.items()):
                fully_labeled += 1
            if is_ready(pod):
                ready += 1
                left = available_in(pod, min_ready, now, self.index.moments)
                if left == 0.0:
                    available += 1
                elif left is not None:
                    soonest = left if soonest is None else min(soonest, left)
        old: dict[str, Any] = rs.get("status") or {}
        conditions = [dict(c) for c in old.get("conditions") or []]
        if failure is not None:
            set_condition(
                conditions,
                "ReplicaFailure",
                "True",
                "FailedCreate",
                failure,
                now_text(self.cluster),
            )
        elif int(spec.get("replicas", 1)) <= len(active):
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        status: dict[str, Any] = {
            "replicas": len(active),
            "fullyLabeledReplicas": fully_labeled,
            "readyReplicas": ready,
            "availableReplicas": available,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        omit_zero(
            status,
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        )
        if conditions:
            status["conditions"] = conditions
        if soonest is not None:
            # A ready pod turns available once minReadySeconds pass: look again then.
            self.enqueue_after(
                (rs["metadata"]["namespace"], rs["metadata"]["name"]), soonest + 0.05
            )
        if old == status:
            return
        meta = rs["metadata"]
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.sets, meta["namespace"], meta["name"], {**rs, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip
        if failure is not None:
            raise Retry(spec_seconds(self.pace, 10.0))


class ReplicationControllerController(ReplicaSetController):
    """ReplicationControllers: the same controller over core/v1's older kind and map selector."""

    name = "replication-controller"
    kind = REPLICATION_CONTROLLER_KIND

    def selector_of(self, rs: Obj) -> LabelSelector:
        return map_selector((rs.get("spec") or {}).get("selector"))


__all__ = ["ReplicaSetController", "ReplicationControllerController"]
