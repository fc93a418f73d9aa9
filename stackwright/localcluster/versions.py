"""Built-in kinds served in a version other than the one they are stored in: autoscaling/v1
HPAs, and events.k8s.io/v1 Events (stored as core/v1 Events, as kube-apiserver stores them).

The cluster stores HorizontalPodAutoscalers as autoscaling/v2, which its controller and
defaults read; `kubectl autoscale` (and any client of the older API) speaks
autoscaling/v1. The server converts at the door, as the API server converts between the
two (k8s.io/kubernetes pkg/apis/autoscaling/v1/conversion.go): v1's one
`targetCPUUtilizationPercentage` is v2's `Resource` metric on `cpu` with a `Utilization`
target, and `currentCPUUtilizationPercentage` that metric's current value. What v1 cannot
say (other metrics, `behavior`, status conditions) a v1 write keeps from the stored
object, where the API server keeps it in annotations.

Must never: lose a v2-only field through a v1 write, or show a v1 client a v2 field.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from stackwright.localcluster import selectors, status

Obj = dict[str, Any]

HPA = "HorizontalPodAutoscaler"


def _is_cpu_utilization(metric: Any) -> bool:
    resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
    return (
        isinstance(metric, dict)
        and metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and (resource.get("target") or {}).get("type") == "Utilization"
    )


def hpa_to_v1(obj: Obj) -> Obj:
    """A stored (v2) HorizontalPodAutoscaler as autoscaling/v1 shows it."""
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = "autoscaling/v1"
    if "spec" in obj:
        spec = obj["spec"] or {}
        out["spec"] = {
            k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec
        }
        cpu = next((m for m in spec.get("metrics") or [] if _is_cpu_utilization(m)), None)
        if cpu is not None and "averageUtilization" in cpu["resource"]["target"]:
            out["spec"]["targetCPUUtilizationPercentage"] = cpu["resource"]["target"][
                "averageUtilization"
            ]
    if "status" in obj:
        status = obj["status"] or {}
        keys = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")
        out["status"] = {k: status[k] for k in keys if k in status}
        for metric in status.get("currentMetrics") or []:
            current = (metric.get("resource") or {}).get("current") or {}
            if (metric.get("resource") or {}).get("name") == "cpu" and (
                "averageUtilization" in current
            ):
                out["status"]["currentCPUUtilizationPercentage"] = current["averageUtilization"]
                break
        out["status"].setdefault("currentReplicas", 0)
        out["status"].setdefault("desiredReplicas", 0)
    return out


def hpa_to_v2(obj: Obj, stored: Obj | None = None) -> Obj:
    """A v1 HorizontalPodAutoscaler (whole, or the fields an apply names) as v2 stores it.

    `stored` is the object the write replaces: its v2-only fields carry over.
    """
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = "autoscaling/v2"
    if "spec" in obj:
        spec = dict(obj["spec"] or {})
        target = spec.pop("targetCPUUtilizationPercentage", None)
        kept = copy.deepcopy((stored or {}).get("spec") or {})
        metrics = [m for m in kept.get("metrics") or [] if not _is_cpu_utilization(m)]
        if target is not None:
            cpu = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}
            metrics.insert(0, {"type": "Resource", "resource": cpu})
        if metrics:
            spec["metrics"] = metrics
        if "behavior" in kept:
            spec["behavior"] = kept["behavior"]
        out["spec"] = spec
    if stored is not None and "status" in stored:
        out["status"] = stored["status"]  # v1 clients write spec; status is the controller's
    return out


def _response(kind: str, api_version: str, to_served: Callable[[Obj], Obj]) -> Callable[[Any], Any]:
    """A converter of response bodies (object, list, Table, watch event or Status) for one kind."""

    def convert(doc: Any) -> Any:
        if not isinstance(doc, dict):
            return doc
        if doc.get("kind") == kind:
            return to_served(doc)
        if doc.get("kind") == f"{kind}List":
            return {
                **doc,
                "apiVersion": api_version,
                "items": [to_served(i) for i in doc.get("items") or []],
            }
        if doc.get("kind") == "Table":
            rows = [
                {**row, "object": convert(row["object"])} if "object" in row else row
                for row in doc.get("rows") or []
            ]
            return {**doc, "rows": rows}
        if "type" in doc and isinstance(doc.get("object"), dict):  # a watch event
            return {**doc, "object": convert(doc["object"])}
        return doc

    return convert


#: A response body as an autoscaling/v1 client sees it.
hpa_response_to_v1 = _response(HPA, "autoscaling/v1", hpa_to_v1)

#: events.k8s.io/v1 Event field ↔ core/v1 Event field, where the names differ (upstream's
#: pkg/apis/events/v1/conversion.go). Both APIs read and write the one store of core Events.
EVENT_FIELDS: tuple[tuple[str, str], ...] = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)


def _renamed(obj: Obj, names: dict[str, str], api_version: str) -> Obj:
    out = {names.get(k, k): v for k, v in obj.items()}
    out["apiVersion"] = api_version
    return out


def event_to_events_v1(obj: Obj) -> Obj:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    return _renamed(obj, {core: new for new, core in EVENT_FIELDS}, "events.k8s.io/v1")


def event_to_core(obj: Obj, stored: Obj | None = None) -> Obj:
    """An events.k8s.io/v1 Event as core/v1 stores it (every field has a core home)."""
    return _renamed(obj, dict(EVENT_FIELDS), "v1")


event_response_to_events_v1 = _response("Event", "events.k8s.io/v1", event_to_events_v1)

#: The field labels an events.k8s.io/v1 list selects on, as core's (upstream's
#: AddFieldLabelConversionsForEvent): `involvedObject.name` is `regarding.name` there.
EVENT_FIELD_LABELS = {
    "metadata.name": "metadata.name",
    "metadata.namespace": "metadata.namespace",
    "reason": "reason",
    "type": "type",
    "reportingController": "reportingComponent",
    **{f"regarding.{f}": f"involvedObject.{f}" for f in (
        "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"
    )},
}  # fmt: skip


def stored_field_selector(selector: str, labels: dict[str, str]) -> str:
    """A served version's field selector in the stored version's labels; a label the served
    version has not is refused, as its conversion function refuses it."""
    parsed = selectors.parse_field_selector(selector)
    for requirement in parsed.requirements:
        if requirement.field not in labels:
            raise status.BadRequest(f"field label not supported: {requirement.field}")
    return str(
        selectors.FieldSelector(
            tuple(dataclasses.replace(r, field=labels[r.field]) for r in parsed.requirements)
        )
    )


#: Field labels of a converted version that differ from its storage's, by
#: (group, served version, plural); a version without an entry selects on the same labels.
FIELD_LABELS = {("events.k8s.io", "v1", "events"): EVENT_FIELD_LABELS}

#: (group, served version, plural) → (stored group, stored version, request converter,
#: response converter).
CONVERTED: dict[tuple[str, str, str], tuple[str, str, Callable[..., Obj], Callable[[Any], Any]]] = {
    ("autoscaling", "v1", "horizontalpodautoscalers"): (
        "autoscaling",
        "v2",
        hpa_to_v2,
        hpa_response_to_v1,
    ),
    ("events.k8s.io", "v1", "events"): ("", "v1", event_to_core, event_response_to_events_v1),
}
