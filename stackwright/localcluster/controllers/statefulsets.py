"""StatefulSets: stable, ordered pods `<set>-<ordinal>` with their own claims.

A port of `pkg/controller/statefulset`: with OrderedReady, pod N is created only
once pods 0..N-1 are Running and Ready, and scale-down deletes from the highest
ordinal, one at a time; Parallel does both at once. Each pod is labelled with its
name, index and the ControllerRevision (`<set>-<hash>`) of the template it runs;
a RollingUpdate replaces pods from the highest ordinal down to `partition`, one at
a time, each after the previous is healthy; OnDelete waits for the user. Claims
`<template>-<set>-<ordinal>` are made from volumeClaimTemplates before the pod and
outlive it unless persistentVolumeClaimRetentionPolicy says Delete (then an owner
reference to the set or to the condemned pod lets garbage collection remove them).
Failed pods are recreated.

Must never: run two pods with the same ordinal, or delete a claim itself.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.revisions import (
    Revisions,
    sync_revisions,
    template_of,
    truncate_history,
)
from stackwright.localcluster.controllers.workload_common import (
    CLAIM,
    CONTROLLER_REVISION,
    MANAGER,
    POD,
    STATEFUL_SET,
    OwnerIndex,
    available_in,
    claim_owned,
    copy_obj,
    is_running_and_ready,
    is_terminal,
    is_terminating,
    labels_of,
    omit_zero,
    pod_from_template,
    pod_owner_keys,
    revision_hash,
    selector,
    spec_seconds,
)
from stackwright.localcluster.store import Change, Obj

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
HASH_LABEL = "controller.kubernetes.io/hash"


class StatefulSetController(Controller):
    name = "statefulset-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "statefulset-controller")
        self.sets = cluster.type_for("apps", "v1", "statefulsets")
        self.pods = cluster.type_for("", "v1", "pods")
        self.claims = cluster.type_for("", "v1", "persistentvolumeclaims")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == STATEFUL_SET:
            return [(change.namespace, change.name)]
        if change.key not in (POD, CONTROLLER_REVISION):
            return []
        return list(
            pod_owner_keys(
                change,
                "StatefulSet",
                self.index.in_namespace(STATEFUL_SET, change.namespace),
                lambda sts: selector(sts["spec"].get("selector")),
                adopt_orphans=change.key == POD,
            )
        )

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, s["metadata"]["name"])
            for ns in self.index.namespaces(STATEFUL_SET)
            for s in self.index.in_namespace(STATEFUL_SET, ns)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        sts = self.cluster.store.get(STATEFUL_SET, namespace, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        self._claim_pods(sts)
        revisions = sync_revisions(self.cluster, self.index, sts, name_and_labels=_revision_name)
        self._update(sts, revisions)
        sts = self.cluster.store.get(STATEFUL_SET, namespace, name) or sts
        self._write_status(sts, revisions)
        pods = self.index.owned(POD, sts["metadata"]["uid"])
        live = {revisions.current["metadata"]["name"], revisions.update["metadata"]["name"]}
        live |= {labels_of(p).get(REVISION_LABEL, "") for p in pods}
        truncate_history(
            self.cluster, sts, self.index.owned(CONTROLLER_REVISION, sts["metadata"]["uid"]), live
        )

    # --- pods ----------------------------------------------------------------------------------

    def _claim_pods(self, sts: Obj) -> None:
        # A pod whose name is not <set>-<n> is not one of ours to adopt.
        claim_owned(
            self.index,
            POD,
            sts,
            selector(sts["spec"].get("selector")),
            self._write_pod,
            adoptable=lambda pod: _ordinal(sts, pod) is not None,
        )

    def _write_pod(self, pod: Obj) -> Obj:
        meta = pod["metadata"]
        return self.cluster.update(
            self.pods, meta["namespace"], meta["name"], pod, WriteOptions(field_manager=MANAGER)
        ).obj

    def _update(self, sts: Obj, revisions: Revisions) -> None:
        """updateStatefulSet: create, recreate, delete and roll pods, one step at a time when ordered."""
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        min_ready = spec_seconds(self.pace, float(spec.get("minReadySeconds") or 0))
        now = self.cluster.clock()
        slots: dict[int, Obj] = {}
        condemned: list[tuple[int, Obj]] = []
        for pod in self.index.owned(POD, sts["metadata"]["uid"]):
            ordinal = _ordinal(sts, pod)
            if ordinal is None:
                continue
            if start <= ordinal < start + replicas:
                slots[ordinal] = pod
            else:
                condemned.append((ordinal, pod))
        condemned.sort(key=lambda item: item[0], reverse=True)

        def healthy(pod: Obj) -> bool:
            if is_terminating(pod) or not is_running_and_ready(pod):
                return False
            return available_in(pod, min_ready, now, self.index.moments) == 0.0

        first_unhealthy: Obj | None = None
        for ordinal in range(start, start + replicas):
            slot = slots.get(ordinal)
            if slot is not None and not healthy(slot):
                first_unhealthy = slot
                break
        if first_unhealthy is None:
            first_unhealthy = next((p for _, p in condemned if not healthy(p)), None)

        for ordinal in range(start, start + replicas):
            existing = slots.get(ordinal)
            if existing is None:
                self._create_pod(sts, revisions, ordinal)
                if ordered:
                    return
                continue
            pod = existing
            if is_terminal(pod):
                if not is_terminating(pod):
                    self.events.record(
                        sts, WARNING, "RecreatingFailedPod",
                        f"StatefulSet {sts['metadata']['namespace']}/{sts['metadata']['name']} is recreating failed Pod {pod['metadata']['name']}",
                    )  # fmt: skip
                    self._delete_pod(sts, pod)
                if ordered:
                    return
                continue
            if ordered and not healthy(pod):
                self._wait_until_available(sts, pod, min_ready, now)
                return
            self._retain_claims(sts, pod, condemned=False)

        for _, doomed in condemned:
            pod = doomed
            if is_terminating(pod):
                if ordered:
                    return
                continue
            if ordered and not healthy(pod) and pod is not first_unhealthy:
                return
            self._retain_claims(sts, pod, condemned=True)
            self._delete_pod(sts, pod)
            if ordered:
                return

        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        update_name = revisions.update["metadata"]["name"]
        for ordinal in range(start + replicas - 1, start + min(partition, replicas) - 1, -1):
            slot = slots.get(ordinal)
            if slot is None:
                return
            pod = slot
            if labels_of(pod).get(REVISION_LABEL) != update_name and not is_terminating(pod):
                self._delete_pod(sts, pod)
                return
            if not healthy(pod):
                return

    def _wait_until_available(self, sts: Obj, pod: Obj, min_ready: float, now: Any) -> None:
        left = available_in(pod, min_ready, now, self.index.moments)
        if left:
            self.enqueue_after((sts["metadata"]["namespace"], sts["metadata"]["name"]), left + 0.05)

    def _create_pod(self, sts: Obj, revisions: Revisions, ordinal: int) -> None:
        spec = sts.get("spec") or {}
        partition = int(
            ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition") or 0
        )
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        # Ordinals below the partition keep the current revision (newVersionedStatefulSetPod).
        revision = revisions.current if rolling and ordinal < partition else revisions.update
        template = template_of(revision)
        name = f"{sts['metadata']['name']}-{ordinal}"
        pod = pod_from_template(
            template, sts, name=name,
            extra_labels={
                POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
                REVISION_LABEL: revision["metadata"]["name"],
            },
        )  # fmt: skip
        pod_spec = pod["spec"]
        pod_spec["hostname"] = name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        volumes = [v for v in pod_spec.get("volumes") or []]
        for claim in spec.get("volumeClaimTemplates") or []:
            claim_name = _claim_name(sts, claim, ordinal)
            volumes = [v for v in volumes if v.get("name") != claim["metadata"]["name"]]
            volumes.append(
                {
                    "name": claim["metadata"]["name"],
                    "persistentVolumeClaim": {"claimName": claim_name},
                }
            )
            self._ensure_claim(sts, claim, claim_name, name)
        if volumes:
            pod_spec["volumes"] = volumes
        try:
            self.cluster.create(
                self.pods, sts["metadata"]["namespace"], pod, WriteOptions(field_manager=MANAGER)
            )
        except api_status.AlreadyExists:
            return
        except api_status.APIError as exc:
            self.events.record(
                sts, WARNING, "FailedCreate",
                f"create Pod {name} in StatefulSet {sts['metadata']['name']} failed error: {exc}",
            )  # fmt: skip
            return
        self.events.record(
            sts,
            NORMAL,
            "SuccessfulCreate",
            f"create Pod {name} in StatefulSet {sts['metadata']['name']} successful",
        )

    def _ensure_claim(self, sts: Obj, template: Obj, claim_name: str, pod_name: str) -> None:
        namespace = sts["metadata"]["namespace"]
        if self.cluster.store.get(CLAIM, namespace, claim_name) is not None:
            return
        claim = copy_obj(template)
        meta = claim.setdefault("metadata", {})
        meta["name"] = claim_name
        meta["namespace"] = namespace
        meta["labels"] = {
            **(meta.get("labels") or {}),
            **((sts["spec"].get("selector") or {}).get("matchLabels") or {}),
        }
        for transient in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            meta.pop(transient, None)
        claim.pop("status", None)
        claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
        if _retention(sts, "whenDeleted") == "Delete":
            meta["ownerReferences"] = [_plain_ref(sts)]
        try:
            self.cluster.create(self.claims, namespace, claim, WriteOptions(field_manager=MANAGER))
        except api_status.AlreadyExists:
            return
        except api_status.APIError as exc:
            self.events.record(
                sts, WARNING, "FailedCreate",
                f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {sts['metadata']['name']} failed error: {exc}",
            )  # fmt: skip
            return
        self.events.record(
            sts, NORMAL, "SuccessfulCreate",
            f"create Claim {claim_name} Pod {pod_name} in StatefulSet {sts['metadata']['name']} success",
        )  # fmt: skip

    def _retain_claims(self, sts: Obj, pod: Obj, *, condemned: bool) -> None:
        """Owner references that make garbage collection honour the retention policy."""
        spec = sts.get("spec") or {}
        if not spec.get("volumeClaimTemplates"):
            return
        ordinal = _ordinal(sts, pod)
        if ordinal is None:
            return
        # updateClaimOwnerRefForSetAndPod: a condemned pod's claim goes with the pod
        # (whenScaled); any other claim goes with the set (whenDeleted).
        wanted: list[dict[str, Any]] = []
        if condemned and _retention(sts, "whenScaled") == "Delete":
            wanted.append(_plain_ref(pod))
        elif _retention(sts, "whenDeleted") == "Delete":
            wanted.append(_plain_ref(sts))
        owners = {sts["metadata"]["uid"], pod["metadata"]["uid"]}
        for template in spec["volumeClaimTemplates"]:
            claim = self.cluster.store.get(
                CLAIM, sts["metadata"]["namespace"], _claim_name(sts, template, ordinal)
            )
            if claim is None:
                continue
            refs = claim["metadata"].get("ownerReferences") or []
            kept = [r for r in refs if r.get("uid") not in owners]
            new_refs = kept + wanted
            if new_refs == refs:
                continue
            updated = copy_obj(claim)
            if new_refs:
                updated["metadata"]["ownerReferences"] = new_refs
            else:
                updated["metadata"].pop("ownerReferences", None)
            with contextlib.suppress(api_status.APIError):
                self.cluster.update(
                    self.claims, claim["metadata"]["namespace"], claim["metadata"]["name"], updated,
                    WriteOptions(field_manager=MANAGER),
                )  # fmt: skip

    def _delete_pod(self, sts: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            self.cluster.delete(self.pods, pod["metadata"]["namespace"], name, DeleteOptions())
        except api_status.NotFound:
            return
        self.events.record(
            sts,
            NORMAL,
            "SuccessfulDelete",
            f"delete Pod {name} in StatefulSet {sts['metadata']['name']} successful",
        )

    # --- status --------------------------------------------------------------------------------

    def _write_status(self, sts: Obj, revisions: Revisions) -> None:
        spec = sts.get("spec") or {}
        min_ready = spec_seconds(self.pace, float(spec.get("minReadySeconds") or 0))
        now = self.cluster.clock()
        current_name = revisions.current["metadata"]["name"]
        update_name = revisions.update["metadata"]["name"]
        replicas = ready = available = current = updated = 0
        soonest: float | None = None
        for pod in self.index.owned(POD, sts["metadata"]["uid"]):
            created = bool((pod.get("status") or {}).get("phase"))
            if created:
                replicas += 1
            if is_running_and_ready(pod):
                ready += 1
                left = available_in(pod, min_ready, now, self.index.moments)
                if left == 0.0:
                    available += 1
                elif left is not None:
                    soonest = left if soonest is None else min(soonest, left)
            if created and not is_terminating(pod):
                revision = labels_of(pod).get(REVISION_LABEL)
                if revision == current_name:
                    current += 1
                if revision == update_name:
                    updated += 1
        wanted = int(spec.get("replicas", 1))
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and updated == wanted and ready == wanted and replicas == wanted:
            # completeRollingUpdate: every pod runs the update revision, which becomes current.
            current, current_name = updated, update_name
        old: dict[str, Any] = sts.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": revisions.collision_count,
            "availableReplicas": available,
        }
        omit_zero(status, "readyReplicas", "currentReplicas", "updatedReplicas")
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        if soonest is not None:
            self.enqueue_after(
                (sts["metadata"]["namespace"], sts["metadata"]["name"]), soonest + 0.05
            )
        if old == status:
            return
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.sets, sts["metadata"]["namespace"], sts["metadata"]["name"], {**sts, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip


def _revision_name(sts: Obj, data: dict[str, Any], collisions: int) -> tuple[str, dict[str, str]]:
    """history.NewControllerRevision: `<set>-<hash of the data>`, the hash as a label too."""
    hashed = revision_hash(data, collisions)
    labels = dict(((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels[HASH_LABEL] = hashed
    return f"{sts['metadata']['name'][:223]}-{hashed}", labels


def _ordinal(sts: Obj, pod: Obj) -> int | None:
    """The ordinal in `<set>-<n>`, or None for a pod not named like one of the set's."""
    match = re.fullmatch(rf"{re.escape(sts['metadata']['name'])}-(\d+)", pod["metadata"]["name"])
    return int(match.group(1)) if match else None


def _claim_name(sts: Obj, template: Obj, ordinal: int) -> str:
    return f"{template['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"


def _retention(sts: Obj, when: str) -> str:
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return str(policy.get(when) or "Retain")


def _plain_ref(owner: Obj) -> dict[str, Any]:
    """A non-controller owner reference: the claim belongs to no controller, only goes with it."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }


__all__ = ["StatefulSetController"]
