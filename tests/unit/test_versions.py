"""autoscaling/v1 HorizontalPodAutoscalers converted to and from their v2 storage."""

from __future__ import annotations

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
