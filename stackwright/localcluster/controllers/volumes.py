"""Storage: default StorageClasses, claim binding, dynamic provisioning, claim protection.

The cluster ships two classes of the `stackwright.io/local-path` provisioner:
`standard` (the default class, volumeBindingMode Immediate) and `standard-wffc`
(WaitForFirstConsumer). As kube-controller-manager's PV controller and an
external provisioner together do:

- a claim binds to an Available volume that fits (class, access modes, size),
  else, when its class is ours, a volume `pvc-<claim uid>` (hostPath, the
  requested size, reclaimPolicy of the class) is provisioned after a short delay
  and bound — for WaitForFirstConsumer only once the scheduler has put a pod
  using it on a node (`volume.kubernetes.io/selected-node`);
- a class that does not exist leaves the claim Pending with a
  ProvisioningFailed warning; one of another provisioner, Pending with
  ExternalProvisioning;
- a deleted claim's volume is deleted (reclaimPolicy Delete) or Released (Retain);
- a claim being deleted keeps its `kubernetes.io/pvc-protection` finalizer (added
  at create by the API) until no pod uses it.

Must never: provision twice for one claim, or free a claim a running pod uses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import (
    DEFAULT_CLASS_ANNOTATION,
    PVC_PROTECTION,
    Cluster,
    DeleteOptions,
    WriteOptions,
    timestamp,
)
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.store import DELETED, Change, Obj
from stackwright.localcluster.validation import parse_quantity

PODS = ("", "pods")
CLAIMS = ("", "persistentvolumeclaims")
VOLUMES = ("", "persistentvolumes")
CLASSES = ("storage.k8s.io", "storageclasses")

PROVISIONER = "stackwright.io/local-path"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
MANAGER = "persistentvolume-controller"
PROVISION_TIME = 0.1  # base seconds to provision a volume
VOLUME_ROOT = "/var/lib/stackwright/volumes"

#: The classes every cluster starts with (created when missing, never overwritten).
DEFAULT_CLASSES: tuple[Obj, ...] = (
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": True,
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "standard-wffc"},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    },
)

PodKey = tuple[str, str]


def _size(value: Any) -> int:
    try:
        return int(parse_quantity(str(value)).value)
    except ValueError:
        return 0


def _claims_of(pod: Obj | None) -> set[str]:
    if pod is None:
        return set()
    return {
        v["persistentVolumeClaim"].get("claimName", "")
        for v in (pod.get("spec") or {}).get("volumes") or []
        if v.get("persistentVolumeClaim")
    }


def _uses(pod: Obj | None) -> bool:
    """Whether a pod counts as using its claims (pvc-protection): anything not finished."""
    return pod is not None and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


class VolumeController(Controller):
    name = "persistentvolume-binder"

    def __init__(self, cluster: Cluster, pace: Pace | None = None) -> None:
        self.pace = pace or Pace()
        self._claim_type = cluster.type_for("", "v1", "persistentvolumeclaims")
        self._volume_type = cluster.type_for("", "v1", "persistentvolumes")
        self._class_type = cluster.type_for("storage.k8s.io", "v1", "storageclasses")
        self._users: dict[PodKey, set[PodKey]] = {}  # (ns, claim) → pods using it
        self._provisioning: set[str] = set()  # claim uids a volume is being made for
        self._reported: set[tuple[str, str]] = set()  # (claim uid, reason) already evented
        self.events = EventRecorder(cluster, MANAGER)
        self.provisioner_events = EventRecorder(cluster, PROVISIONER)
        super().__init__(cluster)
        for pod in cluster.store.items(PODS):
            self._index_pod(None, pod)
        for storage_class in DEFAULT_CLASSES:
            if cluster.store.get(CLASSES, "", storage_class["metadata"]["name"]) is None:
                cluster.create(
                    self._class_type, "", storage_class, WriteOptions(field_manager=MANAGER)
                )

    def _index_pod(self, old: Obj | None, new: Obj | None) -> list[PodKey]:
        """Update who uses which claim; returns claims that lost a user."""
        lost: list[PodKey] = []
        meta = (new or old or {}).get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        before = _claims_of(old) if _uses(old) else set()
        after = _claims_of(new) if _uses(new) else set()
        for claim in before - after:
            users = self._users.get((key[0], claim))
            if users is not None:
                users.discard(key)
                if not users:
                    del self._users[(key[0], claim)]
            lost.append((key[0], claim))
        for claim in after - before:
            self._users.setdefault((key[0], claim), set()).add(key)
        return lost

    # --- reacting ---------------------------------------------------------------------

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == PODS:
            new = None if change.type == DELETED else change.obj
            lost = self._index_pod(change.old, new)
            return [("claim", ns, name) for ns, name in lost]
        if change.key == CLAIMS:
            if change.type == DELETED:
                uid = change.obj["metadata"].get("uid", "")
                self._provisioning.discard(uid)
                self._reported = {r for r in self._reported if r[0] != uid}
                volume = (change.obj.get("spec") or {}).get("volumeName")
                return [("volume", volume)] if volume else []
            return [("claim", change.namespace, change.name)]
        if change.key == VOLUMES and change.type != DELETED:
            return [("volume", change.name)]
        if change.key == CLASSES and change.type != DELETED:
            return [
                ("claim", c["metadata"]["namespace"], c["metadata"]["name"])
                for c in self.cluster.store.items(CLAIMS)
                if (c.get("status") or {}).get("phase") == "Pending"
            ]
        return []

    def initial_keys(self) -> list[Hashable]:
        keys: list[Hashable] = [
            ("claim", c["metadata"]["namespace"], c["metadata"]["name"])
            for c in self.cluster.store.items(CLAIMS)
        ]
        keys += [("volume", v["metadata"]["name"]) for v in self.cluster.store.items(VOLUMES)]
        return keys

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        if key[0] == "claim":
            self._claim(key[1], key[2])
        elif key[0] == "provision":
            self._provision(key[1], key[2])
        elif key[0] == "volume":
            self._volume(key[1])

    # --- claims ------------------------------------------------------------------------------

    def _claim(self, namespace: str, name: str) -> None:
        claim = self.cluster.store.get(CLAIMS, namespace, name)
        if claim is None:
            return
        meta = claim["metadata"]
        if meta.get("deletionTimestamp"):
            self._release_protection(claim)
            return
        spec = claim.get("spec") or {}
        if (claim.get("status") or {}).get("phase") == "Bound":
            return
        volume_name = spec.get("volumeName")
        if volume_name:
            volume = self.cluster.store.get(VOLUMES, "", volume_name)
            if volume is not None:
                self._bind(claim, volume)
            return
        match = self._find_volume(claim)
        if match is not None:
            self._bind(claim, match)
            return
        class_name = spec.get("storageClassName") or ""
        if not class_name:
            return  # no class: only a pre-made volume binds it
        storage_class = self.cluster.store.get(CLASSES, "", class_name)
        if storage_class is None:
            self._report_once(
                claim, WARNING, "ProvisioningFailed",
                f'storageclass.storage.k8s.io "{class_name}" not found',
            )  # fmt: skip
            return
        provisioner = storage_class.get("provisioner", "")
        if provisioner != PROVISIONER:
            self._report_once(
                claim, NORMAL, "ExternalProvisioning",
                f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                "or manually by the system administrator. If volume creation is delayed, please verify "
                "that the provisioner is running and correctly registered.",
            )  # fmt: skip
            return
        selected = (meta.get("annotations") or {}).get(SELECTED_NODE)
        if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer" and not selected:
            self._report_once(
                claim, NORMAL, "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
            )  # fmt: skip
            return
        uid = meta["uid"]
        if uid in self._provisioning:
            return
        self._provisioning.add(uid)
        self.provisioner_events.record(
            claim, NORMAL, "Provisioning",
            f'External provisioner is provisioning volume for claim "{namespace}/{name}"',
        )  # fmt: skip
        self.enqueue_after(("provision", namespace, name), self.pace.seconds(PROVISION_TIME))

    def _report_once(self, claim: Obj, type_: str, reason: str, message: str) -> None:
        key = (claim["metadata"].get("uid", ""), reason)
        if key in self._reported:
            return
        self._reported.add(key)
        self.events.record(claim, type_, reason, message)

    def _find_volume(self, claim: Obj) -> Obj | None:
        """The smallest Available volume that fits the claim (static binding)."""
        spec = claim.get("spec") or {}
        wanted = _size(((spec.get("resources") or {}).get("requests") or {}).get("storage", "0"))
        modes = set(spec.get("accessModes") or [])
        class_name = spec.get("storageClassName") or ""
        selector = spec.get("selector")
        best: tuple[int, str, Obj] | None = None
        for volume in self.cluster.store.items(VOLUMES):
            vspec = volume.get("spec") or {}
            if (volume.get("status") or {}).get("phase") != "Available" or vspec.get("claimRef"):
                continue
            if (vspec.get("storageClassName") or "") != class_name:
                continue
            if not modes <= set(vspec.get("accessModes") or []):
                continue
            if selector:
                labels = volume["metadata"].get("labels") or {}
                if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
                    continue
            size = _size((vspec.get("capacity") or {}).get("storage", "0"))
            if size < wanted:
                continue
            rank = (size, volume["metadata"]["name"], volume)
            if best is None or rank[:2] < best[:2]:
                best = rank
        return best[2] if best else None

    def _provision(self, namespace: str, name: str) -> None:
        claim = self.cluster.store.get(CLAIMS, namespace, name)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            return
        uid = claim["metadata"]["uid"]
        spec = claim.get("spec") or {}
        class_name = spec.get("storageClassName") or ""
        storage_class = self.cluster.store.get(CLASSES, "", class_name)
        if storage_class is None or (claim.get("status") or {}).get("phase") == "Bound":
            self._provisioning.discard(uid)
            return
        volume_name = f"pvc-{uid}"
        request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        volume: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": volume_name,
                "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
            },
            "spec": {
                "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                "capacity": {"storage": request},
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "name": name,
                    "namespace": namespace,
                    "uid": uid,
                    "resourceVersion": claim["metadata"].get("resourceVersion", ""),
                },
                "hostPath": {"path": f"{VOLUME_ROOT}/{volume_name}", "type": "DirectoryOrCreate"},
                "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
                "storageClassName": class_name,
                "volumeMode": spec.get("volumeMode") or "Filesystem",
            },
        }
        if storage_class.get("mountOptions"):
            volume["spec"]["mountOptions"] = storage_class["mountOptions"]
        existing = self.cluster.store.get(VOLUMES, "", volume_name)
        if existing is None:
            try:
                existing = self.cluster.create(
                    self._volume_type, "", volume, WriteOptions(field_manager=PROVISIONER)
                ).obj
            except status.APIError as exc:
                self._provisioning.discard(uid)
                self.events.record(claim, WARNING, "ProvisioningFailed", str(exc))
                return
        self.provisioner_events.record(
            claim, NORMAL, "ProvisioningSucceeded", f"Successfully provisioned volume {volume_name}"
        )
        self._bind(claim, existing)
        self._provisioning.discard(uid)

    def _bind(self, claim: Obj, volume: Obj) -> None:
        """Bind both ways: the volume's claimRef and phase, the claim's volumeName and phase."""
        meta = claim["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        volume_name = volume["metadata"]["name"]
        opts = WriteOptions(field_manager=MANAGER)
        now = timestamp(self.cluster.clock())
        vspec = volume.get("spec") or {}
        static = "pv.kubernetes.io/provisioned-by" not in (
            volume["metadata"].get("annotations") or {}
        )
        if not vspec.get("claimRef") or vspec["claimRef"].get("uid") != meta["uid"]:
            claimed = {
                **volume,
                "spec": {
                    **vspec,
                    "claimRef": {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "name": name,
                        "namespace": namespace,
                        "uid": meta["uid"],
                        "resourceVersion": meta.get("resourceVersion", ""),
                    },
                },
            }
            if static:
                claimed["metadata"] = {
                    **volume["metadata"],
                    "annotations": {
                        **(volume["metadata"].get("annotations") or {}),
                        "pv.kubernetes.io/bound-by-controller": "yes",
                    },
                }
            volume = self.cluster.update(self._volume_type, "", volume_name, claimed, opts).obj
        if (volume.get("status") or {}).get("phase") != "Bound":
            volume = self.cluster.update(
                self._volume_type, "", volume_name,
                {**volume, "status": {"phase": "Bound", "lastPhaseTransitionTime": now}}, opts, "status",
            ).obj  # fmt: skip
        claim = self.cluster.store.get(CLAIMS, namespace, name) or claim
        annotations = {
            **(claim["metadata"].get("annotations") or {}),
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
        }
        if not static:
            annotations["volume.beta.kubernetes.io/storage-provisioner"] = PROVISIONER
            annotations["volume.kubernetes.io/storage-provisioner"] = PROVISIONER
        bound_spec = {**(claim.get("spec") or {}), "volumeName": volume_name}
        if bound_spec != claim.get("spec") or annotations != claim["metadata"].get("annotations"):
            claim = self.cluster.update(
                self._claim_type, namespace, name,
                {**claim, "metadata": {**claim["metadata"], "annotations": annotations}, "spec": bound_spec},
                opts,
            ).obj  # fmt: skip
        vspec = volume.get("spec") or {}
        self.cluster.update(
            self._claim_type, namespace, name,
            {**claim, "status": {
                "phase": "Bound",
                "accessModes": list(vspec.get("accessModes") or []),
                "capacity": dict(vspec.get("capacity") or {}),
            }},
            opts, "status",
        )  # fmt: skip

    def _release_protection(self, claim: Obj) -> None:
        """pvc-protection: a claim being deleted goes once no pod uses it."""
        meta = claim["metadata"]
        if self._users.get((meta["namespace"], meta["name"])):
            return
        finalizers = [f for f in meta.get("finalizers") or [] if f != PVC_PROTECTION]
        if finalizers == list(meta.get("finalizers") or []):
            return
        new_meta = {**meta, "finalizers": finalizers}
        if not finalizers:
            del new_meta["finalizers"]
        with contextlib.suppress(status.APIError):
            self.cluster.update(
                self._claim_type, meta["namespace"], meta["name"], {**claim, "metadata": new_meta},
                WriteOptions(field_manager="pvc-protection-controller"),
            )  # fmt: skip

    # --- volumes -------------------------------------------------------------------------------

    def _volume(self, name: str) -> None:
        volume = self.cluster.store.get(VOLUMES, "", name)
        if volume is None or volume["metadata"].get("deletionTimestamp"):
            return
        spec = volume.get("spec") or {}
        phase = (volume.get("status") or {}).get("phase")
        ref = spec.get("claimRef")
        opts = WriteOptions(field_manager=MANAGER)
        now = timestamp(self.cluster.clock())
        if not ref:
            if phase != "Available":
                with contextlib.suppress(status.APIError):
                    self.cluster.update(
                        self._volume_type, "", name,
                        {**volume, "status": {"phase": "Available", "lastPhaseTransitionTime": now}},
                        opts, "status",
                    )  # fmt: skip
            return
        claim = self.cluster.store.get(CLAIMS, ref.get("namespace", ""), ref.get("name", ""))
        if claim is not None and (not ref.get("uid") or claim["metadata"]["uid"] == ref.get("uid")):
            if not ref.get("uid") or phase == "Pending":
                self.enqueue(("claim", ref.get("namespace", ""), ref.get("name", "")))
            return
        if phase not in ("Bound", "Released"):
            return
        # The claim is gone: the reclaim policy decides.
        if spec.get("persistentVolumeReclaimPolicy") == "Delete":
            with contextlib.suppress(status.NotFound):
                self.cluster.delete(self._volume_type, "", name, DeleteOptions())
        elif phase != "Released":
            with contextlib.suppress(status.APIError):
                self.cluster.update(
                    self._volume_type, "", name,
                    {**volume, "status": {"phase": "Released", "lastPhaseTransitionTime": now}},
                    opts, "status",
                )  # fmt: skip
