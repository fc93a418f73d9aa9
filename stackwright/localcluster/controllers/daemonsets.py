"""DaemonSets: one pod on every node that should run one.

A port of `pkg/controller/daemon`: a node should run the set's pod when the pod's
nodeSelector and required node affinity match it and its taints are tolerated —
the pod gets the DaemonSet's default tolerations (not-ready and unreachable
NoExecute; disk-, memory-, pid-pressure and unschedulable NoSchedule; network-
unavailable for host-network pods). Pods are pinned with a required node
affinity on `metadata.name`, as upstream does, and the scheduler binds them. A
node that no longer should run the pod loses it (unless only NoSchedule taints
are new); failed pods are deleted and replaced (with back-off, in simulated seconds).
RollingUpdate replaces old pods within maxUnavailable (or surges within maxSurge),
judged by the `controller-revision-hash` label against the ControllerRevision of
the current template. Status carries the scheduled / ready / available / updated /
misscheduled counts.

Must never: run two pods of a set on one node (beyond a surge), or bind pods itself.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.revisions import sync_revisions, truncate_history
from stackwright.localcluster.controllers.workload_common import (
    CONTROLLER_REVISION,
    DAEMON_SET,
    MANAGER,
    NODE,
    POD,
    BadIntOrPercent,
    OwnerIndex,
    available_in,
    claim_owned,
    is_ready,
    is_terminating,
    labels_of,
    omit_zero,
    pod_from_template,
    pod_owner_keys,
    safe_encode,
    scaled_value,
    selector,
    spec_seconds,
    template_hash,
)
from stackwright.localcluster.store import DELETED, Change, Obj

REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"

#: AddOrUpdateDaemonPodTolerations: what every daemon pod tolerates.
DEFAULT_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
NETWORK_UNAVAILABLE = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


class DaemonSetController(Controller):
    name = "daemonset-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "daemonset-controller")
        self.sets = cluster.type_for("apps", "v1", "daemonsets")
        self.pods = cluster.type_for("", "v1", "pods")
        # (set uid, node) → (failures in a row, monotonic time before which no retry).
        self._backoff: dict[tuple[str, str], tuple[int, float]] = {}

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == DAEMON_SET:
            return [(change.namespace, change.name)]
        if change.key == NODE:
            if (
                change.type not in (DELETED,)
                and change.old is not None
                and not _placement_changed(change.old, change.obj)
            ):
                return []  # heartbeats and conditions do not move daemon pods
            return self._all_sets()
        if change.key not in (POD, CONTROLLER_REVISION):
            return []
        return list(
            pod_owner_keys(
                change,
                "DaemonSet",
                self.index.in_namespace(DAEMON_SET, change.namespace),
                lambda ds: selector(ds["spec"].get("selector")),
                adopt_orphans=change.key == POD,
            )
        )

    def _all_sets(self) -> list[Hashable]:
        return [
            (ns, ds["metadata"]["name"])
            for ns in self.index.namespaces(DAEMON_SET)
            for ds in self.index.in_namespace(DAEMON_SET, ns)
        ]

    def initial_keys(self) -> list[Hashable]:
        return self._all_sets()

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        ds = self.cluster.store.get(DAEMON_SET, namespace, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        self._claim_pods(ds)
        revisions = sync_revisions(self.cluster, self.index, ds, name_and_labels=_revision_name)
        revision_hash = labels_of(revisions.update).get(REVISION_LABEL, "")
        nodes = self.cluster.store.items(NODE)
        try:
            self._manage(ds, nodes, revision_hash)
            self._rolling_update(ds, nodes, revision_hash)
        except BadIntOrPercent:
            pass  # validation rejects such values; a stored one only stops the update
        ds = self.cluster.store.get(DAEMON_SET, namespace, name) or ds
        self._write_status(ds, nodes, revisions.collision_count, revision_hash)
        live = {revisions.update["metadata"]["name"]}
        for pod in self.index.owned(POD, ds["metadata"]["uid"]):
            pod_hash = labels_of(pod).get(REVISION_LABEL)
            live |= {
                r["metadata"]["name"]
                for r in revisions.all
                if labels_of(r).get(REVISION_LABEL) == pod_hash
            }
        truncate_history(
            self.cluster, ds, self.index.owned(CONTROLLER_REVISION, ds["metadata"]["uid"]), live
        )

    # --- pods by node ------------------------------------------------------------------------

    def _claim_pods(self, ds: Obj) -> None:
        claim_owned(self.index, POD, ds, selector(ds["spec"].get("selector")), self._write_pod)

    def _write_pod(self, pod: Obj) -> Obj:
        meta = pod["metadata"]
        return self.cluster.update(
            self.pods, meta["namespace"], meta["name"], pod, WriteOptions(field_manager=MANAGER)
        ).obj

    def _pods_by_node(self, ds: Obj) -> dict[str, list[Obj]]:
        by_node: dict[str, list[Obj]] = {}
        for pod in self.index.owned(POD, ds["metadata"]["uid"]):
            node = target_node(pod)
            by_node.setdefault(node, []).append(pod)
        for pods in by_node.values():
            pods.sort(
                key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])
            )
        return by_node

    def _manage(self, ds: Obj, nodes: list[Obj], revision_hash: str) -> None:
        """manage: create pods where missing, delete failed, extra and misplaced ones."""
        by_node = self._pods_by_node(ds)
        uid = ds["metadata"]["uid"]
        surging = self._max_surge(ds, nodes) > 0
        needing: list[str] = []
        doomed: list[Obj] = []
        known = set()
        loop = time.monotonic()
        for node in nodes:
            node_name = node["metadata"]["name"]
            known.add(node_name)
            should_run, should_continue = should_run_on(ds, node)
            pods = by_node.get(node_name, [])
            if should_run and not pods:
                needing.append(node_name)
            elif should_continue:
                running: list[Obj] = []
                for pod in pods:
                    if is_terminating(pod):
                        continue
                    if (pod.get("status") or {}).get("phase") == "Failed":
                        count, until = self._backoff.get((uid, node_name), (0, 0.0))
                        if loop < until:
                            self.enqueue_after(
                                (ds["metadata"]["namespace"], ds["metadata"]["name"]), until - loop
                            )
                            continue
                        self._backoff[(uid, node_name)] = (
                            count + 1,
                            loop + spec_seconds(self.pace, min(2.0**count, 900.0)),
                        )
                        self.events.record(
                            ds, WARNING, "FailedDaemonPod",
                            f"Found failed daemon pod {pod['metadata']['namespace']}/{pod['metadata']['name']} on node {node_name}, will try to kill it",
                        )  # fmt: skip
                        doomed.append(pod)
                    else:
                        running.append(pod)
                if not surging and len(running) > 1:
                    doomed.extend(running[1:])  # the oldest stays
                elif surging and len(running) > 1:
                    new = [p for p in running if labels_of(p).get(REVISION_LABEL) == revision_hash]
                    old = [p for p in running if labels_of(p).get(REVISION_LABEL) != revision_hash]
                    doomed.extend(new[1:] + old[1:])
                if not running and should_run:
                    needing.append(node_name)
            elif pods:
                doomed.extend(p for p in pods if not is_terminating(p))
        for node_name, pods in by_node.items():
            if node_name not in known:  # its node is gone
                doomed.extend(
                    p
                    for p in pods
                    if not is_terminating(p) and not (p.get("spec") or {}).get("nodeName")
                )
        self._sync_nodes(ds, doomed, needing, revision_hash)

    def _sync_nodes(
        self, ds: Obj, doomed: list[Obj], needing: list[str], revision_hash: str
    ) -> None:
        namespace = ds["metadata"]["namespace"]
        for node_name in needing:
            pod = self._new_pod(ds, node_name, revision_hash)
            try:
                created = self.cluster.create(
                    self.pods, namespace, pod, WriteOptions(field_manager=MANAGER)
                ).obj
            except api_status.APIError as exc:
                self.events.record(ds, WARNING, "FailedCreate", f"Error creating: {exc}")
                continue
            self.events.record(
                ds, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
            )
        for pod in doomed:
            name = pod["metadata"]["name"]
            try:
                self.cluster.delete(self.pods, namespace, name, DeleteOptions())
            except api_status.NotFound:
                continue
            self.events.record(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")

    def _new_pod(self, ds: Obj, node_name: str, revision_hash: str) -> Obj:
        template = (ds.get("spec") or {}).get("template") or {}
        pod = pod_from_template(
            template, ds,
            extra_labels={
                REVISION_LABEL: revision_hash,
                GENERATION_LABEL: str(ds["metadata"].get("generation", 1)),
            },
        )  # fmt: skip
        spec = pod["spec"]
        spec["tolerations"] = daemon_tolerations(spec)
        affinity = spec.get("affinity") or {}
        node_affinity = affinity.get("nodeAffinity") or {}
        # ReplaceDaemonSetPodNodeNameNodeAffinity: pinned to its node, the scheduler binds it.
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
        affinity["nodeAffinity"] = node_affinity
        spec["affinity"] = affinity
        return pod

    # --- rolling update -------------------------------------------------------------------------

    def _desired(self, ds: Obj, nodes: list[Obj]) -> int:
        return sum(1 for node in nodes if should_run_on(ds, node)[0])

    def _max_surge(self, ds: Obj, nodes: list[Obj]) -> int:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return 0
        rolling = strategy.get("rollingUpdate") or {}
        return scaled_value(rolling.get("maxSurge", 0), self._desired(ds, nodes), round_up=True)

    def _rolling_update(self, ds: Obj, nodes: list[Obj], revision_hash: str) -> None:
        spec = ds.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        rolling = strategy.get("rollingUpdate") or {}
        desired = self._desired(ds, nodes)
        max_surge = scaled_value(rolling.get("maxSurge", 0), desired, round_up=True)
        max_unavailable = scaled_value(rolling.get("maxUnavailable", 1), desired, round_up=True)
        if max_surge == 0 and max_unavailable == 0:
            max_unavailable = 1
        min_ready = spec_seconds(self.pace, float(spec.get("minReadySeconds") or 0))
        now = self.cluster.clock()
        generation = str(ds["metadata"].get("generation", 1))

        def updated(pod: Obj) -> bool:
            pod_labels = labels_of(pod)
            return (
                pod_labels.get(REVISION_LABEL) == revision_hash
                or pod_labels.get(GENERATION_LABEL) == generation
            )

        def available(pod: Obj) -> bool:
            return available_in(pod, min_ready, now, self.index.moments) == 0.0

        doomed: list[Obj] = []
        to_create: list[str] = []
        candidates: list[Obj] = []
        candidate_nodes: list[str] = []
        unavailable = surge = 0
        for node_name, pods in sorted(self._pods_by_node(ds).items()):
            live = [p for p in pods if not is_terminating(p)]
            new = [p for p in live if updated(p)]
            old = [p for p in live if not updated(p)]
            if len(new) > 1 or len(old) > 1:
                unavailable += 1  # manage() removes the extra ones first
                continue
            new_pod = new[0] if new else None
            old_pod = old[0] if old else None
            if max_surge == 0:
                if (new_pod is None) == (old_pod is None):
                    unavailable += 1
                elif new_pod is not None:
                    if not available(new_pod):
                        unavailable += 1
                elif old_pod is not None:
                    if not available(old_pod):
                        doomed.append(old_pod)  # replacing an unavailable pod costs nothing
                        unavailable += 1
                    else:
                        candidates.append(old_pod)
            else:
                if new_pod is None and old_pod is None:
                    continue
                if new_pod is None:
                    if old_pod is not None and not available(old_pod):
                        to_create.append(node_name)
                    else:
                        candidate_nodes.append(node_name)
                elif not available(new_pod):
                    surge += 1
                elif old_pod is not None:
                    doomed.append(old_pod)
        if max_surge == 0:
            doomed.extend(candidates[: max(max_unavailable - unavailable, 0)])
        else:
            to_create.extend(candidate_nodes[: max(max_surge - surge, 0)])
        if doomed or to_create:
            self._sync_nodes(ds, doomed, to_create, revision_hash)

    # --- status -----------------------------------------------------------------------------------

    def _write_status(self, ds: Obj, nodes: list[Obj], collisions: int, revision_hash: str) -> None:
        spec = ds.get("spec") or {}
        min_ready = spec_seconds(self.pace, float(spec.get("minReadySeconds") or 0))
        now = self.cluster.clock()
        generation = str(ds["metadata"].get("generation", 1))
        by_node = self._pods_by_node(ds)
        desired = current = misscheduled = ready = available = updated = 0
        soonest: float | None = None
        for node in nodes:
            node_name = node["metadata"]["name"]
            should_run, _ = should_run_on(ds, node)
            pods = by_node.get(node_name, [])
            if should_run:
                desired += 1
                if not pods:
                    continue
                current += 1
                pod = pods[0]
                if is_ready(pod):
                    ready += 1
                    left = available_in(pod, min_ready, now, self.index.moments)
                    if left == 0.0:
                        available += 1
                    elif left is not None:
                        soonest = left if soonest is None else min(soonest, left)
                pod_labels = labels_of(pod)
                if (
                    pod_labels.get(REVISION_LABEL) == revision_hash
                    or pod_labels.get(GENERATION_LABEL) == generation
                ):
                    updated += 1
            elif pods:
                misscheduled += 1
        old: dict[str, Any] = ds.get("status") or {}
        status: dict[str, Any] = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        omit_zero(status, "updatedNumberScheduled", "numberAvailable", "numberUnavailable")
        if collisions:
            status["collisionCount"] = collisions
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        if soonest is not None:
            self.enqueue_after(
                (ds["metadata"]["namespace"], ds["metadata"]["name"]), soonest + 0.05
            )
        if old == status:
            return
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.sets, ds["metadata"]["namespace"], ds["metadata"]["name"], {**ds, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip


# --- scheduling predicates (the daemon controller's own, as upstream) ------------------------------


def daemon_tolerations(pod_spec: Obj) -> list[dict[str, Any]]:
    """The pod's tolerations plus the defaults every daemon pod gets."""
    tolerations = [dict(t) for t in pod_spec.get("tolerations") or []]
    wanted = list(DEFAULT_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        wanted.append(NETWORK_UNAVAILABLE)
    for toleration in wanted:
        if not any(
            t.get("key") == toleration["key"] and t.get("effect") == toleration["effect"]
            for t in tolerations
        ):
            tolerations.append(dict(toleration))
    return tolerations


def should_run_on(ds: Obj, node: Obj) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (should run a new pod, may keep running an existing one)."""
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    node_name = node["metadata"]["name"]
    if spec.get("nodeName") and spec["nodeName"] != node_name:
        return False, False
    if not node_affinity_matches(spec, node):
        return False, False
    tolerations = daemon_tolerations(spec)
    taints = (node.get("spec") or {}).get("taints") or []
    untolerated = [
        t for t in taints
        if t.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(x, t) for x in tolerations)
    ]  # fmt: skip
    if untolerated:
        return False, not any(t.get("effect") == "NoExecute" for t in untolerated)
    return True, True


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """v1.Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if not toleration.get("key"):
        return False  # an empty key matches every taint only with Exists
    return str(toleration.get("value") or "") == str(taint.get("value") or "")


def node_affinity_matches(pod_spec: Obj, node: Obj) -> bool:
    """nodeSelector and required node affinity (terms ORed, requirements ANDed)."""
    node_labels: dict[str, str] = node["metadata"].get("labels") or {}
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if node_labels.get(key) != value:
            return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {})  # fmt: skip
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:
        expressions = term.get("matchExpressions") or []
        match_fields = term.get("matchFields") or []
        if not expressions and not match_fields:
            continue  # an empty term matches nothing
        if all(_requirement(r, node_labels) for r in expressions) and all(
            _requirement(r, fields) for r in match_fields
        ):
            return True
    return False


def _requirement(req: dict[str, Any], values: dict[str, str]) -> bool:
    key, operator = req.get("key", ""), req.get("operator", "")
    wanted = [str(v) for v in req.get("values") or []]
    present = key in values
    if operator == "In":
        return present and values[key] in wanted
    if operator == "NotIn":
        return not present or values[key] not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(wanted) == 1:
        try:
            have, bound = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def target_node(pod: Obj) -> str:
    """GetTargetNodeName: the node a daemon pod runs on, or is pinned to before binding."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )) or {})  # fmt: skip
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if (
                field.get("key") == "metadata.name"
                and field.get("operator") == "In"
                and len(field.get("values") or []) == 1
            ):
                return str(field["values"][0])
    return ""


def _placement_changed(old: Obj, new: Obj) -> bool:
    return (old["metadata"].get("labels") != new["metadata"].get("labels")) or (
        (old.get("spec") or {}) != (new.get("spec") or {})
    )


def _revision_name(ds: Obj, data: dict[str, Any], collisions: int) -> tuple[str, dict[str, str]]:
    """As the daemon controller's snapshot(): `<set>-<encoded template hash>`, hash as label."""
    hashed = template_hash((ds.get("spec") or {}).get("template") or {}, collisions or None)
    labels = dict(((ds["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels[REVISION_LABEL] = hashed
    return f"{ds['metadata']['name']}-{safe_encode(hashed)}", labels


__all__ = ["DaemonSetController", "daemon_tolerations", "should_run_on"]
