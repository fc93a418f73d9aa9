"""`POST pods/NAME/eviction`: delete a pod unless its PodDisruptionBudget forbids it.

As the API server's eviction REST (pkg/registry/core/pod/storage/eviction.go):
a pod that is not running yet or has finished goes without a budget check; a pod
covered by one budget is evicted only while the budget's `status.disruptionsAllowed`
is above zero — the eviction then takes one (decrementing it and recording the pod
in `status.disruptedPods`, so quick successive evictions cannot overrun it) — and
otherwise the answer is 429 TooManyRequests, which `kubectl drain` retries. A pod
that is not Ready may go while the budget has its desired healthy pods
(unhealthyPodEvictionPolicy IfHealthyBudget, or always with AlwaysAllow). The
budget's status is computed by the disruption controller; this module only reads
it and takes from it.

Must never: evict past a budget, or decide about a budget its controller has not
seen yet (observedGeneration behind generation answers 429 too).
"""

from __future__ import annotations

from typing import Any

from stackwright.localcluster import selectors, status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.store import Obj

PODS = ("", "pods")
BUDGETS = ("policy", "poddisruptionbudgets")
REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."


def _refuse(detail: str) -> status.TooManyRequests:
    return status.TooManyRequests(
        REFUSED, details={"causes": [{"reason": "DisruptionBudget", "message": detail}]}
    )


def _is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def evict(cluster: Cluster, namespace: str, name: str, body: Any) -> Obj:
    """Evict pod `namespace/name`; returns the Status a real server answers (201 Success)."""
    if not isinstance(body, dict):
        raise status.BadRequest("the body of the request was in an unknown format")
    given = (body.get("metadata") or {}).get("name")
    if given and given != name:
        raise status.BadRequest("name in URL does not match name in Eviction object")
    pods = cluster.type_for("", "v1", "pods")
    pod = cluster.store.get(PODS, namespace, name)
    if pod is None:
        raise status.not_found("pods", "", name)
    options = body.get("deleteOptions") or {}
    grace = options.get("gracePeriodSeconds")
    preconditions = options.get("preconditions") or {}
    delete = DeleteOptions(
        dry_run=options.get("dryRun") == ["All"],
        grace_period_seconds=int(grace) if grace is not None else None,
        precondition_uid=preconditions.get("uid"),
        precondition_rv=preconditions.get("resourceVersion"),
    )
    phase = (pod.get("status") or {}).get("phase")
    if pod["metadata"].get("deletionTimestamp") or phase in ("Succeeded", "Failed", "Pending"):
        cluster.delete(pods, namespace, name, delete)
        return _success()
    labels = pod["metadata"].get("labels") or {}
    budgets = [
        b
        for b in cluster.store.items(BUDGETS, namespace)
        if selectors.label_selector_from_dict((b.get("spec") or {}).get("selector")).matches(labels)
    ]
    if len(budgets) > 1:
        raise status.InternalError(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
        )
    if budgets:
        _take_disruption(cluster, budgets[0], pod, delete.dry_run)
    if not delete.dry_run:
        _mark_disruption_target(cluster, pod)
    cluster.delete(pods, namespace, name, delete)
    return _success()


def _take_disruption(cluster: Cluster, budget: Obj, pod: Obj, dry_run: bool) -> None:
    meta, spec = budget["metadata"], budget.get("spec") or {}
    budget_status = budget.get("status") or {}
    if int(budget_status.get("observedGeneration") or 0) < int(meta.get("generation") or 1):
        raise _refuse(
            f"The disruption budget {meta['name']} is still being processed by the server."
        )
    desired = int(budget_status.get("desiredHealthy") or 0)
    healthy = int(budget_status.get("currentHealthy") or 0)
    if not _is_ready(pod):
        policy = spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        if policy == "AlwaysAllow" or healthy >= desired > 0:
            return  # an unhealthy pod leaving takes nothing from a healthy budget
    allowed = int(budget_status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise status.Forbidden("pdb disruptions allowed is negative")
    if allowed == 0:
        raise _refuse(
            f"The disruption budget {meta['name']} needs {desired} healthy pods and has {healthy} currently"
        )
    if dry_run:
        return
    disrupted = dict(budget_status.get("disruptedPods") or {})
    disrupted[pod["metadata"]["name"]] = timestamp(cluster.clock())
    taken = {
        **budget,
        "status": {**budget_status, "disruptionsAllowed": allowed - 1, "disruptedPods": disrupted},
    }
    cluster.update(
        cluster.type_for("policy", "v1", "poddisruptionbudgets"),
        meta["namespace"],
        meta["name"],
        taken,
        WriteOptions(field_manager="kube-apiserver"),
        "status",
    )


def _mark_disruption_target(cluster: Cluster, pod: Obj) -> None:
    """The DisruptionTarget condition the API server adds before an evicted pod is deleted."""
    pod_status = dict(pod.get("status") or {})
    conditions = [
        c for c in pod_status.get("conditions") or [] if c.get("type") != "DisruptionTarget"
    ]
    conditions.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": timestamp(cluster.clock()),
            "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting",
        }
    )
    pod_status["conditions"] = conditions
    meta = pod["metadata"]
    cluster.update(
        cluster.type_for("", "v1", "pods"),
        meta["namespace"],
        meta["name"],
        {**pod, "status": pod_status},
        WriteOptions(field_manager="kube-apiserver"),
        "status",
    )


def _success() -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
