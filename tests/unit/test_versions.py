"""autoscaling/v1 HorizontalPodAutoscalers converted to and from their v2 storage."""

from __future__ import annotations

import pytest

from stackwright.localcluster.versions import hpa_response_to_v1, hpa_to_v1, hpa_to_v2

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}  # fmt: skip
MEMORY = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}}  # fmt: skip


def test_the_cpu_target_is_v2s_cpu_utilization_metric_and_back() -> None:
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
    }
    v2 = hpa_to_v2(v1)
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"] == {"scaleTargetRef": REF, "maxReplicas": 3, "metrics": [CPU]}
    assert hpa_to_v1(v2) == v1


def test_a_v1_write_keeps_what_v1_cannot_say() -> None:
    stored = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "spec": {"scaleTargetRef": REF, "maxReplicas": 3, "metrics": [CPU, MEMORY], "behavior": {"scaleUp": {}}},
        "status": {"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41}}}
        ], "conditions": [{"type": "AbleToScale", "status": "True"}]},
    }  # fmt: skip
    shown = hpa_to_v1(stored)
    assert shown["spec"]["targetCPUUtilizationPercentage"] == 50
    assert shown["status"] == {"currentReplicas": 2, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 41}  # fmt: skip
    shown["spec"]["targetCPUUtilizationPercentage"] = 90
    written = hpa_to_v2(shown, stored)
    assert written["spec"]["metrics"][1] == MEMORY
    assert written["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 90
    assert written["spec"]["behavior"] == {"scaleUp": {}}
    assert written["status"] == stored["status"]


def test_lists_tables_and_watch_events_are_shown_in_v1() -> None:
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "spec": {"metrics": [CPU]},
    }
    listed = hpa_response_to_v1({"kind": "HorizontalPodAutoscalerList", "apiVersion": "autoscaling/v2", "items": [hpa]})  # fmt: skip
    assert listed["apiVersion"] == "autoscaling/v1"
    assert listed["items"][0]["spec"] == {"targetCPUUtilizationPercentage": 50}
    table = hpa_response_to_v1({"kind": "Table", "rows": [{"cells": [], "object": hpa}]})
    assert table["rows"][0]["object"]["apiVersion"] == "autoscaling/v1"
    event = hpa_response_to_v1({"type": "ADDED", "object": hpa})
    assert event["object"]["apiVersion"] == "autoscaling/v1"
    assert hpa_response_to_v1({"kind": "Status", "code": 404}) == {"kind": "Status", "code": 404}


def test_an_events_v1_event_is_a_core_event_renamed_and_back() -> None:
    from stackwright.localcluster.versions import (
        event_response_to_events_v1,
        event_to_core,
        event_to_events_v1,
    )

    ref = {"kind": "Pod", "namespace": "default", "name": "web"}
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "regarding": ref,
        "note": "pulled",
        "reason": "Pulled",
        "type": "Normal",
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kubelet",
        "reportingInstance": "node-1",
        "action": "Pull",
        "deprecatedSource": {"component": "kubelet"},
        "deprecatedCount": 3,
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2026-01-01T00:01:00Z",
        "series": {"count": 3, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
    }
    core = event_to_core(new)
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == ref and core["message"] == "pulled"
    assert core["source"] == {"component": "kubelet"} and core["reportingComponent"] == "kubelet"
    assert (core["count"], core["firstTimestamp"], core["lastTimestamp"]) == (
        3, "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"
    )  # fmt: skip
    assert core["series"] == new["series"] and core["eventTime"] == new["eventTime"]
    assert not {"regarding", "note", "deprecatedCount", "reportingController"} & core.keys()
    assert event_to_events_v1(core) == new
    listed = event_response_to_events_v1({"kind": "EventList", "apiVersion": "v1", "items": [core]})
    assert listed["apiVersion"] == "events.k8s.io/v1" and listed["items"] == [new]


def test_an_events_v1_field_selector_is_read_in_core_labels() -> None:
    from stackwright.localcluster.status import BadRequest
    from stackwright.localcluster.versions import EVENT_FIELD_LABELS, stored_field_selector

    with pytest.raises(BadRequest, match=r"^field label not supported: note$"):
        stored_field_selector("regarding.name=web,note=a", EVENT_FIELD_LABELS)
    given = r"regarding.name=we\,b,reportingController!=kubelet,type==Normal"
    assert stored_field_selector(given, EVENT_FIELD_LABELS) == (
        r"involvedObject.name=we\,b,reportingComponent!=kubelet,type=Normal"
    )
    with pytest.raises(BadRequest, match=r"^field label not supported: involvedObject\.name$"):
        stored_field_selector("involvedObject.name=web", EVENT_FIELD_LABELS)
