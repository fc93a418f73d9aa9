"""Kubernetes Events written the way kubelets and controllers write them.

`EventRecorder.record(obj, type, reason, message)` creates a core/v1 Event about
`obj` — or, when the same component already reported the same reason and message
about the same object, bumps its `count` and `lastTimestamp`, as client-go's
event correlator does — so `kubectl describe` and `kubectl get events` read
like a real cluster's.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.store import Obj

NORMAL, WARNING = "Normal", "Warning"

_last_name_nanos = 0


def event_name(about: str, moment: datetime.datetime) -> str:
    """client-go's `NAME.<UnixNano in hex>`: names sort as the events happened, which is the
    order `kubectl describe` shows events of one second in (it sorts by lastTimestamp, whole
    seconds, keeping the listed order of equals). Never the same twice in a process."""
    global _last_name_nanos
    nanos = int(moment.timestamp() * 1e9)
    _last_name_nanos = max(nanos, _last_name_nanos + 1)
    return f"{about}.{_last_name_nanos:x}"


class EventRecorder:
    def __init__(self, cluster: Cluster, component: str, host: str = "") -> None:
        self.cluster = cluster
        self.component = component
        self.host = host
        self._events = cluster.type_for("", "v1", "events")
        self._seen: dict[tuple[str, str, str, str], tuple[str, str]] = {}

    def record(
        self, obj: Obj, type_: str, reason: str, message: str, *, field_path: str = ""
    ) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        moment = self.cluster.clock()
        now = timestamp(moment)
        key = (meta.get("uid", ""), reason, message, field_path)
        known = self._seen.get(key)
        if known is not None:
            existing = self.cluster.store.get(self._events.key, *known)
            if existing is not None:
                bumped = copy.deepcopy(existing)
                bumped["count"] = int(existing.get("count", 1)) + 1
                bumped["lastTimestamp"] = now
                self.cluster.update(
                    self._events,
                    known[0],
                    known[1],
                    bumped,
                    WriteOptions(field_manager=self.component),
                )
                return
        involved: dict[str, Any] = {
            "kind": obj.get("kind"),
            "namespace": meta.get("namespace", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion"),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if field_path:
            involved["fieldPath"] = field_path
        source: dict[str, str] = {"component": self.component}
        if self.host:
            source["host"] = self.host
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event_name(meta["name"], moment), "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        try:
            written = self.cluster.create(
                self._events, namespace, event, WriteOptions(field_manager=self.component)
            )
        except status.NotFound:  # the namespace is gone: nothing to report into
            return
        except status.Forbidden:  # the namespace is terminating
            return
        self._seen[key] = (namespace, written.obj["metadata"]["name"])
