"""Services' data plane, as kube-controller-manager and a cloud provider keep it.

- Endpoints and discovery.k8s.io/v1 EndpointSlices for every Service with a
  selector, from its pods: a ready pod's address under `addresses` (slice
  condition ready), an unready one under `notReadyAddresses` (unless
  `publishNotReadyAddresses`), a terminating one only in the slice
  (terminating=true); ports resolved per pod from `targetPort` by number or by
  container port name. Slices carry `kubernetes.io/service-name`,
  `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` and
  an owner reference to the Service.
- LoadBalancer Services (without a `loadBalancerClass`) get
  `status.loadBalancer.ingress: [{ip: 172.18.255.N, ipMode: VIP}]` after a short
  delay, with EnsuringLoadBalancer / EnsuredLoadBalancer events.
- Ingresses get `status.loadBalancer.ingress` once their IngressClass exists
  (spec.ingressClassName, or the class annotated as default).

Node ports are allocated by the API at create (see `Cluster._admit_service`).

Must never: rescan all pods on a pod change (pods and services are indexed by
namespace, and a pod change that alters nothing endpoints show enqueues nothing),
or rewrite an Endpoints object whose content did not change.
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.store import DELETED, Change, Obj

PODS = ("", "pods")
SERVICES = ("", "services")
ENDPOINTS = ("", "endpoints")
SLICES = ("discovery.k8s.io", "endpointslices")
NODES = ("", "nodes")
INGRESSES = ("networking.k8s.io", "ingresses")
INGRESS_CLASSES = ("networking.k8s.io", "ingressclasses")

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
SLICE_MANAGER = "endpointslice-controller.k8s.io"
TRIGGER_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
DEFAULT_INGRESS_CLASS = "ingressclass.kubernetes.io/is-default-class"
LB_POOL = ipaddress.ip_network("172.18.255.0/24")
LB_DELAY = 0.3  # base seconds until a load balancer has its address

PodKey = tuple[str, str]


def _selector_matches(selector: dict[str, str], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())


def _pod_view(pod: Obj | None) -> tuple[Any, ...] | None:
    """What endpoints show of a pod; a change elsewhere concerns no Service."""
    if pod is None:
        return None
    pod_status = pod.get("status") or {}
    ready = next(
        (c.get("status") for c in pod_status.get("conditions") or [] if c.get("type") == "Ready"),
        None,
    )
    return (
        pod_status.get("podIP"),
        ready,
        pod_status.get("phase"),
        bool(pod["metadata"].get("deletionTimestamp")),
        (pod.get("spec") or {}).get("nodeName"),
        pod["metadata"].get("uid"),
    )


def _is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _resolve_port(port: Obj, pod: Obj) -> int | None:
    """podutil.FindPort: a number as is, a name by the pod's container ports, then by its
    sidecars' (init containers with restartPolicy Always)."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or []), *sidecars]:
        for declared in container.get("ports") or []:
            if declared.get("name") == target and (declared.get("protocol") or "TCP") == protocol:
                return int(declared["containerPort"])
    return None


class ServiceController(Controller):
    """Endpoints, EndpointSlices, load balancer and ingress status."""

    name = "endpoint-controller"

    def __init__(self, cluster: Cluster, pace: Pace | None = None) -> None:
        self.pace = pace or Pace()
        self._types = {
            key: cluster.type_for(*gvp)
            for key, gvp in (
                (SERVICES, ("", "v1", "services")),
                (ENDPOINTS, ("", "v1", "endpoints")),
                (SLICES, ("discovery.k8s.io", "v1", "endpointslices")),
                (INGRESSES, ("networking.k8s.io", "v1", "ingresses")),
            )
        }
        self._pods: dict[str, dict[str, Obj]] = {}
        self._selectors: dict[str, dict[str, dict[str, str]]] = {}
        self._slices: dict[PodKey, str] = {}
        self._lb_ips: dict[str, str] = {}  # "svc/ns/name" or "class/name" → address
        self.events = EventRecorder(cluster, "service-controller")
        super().__init__(cluster)
        store = cluster.store
        for pod in store.items(PODS):
            self._pods.setdefault(pod["metadata"]["namespace"], {})[pod["metadata"]["name"]] = pod
        for svc in store.items(SERVICES):
            self._index_service(svc)
            for entry in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
                if entry.get("ip"):
                    meta = svc["metadata"]
                    self._lb_ips[f"svc/{meta['namespace']}/{meta['name']}"] = entry["ip"]
        for ing in store.items(INGRESSES):
            for entry in ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
                cls = self._ingress_class(ing)
                if entry.get("ip") and cls:
                    self._lb_ips.setdefault(f"class/{cls}", entry["ip"])
        for eps in store.items(SLICES):
            labels = eps["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY_LABEL) == SLICE_MANAGER and labels.get(SERVICE_NAME_LABEL):
                key = (eps["metadata"]["namespace"], labels[SERVICE_NAME_LABEL])
                self._slices[key] = eps["metadata"]["name"]

    # --- indexes --------------------------------------------------------------------------

    def _index_service(self, svc: Obj) -> None:
        meta = svc["metadata"]
        selector = (svc.get("spec") or {}).get("selector")
        services = self._selectors.setdefault(meta["namespace"], {})
        if selector and (svc.get("spec") or {}).get("type") != "ExternalName":
            services[meta["name"]] = dict(selector)
        else:
            services.pop(meta["name"], None)

    def keys_for(self, change: Change) -> list[Hashable]:
        ns = change.namespace
        if change.key == PODS:
            pods = self._pods.setdefault(ns, {})
            if change.type == DELETED:
                pods.pop(change.name, None)
            else:
                pods[change.name] = change.obj
            new = None if change.type == DELETED else change.obj
            old = change.old
            if _pod_view(old) == _pod_view(new) and (
                (old or {}).get("metadata", {}).get("labels")
                == (new or {}).get("metadata", {}).get("labels")
            ):
                return []
            keys: list[Hashable] = []
            for name, selector in self._selectors.get(ns, {}).items():
                if any(
                    p is not None and _selector_matches(selector, p["metadata"].get("labels"))
                    for p in (old, new)
                ):
                    keys.append(("endpoints", ns, name))
            return keys
        if change.key == SERVICES:
            if change.type == DELETED:
                self._selectors.get(ns, {}).pop(change.name, None)
            else:
                self._index_service(change.obj)
            return [("endpoints", ns, change.name), ("lb", ns, change.name)]
        if change.key == SLICES and change.type == DELETED:
            if self._slices.get((ns, _service_of(change.obj))) == change.name:
                del self._slices[(ns, _service_of(change.obj))]
                return [("endpoints", ns, _service_of(change.obj))]
            return []
        if change.key == INGRESSES and change.type != DELETED:
            return [("ingress", ns, change.name)]
        if change.key == INGRESS_CLASSES:
            return [
                ("ingress", i["metadata"]["namespace"], i["metadata"]["name"])
                for i in self.cluster.store.items(INGRESSES)
            ]
        return []

    def initial_keys(self) -> list[Hashable]:
        keys: list[Hashable] = []
        for svc in self.cluster.store.items(SERVICES):
            meta = svc["metadata"]
            keys += [
                ("endpoints", meta["namespace"], meta["name"]),
                ("lb", meta["namespace"], meta["name"]),
            ]
        keys += [
            ("ingress", i["metadata"]["namespace"], i["metadata"]["name"])
            for i in self.cluster.store.items(INGRESSES)
        ]
        return keys

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        kind, namespace, name = key
        if kind == "endpoints":
            self._endpoints(namespace, name)
        elif kind == "lb":
            self._load_balancer(namespace, name, provision=False)
        elif kind == "lb-ready":
            self._load_balancer(namespace, name, provision=True)
        elif kind == "ingress":
            self._ingress(namespace, name)

    # --- endpoints ---------------------------------------------------------------------------

    def _endpoints(self, namespace: str, name: str) -> None:
        svc = self.cluster.store.get(SERVICES, namespace, name)
        selector = self._selectors.get(namespace, {}).get(name)
        if svc is None or selector is None:
            if svc is None:
                # The endpoints controller removes a deleted Service's Endpoints; its
                # slices go with their owner reference.
                with contextlib.suppress(status.NotFound):
                    existing = self.cluster.store.get(ENDPOINTS, namespace, name)
                    if existing is not None and not _user_managed(existing):
                        self.cluster.delete(
                            self._types[ENDPOINTS], namespace, name, DeleteOptions()
                        )
            return
        if svc["metadata"].get("deletionTimestamp"):
            return
        spec = svc.get("spec") or {}
        publish_all = bool(spec.get("publishNotReadyAddresses"))
        ports = spec.get("ports") or []
        pods = [
            p
            for p in self._pods.get(namespace, {}).values()
            if _selector_matches(selector, p["metadata"].get("labels"))
            and (p.get("status") or {}).get("podIP")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        pods.sort(key=lambda p: (ipaddress.ip_address(p["status"]["podIP"]), p["metadata"]["name"]))
        subsets: dict[tuple[tuple[Any, ...], ...], Obj] = {}
        endpoints: list[Obj] = []
        slice_ports: list[Obj] | None = None
        for pod in pods:
            meta = pod["metadata"]
            node = (pod.get("spec") or {}).get("nodeName")
            target = {
                "kind": "Pod",
                "namespace": namespace,
                "name": meta["name"],
                "uid": meta["uid"],
            }
            address: Obj = {"ip": pod["status"]["podIP"]}
            if node:
                address["nodeName"] = node
            address["targetRef"] = target
            resolved: list[Obj] = []
            for port in ports:
                number = _resolve_port(port, pod)
                if number is None:
                    continue
                entry: Obj = {"port": number, "protocol": port.get("protocol") or "TCP"}
                if port.get("name"):
                    entry["name"] = port["name"]
                if port.get("appProtocol"):
                    entry["appProtocol"] = port["appProtocol"]
                resolved.append(entry)
            ready = _is_ready(pod) or publish_all
            terminating = bool(meta.get("deletionTimestamp"))
            slice_entry: Obj = {
                "addresses": [pod["status"]["podIP"]],
                "conditions": {
                    "ready": ready and not terminating,
                    "serving": ready,
                    "terminating": terminating,
                },
                "targetRef": target,
            }
            if node:
                slice_entry["nodeName"] = node
                zone = (
                    (self.cluster.store.get(NODES, "", node) or {})
                    .get("metadata", {})
                    .get("labels")
                    or {}
                ).get("topology.kubernetes.io/zone")
                if zone:
                    slice_entry["zone"] = zone
            endpoints.append(slice_entry)
            if slice_ports is None and (resolved or not ports):
                slice_ports = [{"name": p.get("name", ""), **p} for p in resolved]
            if terminating and not publish_all:
                continue  # Endpoints leave terminating pods out
            if ports and not resolved:
                continue
            group = tuple(sorted(tuple(sorted(p.items())) for p in resolved))
            subset = subsets.setdefault(group, {"ports": resolved} if resolved else {})
            subset.setdefault("addresses" if ready else "notReadyAddresses", []).append(address)
        self._write_endpoints(svc, list(subsets.values()))
        self._write_slice(svc, endpoints, slice_ports or [])

    def _labels_for(self, svc: Obj) -> dict[str, str]:
        labels = dict(svc["metadata"].get("labels") or {})
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels["service.kubernetes.io/headless"] = ""
        return labels

    def _write_endpoints(self, svc: Obj, subsets: list[Obj]) -> None:
        meta = svc["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        labels = self._labels_for(svc)
        existing = self.cluster.store.get(ENDPOINTS, namespace, name)
        opts = WriteOptions(field_manager="endpoint-controller")
        if (
            existing is not None
            and (existing.get("subsets") or []) == subsets
            and (existing["metadata"].get("labels") or {}) == labels
        ):
            return
        now = timestamp(self.cluster.clock())
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": labels,
                "annotations": {TRIGGER_ANNOTATION: now},
            },
        }
        if subsets:
            body["subsets"] = subsets
        with contextlib.suppress(status.APIError):
            if existing is None:
                self.cluster.create(self._types[ENDPOINTS], namespace, body, opts)
            else:
                body["metadata"] = {**existing["metadata"], "labels": labels, "annotations": {
                    **(existing["metadata"].get("annotations") or {}), TRIGGER_ANNOTATION: now}}  # fmt: skip
                self.cluster.update(self._types[ENDPOINTS], namespace, name, body, opts)

    def _write_slice(self, svc: Obj, endpoints: list[Obj], ports: list[Obj]) -> None:
        meta = svc["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        labels = {
            **self._labels_for(svc),
            SERVICE_NAME_LABEL: name,
            MANAGED_BY_LABEL: SLICE_MANAGER,
        }
        slice_name = self._slices.get((namespace, name))
        existing = self.cluster.store.get(SLICES, namespace, slice_name) if slice_name else None
        if (
            existing is not None
            and (existing.get("endpoints") or []) == endpoints
            and (existing.get("ports") or []) == ports
            and (existing["metadata"].get("labels") or {}) == labels
        ):
            return
        opts = WriteOptions(field_manager=SLICE_MANAGER)
        now = timestamp(self.cluster.clock())
        body: Obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "generateName": f"{name}-",
                "namespace": namespace,
                "labels": labels,
                "annotations": {TRIGGER_ANNOTATION: now},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Service",
                        "name": name,
                        "uid": meta["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": ports,
        }
        with contextlib.suppress(status.APIError):
            if existing is None:
                written = self.cluster.create(self._types[SLICES], namespace, body, opts)
                self._slices[(namespace, name)] = written.obj["metadata"]["name"]
            else:
                assert slice_name is not None
                body["metadata"] = {
                    **existing["metadata"],
                    "labels": labels,
                    "annotations": {
                        **(existing["metadata"].get("annotations") or {}),
                        TRIGGER_ANNOTATION: now,
                    },
                }
                self.cluster.update(self._types[SLICES], namespace, slice_name, body, opts)

    # --- load balancers --------------------------------------------------------------------------

    def _allocate_lb_ip(self, owner: str, wanted: str | None = None) -> str:
        if owner in self._lb_ips:
            return self._lb_ips[owner]
        used = set(self._lb_ips.values())
        if wanted and wanted not in used:
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(wanted) in LB_POOL:
                    self._lb_ips[owner] = wanted
                    return wanted
        for host in range(1, LB_POOL.num_addresses - 1):
            candidate = str(LB_POOL.network_address + host)
            if candidate not in used:
                self._lb_ips[owner] = candidate
                return candidate
        return ""

    def _load_balancer(self, namespace: str, name: str, *, provision: bool) -> None:
        owner = f"svc/{namespace}/{name}"
        svc = self.cluster.store.get(SERVICES, namespace, name)
        if svc is None:
            self._lb_ips.pop(owner, None)
            return
        spec = svc.get("spec") or {}
        current = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")
        wants = spec.get("type") == "LoadBalancer" and not spec.get("loadBalancerClass")
        if not wants:
            if current and spec.get("type") != "LoadBalancer":
                self._lb_ips.pop(owner, None)
                self._write_service_status(svc, {})
            return
        if current:
            return
        if not provision:
            self.events.record(svc, NORMAL, "EnsuringLoadBalancer", "Ensuring load balancer")
            self.enqueue_after(("lb-ready", namespace, name), self.pace.seconds(LB_DELAY))
            return
        ip = self._allocate_lb_ip(owner, spec.get("loadBalancerIP"))
        if not ip:
            return
        self._write_service_status(svc, {"ingress": [{"ip": ip, "ipMode": "VIP"}]})
        self.events.record(svc, NORMAL, "EnsuredLoadBalancer", "Ensured load balancer")

    def _write_service_status(self, svc: Obj, balancer: Obj) -> None:
        meta = svc["metadata"]
        new_status = {**(svc.get("status") or {}), "loadBalancer": balancer}
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._types[SERVICES], meta["namespace"], meta["name"], {**svc, "status": new_status},
                WriteOptions(field_manager="service-controller"), "status",
            )  # fmt: skip

    # --- ingresses --------------------------------------------------------------------------------

    def _ingress_class(self, ingress: Obj) -> str:
        """The IngressClass an Ingress belongs to, if it exists: named, else the default one."""
        store = self.cluster.store
        named = (ingress.get("spec") or {}).get("ingressClassName") or (
            ingress["metadata"].get("annotations") or {}
        ).get("kubernetes.io/ingress.class")
        if named:
            return named if store.get(INGRESS_CLASSES, "", named) is not None else ""
        for cls in store.items(INGRESS_CLASSES):
            if (cls["metadata"].get("annotations") or {}).get(DEFAULT_INGRESS_CLASS) == "true":
                return str(cls["metadata"]["name"])
        return ""

    def _ingress(self, namespace: str, name: str) -> None:
        ingress = self.cluster.store.get(INGRESSES, namespace, name)
        if ingress is None or ingress["metadata"].get("deletionTimestamp"):
            return
        cls = self._ingress_class(ingress)
        if not cls:
            return
        current = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress")
        ip = self._allocate_lb_ip(f"class/{cls}")
        wanted = [{"ip": ip}]
        if current == wanted or not ip:
            return
        new_status = {**(ingress.get("status") or {}), "loadBalancer": {"ingress": wanted}}
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._types[INGRESSES], namespace, name, {**ingress, "status": new_status},
                WriteOptions(field_manager="ingress-controller"), "status",
            )  # fmt: skip


def _service_of(slice_obj: Obj) -> str:
    return str((slice_obj["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL, ""))


def _user_managed(endpoints: Obj) -> bool:
    """Endpoints a user wrote for a selector-less Service (no controller trigger annotation)."""
    return TRIGGER_ANNOTATION not in (endpoints["metadata"].get("annotations") or {})
