"""CustomResourceDefinitions: serve their kinds once Established, remove them on deletion.

As the apiextensions-apiserver does: a new or changed CRD has its names checked
(NamesAccepted), its served versions registered, then Established=True; discovery
and OpenAPI follow. A deleted CRD is Terminating while its objects are deleted,
then its kinds stop being served and the CRD goes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import (
    CRD_CLEANUP_FINALIZER,
    CRD_TYPE,
    Cluster,
    DeleteOptions,
    WriteOptions,
    timestamp,
)
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.store import DELETED, Change, Obj

MANAGER = "apiextensions-apiserver"


def resource_types(crd: Obj) -> list[ResourceType]:
    """The served versions of a CRD, as registry entries."""
    spec = crd["spec"]
    names = spec["names"]
    out = []
    for version in spec.get("versions", []):
        if not version.get("served", True):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        out.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                short_names=tuple(names.get("shortNames", ())),
                categories=tuple(names.get("categories", ())),
                subresources=frozenset(k for k in subresources if k in ("status", "scale")),
                schema=schema,
                crd=crd["metadata"]["name"],
                storage=bool(version.get("storage")),
                scale_paths=dict(scale) if scale else {},
                printer_columns=tuple(version.get("additionalPrinterColumns", ())),
                selectable_fields=tuple(
                    f["jsonPath"].lstrip(".") for f in version.get("selectableFields", ())
                ),
            )
        )
    return out


class CRDController(Controller):
    name = "crd-controller"

    def __init__(self, cluster: Cluster, on_types_changed: Callable[[], None]) -> None:
        super().__init__(cluster)
        self._on_types_changed = on_types_changed
        # Serve the kinds of CRDs established in an earlier run before the first request.
        for crd in cluster.store.items(CRD_TYPE):
            if _condition(crd, "Established") and not crd["metadata"].get("deletionTimestamp"):
                self._serve(crd)

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == CRD_TYPE:
            return [change.name]
        if change.type == DELETED:
            for rtype in self.cluster.registry:
                if rtype.key == change.key and rtype.crd:
                    return [rtype.crd]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [crd["metadata"]["name"] for crd in self.cluster.store.items(CRD_TYPE)]

    def _serve(self, crd: Obj) -> None:
        registry = self.cluster.registry
        registry.remove_crd(crd["metadata"]["name"])
        for rtype in resource_types(crd):
            registry.add(rtype)
        self._on_types_changed()

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        cluster = self.cluster
        crd = cluster.store.get(CRD_TYPE, "", key)
        crd_type = cluster.type_for("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if crd is None:
            if cluster.registry.remove_crd(key):
                self._on_types_changed()
            return
        if crd["metadata"].get("deletionTimestamp"):
            self._clean_up(crd, crd_type)
            return
        conflict = self._names_conflict(crd)
        now = timestamp(cluster.clock())
        conditions: list[dict[str, Any]]
        if conflict:
            conditions = [
                _cond("NamesAccepted", "False", "NameConflict", conflict, now),
                _cond("Established", "False", "NotAccepted", "not all names are accepted", now),
            ]
        else:
            self._serve(crd)
            conditions = [
                _cond("NamesAccepted", "True", "NoConflicts", "no conflicts found", now),
                _cond(
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    now,
                ),
            ]
        names = crd["spec"]["names"]
        accepted = {k: v for k, v in names.items()}
        accepted.setdefault("singular", names["kind"].lower())
        accepted.setdefault("listKind", names["kind"] + "List")
        stored = sorted(
            set((crd.get("status") or {}).get("storedVersions", []))
            | {v["name"] for v in crd["spec"].get("versions", []) if v.get("storage")}
        )
        new_status = {
            "acceptedNames": accepted if not conflict else {},
            "conditions": conditions,
            "storedVersions": stored,
        }
        old_status = crd.get("status") or {}
        if _without_times(old_status) == _without_times(new_status):
            return
        for cond in conditions:  # keep transition times of conditions that did not change
            for old in old_status.get("conditions", []):
                if old.get("type") == cond["type"] and old.get("status") == cond["status"]:
                    cond["lastTransitionTime"] = old.get("lastTransitionTime", now)
        updated = copy.deepcopy(crd)
        updated["status"] = new_status
        cluster.update(crd_type, "", key, updated, WriteOptions(field_manager=MANAGER), "status")

    def _names_conflict(self, crd: Obj) -> str:
        spec = crd["spec"]
        plural, kind = spec["names"]["plural"], spec["names"]["kind"]
        for rtype in self.cluster.registry:
            if rtype.group == spec["group"] and rtype.crd != crd["metadata"]["name"]:
                if rtype.plural == plural:
                    return f'"{plural}" is already in use'
                if rtype.kind == kind:
                    return f'"{kind}" is already in use'
        return ""

    def _clean_up(self, crd: Obj, crd_type: ResourceType) -> None:
        cluster = self.cluster
        name = crd["metadata"]["name"]
        types = [t for t in cluster.registry if t.crd == name]
        storage = next((t for t in types if t.storage), types[0] if types else None)
        if storage is not None:
            leftovers = cluster.store.items(storage.key)
            for obj in leftovers:
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    try:
                        cluster.delete(
                            storage, meta.get("namespace", ""), meta["name"], DeleteOptions()
                        )
                    except status.NotFound:
                        continue
            if cluster.store.items(storage.key):
                raise Retry(0.2)
        cluster.registry.remove_crd(name)
        self._on_types_changed()
        updated = copy.deepcopy(crd)
        finalizers = [
            f for f in updated["metadata"].get("finalizers", []) if f != CRD_CLEANUP_FINALIZER
        ]
        if finalizers:
            updated["metadata"]["finalizers"] = finalizers
        else:
            updated["metadata"].pop("finalizers", None)
        cluster.update(crd_type, "", name, updated, WriteOptions(field_manager=MANAGER))


def _cond(kind: str, value: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now,
    }


def _condition(obj: Obj, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions", [])
    )


def _without_times(status_: dict[str, Any]) -> dict[str, Any]:
    out = dict(status_)
    out["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status_.get("conditions", [])
    ]
    return out
