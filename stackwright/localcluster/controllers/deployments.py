"""Deployments: ReplicaSets per pod template, rolled as kube-controller-manager rolls them.

A port of `pkg/controller/deployment`: the ReplicaSet whose template equals the
Deployment's is the new one (`<deploy>-<pod-template-hash>`, created on demand);
the others are old. RollingUpdate scales the new one up within `maxSurge` and the
old ones down while keeping `replicas - maxUnavailable` pods available; Recreate
scales the old ones to zero, waits for their pods to be gone, then scales up the
new one. A scaling event (or a paused Deployment) scales proportionally without
rolling. Reverting the template finds the old ReplicaSet again and gives it the
next revision (rollback). Status carries the replica counts and the Available and
Progressing conditions; `progressDeadlineSeconds` without progress (counted in
simulated seconds, `workload_common.SECOND`) turns Progressing False with
ProgressDeadlineExceeded.

Must never: touch pods (the ReplicaSet controller owns them), or write a status or
a ReplicaSet that would not change.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.controllers.events import NORMAL, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.workload_common import (
    DEPLOYMENT,
    MANAGER,
    POD,
    REPLICA_SET,
    BadIntOrPercent,
    OwnerIndex,
    claim_owned,
    controller_key,
    controller_ref,
    copy_obj,
    labels_of,
    omit_zero,
    owner_reference,
    resolve_fenceposts,
    selector,
    spec_seconds,
    template_hash,
)
from stackwright.localcluster.store import DELETED, Change, Obj

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"

#: Deployment annotations never copied onto its ReplicaSets (annotationsToSkip).
_SKIP_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)

# Progressing reasons, as deploymentutil names them.
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"


class DeploymentController(Controller):
    name = "deployment-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "deployment-controller")
        self.deployments = cluster.type_for("apps", "v1", "deployments")
        self.replica_sets = cluster.type_for("apps", "v1", "replicasets")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == DEPLOYMENT:
            return [(change.namespace, change.name)]
        if change.key == REPLICA_SET:
            keys: list[Hashable] = []
            for obj in (change.obj, change.old):
                if obj is None:
                    continue
                key = controller_key(obj, "Deployment")
                if key is not None and key not in keys:
                    keys.append(key)
            if not keys and change.type != DELETED and controller_ref(change.obj) is None:
                keys = self._adopters(change.obj)
            return keys
        if change.key == POD and change.type == DELETED:
            # Recreate waits for every old pod to be gone before scaling up.
            rs_key = controller_key(change.obj, "ReplicaSet")
            if rs_key is None:
                return []
            rs = self.cluster.store.get(REPLICA_SET, *rs_key)
            key = controller_key(rs, "Deployment") if rs is not None else None
            if key is None:
                return []
            deployment = self.cluster.store.get(DEPLOYMENT, *key)
            strategy = ((deployment or {}).get("spec") or {}).get("strategy") or {}
            if strategy.get("type") == "Recreate":
                return [key]
        return []

    def _adopters(self, rs: Obj) -> list[Hashable]:
        namespace = rs["metadata"].get("namespace", "")
        return [
            (namespace, d["metadata"]["name"])
            for d in self.index.in_namespace(DEPLOYMENT, namespace)
            if selector(d["spec"].get("selector")).matches(labels_of(rs))
        ]

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, d["metadata"]["name"])
            for ns in self.index.namespaces(DEPLOYMENT)
            for d in self.index.in_namespace(DEPLOYMENT, ns)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        deployment = self.cluster.store.get(DEPLOYMENT, namespace, name)
        if deployment is None:
            return
        _Sync(self, deployment).run()


class _Sync:
    """One reconcile of one Deployment: its ReplicaSets, scaling, status (syncDeployment)."""

    def __init__(self, controller: DeploymentController, deployment: Obj) -> None:
        self.c = controller
        self.cluster = controller.cluster
        self.d = deployment
        self.spec: dict[str, Any] = deployment.get("spec") or {}
        self.key = (deployment["metadata"].get("namespace", ""), deployment["metadata"]["name"])
        self.now = self.cluster.clock()
        stored = deployment.get("status") or {}
        self.old_status: dict[str, Any] = stored
        # The status being worked out: conditions change along the way, counts at the end.
        self.status: dict[str, Any] = copy_obj(stored) if stored else {}
        self.status.setdefault("conditions", [])
        self.revision: str | None = None
        self.rss: list[Obj] = []

    # --- the top level ------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.max_surge = self._max_surge()
            self.max_unavailable = self._max_unavailable()
        except BadIntOrPercent:
            return  # validation rejects such values; a stored one just stops the rollout
        self.rss = self._claim_replica_sets()
        if self.d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = self._new_and_old(create=False)
            self._sync_status(new_rs, old_rss, rollout=False)
            return
        self._check_paused_conditions()
        if self.spec.get("paused"):
            self._sync_scaling(cleanup=True)
            return
        if self._is_scaling_event():
            self._sync_scaling(cleanup=False)
            return
        if (self.spec.get("strategy") or {}).get("type") == "Recreate":
            self._rollout_recreate()
        else:
            self._rollout_rolling()

    def _sync_scaling(self, *, cleanup: bool) -> None:
        """sync(): scale proportionally, without starting a rollout."""
        new_rs, old_rss = self._new_and_old(create=False)
        self._scale(new_rs, old_rss)
        if cleanup:
            self._cleanup(old_rss)
        self._sync_status(new_rs, old_rss, rollout=False)

    # --- replica sets ---------------------------------------------------------------------

    def _claim_replica_sets(self) -> list[Obj]:
        """The Deployment's ReplicaSets: those it controls, adopting orphans its selector matches."""
        return claim_owned(
            self.c.index, REPLICA_SET, self.d, selector(self.spec.get("selector")), self._write_rs
        )

    def _write_rs(self, rs: Obj) -> Obj:
        meta = rs["metadata"]
        written = self.cluster.update(
            self.c.replica_sets,
            meta["namespace"],
            meta["name"],
            rs,
            WriteOptions(field_manager=MANAGER),
        ).obj
        self.rss = [written if r["metadata"]["name"] == meta["name"] else r for r in self.rss]
        return written

    def _new_and_old(self, *, create: bool) -> tuple[Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision: the new ReplicaSet (revision synced) and the old ones."""
        found = _find_new(self.d, self.rss)
        old = [
            rs
            for rs in self.rss
            if found is None or rs["metadata"]["uid"] != found["metadata"]["uid"]
        ]
        new_rs = self._new_replica_set(found, old, create=create)
        return new_rs, [
            rs
            for rs in self.rss
            if new_rs is None or rs["metadata"]["uid"] != new_rs["metadata"]["uid"]
        ]

    def _new_replica_set(self, existing: Obj | None, old: list[Obj], *, create: bool) -> Obj | None:
        max_old = max((_revision(rs) for rs in old), default=0)
        new_revision = str(max_old + 1)
        if existing is not None:
            updated = copy_obj(existing)
            changed = self._set_new_rs_annotations(updated, new_revision, exists=True)
            if changed or (updated["spec"].get("minReadySeconds") or 0) != (
                self.spec.get("minReadySeconds") or 0
            ):
                updated["spec"]["minReadySeconds"] = self.spec.get("minReadySeconds") or 0
                existing = self._write_rs(updated)
            self.revision = (existing["metadata"].get("annotations") or {}).get(REVISION)
            if self._has_deadline() and _cond(self.status, "Progressing") is None:
                self._set_condition(
                    "Progressing",
                    "True",
                    FOUND_NEW_RS,
                    f'Found new replica set "{existing["metadata"]["name"]}"',
                )
            return existing
        if not create:
            return None
        return self._create_replica_set(new_revision)

    def _create_replica_set(self, new_revision: str) -> Obj:
        meta = self.d["metadata"]
        collisions = self.status.get("collisionCount")
        pod_hash = template_hash(self.spec.get("template") or {}, collisions)
        template = copy_obj(self.spec.get("template") or {})
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        rs_selector = copy_obj(self.spec.get("selector") or {})
        rs_selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta["namespace"],
                "labels": dict(template["metadata"]["labels"]),
                "ownerReferences": [owner_reference(self.d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": self.spec.get("minReadySeconds") or 0,
                "selector": rs_selector,
                "template": template,
            },
        }
        rs["spec"]["replicas"] = self._new_rs_replicas([*self.rss, rs], rs)
        self._set_new_rs_annotations(rs, new_revision, exists=False)
        try:
            created = self.cluster.create(
                self.c.replica_sets, meta["namespace"], rs, WriteOptions(field_manager=MANAGER)
            ).obj
        except api_status.AlreadyExists:
            clash = self.cluster.store.get(REPLICA_SET, meta["namespace"], rs["metadata"]["name"])
            ref = controller_ref(clash) if clash is not None else None
            if (
                clash is not None
                and ref is not None
                and ref.get("uid") == meta["uid"]
                and _equal_ignore_hash(
                    clash["spec"].get("template") or {}, self.spec.get("template") or {}
                )
            ):
                return clash  # ours already: the index will hand it over next time
            # A hash collision: count it, so the next hash differs (collisionCount).
            self.status["collisionCount"] = int(collisions or 0) + 1
            self._write_status(self.status)
            raise Retry(0.0) from None
        self.rss.append(created)
        replicas = created["spec"]["replicas"]
        if replicas > 0:
            self.c.events.record(
                self.d,
                NORMAL,
                "ScalingReplicaSet",
                f"Scaled up replica set {created['metadata']['name']} from 0 to {replicas}",
            )
        if self._has_deadline():
            self._set_condition(
                "Progressing",
                "True",
                NEW_RS_CREATED,
                f'Created new replica set "{created["metadata"]["name"]}"',
            )
        self.revision = new_revision
        return created

    def _set_new_rs_annotations(self, rs: Obj, new_revision: str, *, exists: bool) -> bool:
        """SetNewReplicaSetAnnotations: copied annotations, the revision (and its history)."""
        annotations = rs["metadata"].setdefault("annotations", {})
        changed = False
        for key, value in (self.d["metadata"].get("annotations") or {}).items():
            if key in _SKIP_ANNOTATIONS or annotations.get(key) == value:
                continue
            annotations[key] = value
            changed = True
        old_revision = annotations.get(REVISION, "")
        old_number = _int(old_revision)
        if old_number < int(new_revision):
            annotations[REVISION] = new_revision
            changed = True
            if old_revision:
                # The template came back (a rollback): remember the revisions it had.
                history = annotations.get(REVISION_HISTORY, "")
                annotations[REVISION_HISTORY] = (
                    f"{history},{old_revision}" if history else old_revision
                )
        if not exists and self._set_replicas_annotations(rs):
            changed = True
        if not annotations:
            del rs["metadata"]["annotations"]
        return changed

    def _set_replicas_annotations(self, rs: Obj) -> bool:
        replicas = self._replicas()
        annotations = rs["metadata"].setdefault("annotations", {})
        wanted = {DESIRED_REPLICAS: str(replicas), MAX_REPLICAS: str(replicas + self.max_surge)}
        if all(annotations.get(k) == v for k, v in wanted.items()):
            return False
        annotations.update(wanted)
        return True

    def _scale_rs(self, rs: Obj, replicas: int, operation: str = "") -> Obj:
        """scaleReplicaSetAndRecordEvent: new size and replica annotations, one write."""
        current = int(rs["spec"].get("replicas", 1))
        updated = copy_obj(rs)
        size_changed = current != replicas
        annotations_changed = self._set_replicas_annotations(updated)
        if not size_changed and not annotations_changed:
            return rs
        updated["spec"]["replicas"] = replicas
        written = self._write_rs(updated)
        if size_changed:
            verb = operation or ("up" if current < replicas else "down")
            self.c.events.record(
                self.d,
                NORMAL,
                "ScalingReplicaSet",
                f"Scaled {verb} replica set {rs['metadata']['name']} from {current} to {replicas}",
            )
        return written

    def _latest(self, rs: Obj) -> Obj:
        for candidate in self.rss:
            if candidate["metadata"]["uid"] == rs["metadata"]["uid"]:
                return candidate
        return rs

    # --- rollouts ------------------------------------------------------------------------------

    def _rollout_rolling(self) -> None:
        new_rs, old_rss = self._new_and_old(create=True)
        assert new_rs is not None
        if self._reconcile_new(new_rs):
            self._sync_status(
                self._latest(new_rs), [self._latest(r) for r in old_rss], rollout=True
            )
            return
        new_rs = self._latest(new_rs)
        if self._reconcile_old(new_rs, [r for r in old_rss if _replicas(r) > 0]):
            self._sync_status(
                self._latest(new_rs), [self._latest(r) for r in old_rss], rollout=True
            )
            return
        old_rss = [self._latest(r) for r in old_rss]
        if self._complete(self.old_status):
            self._cleanup(old_rss)
        self._sync_status(self._latest(new_rs), [self._latest(r) for r in old_rss], rollout=True)

    def _reconcile_new(self, new_rs: Obj) -> bool:
        """reconcileNewReplicaSet: grow the new ReplicaSet within maxSurge; True if it scaled."""
        replicas = self._replicas()
        current = _replicas(new_rs)
        if current == replicas:
            return False
        wanted = replicas if current > replicas else self._new_rs_replicas(self.rss, new_rs)
        self._scale_rs(new_rs, wanted)
        return wanted != current

    def _new_rs_replicas(self, all_rss: list[Obj], new_rs: Obj) -> int:
        """NewRSNewReplicas: how far the new ReplicaSet may grow now."""
        replicas = self._replicas()
        if (self.spec.get("strategy") or {}).get("type") == "Recreate":
            return replicas
        current_total = sum(_replicas(rs) for rs in all_rss)
        max_total = replicas + self.max_surge
        if current_total >= max_total:
            return _replicas(new_rs)
        scale_up = min(max_total - current_total, replicas - _replicas(new_rs))
        return _replicas(new_rs) + scale_up

    def _reconcile_old(self, new_rs: Obj, old_rss: list[Obj]) -> bool:
        if sum(_replicas(rs) for rs in old_rss) == 0:
            return False
        all_count = sum(_replicas(rs) for rs in [*old_rss, new_rs])
        min_available = self._replicas() - self.max_unavailable
        new_unavailable = _replicas(new_rs) - _available(new_rs)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        # First the old pods that are not available anyway: scaling those down costs nothing.
        old_rss = sorted(old_rss, key=_by_creation)
        cleaned = 0
        for index, rs in enumerate(old_rss):
            if cleaned >= max_scaled_down:
                break
            unhealthy = _replicas(rs) - _available(rs)
            if _replicas(rs) == 0 or unhealthy <= 0:
                continue
            count = min(max_scaled_down - cleaned, unhealthy)
            old_rss[index] = self._scale_rs(rs, _replicas(rs) - count)
            cleaned += count
        # Then available ones, while more than minAvailable stay available.
        available = sum(_available(rs) for rs in [*old_rss, self._latest(new_rs)])
        scaled = 0
        if available > min_available:
            budget = available - min_available
            for rs in old_rss:
                if scaled >= budget:
                    break
                if _replicas(rs) == 0:
                    continue
                count = min(_replicas(rs), budget - scaled)
                self._scale_rs(rs, _replicas(rs) - count)
                scaled += count
        return cleaned + scaled > 0

    def _rollout_recreate(self) -> None:
        new_rs, old_rss = self._new_and_old(create=False)
        scaled_down = False
        for rs in old_rss:
            if _replicas(rs) > 0:
                self._scale_rs(rs, 0)
                scaled_down = True
        old_rss = [self._latest(r) for r in old_rss]
        if scaled_down or self._old_pods_running(new_rs, old_rss):
            self._sync_status(new_rs, old_rss, rollout=True)
            return
        if new_rs is None:
            new_rs, old_rss = self._new_and_old(create=True)
            assert new_rs is not None
        self._scale_rs(new_rs, self._replicas())
        new_rs = self._latest(new_rs)
        if self._complete(self.old_status):
            self._cleanup(old_rss)
        self._sync_status(new_rs, old_rss, rollout=True)

    def _old_pods_running(self, new_rs: Obj | None, old_rss: list[Obj]) -> bool:
        if sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in old_rss) > 0:
            return True
        for rs in old_rss:
            if new_rs is not None and rs["metadata"]["uid"] == new_rs["metadata"]["uid"]:
                continue
            for pod in self.c.index.owned(POD, rs["metadata"]["uid"]):
                if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                    return True
        return False

    # --- scaling without a rollout ----------------------------------------------------------

    def _is_scaling_event(self) -> bool:
        new_rs, old_rss = self._new_and_old(create=False)
        for rs in [*old_rss, *([new_rs] if new_rs else [])]:
            if _replicas(rs) <= 0:
                continue
            desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS)
            if desired is None:
                continue
            if _int(desired) != self._replicas():
                return True
        return False

    def _scale(self, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        replicas = self._replicas()
        latest = _active_or_latest(new_rs, old_rss)
        if latest is not None:
            if _replicas(latest) != replicas:
                self._scale_rs(latest, replicas)
            return
        if new_rs is not None and self._saturated(new_rs):
            for rs in old_rss:
                if _replicas(rs) > 0:
                    self._scale_rs(rs, 0)
            return
        if (self.spec.get("strategy") or {}).get("type") == "Recreate":
            return
        active = [rs for rs in [*old_rss, *([new_rs] if new_rs else [])] if _replicas(rs) > 0]
        allowed = replicas + self.max_surge if replicas > 0 else 0
        to_add = allowed - sum(_replicas(rs) for rs in active)
        if to_add == 0:
            return
        operation = "up" if to_add > 0 else "down"
        # Larger first; ties go to the newer when growing, the older when shrinking.
        active.sort(key=_by_creation, reverse=to_add > 0)
        active.sort(key=_replicas, reverse=True)
        sizes: dict[str, int] = {}
        added = 0
        for rs in active:
            proportion = self._proportion(rs, to_add, added)
            sizes[rs["metadata"]["name"]] = _replicas(rs) + proportion
            added += proportion
        if active and added != to_add:
            first = active[0]["metadata"]["name"]
            sizes[first] = max(sizes[first] + to_add - added, 0)
        for rs in active:
            self._scale_rs(rs, sizes[rs["metadata"]["name"]], operation)

    def _proportion(self, rs: Obj, to_add: int, added: int) -> int:
        """getProportion: this ReplicaSet's share of a scaling, by its max-replicas annotation."""
        if _replicas(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        replicas = self._replicas()
        if replicas == 0:
            fraction = -_replicas(rs)
        else:
            target = replicas + self.max_surge
            annotated = _int((rs["metadata"].get("annotations") or {}).get(MAX_REPLICAS, ""))
            if annotated <= 0:
                annotated = int(self.old_status.get("replicas") or 0)
            if annotated <= 0:
                return 0
            fraction = _round_half_away(_replicas(rs) * target / annotated) - _replicas(rs)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def _saturated(self, rs: Obj) -> bool:
        replicas = self._replicas()
        desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS)
        return (
            desired is not None
            and _int(desired) == replicas
            and _replicas(rs) == replicas
            and _available(rs) == replicas
        )

    # --- history ---------------------------------------------------------------------------------

    def _cleanup(self, old_rss: list[Obj]) -> None:
        """cleanupDeployment: delete the oldest idle ReplicaSets beyond revisionHistoryLimit."""
        limit = self.spec.get("revisionHistoryLimit")
        if limit is None:
            return
        idle = [
            rs
            for rs in old_rss
            if _replicas(rs) == 0
            and int((rs.get("status") or {}).get("replicas") or 0) == 0
            and not rs["metadata"].get("deletionTimestamp")
        ]
        excess = len(idle) - int(limit)
        if excess <= 0:
            return
        idle.sort(
            key=lambda rs: (
                _revision(rs),
                rs["metadata"].get("creationTimestamp", ""),
                rs["metadata"]["name"],
            )
        )
        for rs in idle[:excess]:
            rs_status = rs.get("status") or {}
            if int(rs["metadata"].get("generation") or 0) > int(
                rs_status.get("observedGeneration") or 0
            ):
                continue
            with contextlib.suppress(api_status.NotFound):
                self.cluster.delete(
                    self.c.replica_sets,
                    self.key[0],
                    rs["metadata"]["name"],
                    DeleteOptions(propagation="Background"),
                )
            self.rss = [r for r in self.rss if r["metadata"]["uid"] != rs["metadata"]["uid"]]

    # --- status -------------------------------------------------------------------------------------

    def _check_paused_conditions(self) -> None:
        if not self._has_deadline():
            return
        current = _cond(self.status, "Progressing")
        if current is not None and current.get("reason") == TIMED_OUT:
            return  # a reported lack of progress is not overwritten by a pause
        paused_before = current is not None and current.get("reason") == PAUSED
        if self.spec.get("paused") and not paused_before:
            self._set_condition("Progressing", "Unknown", PAUSED, "Deployment is paused")
        elif not self.spec.get("paused") and paused_before:
            self._set_condition("Progressing", "Unknown", RESUMED, "Deployment is resumed")

    def _sync_status(self, new_rs: Obj | None, old_rss: list[Obj], *, rollout: bool) -> None:
        """syncDeploymentStatus / syncRolloutStatus: counts, Available, and (rolling) Progressing."""
        all_rss = [*old_rss, *([new_rs] if new_rs else [])]
        status = self._calculate(new_rs, all_rss)
        if rollout:
            self._progress(status, new_rs)
        self._write_revision()
        self._write_status(status)
        if rollout:
            self._requeue_if_stuck(status)

    def _calculate(self, new_rs: Obj | None, all_rss: list[Obj]) -> dict[str, Any]:
        available = sum(_available(rs) for rs in all_rss)
        total = sum(_replicas(rs) for rs in all_rss)
        status: dict[str, Any] = {
            "observedGeneration": self.d["metadata"].get("generation", 1),
            "replicas": sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in all_rss),
            "updatedReplicas": int(((new_rs or {}).get("status") or {}).get("replicas") or 0),
            "readyReplicas": sum(
                int((rs.get("status") or {}).get("readyReplicas") or 0) for rs in all_rss
            ),
            "availableReplicas": available,
            "unavailableReplicas": max(total - available, 0),
            "conditions": [dict(c) for c in self.status.get("conditions") or []],
        }
        if self.status.get("collisionCount") is not None:
            status["collisionCount"] = self.status["collisionCount"]
        self.status = status
        if available >= self._replicas() - self.max_unavailable:
            self._set_condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        else:
            self._set_condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        return status

    def _progress(self, status: dict[str, Any], new_rs: Obj | None) -> None:
        if not self._has_deadline():
            _drop_cond(status, "Progressing")
            return
        current = _cond(status, "Progressing")
        complete = (
            status.get("replicas", 0) == status.get("updatedReplicas", 0)
            and current is not None
            and current.get("reason") == NEW_RS_AVAILABLE
        )
        if complete:
            return
        name = (new_rs or {}).get("metadata", {}).get("name", "")
        if self._complete(status):
            self._set_condition(
                "Progressing",
                "True",
                NEW_RS_AVAILABLE,
                f'ReplicaSet "{name}" has successfully progressed.',
            )
        elif self._progressing(status):
            # Progress made: the deadline starts over (lastUpdateTime moves, transition does not).
            now = timestamp(self.now)
            condition = _new_cond(
                "Progressing", "True", RS_UPDATED, f'ReplicaSet "{name}" is progressing.', now
            )
            self._note_progress(now)
            if current is not None:
                if current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime", now)
                _drop_cond(status, "Progressing")
            status["conditions"].append(condition)
        elif self._timed_out(status):
            self._set_condition(
                "Progressing", "False", TIMED_OUT, f'ReplicaSet "{name}" has timed out progressing.'
            )
        failure = _cond((new_rs or {}).get("status") or {}, "ReplicaFailure")
        if failure is not None:
            status["conditions"] = [
                c for c in status["conditions"] if c.get("type") != "ReplicaFailure"
            ]
            status["conditions"].append(failure)
        else:
            _drop_cond(status, "ReplicaFailure")

    def _complete(self, status: dict[str, Any]) -> bool:
        """DeploymentComplete: every replica updated and available, the latest spec observed."""
        replicas = self._replicas()
        return (
            int(status.get("updatedReplicas") or 0) == replicas
            and int(status.get("replicas") or 0) == replicas
            and int(status.get("availableReplicas") or 0) == replicas
            and int(status.get("observedGeneration") or 0)
            >= int(self.d["metadata"].get("generation") or 1)
        )

    def _progressing(self, status: dict[str, Any]) -> bool:
        """DeploymentProgressing: more updated, fewer old, more ready or more available pods."""
        old = self.old_status
        old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
        new_old = int(status.get("replicas") or 0) - int(status.get("updatedReplicas") or 0)
        return (
            int(status.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0)
            or new_old < old_old
            or int(status.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
            or int(status.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0)
        )

    def _deadline_left(self, status: dict[str, Any]) -> float | None:
        """Wall-clock seconds until progressDeadlineSeconds runs out; None when no clock runs."""
        if not self._has_deadline():
            return None
        current = _cond(status, "Progressing")
        if current is None or current.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT):
            return None
        since = self.c.index.moments.when(
            self.d["metadata"]["uid"], "progressing", current.get("lastUpdateTime")
        )
        if since is None:
            return None
        deadline = spec_seconds(self.c.pace, float(self.spec["progressDeadlineSeconds"]))
        return (since - self.now).total_seconds() + deadline

    def _timed_out(self, status: dict[str, Any]) -> bool:
        left = self._deadline_left(status)
        return left is not None and left < 0

    def _requeue_if_stuck(self, status: dict[str, Any]) -> None:
        """requeueStuckDeployment: come back when the progress deadline would pass."""
        left = self._deadline_left(status)
        if left is None or self._complete(status):
            return
        # Timestamps have whole seconds, so aim just past the moment the deadline is crossed.
        self.c.enqueue_after(self.key, max(left, 0.0) + 0.05)

    def _set_condition(self, kind: str, value: str, reason: str, message: str) -> None:
        """SetDeploymentCondition: no change for the same status and reason."""
        conditions: list[dict[str, Any]] = self.status.setdefault("conditions", [])
        current = next((c for c in conditions if c.get("type") == kind), None)
        if (
            current is not None
            and current.get("status") == value
            and current.get("reason") == reason
        ):
            return
        condition = _new_cond(kind, value, reason, message, timestamp(self.now))
        if kind == "Progressing":
            self._note_progress(condition["lastUpdateTime"])
        if current is not None and current.get("status") == value:
            condition["lastTransitionTime"] = current.get(
                "lastTransitionTime", condition["lastTransitionTime"]
            )
        conditions[:] = [c for c in conditions if c.get("type") != kind]
        conditions.append(condition)

    def _note_progress(self, text: str) -> None:
        self.c.index.moments.note(self.d["metadata"]["uid"], "progressing", text, self.now)

    def _write_revision(self) -> None:
        """The Deployment carries its new ReplicaSet's revision (SetDeploymentRevision)."""
        if self.revision is None:
            return
        annotations = self.d["metadata"].get("annotations") or {}
        if annotations.get(REVISION) == self.revision:
            return
        updated = copy_obj(self.d)
        updated["metadata"].setdefault("annotations", {})[REVISION] = self.revision
        self.d = self.cluster.update(
            self.c.deployments,
            self.key[0],
            self.key[1],
            updated,
            WriteOptions(field_manager=MANAGER),
        ).obj

    def _write_status(self, status: dict[str, Any]) -> None:
        shown = omit_zero(
            dict(status),
            "observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
            "availableReplicas", "unavailableReplicas",
        )  # fmt: skip
        if not shown.get("conditions"):
            shown.pop("conditions", None)
        if (self.d.get("status") or {}) == shown:
            return
        updated = {**self.d, "status": shown}
        self.d = self.cluster.update(
            self.c.deployments,
            self.key[0],
            self.key[1],
            updated,
            WriteOptions(field_manager=MANAGER),
            "status",
        ).obj

    # --- small facts ------------------------------------------------------------------------------

    def _replicas(self) -> int:
        replicas = self.spec.get("replicas")
        return 1 if replicas is None else int(replicas)

    def _has_deadline(self) -> bool:
        deadline = self.spec.get("progressDeadlineSeconds")
        return deadline is not None and int(deadline) != 2147483647  # MaxInt32 means "never"

    def _rolling(self) -> dict[str, Any] | None:
        strategy = self.spec.get("strategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return None
        rolling: dict[str, Any] = strategy.get("rollingUpdate") or {}
        return rolling

    def _max_surge(self) -> int:
        rolling = self._rolling()
        if rolling is None:
            return 0
        surge, _ = resolve_fenceposts(
            rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"), self._replicas()
        )
        return surge

    def _max_unavailable(self) -> int:
        rolling = self._rolling()
        if rolling is None or self._replicas() == 0:
            return 0
        _, unavailable = resolve_fenceposts(
            rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"), self._replicas()
        )
        return min(unavailable, self._replicas())


# --- deployment utilities -----------------------------------------------------------------


def max_surge_and_unavailable(deployment: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a Deployment in pods, as the rollout uses them."""
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    strategy = spec.get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0, 0
    rolling = strategy.get("rollingUpdate") or {}
    surge, unavailable = resolve_fenceposts(
        rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"), replicas
    )
    return surge, (min(unavailable, replicas) if replicas else 0)


def _find_new(deployment: Obj, rss: list[Obj]) -> Obj | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's."""
    template = (deployment.get("spec") or {}).get("template") or {}
    for rs in sorted(rss, key=_by_creation):
        if _equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template):
            return rs
    return None


def _equal_ignore_hash(a: Obj, b: Obj) -> bool:
    """EqualIgnoreHash: templates equal once the pod-template-hash label is set aside."""

    def without_hash(template: Obj) -> Obj:
        meta = dict(template.get("metadata") or {})
        labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
        if labels:
            meta["labels"] = labels
        else:
            meta.pop("labels", None)
        meta.pop("creationTimestamp", None)
        return {**template, "metadata": meta}

    return without_hash(a) == without_hash(b)


def _active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    """FindActiveOrLatest: the only ReplicaSet with pods, else the newest one, else None."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=_by_creation, reverse=True)
    active = [rs for rs in [*newest_first, *([new_rs] if new_rs else [])] if _replicas(rs) > 0]
    if not active:
        return new_rs if new_rs is not None else newest_first[0]
    if len(active) == 1:
        return active[0]
    return None


def _replicas(rs: Obj) -> int:
    value = (rs.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _available(rs: Obj) -> int:
    # Never more than the ReplicaSet is scaled to: a just-scaled-down set's status may not
    # have caught up yet, and counting its doomed pods would let a rollout go below
    # minAvailable (upstream reads status alone and can briefly overshoot).
    return min(int((rs.get("status") or {}).get("availableReplicas") or 0), _replicas(rs))


def _revision(rs: Obj) -> int:
    return _int((rs["metadata"].get("annotations") or {}).get(REVISION, ""))


def _int(text: Any) -> int:
    try:
        return int(str(text))
    except ValueError:
        return 0


def _by_creation(rs: Obj) -> tuple[str, str]:
    return (str(rs["metadata"].get("creationTimestamp", "")), rs["metadata"]["name"])


def _round_half_away(value: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() goes to even)."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def _cond(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in status.get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return None


def _drop_cond(status: dict[str, Any], kind: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != kind]


def _new_cond(kind: str, value: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": value,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


__all__ = ["DeploymentController", "max_surge_and_unavailable"]
