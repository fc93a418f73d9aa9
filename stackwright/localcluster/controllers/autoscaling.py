"""HorizontalPodAutoscalers: the status a cluster without a metrics server shows.

As kube-controller-manager's HPA controller when no metrics API answers: it reads
the target's scale (AbleToScale True SucceededGetScale, or False FailedGetScale),
brings a target outside [minReplicas, maxReplicas] back inside (SuccessfulRescale,
with ScalingLimited saying which bound), and otherwise cannot compute a replica
count — ScalingActive False with FailedGetResourceMetric (or the metric type's own
reason), `currentMetrics` entries of an unknown type, desiredReplicas unchanged.
A target scaled to zero disables scaling (ScalingDisabled). It looks again every
15 simulated seconds (the controller's sync period) and whenever the
target changes.

Must never: invent metrics, or scale a target inside its bounds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.workload_common import (
    HPA,
    MANAGER,
    OwnerIndex,
    copy_obj,
    set_condition,
    spec_seconds,
)
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.store import Change, Obj

SYNC_PERIOD = 15.0  # simulated seconds, as --horizontal-pod-autoscaler-sync-period

#: The reason and the "failed to get …" text per metric source type, as the controller reports them.
_METRIC_FAILURES: dict[str, tuple[str, str]] = {
    "Resource": (
        "FailedGetResourceMetric",
        "failed to get {name} utilization: unable to get metrics for resource {name}: no metrics returned from resource metrics API",
    ),
    "ContainerResource": (
        "FailedGetContainerResourceMetric",
        "failed to get {name} utilization: unable to get metrics for resource {name}: no metrics returned from resource metrics API",
    ),
    "Pods": (
        "FailedGetPodsMetric",
        "unable to get metric {name}: no metrics returned from custom metrics API",
    ),
    "Object": (
        "FailedGetObjectMetric",
        "unable to get metric {name}: no metrics returned from custom metrics API",
    ),
    "External": (
        "FailedGetExternalMetric",
        "unable to get external metric {name}: no metrics returned from external metrics API",
    ),
}


class HorizontalPodAutoscalerController(Controller):
    name = "horizontal-pod-autoscaler"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "horizontal-pod-autoscaler")
        self.hpas = cluster.type_for("autoscaling", "v2", "horizontalpodautoscalers")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == HPA:
            return [(change.namespace, change.name)]
        hpas = self.index.in_namespace(HPA, change.namespace) if change.namespace else []
        keys: list[Hashable] = []
        for hpa in hpas:
            ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
            if (
                ref.get("name") == change.name
                and _group(ref) == change.key[0]
                and self._plural(ref) == change.key[1]
            ):
                keys.append((change.namespace, hpa["metadata"]["name"]))
        return keys

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, hpa["metadata"]["name"])
            for ns in self.index.namespaces(HPA)
            for hpa in self.index.in_namespace(HPA, ns)
        ]

    def _target_type(self, ref: dict[str, Any]) -> ResourceType | None:
        group = _group(ref)
        for rtype in self.cluster.registry:
            if (
                rtype.group == group
                and rtype.kind == ref.get("kind")
                and "scale" in rtype.subresources
            ):
                return rtype
        return None

    def _plural(self, ref: dict[str, Any]) -> str:
        rtype = self._target_type(ref)
        return rtype.plural if rtype is not None else ""

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        hpa = self.cluster.store.get(HPA, namespace, name)
        if hpa is None or hpa["metadata"].get("deletionTimestamp"):
            return
        spec = hpa.get("spec") or {}
        old: dict[str, Any] = hpa.get("status") or {}
        status: dict[str, Any] = copy_obj(old)
        status.setdefault("desiredReplicas", 0)
        conditions: list[dict[str, Any]] = status.setdefault("conditions", [])
        now = timestamp(self.cluster.clock())
        ref = spec.get("scaleTargetRef") or {}
        rtype = self._target_type(ref)
        target = (
            self.cluster.store.get(rtype.key, namespace, str(ref.get("name"))) if rtype else None
        )
        self.enqueue_after(key, spec_seconds(self.pace, SYNC_PERIOD))
        if rtype is None or target is None:
            resource = (
                f"{rtype.plural}.{rtype.group}"
                if rtype and rtype.group
                else (rtype.plural if rtype else str(ref.get("kind", "")).lower())
            )
            detail = f'{resource} "{ref.get("name")}" not found'
            if set_condition(
                conditions,
                "AbleToScale",
                "False",
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {detail}",
                now,
            ):
                self.events.record(hpa, WARNING, "FailedGetScale", detail)
            self._write(hpa, status)
            return
        current = int((target.get("spec") or {}).get("replicas", 1))
        minimum = int(spec.get("minReplicas", 1))
        maximum = int(spec.get("maxReplicas", 1))
        set_condition(
            conditions,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
            now,
        )
        status["currentReplicas"] = current
        desired: int | None = None
        reason = ""
        if current == 0 and minimum != 0:
            status["desiredReplicas"] = 0
            set_condition(
                conditions,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            )
        elif current > maximum:
            desired, reason = maximum, "Current number of replicas above Spec.MaxReplicas"
            set_condition(
                conditions,
                "ScalingLimited",
                "True",
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
                now,
            )
        elif current < minimum:
            desired, reason = minimum, "Current number of replicas below Spec.MinReplicas"
            set_condition(
                conditions,
                "ScalingLimited",
                "True",
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
                now,
            )
        else:
            if any(c.get("type") == "ScalingLimited" for c in conditions):
                set_condition(
                    conditions, "ScalingLimited", "False", "DesiredWithinRange",
                    "the desired count is within the acceptable range", now,
                )  # fmt: skip
            self._no_metrics(hpa, spec, status, now)
        if desired is not None and rtype is not None:
            self._rescale(hpa, rtype, target, desired, reason, status, now)
        self._write(hpa, status)

    def _no_metrics(self, hpa: Obj, spec: dict[str, Any], status: dict[str, Any], now: str) -> None:
        """computeReplicasForMetrics when no metrics API answers: nothing can be computed.

        The Warning events come with the first failure (not every sync, as upstream).
        """
        metrics = spec.get("metrics") or []
        first: dict[str, Any] = (
            metrics[0] if metrics else {"type": "Resource", "resource": {"name": "cpu"}}
        )
        kind = str(first.get("type", "Resource"))
        source = first.get(kind[0].lower() + kind[1:]) or {}
        name = (source.get("metric") or {}).get("name") or source.get("name") or "cpu"
        reason, text = _METRIC_FAILURES.get(kind, _METRIC_FAILURES["Resource"])
        failure = text.format(name=name)
        changed = set_condition(
            status["conditions"], "ScalingActive", "False", reason,
            f"the HPA was unable to compute the replica count: {failure}", now,
        )  # fmt: skip
        status["currentMetrics"] = [{"type": ""} for _ in metrics] or None
        if status["currentMetrics"] is None:
            del status["currentMetrics"]
        if not changed:
            # The real controller repeats these every sync (count: N); here a simulated
            # sync comes twenty times as often, so they are said once per failure.
            return
        self.events.record(hpa, WARNING, reason, failure)
        self.events.record(
            hpa, WARNING, "FailedComputeMetricsReplicas",
            f"invalid metrics ({len(metrics) or 1} invalid out of {len(metrics) or 1}), first error is: failed to get {name} resource metric value: {failure}",
        )  # fmt: skip

    def _rescale(
        self, hpa: Obj, rtype: ResourceType, target: Obj, desired: int, reason: str,
        status: dict[str, Any], now: str,
    ) -> None:  # fmt: skip
        scaled = copy_obj(target)
        scaled.setdefault("spec", {})["replicas"] = desired
        meta = target["metadata"]
        try:
            self.cluster.update(
                rtype, meta["namespace"], meta["name"], scaled, WriteOptions(field_manager=MANAGER)
            )
        except api_status.APIError as exc:
            set_condition(
                status["conditions"],
                "AbleToScale",
                "False",
                "FailedUpdateScale",
                f"the HPA controller was unable to update the target scale: {exc}",
                now,
            )
            self.events.record(
                hpa,
                WARNING,
                "FailedRescale",
                f"New size: {desired}; reason: {reason}; error: {exc}",
            )
            return
        set_condition(
            status["conditions"],
            "AbleToScale",
            "True",
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
            now,
        )
        self.events.record(
            hpa, NORMAL, "SuccessfulRescale", f"New size: {desired}; reason: {reason}"
        )
        status["desiredReplicas"] = desired
        status["lastScaleTime"] = now

    def _write(self, hpa: Obj, status: dict[str, Any]) -> None:
        if not status.get("conditions"):
            status.pop("conditions", None)
        if (hpa.get("status") or {}) == status:
            return
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.hpas, hpa["metadata"]["namespace"], hpa["metadata"]["name"], {**hpa, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip


def _group(ref: dict[str, Any]) -> str:
    api_version = str(ref.get("apiVersion") or "")
    return api_version.split("/", 1)[0] if "/" in api_version else ""


__all__ = ["HorizontalPodAutoscalerController"]
