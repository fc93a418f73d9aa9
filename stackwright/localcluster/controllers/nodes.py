"""Simulated nodes: their Node objects, heartbeats, and what happens when one fails.

Plays two parts of a real cluster. The kubelets' node half: K nodes named
`node-1` … `node-K` registered at start (4 CPUs, 16Gi, 110 pods each; zones
`zone-a` / `zone-b` / `zone-c` in turn), a Lease in `kube-node-lease` renewed
every 10 simulated seconds and a node status heartbeat every 60. And
kube-controller-manager's node lifecycle: a node annotated
`stackwright.io/simulate: failed` (what `stackwright cluster node fail` sets)
stops heartbeating, goes Ready=Unknown with the `node.kubernetes.io/unreachable`
taints, its pods are marked Ready=False and then evicted (DisruptionTarget,
deleted) so their controllers replace them — a naked pod is simply lost. A
cordoned node (`spec.unschedulable`) gets the `node.kubernetes.io/unschedulable`
taint. Pods bound to a node that does not exist are collected, as PodGC does.

Simplification, said plainly: a real cluster leaves the evicted pods of an
unreachable node Terminating until the node comes back or is removed; here they
are force-deleted shortly after eviction, as if the node had been taken out of
service, so namespaces and StatefulSets do not hang on a simulated failure.

Must never: write a heartbeat for a failed node, or mark a pod it does not
have to (status writes are compared first, so a steady cluster stays quiet).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import re
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.schema import KUBERNETES_VERSION
from stackwright.localcluster.store import DELETED, Change, Obj

NODES = ("", "nodes")
PODS = ("", "pods")
LEASES = ("coordination.k8s.io", "leases")
LEASE_NAMESPACE = "kube-node-lease"

#: The annotation `stackwright cluster node fail` sets; removing it recovers the node.
SIMULATE_ANNOTATION = "stackwright.io/simulate"
FAILED = "failed"

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
#: Taints this controller owns; any other taint on a node is the user's and is kept.
_MANAGED_TAINTS = frozenset(
    {UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT, "node.kubernetes.io/not-ready"}
)

#: The conditions a joining node's kubelet reports, each with an Event, before NodeReady.
_JOINING = ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID")

ZONES = ("zone-a", "zone-b", "zone-c")
CAPACITY = {
    "cpu": "4",
    "ephemeral-storage": "100Gi",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    "memory": "16Gi",
    "pods": "110",
}

# Simulated seconds (divided by --speed): the kubelet renews its lease every 10 s and
# reports node status every minute when nothing changes, as kubelet 1.33 does.
LEASE_RENEW = 10.0
STATUS_REPORT = 60.0
LEASE_DURATION = 40
# A failed node is noticed after a short beat (the real grace period is 40 s); its pods
# are evicted after EVICTION base seconds — standing for the default 300 s
# tolerationSeconds — and force-deleted GC_DELAY later.
NOTICE_DELAY = 0.2
EVICTION = 1.0
GC_DELAY = 0.5

MANAGER = "kube-controller-manager"
KUBELET = "kubelet"
_NODE_NAME = re.compile(r"node-(\d+)")


def node_name(index: int) -> str:
    """The name of simulated node `index` (1-based)."""
    return f"node-{index}"


def is_failed(node: Obj | None) -> bool:
    """Whether a node is down: annotated failed by `stackwright cluster node fail`."""
    if node is None:
        return True
    return (node["metadata"].get("annotations") or {}).get(SIMULATE_ANNOTATION) == FAILED


def micro_time(moment: datetime.datetime) -> str:
    """metav1.MicroTime as the API writes it (Lease renew times, event times)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _conditions(failed: bool, now: str, previous: list[Obj]) -> list[Obj]:
    """Node conditions as the kubelet posts them, or as the lifecycle controller marks a lost node."""
    if failed:
        rows = [
            ("MemoryPressure", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
            ("DiskPressure", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
            ("PIDPressure", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
            ("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
        ]  # fmt: skip
    else:
        rows = [
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ]  # fmt: skip
    before = {c.get("type"): c for c in previous}
    out = []
    for type_, value, reason, message in rows:
        old = before.get(type_) or {}
        changed = old.get("status") != value
        out.append(
            {
                "type": type_,
                "status": value,
                # A lost node's last heartbeat is the last one its kubelet sent.
                "lastHeartbeatTime": old.get("lastHeartbeatTime", now) if failed else now,
                "lastTransitionTime": now if changed else old.get("lastTransitionTime", now),
                "reason": reason,
                "message": message,
            }
        )
    return out


def _same_conditions(a: list[Obj], b: list[Obj]) -> bool:
    """Equal but for heartbeat times."""

    def strip(conditions: list[Obj]) -> list[tuple[Any, ...]]:
        return [(c.get("type"), c.get("status"), c.get("reason")) for c in conditions]

    return strip(a) == strip(b)


class NodeController(Controller):
    """The simulated nodes' registration, heartbeats and lifecycle."""

    name = "node-controller"

    def __init__(self, cluster: Cluster, *, nodes: int = 1, pace: Pace | None = None) -> None:
        self.pace = pace or Pace()
        self.count = max(nodes, 1)
        self._nodes = cluster.type_for("", "v1", "nodes")
        self._pods = cluster.type_for("", "v1", "pods")
        self._leases = cluster.type_for("coordination.k8s.io", "v1", "leases")
        # Pods by the node they are bound to: a failed node's pods without a scan.
        self._on_node: dict[str, set[tuple[str, str]]] = {}
        self._down: set[str] = set()
        super().__init__(cluster)
        for pod in cluster.store.items(PODS):
            self._index_pod(None, pod)
        self._register()
        for node in cluster.store.items(NODES):
            if is_failed(node):
                self._down.add(node["metadata"]["name"])

    # --- registration ------------------------------------------------------------

    def simulated(self) -> list[str]:
        return [node_name(i) for i in range(1, self.count + 1)]

    def _register(self) -> None:
        """Create the simulated nodes and their leases; remove simulated nodes beyond K."""
        store = self.cluster.store
        for index in range(1, self.count + 1):
            name = node_name(index)
            if store.get(NODES, "", name) is None:
                self._create_node(index)
            if store.get(LEASES, LEASE_NAMESPACE, name) is None:
                self._renew_lease(name)
        for node in store.items(NODES):
            name = node["metadata"]["name"]
            match = _NODE_NAME.fullmatch(name)
            if match and int(match.group(1)) > self.count:
                # Started with fewer nodes than before: the extra ones are gone.
                with contextlib.suppress(status.NotFound):
                    self.cluster.delete(self._nodes, "", name, DeleteOptions())
                with contextlib.suppress(status.NotFound):
                    self.cluster.delete(self._leases, LEASE_NAMESPACE, name, DeleteOptions())

    def _create_node(self, index: int) -> None:
        name = node_name(index)
        zone = ZONES[(index - 1) % len(ZONES)]
        cidr = f"10.244.{index - 1}.0/24"
        digest = hashlib.sha256(name.encode()).hexdigest()
        node: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "topology.kubernetes.io/zone": zone,
                },
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": {
                "podCIDR": cidr,
                "podCIDRs": [cidr],
                "providerID": f"stackwright://{name}",
            },
        }
        written = self.cluster.create(self._nodes, "", node, WriteOptions(field_manager=KUBELET))
        now = timestamp(self.cluster.clock())
        reported = dict(written.obj)
        reported["status"] = {
            "capacity": dict(CAPACITY),
            "allocatable": dict(CAPACITY),
            "conditions": _conditions(False, now, []),
            "addresses": [
                {"type": "InternalIP", "address": f"172.18.0.{index + 1}"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uuid_from(digest[:32]),
                "containerRuntimeVersion": "containerd://2.0.4",
                "kernelVersion": "6.8.0-stackwright",
                "kubeProxyVersion": f"v{KUBERNETES_VERSION}",
                "kubeletVersion": f"v{KUBERNETES_VERSION}",
                "machineID": digest[:32],
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": _uuid_from(digest[32:64]),
            },
        }
        self.cluster.update(
            self._nodes, "", name, reported, WriteOptions(field_manager=KUBELET), "status"
        )
        self._announce(written.obj)

    def _announce(self, node: Obj) -> None:
        """The Events a node's kubelet and the node controller record as it joins, once (not
        on a server restart: the node is made once). A kubelet names its node by name for
        uid, as upstream's does, and `kubectl describe node` looks for both."""
        name = node["metadata"]["name"]
        kubelet = EventRecorder(self.cluster, KUBELET, name)
        by_name = {**node, "metadata": {**node["metadata"], "uid": name}}
        kubelet.record(by_name, NORMAL, "Starting", "Starting kubelet.")
        for reason in _JOINING:
            kubelet.record(by_name, NORMAL, reason, f"Node {name} status is now: {reason}")
        kubelet.record(
            by_name, NORMAL, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"
        )
        kubelet.record(by_name, NORMAL, "NodeReady", f"Node {name} status is now: NodeReady")
        EventRecorder(self.cluster, "node-controller").record(
            node,
            NORMAL,
            "RegisteredNode",
            f"Node {name} event: Registered Node {name} in Controller",
        )

    def _renew_lease(self, name: str) -> None:
        store = self.cluster.store
        node = store.get(NODES, "", name)
        now = micro_time(self.cluster.clock())
        lease = store.get(LEASES, LEASE_NAMESPACE, name)
        opts = WriteOptions(field_manager=KUBELET)
        if lease is None:
            body: Obj = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": LEASE_NAMESPACE},
                "spec": {
                    "holderIdentity": name,
                    "leaseDurationSeconds": LEASE_DURATION,
                    "renewTime": now,
                },
            }
            if node is not None:
                body["metadata"]["ownerReferences"] = [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "name": name,
                        "uid": node["metadata"]["uid"],
                    }
                ]
            with contextlib.suppress(status.APIError):
                self.cluster.create(self._leases, LEASE_NAMESPACE, body, opts)
            return
        renewed = {**lease, "spec": {**(lease.get("spec") or {}), "renewTime": now}}
        with contextlib.suppress(status.APIError):
            self.cluster.update(self._leases, LEASE_NAMESPACE, name, renewed, opts)

    def _report_status(self, name: str) -> None:
        """The periodic node status heartbeat: conditions with a fresh lastHeartbeatTime."""
        node = self.cluster.store.get(NODES, "", name)
        if node is None or is_failed(node):
            return
        node_status = dict(node.get("status") or {})
        node_status["conditions"] = _conditions(
            False, timestamp(self.cluster.clock()), node_status.get("conditions") or []
        )
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._nodes,
                "",
                name,
                {**node, "status": node_status},
                WriteOptions(field_manager=KUBELET),
                "status",
            )

    async def run(self) -> None:
        heartbeat = asyncio.ensure_future(self._heartbeat())
        try:
            await super().run()
        finally:
            heartbeat.cancel()

    async def _heartbeat(self) -> None:
        # A floor keeps an extreme --speed from turning heartbeats into a busy loop.
        interval = max(self.pace.seconds(LEASE_RENEW), 0.2)
        reports_every = max(int(STATUS_REPORT / LEASE_RENEW), 1)
        beat = 0
        while True:
            await asyncio.sleep(interval)
            beat += 1
            for name in self.simulated():
                node = self.cluster.store.get(NODES, "", name)
                if node is None or is_failed(node):
                    continue
                self._renew_lease(name)
                if beat % reports_every == 0:
                    self._report_status(name)

    # --- the pod index -------------------------------------------------------------

    def _index_pod(self, old: Obj | None, new: Obj | None) -> None:
        for pod, add in ((old, False), (new, True)):
            if pod is None:
                continue
            node = (pod.get("spec") or {}).get("nodeName")
            if not node:
                continue
            key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
            if add:
                self._on_node.setdefault(node, set()).add(key)
            else:
                self._on_node.get(node, set()).discard(key)

    # --- reacting ----------------------------------------------------------------------

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == NODES:
            name = change.name
            if change.type == DELETED:
                self._down.discard(name)
                keys: list[Hashable] = [("node", name)]
                # Its pods are orphans now: PodGC collects them.
                keys += [("gc", ns, pod) for ns, pod in self._on_node.get(name, ())]
                return keys
            if is_failed(change.obj):
                self._down.add(name)
            else:
                self._down.discard(name)
            if change.old is None or _lifecycle_view(change.old) != _lifecycle_view(change.obj):
                return [("node", name)]
            return []
        if change.key == PODS:
            self._index_pod(change.old, None if change.type == DELETED else change.obj)
            if change.type == DELETED:
                return []
            node = (change.obj.get("spec") or {}).get("nodeName")
            if not node:
                return []
            if node in self._down and change.obj["metadata"].get("deletionTimestamp"):
                # The kubelet that would finish this deletion is down.
                self._later(("gc", change.namespace, change.name), GC_DELAY)
            elif node in self._down and (change.old is None or not _node_of(change.old)):
                self._later(("node", node), 0)
            elif self.cluster.store.get(NODES, "", node) is None:
                self._later(("gc", change.namespace, change.name), GC_DELAY)
            return []
        return []

    def _later(self, key: Hashable, base: float) -> None:
        # Without a running loop (registration at start) initial_keys() catches up.
        with contextlib.suppress(RuntimeError):
            self.enqueue_after(key, self.pace.seconds(base))

    def initial_keys(self) -> list[Hashable]:
        keys: list[Hashable] = [
            ("node", n["metadata"]["name"]) for n in self.cluster.store.items(NODES)
        ]
        for node, pods in self._on_node.items():
            if self.cluster.store.get(NODES, "", node) is None:
                keys += [("gc", ns, name) for ns, name in pods]
        return keys

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        if key[0] == "node":
            self._reconcile_node(key[1])
        elif key[0] == "evict":
            self._evict(key[1], key[2])
        elif key[0] == "gc":
            self._collect(key[1], key[2])

    def _reconcile_node(self, name: str) -> None:
        store = self.cluster.store
        node = store.get(NODES, "", name)
        if node is None:
            if name in self.simulated():
                # A deleted node's kubelet registers it again, as a real kubelet would.
                self._create_node(int(name.split("-")[1]))
                self._renew_lease(name)
            return
        failed = is_failed(node)
        self._sync_taints(node, failed)
        node = store.get(NODES, "", name)
        assert node is not None
        node_status = node.get("status") or {}
        previous = node_status.get("conditions") or []
        if name in self.simulated() or previous:
            wanted = _conditions(failed, timestamp(self.cluster.clock()), previous)
            if not _same_conditions(previous, wanted):
                with contextlib.suppress(status.APIError):
                    self.cluster.update(
                        self._nodes, "", name,
                        {**node, "status": {**node_status, "conditions": wanted}},
                        WriteOptions(field_manager=MANAGER if failed else KUBELET), "status",
                    )  # fmt: skip
        if failed:
            self._mark_pods(name)
        elif name in self.simulated():
            self._renew_lease(name)

    def _sync_taints(self, node: Obj, failed: bool) -> None:
        spec = node.get("spec") or {}
        taints = [t for t in spec.get("taints") or [] if t.get("key") not in _MANAGED_TAINTS]
        current = {(t.get("key"), t.get("effect")): t for t in spec.get("taints") or []}
        wanted: list[tuple[str, str]] = []
        if spec.get("unschedulable"):
            wanted.append((UNSCHEDULABLE_TAINT, "NoSchedule"))
        if failed:
            wanted += [(UNREACHABLE_TAINT, "NoSchedule"), (UNREACHABLE_TAINT, "NoExecute")]
        now = timestamp(self.cluster.clock())
        for key, effect in wanted:
            taints.append(
                current.get((key, effect)) or {"key": key, "effect": effect, "timeAdded": now}
            )
        if taints == list(spec.get("taints") or []):
            return
        new_spec = dict(spec)
        if taints:
            new_spec["taints"] = taints
        else:
            new_spec.pop("taints", None)
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._nodes, "", node["metadata"]["name"], {**node, "spec": new_spec},
                WriteOptions(field_manager=MANAGER),
            )  # fmt: skip

    def _mark_pods(self, node: str) -> None:
        """MarkPodsNotReady, then schedule each pod's eviction after its toleration."""
        for namespace, name in sorted(self._on_node.get(node, ())):
            pod = self.cluster.store.get(PODS, namespace, name)
            if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            self._set_condition(pod, "Ready", "False", "", "")
            delay = _eviction_delay(pod)
            if delay is not None:
                self._later(("evict", namespace, name), NOTICE_DELAY + delay)

    def _set_condition(self, pod: Obj, type_: str, value: str, reason: str, message: str) -> None:
        pod_status = dict(pod.get("status") or {})
        conditions = [dict(c) for c in pod_status.get("conditions") or []]
        for condition in conditions:
            if condition.get("type") == type_:
                if condition.get("status") == value:
                    return
                condition["status"] = value
                condition["lastTransitionTime"] = timestamp(self.cluster.clock())
                break
        else:
            entry: Obj = {
                "type": type_,
                "status": value,
                "lastProbeTime": None,
                "lastTransitionTime": timestamp(self.cluster.clock()),
            }
            if reason:
                entry.update(reason=reason, message=message)
            conditions.append(entry)
        pod_status["conditions"] = conditions
        meta = pod["metadata"]
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._pods, meta["namespace"], meta["name"], {**pod, "status": pod_status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip

    def _evict(self, namespace: str, name: str) -> None:
        """The taint-eviction controller: DisruptionTarget, then delete."""
        pod = self.cluster.store.get(PODS, namespace, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        node = (pod.get("spec") or {}).get("nodeName", "")
        if node not in self._down:
            return  # recovered in time
        self._set_condition(
            pod, "DisruptionTarget", "True", "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
        )  # fmt: skip
        with contextlib.suppress(status.NotFound):
            self.cluster.delete(self._pods, namespace, name, DeleteOptions())
        self._later(("gc", namespace, name), GC_DELAY)

    def _collect(self, namespace: str, name: str) -> None:
        """PodGC: force-delete a pod whose node is gone, or a terminating one on a failed node."""
        pod = self.cluster.store.get(PODS, namespace, name)
        if pod is None:
            return
        node = (pod.get("spec") or {}).get("nodeName", "")
        exists = self.cluster.store.get(NODES, "", node) is not None
        if exists and not (node in self._down and pod["metadata"].get("deletionTimestamp")):
            return
        if not pod["metadata"].get("deletionTimestamp"):
            self._set_condition(
                pod, "DisruptionTarget", "True", "DeletionByPodGC",
                "PodGC: node no longer exists",
            )  # fmt: skip
        with contextlib.suppress(status.NotFound, status.Conflict):
            self.cluster.delete(
                self._pods, namespace, name,
                DeleteOptions(grace_period_seconds=0, precondition_uid=pod["metadata"]["uid"]),
            )  # fmt: skip


def _node_of(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _lifecycle_view(node: Obj) -> tuple[Any, ...]:
    """What the lifecycle controller reacts to: failure, cordon, and its taints."""
    spec = node.get("spec") or {}
    return (is_failed(node), bool(spec.get("unschedulable")), spec.get("taints"))


def _eviction_delay(pod: Obj) -> float | None:
    """Base seconds until the taint-eviction controller evicts `pod` from an unreachable node.

    None when a toleration keeps it forever (DaemonSet pods); a tolerationSeconds
    scales the default delay, which stands for the default 300 s.
    """
    for toleration in (pod.get("spec") or {}).get("tolerations") or []:
        key, effect = toleration.get("key"), toleration.get("effect")
        if toleration.get("operator") == "Exists" and not key:
            pass
        elif key != UNREACHABLE_TAINT:
            continue
        if effect not in (None, "", "NoExecute"):
            continue
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            return None
        return EVICTION * max(float(seconds), 0.0) / 300.0
    return EVICTION


def _uuid_from(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:32]}"
