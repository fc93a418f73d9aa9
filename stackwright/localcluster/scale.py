"""The `scale` subresource: an `autoscaling/v1 Scale` view of a workload's replicas.

Built-in workloads keep replicas at `spec.replicas` / `status.replicas` with a
selector in `spec.selector`; custom kinds declare their paths in the CRD's
`subresources.scale`. Writing a Scale changes only the replica count.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from stackwright.localcluster import patch, selectors, status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.store import Obj

_BUILTIN_PATHS = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}


def _paths(rtype: ResourceType) -> dict[str, str]:
    return rtype.scale_paths or _BUILTIN_PATHS


def _read_path(obj: Any, path: str) -> Any:
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _write_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def _selector_text(rtype: ResourceType, obj: Obj) -> str:
    if rtype.crd is None:
        selector = obj.get("spec", {}).get("selector")
        if isinstance(selector, dict):
            return str(selectors.label_selector_from_dict(selector))
        return ""
    path = _paths(rtype).get("labelSelectorPath")
    value = _read_path(obj, path) if path else None
    return value if isinstance(value, str) else ""


def scale_of(rtype: ResourceType, obj: Obj) -> dict[str, Any]:
    paths = _paths(rtype)
    meta = obj["metadata"]
    scale_status: dict[str, Any] = {"replicas": _read_path(obj, paths["statusReplicasPath"]) or 0}
    selector = _selector_text(rtype, obj)
    if selector:
        scale_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace", ""),
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": _read_path(obj, paths["specReplicasPath"]) or 0},
        "status": scale_status,
    }


def read_scale(cluster: Cluster, rtype: ResourceType, namespace: str, name: str) -> dict[str, Any]:
    return scale_of(rtype, cluster.get(rtype, namespace, name))


def write_scale(
    cluster: Cluster, rtype: ResourceType, namespace: str, name: str, method: str,
    content_type: str, body: bytes, opts: WriteOptions,
) -> dict[str, Any]:  # fmt: skip
    obj = cluster.get(rtype, namespace, name)
    current = scale_of(rtype, obj)
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise status.BadRequest(f"error decoding Scale: {exc}") from None
    if method == "PUT":
        wanted = document
    else:
        wanted = patch.apply_patch(
            content_type.split(";")[0].strip(), current, document, None, lambda n: n or {}
        )
    replicas = (wanted.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        raise status.invalid_object(
            "Scale",
            "autoscaling",
            name,
            [status.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    given_rv = (wanted.get("metadata") or {}).get("resourceVersion")
    updated = copy.deepcopy(obj)
    if given_rv:
        updated["metadata"]["resourceVersion"] = given_rv
    _write_path(updated, _paths(rtype)["specReplicasPath"], replicas)
    written = cluster.update(rtype, namespace, name, updated, opts, "scale")
    return scale_of(rtype, written.obj)
