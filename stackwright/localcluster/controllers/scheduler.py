"""The scheduler: binds pending pods to nodes, as kube-scheduler's default profile does.

For each pod without a node (and `schedulerName: default-scheduler`) it runs the
filters in kube-scheduler's order — NodeUnschedulable, TaintToleration,
NodeAffinity (nodeSelector and required node affinity, matchExpressions and
matchFields), NodePorts, NodeResourcesFit (requests against allocatable minus
what bound pods request) — scores the nodes left by least allocation, and binds
through the `pods/binding` subresource. A pod no node fits gets
PodScheduled=False / Unschedulable with the real message shape and a
FailedScheduling event, and is retried when nodes, pods or claims change. A pod
using an unbound WaitForFirstConsumer claim is bound and the claim annotated
with the selected node, so provisioning follows.

The predicates are public (`tolerates`, `untolerated_taint`, `matches_affinity`)
so the DaemonSet controller decides node eligibility the same way.

Must never: bind a pod twice, or scan every pod to decide one: requests are
accounted per node from store changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.store import DELETED, Change, Obj
from stackwright.localcluster.validation import parse_quantity

PODS = ("", "pods")
NODES = ("", "nodes")
CLAIMS = ("", "persistentvolumeclaims")
CLASSES = ("storage.k8s.io", "storageclasses")
SCHEDULER = "default-scheduler"
SELECTED_NODE = "volume.kubernetes.io/selected-node"

# What an empty request counts for when spreading (kube-scheduler's non-zero defaults),
# so pods without requests still spread across nodes.
_NONZERO_CPU = 100  # millicores
_NONZERO_MEMORY = 200 * 1024 * 1024
# Retrying unschedulable pods is batched: many pods leaving at once cause one retry.
_RETRY_BATCH = 0.05

PodKey = tuple[str, str]


# --- predicates --------------------------------------------------------------------------


def tolerates(tolerations: Iterable[Obj], taint: Obj) -> bool:
    """Whether some toleration tolerates `taint` (v1.Toleration.ToleratesTaint)."""
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or "Equal"
        if key and key != taint.get("key"):
            continue
        if operator == "Exists":
            return True
        if (
            operator == "Equal"
            and key
            and (toleration.get("value") or "") == (taint.get("value") or "")
        ):
            return True
    return False


def untolerated_taint(
    spec: Obj, taints: Iterable[Obj], effects: tuple[str, ...] = ("NoSchedule", "NoExecute")
) -> Obj | None:
    """The first taint with one of `effects` that the pod spec does not tolerate."""
    tolerations = spec.get("tolerations") or []
    for taint in taints:
        if taint.get("effect") in effects and not tolerates(tolerations, taint):
            return taint
    return None


def _requirement_matches(requirement: Obj, values: dict[str, str]) -> bool:
    key = requirement.get("key", "")
    operator = requirement.get("operator")
    wanted = [str(v) for v in requirement.get("values") or []]
    present = key in values
    value = values.get(key, "")
    if operator == "In":
        return present and value in wanted
    if operator == "NotIn":
        return not present or value not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if not present or len(wanted) != 1:
            return False
        try:
            have, bound = int(value), int(wanted[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _term_matches(term: Obj, node: Obj) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches no objects
    labels = node["metadata"].get("labels") or {}
    if not all(_requirement_matches(r, labels) for r in expressions):
        return False
    node_fields = {"metadata.name": node["metadata"]["name"]}
    return all(_requirement_matches(r, node_fields) for r in fields)


def matches_affinity(spec: Obj, node: Obj) -> bool:
    """nodeSelector and requiredDuringSchedulingIgnoredDuringExecution node affinity."""
    labels = node["metadata"].get("labels") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return True
    return any(_term_matches(term, node) for term in terms)  # terms are ORed


# --- resources ------------------------------------------------------------------------------


def _amount(name: str, value: Any) -> int:
    """A quantity in the unit the scheduler counts: millicores for cpu, else base units."""
    try:
        quantity = parse_quantity(str(value)).value
    except ValueError:
        return 0
    if name == "cpu":
        return math.ceil(quantity * 1000)
    return math.ceil(quantity)


def pod_requests(spec: Obj) -> dict[str, int]:
    """What a pod asks of a node: its containers' requests, or more if an init container
    asks more (init containers run one at a time), plus its overhead."""
    total: Counter[str] = Counter()
    sidecars: Counter[str] = Counter()
    init_peak: Counter[str] = Counter()
    for container in spec.get("initContainers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        amounts = Counter({k: _amount(k, v) for k, v in requests.items()})
        if container.get("restartPolicy") == "Always":
            sidecars.update(amounts)  # sidecars keep running beside everything after them
            continue
        for name, amount in amounts.items():
            init_peak[name] = max(init_peak[name], amount + sidecars[name])
    for container in spec.get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        total.update({k: _amount(k, v) for k, v in requests.items()})
    total.update(sidecars)
    for name, amount in init_peak.items():
        total[name] = max(total[name], amount)
    for name, value in (spec.get("overhead") or {}).items():
        total[name] += _amount(name, value)
    return dict(total)


def _host_ports(spec: Obj) -> set[tuple[str, str, int]]:
    ports = set()
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                ports.add(
                    (
                        port.get("hostIP") or "0.0.0.0",
                        port.get("protocol") or "TCP",
                        port["hostPort"],
                    )
                )
    return ports


@dataclass
class _NodeUsage:
    requested: Counter[str] = field(default_factory=Counter)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    pods: int = 0
    host_ports: Counter[tuple[str, str, int]] = field(default_factory=Counter)


@dataclass(frozen=True)
class _Placement:
    """A pod's share of a node, as counted in the node's usage."""

    node: str
    requests: dict[str, int]
    host_ports: frozenset[tuple[str, str, int]]


@dataclass(frozen=True)
class _Rejection:
    reason: str
    #: Whether preempting lower-priority pods could help (kube-scheduler's
    #: Unschedulable vs UnschedulableAndUnresolvable).
    resolvable: bool


def _counts(pod: Obj) -> bool:
    """Whether a pod occupies its node: bound and not finished."""
    return bool((pod.get("spec") or {}).get("nodeName")) and (pod.get("status") or {}).get(
        "phase"
    ) not in ("Succeeded", "Failed")


def _needs_scheduling(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and (spec.get("schedulerName") or SCHEDULER) == SCHEDULER
        and not spec.get("schedulingGates")
        and not pod["metadata"].get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    )


def _node_view(node: Obj) -> tuple[Any, ...]:
    """The parts of a node scheduling depends on (heartbeats are not among them)."""
    return (
        node["metadata"].get("labels"),
        node.get("spec"),
        (node.get("status") or {}).get("allocatable"),
    )


class Scheduler(Controller):
    name = SCHEDULER

    def __init__(self, cluster: Cluster) -> None:
        self._pods = cluster.type_for("", "v1", "pods")
        self._claims = cluster.type_for("", "v1", "persistentvolumeclaims")
        self._usage: dict[str, _NodeUsage] = {}
        self._placed: dict[PodKey, _Placement] = {}
        self._requests_by_uid: dict[str, dict[str, int]] = {}
        self._unschedulable: set[PodKey] = set()
        self._retry_pending = False
        self.events = EventRecorder(cluster, SCHEDULER)
        super().__init__(cluster)
        for pod in cluster.store.items(PODS):
            self._account(pod["metadata"].get("namespace", ""), pod["metadata"]["name"], pod)

    # --- accounting ---------------------------------------------------------------------

    def _account(self, namespace: str, name: str, pod: Obj | None) -> bool:
        """Bring a pod's share of its node up to date; True when capacity was freed."""
        key = (namespace, name)
        placed = self._placed.get(key)
        wanted: _Placement | None = None
        if pod is not None and _counts(pod):
            uid = pod["metadata"].get("uid", "")
            requests = self._requests_by_uid.get(uid)
            if requests is None:
                requests = pod_requests(pod.get("spec") or {})
                self._requests_by_uid[uid] = requests
            wanted = _Placement(
                pod["spec"]["nodeName"], requests, frozenset(_host_ports(pod["spec"]))
            )
        if placed == wanted:
            return False
        if placed is not None:
            usage = self._usage.setdefault(placed.node, _NodeUsage())
            usage.requested.subtract(placed.requests)
            usage.nonzero_cpu -= placed.requests.get("cpu") or _NONZERO_CPU
            usage.nonzero_memory -= placed.requests.get("memory") or _NONZERO_MEMORY
            usage.pods -= 1
            usage.host_ports.subtract(placed.host_ports)
            del self._placed[key]
        if wanted is not None:
            usage = self._usage.setdefault(wanted.node, _NodeUsage())
            usage.requested.update(wanted.requests)
            usage.nonzero_cpu += wanted.requests.get("cpu") or _NONZERO_CPU
            usage.nonzero_memory += wanted.requests.get("memory") or _NONZERO_MEMORY
            usage.pods += 1
            usage.host_ports.update(wanted.host_ports)
            self._placed[key] = wanted
        return placed is not None

    # --- reacting ------------------------------------------------------------------------

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == PODS:
            key = (change.namespace, change.name)
            pod = None if change.type == DELETED else change.obj
            if pod is None and change.old is not None:
                self._requests_by_uid.pop(change.old["metadata"].get("uid", ""), None)
            freed = self._account(change.namespace, change.name, pod)
            if freed and self._unschedulable:
                self._retry_unschedulable()
            if pod is not None and _needs_scheduling(pod):
                return [key]
            self._unschedulable.discard(key)
            return []
        if change.key == NODES:
            if (
                change.type == DELETED
                or change.old is None
                or _node_view(change.old) != _node_view(change.obj)
            ):
                self._retry_unschedulable()
            return []
        if change.key in (CLAIMS, CLASSES) and self._unschedulable:
            self._retry_unschedulable()
        return []

    def initial_keys(self) -> list[Hashable]:
        return [
            (p["metadata"].get("namespace", ""), p["metadata"]["name"])
            for p in self.cluster.store.items(PODS)
            if _needs_scheduling(p)
        ]

    def _retry_unschedulable(self) -> None:
        if self._retry_pending or not self._unschedulable:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._retry_pending = True

        def retry() -> None:
            self._retry_pending = False
            for key in list(self._unschedulable):
                self.enqueue(key)

        loop.call_later(_RETRY_BATCH, retry)

    # --- scheduling one pod ----------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        pod = self.cluster.store.get(PODS, namespace, name)
        if pod is None or not _needs_scheduling(pod):
            self._unschedulable.discard(key)
            return
        nodes = self.cluster.store.items(NODES)
        claim_problem, late_claims = self._claims_for(pod)
        if claim_problem:
            message = (
                f"0/{len(nodes)} nodes are available: {claim_problem}. preemption: "
                f"0/{len(nodes)} nodes are available: {len(nodes)} Preemption is not helpful "
                "for scheduling."
            )
            self._unschedulable_pod(pod, message)
            return
        spec = pod.get("spec") or {}
        uid = pod["metadata"].get("uid", "")
        requests = self._requests_by_uid.get(uid)
        if requests is None:
            requests = pod_requests(spec)
            self._requests_by_uid[uid] = requests
        ports = _host_ports(spec)
        rejections: Counter[str] = Counter()
        resolvable = 0
        best: tuple[float, int, str] | None = None
        for node in nodes:
            reasons = self._filter(spec, requests, ports, node)
            if reasons:
                rejections.update(r.reason for r in reasons)
                resolvable += all(r.resolvable for r in reasons)
                continue
            rank = self._score(requests, node)
            if best is None or rank < best:
                best = rank
        if best is None:
            self._unschedulable_pod(pod, _fit_error(len(nodes), rejections, resolvable))
            return
        self._bind(pod, best[2], late_claims)

    def _claims_for(self, pod: Obj) -> tuple[str, list[str]]:
        """VolumeBinding's PreFilter: a problem that no node can solve, and the
        WaitForFirstConsumer claims that wait for this pod's node."""
        namespace = pod["metadata"].get("namespace", "")
        late: list[str] = []
        store = self.cluster.store
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            source = volume.get("persistentVolumeClaim")
            if not source:
                continue
            claim_name = source.get("claimName", "")
            claim = store.get(CLAIMS, namespace, claim_name)
            if claim is None:
                return f'persistentvolumeclaim "{claim_name}" not found', []
            if claim["metadata"].get("deletionTimestamp"):
                return f'persistentvolumeclaim "{claim_name}" is being deleted', []
            if (claim.get("status") or {}).get("phase") == "Bound":
                continue
            class_name = (claim.get("spec") or {}).get("storageClassName") or ""
            storage_class = store.get(CLASSES, "", class_name) if class_name else None
            if (
                storage_class is not None
                and storage_class.get("volumeBindingMode") == "WaitForFirstConsumer"
            ):
                late.append(claim_name)
                continue
            return "pod has unbound immediate PersistentVolumeClaims", []
        return "", late

    def _filter(
        self,
        spec: Obj,
        requests: dict[str, int],
        ports: set[tuple[str, str, int]],
        node: Obj,
    ) -> list[_Rejection]:
        """The default profile's filters, in order; the first that rejects a node decides."""
        node_spec = node.get("spec") or {}
        taints = node_spec.get("taints") or []
        tolerations = spec.get("tolerations") or []
        if node_spec.get("unschedulable") and not tolerates(
            tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        ):
            return [_Rejection("node(s) were unschedulable", False)]
        taint = untolerated_taint(spec, taints)
        if taint is not None:
            return [
                _Rejection(
                    f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}",
                    False,
                )
            ]
        if not matches_affinity(spec, node):
            return [_Rejection("node(s) didn't match Pod's node affinity/selector", False)]
        usage = self._usage.get(node["metadata"]["name"]) or _NodeUsage()
        if ports and any(usage.host_ports[p] > 0 for p in ports):
            return [_Rejection("node(s) didn't have free ports for the requested pod ports", True)]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        reasons = []
        if usage.pods + 1 > _amount("pods", allocatable.get("pods", 0)):
            reasons.append(_Rejection("Too many pods", True))
        for resource, amount in sorted(requests.items()):
            if amount <= 0:
                continue
            have = _amount(resource, allocatable.get(resource, 0))
            if usage.requested[resource] + amount > have:
                reasons.append(_Rejection(f"Insufficient {resource}", True))
        return reasons

    def _score(self, requests: dict[str, int], node: Obj) -> tuple[float, int, str]:
        """Least allocated first (lower is better), then fewer pods, then name."""
        name = node["metadata"]["name"]
        usage = self._usage.get(name) or _NodeUsage()
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        cpu = max(_amount("cpu", allocatable.get("cpu", 0)), 1)
        memory = max(_amount("memory", allocatable.get("memory", 0)), 1)
        used_cpu = usage.nonzero_cpu + (requests.get("cpu") or _NONZERO_CPU)
        used_memory = usage.nonzero_memory + (requests.get("memory") or _NONZERO_MEMORY)
        allocated = (used_cpu / cpu + used_memory / memory) / 2
        return (round(allocated, 9), usage.pods, name)

    # --- outcomes ----------------------------------------------------------------------------

    def _bind(self, pod: Obj, node: str, late_claims: list[str]) -> None:
        meta = pod["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        opts = WriteOptions(field_manager=SCHEDULER)
        for claim_name in late_claims:
            claim = self.cluster.store.get(CLAIMS, namespace, claim_name)
            if claim is None:
                continue
            annotations = dict(claim["metadata"].get("annotations") or {})
            if annotations.get(SELECTED_NODE) == node:
                continue
            annotations[SELECTED_NODE] = node
            with contextlib.suppress(status.APIError):
                self.cluster.update(
                    self._claims, namespace, claim_name,
                    {**claim, "metadata": {**claim["metadata"], "annotations": annotations}}, opts,
                )  # fmt: skip
        try:
            self.cluster.bind(
                namespace,
                name,
                {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                 "target": {"apiVersion": "v1", "kind": "Node", "name": node}},
                opts,
            )  # fmt: skip
        except (status.Conflict, status.NotFound):
            return  # bound or deleted meanwhile
        self._unschedulable.discard((namespace, name))
        bound = self.cluster.store.get(PODS, namespace, name) or pod
        self.events.record(
            bound, NORMAL, "Scheduled", f"Successfully assigned {namespace}/{name} to {node}"
        )

    def _unschedulable_pod(self, pod: Obj, message: str) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        self._unschedulable.add(key)
        pod_status = dict(pod.get("status") or {})
        conditions = [dict(c) for c in pod_status.get("conditions") or []]
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if (
            current is not None
            and current.get("status") == "False"
            and current.get("message") == message
        ):
            return  # already said; no new write, no new event
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": (
                current.get("lastTransitionTime")
                if current is not None and current.get("status") == "False"
                else timestamp(self.cluster.clock())
            ),
            "reason": "Unschedulable",
            "message": message,
        }
        conditions = [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]
        pod_status["conditions"] = conditions
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._pods, key[0], key[1], {**pod, "status": pod_status},
                WriteOptions(field_manager=SCHEDULER), "status",
            )  # fmt: skip
        self.events.record(pod, WARNING, "FailedScheduling", message)


def _fit_error(total: int, rejections: Counter[str], resolvable: int) -> str:
    """FitError.Error(): reasons counted per node, sorted as strings, then preemption's verdict."""
    reasons = sorted(f"{count} {reason}" for reason, count in rejections.items())
    message = f"0/{total} nodes are available"
    message += f": {', '.join(reasons)}." if reasons else "."
    verdicts = []
    if resolvable:
        verdicts.append(f"{resolvable} No preemption victims found for incoming pod")
    if total - resolvable:
        verdicts.append(f"{total - resolvable} Preemption is not helpful for scheduling")
    if total:
        message += f" preemption: 0/{total} nodes are available: {', '.join(sorted(verdicts))}."
    return message
