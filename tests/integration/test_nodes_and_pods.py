"""Simulated nodes, scheduler, kubelet, services and storage, observed through real clients.

Two clusters: the shared one-node `cluster` (speed 1, the default a user gets) for a
pod's life, services and storage; a three-node one (speed 5) for scheduling across
nodes, draining and node failure. Each test works in its own namespace.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from stackwright.localcluster import lifecycle

pytestmark = pytest.mark.integration

THREE = "three"


def eventually(check: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def api(cluster: Any) -> Iterator[httpx.Client]:
    with cluster.http() as client:
        yield client


@pytest.fixture(scope="module")
def three(cluster: Any) -> Iterator[Any]:
    """A three-node cluster at speed 5, in the same temporary home as `cluster`."""
    info, _ = lifecycle.start(THREE, nodes=3, speed=5)
    try:
        yield type(cluster)(info, cluster.home)
    finally:
        lifecycle.stop(THREE)


@pytest.fixture(scope="module")
def api3(three: Any) -> Iterator[httpx.Client]:
    with three.http() as client:
        yield client


_counter = iter(range(1_000_000))


def new_ns(api: httpx.Client) -> str:
    name = f"t{next(_counter)}-{os.getpid() % 1000}"
    r = api.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert r.status_code == 201, r.text
    return name


def pod_body(name: str, image: str = "nginx:1.29", **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": spec.pop("container", "web"), "image": image}
    for key in ("readinessProbe", "ports", "resources", "env", "volumeMounts"):
        if key in spec:
            container[key] = spec.pop(key)
    labels = spec.pop("labels", {"app": name})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [container], **spec},
    }


def create_pod(api: httpx.Client, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def get_pod(api: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    r = api.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            found: dict[str, Any] = c
            return found
    return {}


def is_ready(pod: dict[str, Any]) -> bool:
    return condition(pod, "Ready").get("status") == "True"


def pod_readiness_until_deleted(
    api: httpx.Client, ns: str, name: str, since: str, timeout: int = 30
) -> list[str | None]:
    """The pod's Ready status in each change after resourceVersion `since`, replayed by a
    watch, until the pod is deleted (fails if it is not within `timeout` seconds)."""
    url = (
        f"/api/v1/namespaces/{ns}/pods?watch=true&resourceVersion={since}"
        f"&fieldSelector=metadata.name%3D{name}&timeoutSeconds={timeout}"
    )
    seen: list[str | None] = []
    with api.stream("GET", url, timeout=timeout + 10) as r:
        for line in r.iter_lines():
            event = json.loads(line)
            if event["type"] == "DELETED":
                return seen
            seen.append(condition(event["object"], "Ready").get("status"))
    raise AssertionError(f"pod {ns}/{name} was not deleted; its Ready statuses: {seen}")


def wait_pod(
    api: httpx.Client,
    ns: str,
    name: str,
    check: Callable[[dict[str, Any]], bool],
    timeout: float = 10.0,
) -> dict[str, Any]:
    result: dict[str, Any] = {}

    def probe() -> bool:
        nonlocal result
        result = get_pod(api, ns, name)
        return check(result)

    try:
        eventually(probe, timeout, f"pod {ns}/{name}")
    except AssertionError:
        raise AssertionError(
            f"pod {ns}/{name} never got there; last status: {result.get('status')}"
        ) from None
    return result


def container_state(pod: dict[str, Any], index: int = 0) -> dict[str, Any]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    state: dict[str, Any] = statuses[index].get("state") or {}
    return state


def events_for(api: httpx.Client, ns: str, name: str) -> list[dict[str, Any]]:
    r = api.get(
        f"/api/v1/namespaces/{ns}/events",
        params={"fieldSelector": f"involvedObject.name={name}"},
    )
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return sorted(items, key=lambda e: int(e["metadata"]["resourceVersion"]))


def wait_event(
    api: httpx.Client, ns: str, name: str, reason: str, timeout: float = 10.0
) -> dict[str, Any]:
    found: dict[str, Any] = eventually(
        lambda: next((e for e in events_for(api, ns, name) if e["reason"] == reason), None),
        timeout,
        f"event {reason} for {ns}/{name}",
    )
    return found


def cli(live: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STACKWRIGHT_HOME": str(live.home)}
    return subprocess.run(
        [sys.executable, "-m", "stackwright.cli.main", *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


# --- nodes -------------------------------------------------------------------------------


def test_nodes_have_capacity_labels_conditions_and_renewed_leases(api3: httpx.Client) -> None:
    nodes = api3.get("/api/v1/nodes").json()["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["node-1", "node-2", "node-3"]
    zones = [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["zone-a", "zone-b", "zone-c"]
    node = nodes[1]
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "node-2"
    assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"] == "amd64"
    assert node["status"]["capacity"]["cpu"] == "4"
    assert node["status"]["allocatable"]["memory"] == "16Gi"
    assert node["status"]["allocatable"]["pods"] == "110"
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.33.0"
    assert {"type": "InternalIP", "address": "172.18.0.3"} in node["status"]["addresses"]
    assert {"type": "Hostname", "address": "node-2"} in node["status"]["addresses"]
    ready = condition(node, "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    for pressure in ("MemoryPressure", "DiskPressure", "PIDPressure"):
        assert condition(node, pressure)["status"] == "False"
    assert node["spec"]["podCIDR"] == "10.244.1.0/24"

    lease = api3.get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2").json()
    assert lease["spec"]["holderIdentity"] == "node-2"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    first = lease["spec"]["renewTime"]
    # Renewed every 10 simulated seconds: 2 s at speed 5.
    eventually(
        lambda: (
            api3.get(
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2"
            ).json()["spec"]["renewTime"]
            != first
        ),
        timeout=6,
        what="lease renewal",
    )


# --- a pod's life on the one-node cluster -------------------------------------------------------


def test_naked_pod_runs_and_is_ready_with_kubelet_status_events_and_logs(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    image = "nginx:1.29-life"  # a tag no other test pulls: this node has to pull it
    started = time.monotonic()
    create_pod(api, ns, pod_body("web", image, ports=[{"containerPort": 80, "name": "http"}]))
    pod = wait_pod(api, ns, "web", is_ready)
    latency = time.monotonic() - started
    assert latency < 2.0, f"pod took {latency:.2f}s to be Ready"

    status = pod["status"]
    assert status["phase"] == "Running"
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network("10.244.0.0/24")
    assert status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["hostIP"] == "172.18.0.2" and status["hostIPs"] == [{"ip": "172.18.0.2"}]
    assert status["startTime"] and status["qosClass"] == "BestEffort"
    assert pod["spec"]["nodeName"] == "node-1"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled",
    ]  # fmt: skip
    assert all(c["status"] == "True" and c["lastTransitionTime"] for c in status["conditions"])
    (container,) = status["containerStatuses"]
    assert container["name"] == "web"
    assert container["image"] == "docker.io/library/nginx:1.29-life"
    assert container["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert container["containerID"].startswith("containerd://")
    assert container["ready"] is True and container["started"] is True
    assert container["restartCount"] == 0 and container["lastState"] == {}
    assert container["state"]["running"]["startedAt"]

    events = events_for(api, ns, "web")
    reasons = [e["reason"] for e in events]
    assert reasons == ["Scheduled", "Pulling", "Pulled", "Created", "Started"], reasons
    by_reason = {e["reason"]: e for e in events}
    assert by_reason["Scheduled"]["message"] == f"Successfully assigned {ns}/web to node-1"
    assert by_reason["Scheduled"]["source"]["component"] == "default-scheduler"
    assert by_reason["Pulling"]["message"] == f'Pulling image "{image}"'
    assert by_reason["Pulled"]["message"].startswith(f'Successfully pulled image "{image}" in ')
    assert by_reason["Created"]["message"] == "Created container: web"
    assert by_reason["Started"]["message"] == "Started container web"
    assert by_reason["Started"]["source"] == {"component": "kubelet", "host": "node-1"}
    assert by_reason["Started"]["involvedObject"]["fieldPath"] == "spec.containers{web}"

    # A second pod of the same image on the same node finds it already pulled.
    create_pod(api, ns, pod_body("again", image))
    wait_pod(api, ns, "again", is_ready)
    pulled = wait_event(api, ns, "again", "Pulled")
    assert pulled["message"] == f'Container image "{image}" already present on machine'
    assert "Pulling" not in [e["reason"] for e in events_for(api, ns, "again")]

    logs = cluster.kubectl("logs", "-n", ns, "web").stdout
    assert f"INFO starting {image}" in logs and "listening on 0.0.0.0:80" in logs
    tail = cluster.kubectl("logs", "-n", ns, "web", "--tail=1", "--timestamps").stdout
    assert tail.count("\n") == 1 and tail.split(" ")[0].endswith("Z")
    waited = cluster.kubectl(
        "wait", "-n", ns, "--for=condition=Ready", "pod/again", "--timeout=10s"
    )
    assert "condition met" in waited.stdout


def test_kubectl_wait_returns_once_a_new_pod_is_ready(api: httpx.Client, cluster: Any) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("x"))
    started = time.monotonic()
    result = cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/x", "--timeout=20s")
    assert "pod/x condition met" in result.stdout
    assert time.monotonic() - started < 15  # not at its --timeout


def test_image_that_does_not_exist_backs_off_pulling(api: httpx.Client, cluster: Any) -> None:
    ns = new_ns(api)
    image = "registry.example/doesnotexist:1"
    create_pod(api, ns, pod_body("bad", image))
    pod = wait_pod(
        api, ns, "bad",
        lambda p: container_state(p).get("waiting", {}).get("reason") == "ImagePullBackOff",
    )  # fmt: skip
    assert container_state(pod)["waiting"]["message"] == f'Back-off pulling image "{image}"'
    assert pod["status"]["phase"] == "Pending" and not is_ready(pod)
    failed = [e["message"] for e in events_for(api, ns, "bad") if e["reason"] == "Failed"]
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed
    assert any(m.startswith(f'Failed to pull image "{image}": ') for m in failed)
    assert wait_event(api, ns, "bad", "BackOff")["message"] == f'Back-off pulling image "{image}"'
    logs = cluster.kubectl("logs", "-n", ns, "bad", check=False)
    assert (
        logs.returncode != 0
        and "is waiting to start: trying and failing to pull image" in logs.stderr
    )


def test_crashloop_goes_to_crash_loop_back_off_with_rising_restarts(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("crash", "example/crashloop:1"))
    pod = wait_pod(
        api, ns, "crash",
        lambda p: container_state(p).get("waiting", {}).get("reason") == "CrashLoopBackOff"
        and p["status"]["containerStatuses"][0]["restartCount"] >= 2,
    )  # fmt: skip
    container = pod["status"]["containerStatuses"][0]
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert container["lastState"]["terminated"]["reason"] == "Error"
    assert container["state"]["waiting"]["message"].startswith("back-off ")
    assert pod["status"]["phase"] == "Running" and not is_ready(pod)
    back_off = wait_event(api, ns, "crash", "BackOff")
    assert back_off["message"].startswith("Back-off restarting failed container web in pod crash_")
    previous = cluster.kubectl("logs", "-n", ns, "crash", "--previous").stdout
    assert "exiting with code 1" in previous
    # The count keeps rising.
    seen = container["restartCount"]
    wait_pod(api, ns, "crash", lambda p: p["status"]["containerStatuses"][0]["restartCount"] > seen)


def test_notready_image_runs_but_is_never_ready(api: httpx.Client) -> None:
    ns = new_ns(api)
    probe = {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 2}
    create_pod(api, ns, pod_body("lazy", "notready:1", readinessProbe=probe))
    unhealthy = wait_event(api, ns, "lazy", "Unhealthy")
    assert unhealthy["message"] == "Readiness probe failed: HTTP probe failed with statuscode: 503"
    assert unhealthy["type"] == "Warning"
    pod = get_pod(api, ns, "lazy")
    assert pod["status"]["phase"] == "Running"
    assert "running" in container_state(pod)
    assert condition(pod, "Ready")["status"] == "False"
    assert condition(pod, "ContainersReady")["message"] == "containers with unready status: [web]"
    time.sleep(0.5)
    assert not is_ready(get_pod(api, ns, "lazy"))


@pytest.mark.parametrize(
    ("image", "policy", "phase", "code"),
    [("exit0", "Never", "Succeeded", 0), ("exit1", "Never", "Failed", 1)],
)
def test_exit_images_finish_with_their_code(
    api: httpx.Client, image: str, policy: str, phase: str, code: int
) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("job", f"example/{image}:1", restartPolicy=policy))
    pod = wait_pod(api, ns, "job", lambda p: p["status"].get("phase") == phase)
    terminated = container_state(pod)["terminated"]
    assert terminated["exitCode"] == code
    assert terminated["reason"] == ("Completed" if code == 0 else "Error")
    reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
    assert condition(pod, "Ready") | {"lastTransitionTime": ""} == {
        "type": "Ready", "status": "False", "reason": reason, "lastProbeTime": None, "lastTransitionTime": "",
    }  # fmt: skip
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0


def test_exit1_restarts_under_on_failure(api: httpx.Client) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("retry", "exit1", restartPolicy="OnFailure"))
    pod = wait_pod(
        api,
        ns,
        "retry",
        lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("restartCount", 0) >= 1,
    )
    assert pod["status"]["phase"] in ("Running", "Pending")


def test_readiness_probe_delays_ready_and_init_containers_run_first(api: httpx.Client) -> None:
    ns = new_ns(api)
    body = pod_body("slow", readinessProbe={"tcpSocket": {"port": 80}, "initialDelaySeconds": 20})
    body["spec"]["initContainers"] = [{"name": "setup", "image": "busybox:1.36"}]
    create_pod(api, ns, body)
    running = wait_pod(api, ns, "slow", lambda p: "running" in container_state(p))
    init = running["status"]["initContainerStatuses"][0]
    assert init["state"]["terminated"]["reason"] == "Completed" and init["ready"] is True
    assert condition(running, "Initialized")["status"] == "True"
    assert not is_ready(running), "Ready before the probe's initialDelaySeconds"
    wait_pod(api, ns, "slow", is_ready)
    reasons = [
        (e["reason"], e["involvedObject"].get("fieldPath")) for e in events_for(api, ns, "slow")
    ]
    assert reasons.index(("Started", "spec.initContainers{setup}")) < reasons.index(
        ("Started", "spec.containers{web}")
    )


def test_missing_config_map_holds_a_pod_until_it_exists(api: httpx.Client) -> None:
    ns = new_ns(api)
    body = pod_body("cfg", volumeMounts=[{"name": "config", "mountPath": "/etc/app"}])
    body["spec"]["volumes"] = [{"name": "config", "configMap": {"name": "settings"}}]
    create_pod(api, ns, body)
    event = wait_event(api, ns, "cfg", "FailedMount")
    assert (
        event["message"]
        == 'MountVolume.SetUp failed for volume "config" : configmap "settings" not found'
    )
    pod = get_pod(api, ns, "cfg")
    assert container_state(pod)["waiting"]["reason"] == "ContainerCreating"
    r = api.post(
        f"/api/v1/namespaces/{ns}/configmaps",
        json={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings"},
            "data": {"a": "1"},
        },
    )
    assert r.status_code == 201
    wait_pod(api, ns, "cfg", is_ready)


def test_graceful_deletion_kills_then_removes_the_pod(api: httpx.Client) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("bye"))
    wait_pod(api, ns, "bye", is_ready)
    r = api.delete(f"/api/v1/namespaces/{ns}/pods/bye")
    assert r.status_code in (200, 202), r.text
    marked = r.json()
    assert marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
    killing = wait_event(api, ns, "bye", "Killing")
    assert killing["message"] == "Stopping container web"
    eventually(
        lambda: api.get(f"/api/v1/namespaces/{ns}/pods/bye").status_code == 404,
        timeout=3,
        what="pod removal",
    )
    # Grace 0 removes at once; a pod never scheduled has nothing to stop either.
    create_pod(api, ns, pod_body("now"))
    wait_pod(api, ns, "now", is_ready)
    r = api.delete(f"/api/v1/namespaces/{ns}/pods/now", params={"gracePeriodSeconds": "0"})
    assert r.status_code == 200
    assert api.get(f"/api/v1/namespaces/{ns}/pods/now").status_code == 404


def test_binding_subresource_assigns_a_node_once(api: httpx.Client) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("manual", schedulerName="my-scheduler"))
    time.sleep(0.2)
    assert not get_pod(api, ns, "manual")["spec"].get("nodeName")
    binding = {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"},
    }  # fmt: skip
    r = api.post(f"/api/v1/namespaces/{ns}/pods/manual/binding", json=binding)
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "Success"
    pod = wait_pod(api, ns, "manual", is_ready)
    assert pod["spec"]["nodeName"] == "node-1"
    assert condition(pod, "PodScheduled")["status"] == "True"
    again = api.post(f"/api/v1/namespaces/{ns}/pods/manual/binding", json=binding)
    assert again.status_code == 409
    assert again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node "node-1"'
    )


def test_requests_beyond_capacity_are_unschedulable(api: httpx.Client) -> None:
    ns = new_ns(api)
    create_pod(api, ns, pod_body("big", resources={"requests": {"cpu": "5", "memory": "1Gi"}}))
    pod = wait_pod(api, ns, "big", lambda p: condition(p, "PodScheduled").get("status") == "False")
    scheduled = condition(pod, "PodScheduled")
    message = (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    assert (scheduled["reason"], scheduled["message"]) == ("Unschedulable", message)
    event = wait_event(api, ns, "big", "FailedScheduling")
    assert (event["type"], event["message"]) == ("Warning", message)


# --- services ----------------------------------------------------------------------------------


def test_a_named_target_port_a_sidecar_declares_is_resolved(api: httpx.Client) -> None:
    """As podutil.FindPort: a sidecar's (an init container with restartPolicy Always) named
    port serves a Service; the Pod had no port in its endpoints."""
    ns = new_ns(api)
    body = pod_body("proxied", labels={"app": "proxied"})
    body["spec"]["initContainers"] = [
        {
            "name": "proxy",
            "image": "nginx:1.29",
            "restartPolicy": "Always",
            "ports": [{"name": "proxy", "containerPort": 4180}],
        }
    ]
    create_pod(api, ns, body)
    svc = {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "proxied"},
        "spec": {"selector": {"app": "proxied"}, "ports": [{"port": 80, "targetPort": "proxy"}]},
    }  # fmt: skip
    r = api.post(f"/api/v1/namespaces/{ns}/services", json=svc)
    assert r.status_code == 201, r.text

    def ports() -> Any:
        found = api.get(f"/api/v1/namespaces/{ns}/endpoints/proxied").json()
        return [s.get("ports") for s in found.get("subsets") or []]

    assert eventually(lambda: ports(), what="a subset") == [[{"port": 4180, "protocol": "TCP"}]]


def test_endpoints_and_slices_follow_pod_readiness(api: httpx.Client) -> None:
    ns = new_ns(api)
    create_pod(
        api, ns,
        pod_body(
            "backend", labels={"app": "backend"},
            ports=[{"name": "http", "containerPort": 8080}],
            readinessProbe={"httpGet": {"path": "/", "port": "http"}, "initialDelaySeconds": 20},
        ),
    )  # fmt: skip
    svc = {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend", "labels": {"tier": "api"}},
        "spec": {"selector": {"app": "backend"}, "ports": [{"name": "web", "port": 80, "targetPort": "http"}]},
    }  # fmt: skip
    r = api.post(f"/api/v1/namespaces/{ns}/services", json=svc)
    assert r.status_code == 201, r.text
    running = wait_pod(api, ns, "backend", lambda p: bool(p["status"].get("podIP")))
    ip = running["status"]["podIP"]

    def endpoints() -> dict[str, Any]:
        found: dict[str, Any] = api.get(f"/api/v1/namespaces/{ns}/endpoints/backend").json()
        return found

    def subset() -> dict[str, Any]:
        subsets = endpoints().get("subsets") or [{}]
        first: dict[str, Any] = subsets[0]
        return first

    unready = eventually(
        lambda: subset().get("notReadyAddresses") and subset(), what="notReadyAddresses"
    )
    assert [a["ip"] for a in unready["notReadyAddresses"]] == [ip]
    assert "addresses" not in unready
    assert unready["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]
    ready = eventually(lambda: subset().get("addresses") and subset(), what="ready addresses")
    assert "notReadyAddresses" not in ready
    address = ready["addresses"][0]
    assert address["ip"] == ip and address["nodeName"] == "node-1"
    assert address["targetRef"] == {
        "kind": "Pod",
        "namespace": ns,
        "name": "backend",
        "uid": running["metadata"]["uid"],
    }
    assert endpoints()["metadata"]["labels"] == {"tier": "api"}

    slices = api.get(
        f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        params={"labelSelector": "kubernetes.io/service-name=backend"},
    ).json()["items"]
    assert len(slices) == 1
    eps = slices[0]
    assert (
        eps["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"]
        == "endpointslice-controller.k8s.io"
    )
    assert eps["metadata"]["ownerReferences"][0]["kind"] == "Service"
    assert eps["addressType"] == "IPv4"
    assert eps["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]
    assert eps["endpoints"][0]["addresses"] == [ip]
    assert eps["endpoints"][0]["conditions"] == {
        "ready": True,
        "serving": True,
        "terminating": False,
    }
    assert eps["endpoints"][0]["zone"] == "zone-a"

    # The pod going away takes its address away.
    api.delete(f"/api/v1/namespaces/{ns}/pods/backend")
    eventually(lambda: not endpoints().get("subsets"), what="endpoints emptied")


def test_node_ports_are_allocated_kept_and_never_shared(api: httpx.Client) -> None:
    ns = new_ns(api)

    def service(name: str, **port: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": "NodePort", "selector": {"app": name}, "ports": [{"port": 80, **port}]},
        }  # fmt: skip

    r = api.post(f"/api/v1/namespaces/{ns}/services", json=service("np"))
    assert r.status_code == 201, r.text
    node_port = r.json()["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    clash = api.post(f"/api/v1/namespaces/{ns}/services", json=service("np2", nodePort=node_port))
    assert clash.status_code == 422
    assert clash.json()["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": f"Invalid value: {node_port}: provided port is already allocated",
        "field": "spec.ports[0].nodePort",
    }
    out_of_range = api.post(f"/api/v1/namespaces/{ns}/services", json=service("np3", nodePort=80))
    assert out_of_range.status_code == 422
    assert "The range of valid ports is 30000-32767" in out_of_range.json()["message"]
    # An update that leaves the nodePort out keeps it.
    current = api.get(f"/api/v1/namespaces/{ns}/services/np").json()
    current["spec"]["ports"][0].pop("nodePort")
    updated = api.put(f"/api/v1/namespaces/{ns}/services/np", json=current)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"]["ports"][0]["nodePort"] == node_port


def test_load_balancer_gets_an_ingress_address(api: httpx.Client) -> None:
    ns = new_ns(api)
    svc = {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "lb"}, "ports": [{"port": 443}]},
    }  # fmt: skip
    created = api.post(f"/api/v1/namespaces/{ns}/services", json=svc).json()
    assert created["spec"]["ports"][0]["nodePort"] >= 30000
    lb = eventually(
        lambda: api.get(f"/api/v1/namespaces/{ns}/services/lb").json().get("status", {})
        .get("loadBalancer", {}).get("ingress"),
        what="load balancer address",
    )  # fmt: skip
    assert len(lb) == 1 and lb[0]["ipMode"] == "VIP"
    assert ipaddress.ip_address(lb[0]["ip"]) in ipaddress.ip_network("172.18.255.0/24")
    assert wait_event(api, ns, "lb", "EnsuredLoadBalancer")["message"] == "Ensured load balancer"


def test_ingress_gets_status_once_its_class_exists(api: httpx.Client) -> None:
    ns = new_ns(api)
    cls = f"sw-{ns}"
    ingress = {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
        "spec": {"ingressClassName": cls, "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }  # fmt: skip
    r = api.post(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses", json=ingress)
    assert r.status_code == 201, r.text
    # Go prints IngressStatus' LoadBalancer struct empty, as a Service's.
    assert r.json()["status"] == {"loadBalancer": {}}
    time.sleep(0.3)
    path = f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/web"
    assert not api.get(path).json().get("status", {}).get("loadBalancer", {}).get("ingress")
    r = api.post(
        "/apis/networking.k8s.io/v1/ingressclasses",
        json={"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": cls},
              "spec": {"controller": "example.com/ingress"}},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    entries = eventually(
        lambda: api.get(path).json().get("status", {}).get("loadBalancer", {}).get("ingress"),
        what="ingress status",
    )
    assert ipaddress.ip_address(entries[0]["ip"]) in ipaddress.ip_network("172.18.255.0/24")


# --- storage -------------------------------------------------------------------------------------


def claim(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}, **spec},
    }  # fmt: skip


def test_claim_of_the_default_class_binds_to_a_provisioned_volume(api: httpx.Client) -> None:
    ns = new_ns(api)
    r = api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim("data"))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["storageClassName"] == "standard"
    assert "kubernetes.io/pvc-protection" in created["metadata"]["finalizers"]
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data"
    bound = eventually(
        lambda: (c := api.get(path).json())["status"].get("phase") == "Bound" and c,
        what="claim bound",
    )
    assert bound["status"]["capacity"] == {"storage": "2Gi"}
    assert bound["status"]["accessModes"] == ["ReadWriteOnce"]
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    volume_name = bound["spec"]["volumeName"]
    assert volume_name == f"pvc-{created['metadata']['uid']}"
    volume = api.get(f"/api/v1/persistentvolumes/{volume_name}").json()
    assert volume["status"]["phase"] == "Bound"
    assert (
        volume["spec"]["claimRef"]["name"] == "data"
        and volume["spec"]["claimRef"]["namespace"] == ns
    )
    assert volume["spec"]["capacity"] == {"storage": "2Gi"}
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert volume["spec"]["hostPath"]["path"].endswith(volume_name)
    assert (
        volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"]
        == "stackwright.io/local-path"
    )
    event = wait_event(api, ns, "data", "ProvisioningSucceeded")
    assert event["message"] == f"Successfully provisioned volume {volume_name}"

    api.delete(path)
    eventually(lambda: api.get(path).status_code == 404, what="claim deleted")
    eventually(
        lambda: api.get(f"/api/v1/persistentvolumes/{volume_name}").status_code == 404,
        what="volume reclaimed",
    )


def test_wait_for_first_consumer_binds_once_a_pod_is_scheduled(api: httpx.Client) -> None:
    ns = new_ns(api)
    api.post(
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
        json=claim("late", storageClassName="standard-wffc"),
    )
    event = wait_event(api, ns, "late", "WaitForFirstConsumer")
    assert event["message"] == "waiting for first consumer to be created before binding"
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/late"
    assert api.get(path).json()["status"]["phase"] == "Pending"
    body = pod_body("user", volumeMounts=[{"name": "data", "mountPath": "/data"}])
    body["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "late"}}]
    create_pod(api, ns, body)
    pod = wait_pod(api, ns, "user", is_ready)
    bound = api.get(path).json()
    assert bound["status"]["phase"] == "Bound"
    assert (
        bound["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        == pod["spec"]["nodeName"]
    )


def test_claim_of_a_missing_class_stays_pending_with_a_warning(api: httpx.Client) -> None:
    ns = new_ns(api)
    api.post(
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
        json=claim("lost", storageClassName="fast"),
    )
    event = wait_event(api, ns, "lost", "ProvisioningFailed")
    assert (event["type"], event["message"]) == (
        "Warning",
        'storageclass.storage.k8s.io "fast" not found',
    )
    claim_now = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/lost").json()
    assert claim_now["status"]["phase"] == "Pending"


# --- scheduling on three nodes -------------------------------------------------------------------


def test_pods_spread_across_nodes(api3: httpx.Client) -> None:
    ns = new_ns(api3)
    for i in range(6):
        create_pod(api3, ns, pod_body(f"s{i}", labels={"app": "spread"}))
    nodes = [
        wait_pod(api3, ns, f"s{i}", lambda p: bool(p["spec"].get("nodeName")))["spec"]["nodeName"]
        for i in range(6)
    ]
    assert sorted(nodes) == ["node-1", "node-1", "node-2", "node-2", "node-3", "node-3"]


def test_node_selector_matching_nothing_waits_until_a_node_is_labelled(api3: httpx.Client) -> None:
    ns = new_ns(api3)
    create_pod(api3, ns, pod_body("picky", nodeSelector={"disk": "ssd"}))
    pod = wait_pod(
        api3, ns, "picky", lambda p: condition(p, "PodScheduled").get("reason") == "Unschedulable"
    )
    message = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert condition(pod, "PodScheduled")["message"] == message
    assert wait_event(api3, ns, "picky", "FailedScheduling")["message"] == message
    patch = {"metadata": {"labels": {"disk": "ssd"}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert api3.patch("/api/v1/nodes/node-2", json=patch, headers=headers).status_code == 200
    try:
        scheduled = wait_pod(api3, ns, "picky", is_ready)
        assert scheduled["spec"]["nodeName"] == "node-2"
        assert condition(scheduled, "PodScheduled")["status"] == "True"
    finally:
        api3.patch(
            "/api/v1/nodes/node-2", json={"metadata": {"labels": {"disk": None}}}, headers=headers
        )


def test_required_node_affinity_expressions_and_fields(api3: httpx.Client) -> None:
    ns = new_ns(api3)

    def affinity(term: dict[str, Any]) -> dict[str, Any]:
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }

    zone_c = {
        "matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-c"]}
        ]
    }
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}
    not_a_or_c = {
        "matchExpressions": [
            {
                "key": "topology.kubernetes.io/zone",
                "operator": "NotIn",
                "values": ["zone-a", "zone-c"],
            },
            {"key": "kubernetes.io/hostname", "operator": "Exists"},
            {"key": "gpu", "operator": "DoesNotExist"},
        ]
    }
    for name, term in (("zc", zone_c), ("byname", by_name), ("notin", not_a_or_c)):
        create_pod(api3, ns, pod_body(name, affinity=affinity(term)))
    placed = {
        name: wait_pod(api3, ns, name, lambda p: bool(p["spec"].get("nodeName")))["spec"][
            "nodeName"
        ]
        for name in ("zc", "byname", "notin")
    }
    assert placed == {"zc": "node-3", "byname": "node-2", "notin": "node-2"}


def test_taints_repel_pods_that_do_not_tolerate_them(api3: httpx.Client, three: Any) -> None:
    ns = new_ns(api3)
    for node in ("node-1", "node-2", "node-3"):
        three.kubectl("taint", "nodes", node, "dedicated=db:NoSchedule")
    try:
        create_pod(api3, ns, pod_body("plain"))
        pod = wait_pod(
            api3,
            ns,
            "plain",
            lambda p: condition(p, "PodScheduled").get("reason") == "Unschedulable",
        )
        assert condition(pod, "PodScheduled")["message"].startswith(
            "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: db}."
        )
        tolerant = pod_body(
            "tolerant",
            tolerations=[
                {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}
            ],
        )
        create_pod(api3, ns, tolerant)
        wait_pod(api3, ns, "tolerant", is_ready)
        exists = pod_body("exists", tolerations=[{"operator": "Exists"}])
        create_pod(api3, ns, exists)
        wait_pod(api3, ns, "exists", is_ready)
    finally:
        for node in ("node-1", "node-2", "node-3"):
            three.kubectl("taint", "nodes", node, "dedicated-")
    wait_pod(api3, ns, "plain", is_ready)


# --- disruption ------------------------------------------------------------------------------------


def test_drain_evicts_pods_and_a_budget_can_refuse(api3: httpx.Client, three: Any) -> None:
    ns = new_ns(api3)
    for name in ("a", "b"):
        create_pod(api3, ns, pod_body(name, nodeSelector={"kubernetes.io/hostname": "node-3"}))
    guarded = pod_body(
        "guarded", labels={"app": "guarded"}, nodeSelector={"kubernetes.io/hostname": "node-1"}
    )
    create_pod(api3, ns, guarded)
    for name in ("a", "b", "guarded"):
        wait_pod(api3, ns, name, is_ready)

    # A budget that allows no disruption: eviction answers 429 as kubectl drain expects.
    pdb = {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
    }  # fmt: skip
    assert (
        api3.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=pdb).status_code
        == 201
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded"}}
    refused = api3.post(f"/api/v1/namespaces/{ns}/pods/guarded/eviction", json=eviction)
    assert refused.status_code == 429, refused.text
    assert (
        refused.json()["message"]
        == "Cannot evict pod as it would violate the pod's disruption budget."
    )
    assert refused.json()["reason"] == "TooManyRequests"

    result = cli(three, "cluster", "node", "drain", "node-3", "--name", THREE)
    assert result.returncode == 0, result.stderr
    assert f"evicting pod {ns}/a" in result.stdout and result.stdout.strip().endswith(
        "node/node-3 drained"
    )
    try:
        for name in ("a", "b"):  # naked pods: evicted and gone for good
            assert api3.get(f"/api/v1/namespaces/{ns}/pods/{name}").status_code == 404
        node = api3.get("/api/v1/nodes/node-3").json()
        assert node["spec"]["unschedulable"] is True
        assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"} in [
            {k: t[k] for k in ("key", "effect")} for t in node["spec"].get("taints") or []
        ]
        create_pod(api3, ns, pod_body("after", nodeSelector={"kubernetes.io/hostname": "node-3"}))
        pod = wait_pod(
            api3,
            ns,
            "after",
            lambda p: condition(p, "PodScheduled").get("reason") == "Unschedulable",
        )
        assert "1 node(s) were unschedulable" in condition(pod, "PodScheduled")["message"]
    finally:
        uncordoned = cli(three, "cluster", "node", "uncordon", "node-3", "--name", THREE)
        assert uncordoned.returncode == 0, uncordoned.stderr
    wait_pod(api3, ns, "after", is_ready)
    missing = cli(three, "cluster", "node", "cordon", "node-9", "--name", THREE)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f'error: node "node-9" not found in cluster {THREE}: its nodes are node-1, node-2, node-3'
    ]


def test_a_failed_node_marks_and_loses_its_pods_then_recovers(
    api3: httpx.Client, three: Any
) -> None:
    ns = new_ns(api3)
    create_pod(api3, ns, pod_body("victim", nodeSelector={"kubernetes.io/hostname": "node-2"}))
    since = wait_pod(api3, ns, "victim", is_ready)["metadata"]["resourceVersion"]
    result = cli(three, "cluster", "node", "fail", "node-2", "--name", THREE)
    assert result.returncode == 0, result.stderr
    try:
        node = eventually(
            lambda: (
                (n := api3.get("/api/v1/nodes/node-2").json())
                and condition(n, "Ready").get("status") == "Unknown"
                and n
            ),
            what="node Unknown",
        )
        assert condition(node, "Ready")["reason"] == "NodeStatusUnknown"
        taints = {(t["key"], t["effect"]) for t in node["spec"]["taints"]}
        assert taints == {
            ("node.kubernetes.io/unreachable", "NoSchedule"),
            ("node.kubernetes.io/unreachable", "NoExecute"),
        }
        # Marked not Ready, then evicted (the default 300 s toleration, scaled) and, as a
        # naked pod, gone: the pod's changes since it was Ready, as a watch replays them
        # (on a loaded machine the eviction can come before a poll would look).
        assert pod_readiness_until_deleted(api3, ns, "victim", since)[-1] == "False"
    finally:
        recovered = cli(three, "cluster", "node", "recover", "node-2", "--name", THREE)
        assert recovered.returncode == 0, recovered.stderr
    node = eventually(
        lambda: (
            (n := api3.get("/api/v1/nodes/node-2").json())
            and condition(n, "Ready").get("status") == "True"
            and n
        ),
        what="node Ready again",
    )
    assert not node["spec"].get("taints")


def test_service_account_admission(api: httpx.Client) -> None:
    """As the ServiceAccount admission plugin: the `default` account, an existing account
    required, and the API access token volume mounted into every container."""
    ns = new_ns(api)
    pod = create_pod(api, ns, pod_body("sa-default"))
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    (volume,) = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == 21
    assert volume["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt",
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                     "fieldPath": "metadata.namespace"},
                                        "path": "namespace"}]}},
        ],
    }  # fmt: skip
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True,
         "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    ]  # fmt: skip
    wait_pod(api, ns, "sa-default", is_ready)

    opted_out = create_pod(api, ns, pod_body("sa-none", automountServiceAccountToken=False))
    assert "volumes" not in opted_out["spec"]
    assert "volumeMounts" not in opted_out["spec"]["containers"][0]

    r = api.post(
        f"/api/v1/namespaces/{ns}/pods", json=pod_body("sa-missing", serviceAccountName="ghost")
    )
    assert r.status_code == 403, r.text
    assert r.json()["message"] == (
        f'pods "sa-missing" is forbidden: error looking up service account {ns}/ghost: '
        'serviceaccount "ghost" not found'
    )
    api.post(
        f"/api/v1/namespaces/{ns}/serviceaccounts",
        json={"metadata": {"name": "quiet"}, "automountServiceAccountToken": False},
    )
    quiet = create_pod(api, ns, pod_body("sa-quiet", serviceAccountName="quiet"))
    assert quiet["spec"]["serviceAccountName"] == "quiet" and "volumes" not in quiet["spec"]
