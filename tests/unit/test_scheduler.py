"""The scheduler's predicates and messages, and the simulation run in process on a fake pace."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers import build_controllers
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.scheduler import (
    _fit_error,
    matches_affinity,
    pod_requests,
    tolerates,
    untolerated_taint,
)
from stackwright.localcluster.store import Store


def node(name: str = "node-1", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),  # empty effect: all
        ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),  # tolerates everything
        ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"key": "k", "effect": "NoSchedule"}, False),
        ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
)  # fmt: skip
def test_tolerations(toleration: dict[str, Any], taint: dict[str, Any], expected: bool) -> None:
    assert tolerates([toleration], taint) is expected


def test_untolerated_taint_ignores_prefer_no_schedule() -> None:
    taints = [
        {"key": "soft", "effect": "PreferNoSchedule"},
        {"key": "hard", "effect": "NoSchedule"},
    ]
    assert untolerated_taint({}, taints) == {"key": "hard", "effect": "NoSchedule"}
    assert (
        untolerated_taint({"tolerations": [{"key": "hard", "operator": "Exists"}]}, taints) is None
    )


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"nodeSelector": {"disk": "ssd"}}, True),
        ({"nodeSelector": {"disk": "hdd"}}, False),
        (required({"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}), True),
        (required({"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["8"]}]}), False),
        (required({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}), True),
        (required({"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]}), False),
        (required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}), True),
        # Terms are ORed; expressions within a term are ANDed; an empty term matches nothing.
        (required({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}, {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}), True),
        (required({}), False),
    ],
)  # fmt: skip
def test_node_affinity(spec: dict[str, Any], expected: bool) -> None:
    assert matches_affinity(spec, node(disk="ssd", cores="16")) is expected


def test_pod_requests_take_the_larger_of_containers_and_init_containers() -> None:
    spec = {
        "initContainers": [
            {"name": "big-init", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}},
            {
                "name": "sidecar",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "100m"}},
            },
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "250m"}}},
        ],
    }
    assert pod_requests(spec) == {"cpu": 2000, "memory": 1024**3}
    assert pod_requests({"containers": [{"name": "x"}]}) == {}


def test_fit_error_reads_like_kube_scheduler() -> None:
    message = _fit_error(
        3,
        Counter({"Insufficient cpu": 1, "node(s) didn't match Pod's node affinity/selector": 2}),
        1,
    )
    assert message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims "
        "found for incoming pod, 2 Preemption is not helpful for scheduling."
    )


def test_simulation_runs_pods_in_process_on_a_fast_pace() -> None:
    """The whole simulation over an in-memory store: two nodes, pods spread and Ready."""

    async def scenario() -> list[dict[str, Any]]:
        cluster = Cluster(Store(":memory:"))
        controllers = build_controllers(cluster, nodes=2, pace=Pace(100))
        tasks = [asyncio.ensure_future(c.run()) for c in controllers]
        pods = cluster.type_for("", "v1", "pods")
        try:
            for i in range(4):
                cluster.create(
                    pods,
                    "default",
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1.29"}]}},
                    WriteOptions(field_manager="test"),
                )  # fmt: skip
            for _ in range(200):
                items = cluster.store.items(pods.key, "default")
                if all(_ready(p) for p in items):
                    return items
                await asyncio.sleep(0.01)
            raise AssertionError("pods not Ready in process")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    items = asyncio.run(scenario())
    assert sorted(p["spec"]["nodeName"] for p in items) == ["node-1", "node-1", "node-2", "node-2"]
    assert len({p["status"]["podIP"] for p in items}) == 4


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )
