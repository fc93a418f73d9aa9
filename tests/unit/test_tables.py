"""Server-side Tables: the columns and cells `kubectl get` receives from a real server."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.status import BadRequest, NotAcceptable
from stackwright.localcluster.tables import human_duration, render_table, table_columns

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rtype(group: str, kind: str, plural: str, **extra: Any) -> ResourceType:
    return ResourceType(group, "v1", kind, plural, True, **extra)


POD_T = rtype("", "Pod", "pods")
DEPLOYMENT_T = rtype("apps", "Deployment", "deployments")
SERVICE_T = rtype("", "Service", "services")


def cells(resource: ResourceType, obj: dict[str, Any]) -> list[Any]:
    table = render_table(resource, [obj], list_meta={}, now=NOW)
    (row,) = table["rows"]
    return list(row["cells"])


def names(resource: ResourceType) -> list[tuple[str, int]]:
    return [(c["name"], c["priority"]) for c in table_columns(resource)]


# ------------------------------------------------------------------------------------
# Ages


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=-5), "<invalid>"),
        (timedelta(seconds=-1), "0s"),
        (timedelta(milliseconds=-500), "0s"),
        (timedelta(0), "0s"),
        (timedelta(seconds=5), "5s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(minutes=2), "2m"),
        (timedelta(minutes=3, seconds=2), "3m2s"),
        (timedelta(minutes=10, seconds=30), "10m"),
        (timedelta(minutes=179), "179m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=7, minutes=59), "7h59m"),
        (timedelta(hours=8, minutes=30), "8h"),
        (timedelta(hours=47), "47h"),
        (timedelta(days=2), "2d"),
        (timedelta(days=5, hours=3), "5d3h"),
        (timedelta(days=8), "8d"),
        (timedelta(days=729), "729d"),
        (timedelta(days=730), "2y"),
        (timedelta(days=800), "2y70d"),
        (timedelta(days=365 * 9), "9y"),
    ],
)
def test_human_duration(delta: timedelta, text: str) -> None:
    assert human_duration(delta) == text


# ------------------------------------------------------------------------------------
# Pods

RUNNING_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "prod", "creationTimestamp": ago(minutes=5)},
    "spec": {"containers": [{"name": "app", "image": "nginx"}], "nodeName": "node-a"},
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.7",
        "podIPs": [{"ip": "10.0.0.7"}],
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {"name": "app", "ready": True, "restartCount": 0, "state": {"running": {}}}
        ],
    },
}


def pod(**changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(RUNNING_POD)
    for path, value in changes.items():
        target = obj
        *parents, last = path.split("__")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    return obj


def test_pod_columns_are_the_real_printers() -> None:
    assert names(POD_T) == [
        ("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0),
        ("IP", 1), ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1),
    ]  # fmt: skip
    assert table_columns(POD_T)[0]["format"] == "name"
    assert table_columns(POD_T)[3]["type"] == "string"
    assert table_columns(POD_T)[0]["description"].startswith(
        "Name must be unique within a namespace."
    )


def test_running_pod() -> None:
    assert cells(POD_T, RUNNING_POD) == [
        "web-0", "1/1", "Running", "0", "5m", "10.0.0.7", "node-a", "<none>", "<none>",
    ]  # fmt: skip


def test_waiting_reasons_replace_the_phase() -> None:
    pulling = pod(
        status__phase="Pending",
        status__containerStatuses=[
            {
                "name": "app",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff"}},
            }
        ],
    )
    assert cells(POD_T, pulling)[1:4] == ["0/1", "ImagePullBackOff", "0"]


def test_crash_looping_pod_shows_restarts_and_when() -> None:
    crashing = pod(
        status__containerStatuses=[
            {
                "name": "app",
                "ready": False,
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {
                    "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(seconds=130)}
                },
            }
        ]
    )
    assert cells(POD_T, crashing)[1:4] == ["0/1", "CrashLoopBackOff", "3 (2m10s ago)"]


def test_pending_pod_without_statuses() -> None:
    pending = pod(status={"phase": "Pending"}, spec__nodeName="")
    assert cells(POD_T, pending)[1:] == [
        "0/1",
        "Pending",
        "0",
        "5m",
        "<none>",
        "<none>",
        "<none>",
        "<none>",
    ]


def test_deleting_pod_is_terminating_unless_its_node_is_lost() -> None:
    assert cells(POD_T, pod(metadata__deletionTimestamp=ago(seconds=1)))[2] == "Terminating"
    lost = pod(metadata__deletionTimestamp=ago(seconds=1), status__reason="NodeLost")
    assert cells(POD_T, lost)[2] == "Unknown"
    done = pod(metadata__deletionTimestamp=ago(seconds=1), status__phase="Succeeded")
    done["status"]["containerStatuses"][0]["state"] = {
        "terminated": {"exitCode": 0, "reason": "Completed"}
    }
    assert cells(POD_T, done)[2] == "Completed"


def test_finished_pods_carry_a_completed_row_condition() -> None:
    finished = pod(
        status__phase="Succeeded",
        status__containerStatuses=[
            {
                "name": "app",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
            }
        ],
    )
    table = render_table(POD_T, [finished], list_meta={}, now=NOW)
    (row,) = table["rows"]
    assert row["cells"][1:3] == ["0/1", "Completed"]
    assert row["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    failed = pod(
        status__phase="Failed",
        status__containerStatuses=[
            {
                "name": "app",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 2}},
            }
        ],
    )
    (row,) = render_table(POD_T, [failed], list_meta={}, now=NOW)["rows"]
    assert row["cells"][2] == "ExitCode:2"
    assert row["conditions"][0]["reason"] == "Failed"
    assert "conditions" not in render_table(POD_T, [RUNNING_POD], list_meta={}, now=NOW)["rows"][0]


def test_a_completed_container_beside_a_running_one_keeps_the_pod_running() -> None:
    two = pod(
        spec__containers=[{"name": "job"}, {"name": "app"}],
        status__containerStatuses=[
            {
                "name": "job",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
            },
            {"name": "app", "ready": True, "restartCount": 0, "state": {"running": {}}},
        ],
    )
    assert cells(POD_T, two)[1:3] == ["1/2", "Running"]
    two["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert cells(POD_T, two)[2] == "NotReady"


def test_init_containers() -> None:
    base = pod(
        status__phase="Pending",
        spec__initContainers=[{"name": "migrate"}, {"name": "seed"}],
        status__containerStatuses=[
            {
                "name": "app",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "PodInitializing"}},
            }
        ],
    )
    running_first = copy.deepcopy(base)
    running_first["status"]["initContainerStatuses"] = [
        {"name": "migrate", "ready": False, "restartCount": 0, "state": {"running": {}}},
        {
            "name": "seed",
            "ready": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": "PodInitializing"}},
        },
    ]
    assert cells(POD_T, running_first)[1:4] == ["0/1", "Init:0/2", "0"]
    crashing = copy.deepcopy(base)
    crashing["status"]["initContainerStatuses"] = [
        {"name": "migrate", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
        {"name": "seed", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
    ]
    assert cells(POD_T, crashing)[2:4] == ["Init:CrashLoopBackOff", "4"]
    failed = copy.deepcopy(base)
    failed["status"]["initContainerStatuses"] = [
        {"name": "migrate", "restartCount": 0, "state": {"terminated": {"exitCode": 3}}},
    ]
    assert cells(POD_T, failed)[2] == "Init:ExitCode:3"


def test_sidecars_count_as_containers() -> None:
    with_sidecar = pod(
        spec__initContainers=[{"name": "proxy", "restartPolicy": "Always"}],
        status__conditions=[
            {"type": "Initialized", "status": "True"},
            {"type": "Ready", "status": "True"},
        ],
        status__initContainerStatuses=[
            {
                "name": "proxy",
                "ready": True,
                "started": True,
                "restartCount": 1,
                "state": {"running": {}},
            }
        ],
    )
    assert cells(POD_T, with_sidecar)[1:4] == ["2/2", "Running", "1"]


def test_scheduling_gated_and_readiness_gates() -> None:
    gated = pod(
        status={
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
            ],
        },
        spec__readinessGates=[
            {"conditionType": "example.com/lb"},
            {"conditionType": "PodScheduled"},
        ],
    )
    assert cells(POD_T, gated)[2] == "SchedulingGated"
    assert cells(POD_T, gated)[8] == "0/2"


# ------------------------------------------------------------------------------------
# Workloads and services

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "prod", "creationTimestamp": ago(days=5, hours=3)},
    "spec": {
        "replicas": 3,
        "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "edge"]}],
        },
        "template": {
            "spec": {
                "containers": [
                    {"name": "app", "image": "nginx:1.27"},
                    {"name": "log", "image": "busybox"},
                ]
            }
        },
    },
    "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
}


def test_deployment() -> None:
    assert names(DEPLOYMENT_T) == [
        ("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0), ("Age", 0),
        ("Containers", 1), ("Images", 1), ("Selector", 1),
    ]  # fmt: skip
    assert cells(DEPLOYMENT_T, DEPLOYMENT) == [
        "web", "2/3", 3, 2, "5d3h", "app,log", "nginx:1.27,busybox", "app=web,tier in (edge,front)",
    ]  # fmt: skip


def test_new_deployment_with_no_status() -> None:
    fresh = copy.deepcopy(DEPLOYMENT)
    del fresh["status"]
    fresh["spec"]["selector"] = {"matchExpressions": [{"key": "x", "operator": "Bogus"}]}
    assert cells(DEPLOYMENT_T, fresh)[1:4] == ["0/3", 0, 0]
    assert cells(DEPLOYMENT_T, fresh)[7] == "<invalid>"


def test_replica_set_stateful_set_and_daemon_set() -> None:
    rs = {
        "metadata": {"name": "web-abc", "creationTimestamp": ago(seconds=30)},
        "spec": {
            "replicas": 2,
            "selector": {},
            "template": {"spec": {"containers": [{"name": "a", "image": "i"}]}},
        },
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    assert cells(rtype("apps", "ReplicaSet", "replicasets"), rs) == [
        "web-abc",
        2,
        2,
        1,
        "30s",
        "a",
        "i",
        "<none>",
    ]
    sts = {
        "metadata": {"name": "db", "creationTimestamp": ago(hours=2)},
        "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "pg", "image": "postgres"}]}},
        },
        "status": {"readyReplicas": 3},
    }
    assert cells(rtype("apps", "StatefulSet", "statefulsets"), sts) == [
        "db",
        "3/3",
        "120m",
        "pg",
        "postgres",
    ]
    ds = {
        "metadata": {"name": "agent", "creationTimestamp": ago(days=1)},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "spec": {
                    "nodeSelector": {"os": "linux"},
                    "containers": [{"name": "a", "image": "i"}],
                }
            },
        },
        "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1},
    }
    assert cells(rtype("apps", "DaemonSet", "daemonsets"), ds) == [
        "agent", 2, 2, 1, 0, 0, "os=linux", "24h", "a", "i", "app=agent",
    ]  # fmt: skip


def test_jobs() -> None:
    job_t = rtype("batch", "Job", "jobs")
    assert [n for n, _ in names(job_t)][:5] == ["Name", "Status", "Completions", "Duration", "Age"]
    done = {
        "metadata": {"name": "migrate", "creationTimestamp": ago(minutes=10)},
        "spec": {
            "completions": 1,
            "template": {"spec": {"containers": [{"name": "m", "image": "tool"}]}},
        },
        "status": {
            "succeeded": 1,
            "startTime": ago(minutes=10),
            "completionTime": ago(minutes=9, seconds=15),
            "conditions": [{"type": "Complete", "status": "True"}],
        },
    }
    assert cells(job_t, done)[:5] == ["migrate", "Complete", "1/1", "45s", "10m"]
    running = {
        "metadata": {"name": "r"},
        "spec": {"parallelism": 3},
        "status": {"startTime": ago(seconds=20)},
    }
    assert cells(job_t, running)[:5] == ["r", "Running", "0/1 of 3", "20s", "<unknown>"]


SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "creationTimestamp": ago(hours=3)},
    "spec": {
        "type": "ClusterIP",
        "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"],
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
        "selector": {"app": "web"},
    },
}


def test_service_columns_and_ports() -> None:
    assert names(SERVICE_T) == [
        ("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0),
        ("Age", 0), ("Selector", 1),
    ]  # fmt: skip
    assert cells(SERVICE_T, SERVICE) == [
        "web",
        "ClusterIP",
        "10.96.0.10",
        "<none>",
        "80/TCP,53/UDP",
        "3h",
        "app=web",
    ]


def test_service_types() -> None:
    node_port = copy.deepcopy(SERVICE)
    node_port["spec"].update(
        type="NodePort", ports=[{"port": 80, "nodePort": 30080}], externalIPs=["1.2.3.4"]
    )
    assert cells(SERVICE_T, node_port)[1:5] == ["NodePort", "10.96.0.10", "1.2.3.4", "80:30080/TCP"]
    balancer = copy.deepcopy(SERVICE)
    balancer["spec"]["type"] = "LoadBalancer"
    assert cells(SERVICE_T, balancer)[3] == "<pending>"
    balancer["status"] = {
        "loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}]}
    }
    assert cells(SERVICE_T, balancer)[3] == "5.6.7.8,lb.example.com"
    headless = copy.deepcopy(SERVICE)
    headless["spec"].update(clusterIP="None", clusterIPs=["None"], ports=[], selector={})
    assert cells(SERVICE_T, headless)[2:5] == ["None", "<none>", "<none>"]
    assert cells(SERVICE_T, headless)[6] == "<none>"
    external = {
        "metadata": {"name": "db"},
        "spec": {"type": "ExternalName", "externalName": "db.example.com"},
    }
    assert cells(SERVICE_T, external)[1:5] == ["ExternalName", "<none>", "db.example.com", "<none>"]


def test_other_builtins() -> None:
    ns = {
        "metadata": {"name": "prod", "creationTimestamp": ago(days=3)},
        "status": {"phase": "Active"},
    }
    assert cells(rtype("", "Namespace", "namespaces"), ns) == ["prod", "Active", "3d"]
    cm = {
        "metadata": {"name": "cfg", "creationTimestamp": ago(seconds=9)},
        "data": {"a": "1"},
        "binaryData": {"b": ""},
    }
    assert cells(rtype("", "ConfigMap", "configmaps"), cm) == ["cfg", 2, "9s"]
    secret = {
        "metadata": {"name": "s", "creationTimestamp": ago(seconds=9)},
        "type": "Opaque",
        "data": {"k": "dg=="},
    }
    assert cells(rtype("", "Secret", "secrets"), secret) == ["s", "Opaque", 1, "9s"]
    node = {
        "metadata": {
            "name": "node-a",
            "creationTimestamp": ago(days=10),
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.33.0"},
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
        },
    }
    assert cells(rtype("", "Node", "nodes"), node) == [
        "node-a", "Ready,SchedulingDisabled", "control-plane,worker", "10d", "v1.33.0",
        "172.18.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>",
    ]  # fmt: skip
    endpoints = {
        "metadata": {"name": "web"},
        "subsets": [
            {
                "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                "ports": [{"port": 80}, {"port": 443}],
            }
        ],
    }
    assert (
        cells(rtype("", "Endpoints", "endpoints"), endpoints)[1]
        == "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
    )
    event = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{app}"},
        "reason": "Pulled",
        "type": "Normal",
        "message": "Pulled image \n",
        "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": ago(minutes=3),
        "lastTimestamp": ago(seconds=40),
        "count": 2,
    }
    assert cells(rtype("", "Event", "events"), event) == [
        "40s", "Normal", "Pulled", "pod/web-0", "spec.containers{app}", "kubelet, node-a",
        "Pulled image", "3m", 2, "web.1",
    ]  # fmt: skip
    pvc = {
        "metadata": {"name": "data"},
        "spec": {"volumeName": "pv-1", "storageClassName": "standard"},
        "status": {
            "phase": "Bound",
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
        },
    }
    assert cells(rtype("", "PersistentVolumeClaim", "persistentvolumeclaims"), pvc) == [
        "data", "Bound", "pv-1", "1Gi", "RWO", "standard", "<unset>", "<unknown>", "<unset>",
    ]  # fmt: skip
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    assert cells(rtype("coordination.k8s.io", "Lease", "leases"), lease) == ["l", "me", "<unknown>"]


# ------------------------------------------------------------------------------------
# Custom resources and the default convertor

WIDGET_COLUMNS = (
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "description": "How round."},
    {
        "name": "Ready",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
    },
    {"name": "On", "type": "boolean", "jsonPath": ".spec.on", "priority": 1},
    {"name": "Labels", "type": "string", "jsonPath": ".metadata.labels", "priority": 1},
    {"name": "Since", "type": "date", "jsonPath": ".status.since", "format": "date-time"},
)
WIDGET_T = ResourceType(
    "example.com",
    "v1",
    "Widget",
    "widgets",
    True,
    crd="widgets.example.com",
    printer_columns=WIDGET_COLUMNS,
)
WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w1", "labels": {"b": "2", "a": "1"}, "creationTimestamp": ago(days=1)},
    "spec": {"size": 3.0, "ratio": 2, "on": True},
    "status": {"since": ago(minutes=7), "conditions": [{"type": "Ready", "status": "True"}]},
}


def test_crd_columns_follow_the_printer_columns() -> None:
    columns = table_columns(WIDGET_T)
    assert [(c["name"], c["type"], c["format"], c["priority"]) for c in columns] == [
        ("Name", "string", "name", 0),
        ("Size", "integer", "", 0),
        ("Ratio", "number", "", 0),
        ("Ready", "string", "", 0),
        ("On", "boolean", "", 1),
        ("Labels", "string", "", 1),
        ("Since", "date", "date-time", 0),
    ]
    assert (
        columns[1]["description"]
        == "Custom resource definition column (in JSONPath format): .spec.size"
    )
    assert columns[2]["description"] == "How round."
    # A version that declares columns gets no Age column of its own.
    assert "Age" not in [c["name"] for c in columns]


def test_crd_cells_are_typed_like_the_apiserver() -> None:
    assert cells(WIDGET_T, WIDGET) == ["w1", 3, 2.0, "True", True, '{"a":"1","b":"2"}', "7m"]


def test_crd_cells_for_missing_and_mistyped_values() -> None:
    odd = {
        "metadata": {"name": "w2"},
        "spec": {"size": "three", "ratio": True, "on": "yes"},
        "status": {"since": "yesterday", "conditions": []},
    }
    assert cells(WIDGET_T, odd) == ["w2", None, None, None, None, None, "<invalid>"]


def test_crd_without_printer_columns_shows_age() -> None:
    plain = ResourceType("example.com", "v1", "Gadget", "gadgets", True, crd="gadgets.example.com")
    assert [(c["name"], c["type"]) for c in table_columns(plain)] == [
        ("Name", "string"),
        ("Age", "date"),
    ]
    assert cells(plain, {"metadata": {"name": "g", "creationTimestamp": ago(seconds=5)}}) == [
        "g",
        "5s",
    ]


def test_kinds_without_a_printer_get_name_and_created_at() -> None:
    crd_t = ResourceType(
        "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False
    )
    assert [(c["name"], c["type"], c["format"]) for c in table_columns(crd_t)] == [
        ("Name", "string", "name"),
        ("Created At", "date", ""),
    ]
    crd = {
        "metadata": {
            "name": "widgets.example.com",
            "creationTimestamp": "2024-05-01T13:00:00+01:00",
        }
    }
    assert cells(crd_t, crd) == ["widgets.example.com", "2024-05-01T12:00:00Z"]
    role_t = rtype("rbac.authorization.k8s.io", "Role", "roles")
    assert cells(role_t, {"metadata": {"name": "r"}}) == ["r", "0001-01-01T00:00:00Z"]


# ------------------------------------------------------------------------------------
# The Table envelope


def test_table_envelope_and_partial_object_metadata() -> None:
    table = render_table(
        POD_T,
        [RUNNING_POD],
        list_meta={"resourceVersion": "42", "continue": "tok", "remainingItemCount": 0},
        now=NOW,
    )
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {
        "resourceVersion": "42",
        "continue": "tok",
        "remainingItemCount": 0,
    }
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": RUNNING_POD["metadata"],
    }
    assert render_table(POD_T, [], list_meta={"continue": ""}, now=NOW)["metadata"] == {}


def test_include_object_variants() -> None:
    whole = render_table(POD_T, [RUNNING_POD], list_meta={}, include_object="Object", now=NOW)
    assert whole["rows"][0]["object"] is RUNNING_POD
    bare = render_table(POD_T, [RUNNING_POD], list_meta={}, include_object="None", now=NOW)
    assert bare["rows"][0]["object"] is None
    default = render_table(POD_T, [RUNNING_POD], list_meta={}, include_object="", now=NOW)
    assert default["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    beta = render_table(
        POD_T, [RUNNING_POD], list_meta={}, group_version="meta.k8s.io/v1beta1", now=NOW
    )
    assert beta["apiVersion"] == beta["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    headless = render_table(POD_T, [RUNNING_POD], list_meta={}, no_headers=True, now=NOW)
    assert headless["columnDefinitions"] == []


def test_bad_requests_for_tables() -> None:
    with pytest.raises(BadRequest) as info:
        render_table(POD_T, [], list_meta={}, include_object="Everything")
    assert info.value.message == 'unrecognized includeObject value: "Everything"'
    with pytest.raises(NotAcceptable) as refused:
        render_table(POD_T, [], list_meta={}, group_version="meta.k8s.io/v2")
    assert refused.value.message == "no Table exists in group version meta.k8s.io/v2"


def test_the_clock_defaults_to_now() -> None:
    fresh = pod(metadata__creationTimestamp=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    (row,) = render_table(POD_T, [fresh], list_meta={})["rows"]
    assert row["cells"][4] in ("0s", "1s", "2s")


def test_public_surface() -> None:
    from stackwright.localcluster import tables

    assert set(tables.__all__) == {
        "TABLE_GROUP_VERSIONS",
        "human_duration",
        "render_table",
        "table_columns",
    }
    assert all(hasattr(tables, name) for name in tables.__all__)
