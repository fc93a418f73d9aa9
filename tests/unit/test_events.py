"""Events the local cluster's components record, as `kubectl describe` reads them."""

from __future__ import annotations

import datetime

from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.events import NORMAL, EventRecorder
from stackwright.localcluster.store import Store

SECOND = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)


def test_events_of_one_second_are_listed_in_the_order_they_happened() -> None:
    # kubectl describe sorts events by lastTimestamp (whole seconds) and keeps the listed
    # order of equals; the list is in name order. Random name suffixes showed a pod's
    # Started before its Scheduled; client-go's suffix is the time in nanoseconds.
    cluster = Cluster(Store(":memory:"), clock=lambda: SECOND)
    pods = cluster.type_for("", "v1", "pods")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    written = cluster.create(pods, "default", pod, WriteOptions()).obj
    kubelet = EventRecorder(cluster, "kubelet", "node-1")
    reasons = ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    for reason in reasons:
        kubelet.record(written, NORMAL, reason, f"{reason} web")
    listed = cluster.list_objects(cluster.type_for("", "v1", "events"), "default").items
    assert [e["reason"] for e in listed] == reasons
    name, suffix = listed[0]["metadata"]["name"].split(".")
    assert name == "web" and int(suffix, 16) >= int(SECOND.timestamp() * 1e9)


def test_a_node_made_records_its_joining_events_once() -> None:
    # As a kubelet and the node controller do when a node joins; a server restart (a new
    # controller over the same store) makes no node, and records nothing again.
    from stackwright.localcluster.controllers.nodes import NodeController

    cluster = Cluster(Store(":memory:"), clock=lambda: SECOND)
    NodeController(cluster, nodes=1)
    NodeController(cluster, nodes=1)
    events = cluster.list_objects(cluster.type_for("", "v1", "events"), "default").items
    node = cluster.get(cluster.type_for("", "v1", "nodes"), "", "node-1")
    assert [
        (e["reason"], e["source"]["component"], e["involvedObject"]["uid"]) for e in events
    ] == [
        ("Starting", "kubelet", "node-1"),
        ("NodeHasSufficientMemory", "kubelet", "node-1"),
        ("NodeHasNoDiskPressure", "kubelet", "node-1"),
        ("NodeHasSufficientPID", "kubelet", "node-1"),
        ("NodeAllocatableEnforced", "kubelet", "node-1"),
        ("NodeReady", "kubelet", "node-1"),
        ("RegisteredNode", "node-controller", node["metadata"]["uid"]),
    ]
    assert events[1]["message"] == "Node node-1 status is now: NodeHasSufficientMemory"
    assert {e["involvedObject"]["kind"] for e in events} == {"Node"}
