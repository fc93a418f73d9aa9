"""Workload controllers observed through real clients, with the real scheduler and kubelet.

Deployments (rollout within maxUnavailable seen through a watch, rollback, scale,
progress deadline, foreground deletion), Jobs, StatefulSets, DaemonSets (on a
three-node cluster), HPA and PDB status. Each test works in its own namespace of
the module's one-node cluster at speed 1.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from stackwright.localcluster import lifecycle

pytestmark = pytest.mark.integration

APPS = "/apis/apps/v1/namespaces"
BATCH = "/apis/batch/v1/namespaces"


# --- helpers ---------------------------------------------------------------------------------


def eventually(check: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
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


_counter = iter(range(1_000_000))


def new_ns(api: httpx.Client) -> str:
    name = f"w{next(_counter)}-{os.getpid() % 1000}"
    r = api.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert r.status_code == 201, r.text
    return name


def deployment(
    name: str, image: str = "nginx:1.29", replicas: int = 3, **spec: Any
) -> dict[str, Any]:
    pod_spec = {
        "containers": [{"name": "web", "image": image}],
        "terminationGracePeriodSeconds": 5,
    }
    return workload("Deployment", name, replicas, pod_spec, **spec)


def statefulset(name: str, replicas: int, pod_spec: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return workload("StatefulSet", name, replicas, pod_spec, serviceName=name, **spec)


def workload(
    kind: str, name: str, replicas: int, pod_spec: dict[str, Any], **spec: Any
) -> dict[str, Any]:
    """An apps/v1 controller of `replicas` pods labelled app=NAME."""
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
            **spec,
        },
    }


def job(name: str, image: str, command: list[str] | None = None, **spec: Any) -> dict[str, Any]:
    container = {"name": "work", "image": image, **({"command": command} if command else {})}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
            **spec,
        },
    }


def create(api: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post(path, json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def get(api: httpx.Client, path: str) -> dict[str, Any]:
    r = api.get(path)
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def items(api: httpx.Client, path: str, **params: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = get(
        api, path + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
    )["items"]
    return listed


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond["type"] == kind:
            found: dict[str, Any] = cond
            return found
    return {}


def is_ready(pod: dict[str, Any]) -> bool:
    return condition(pod, "Ready").get("status") == "True" and not pod["metadata"].get(
        "deletionTimestamp"
    )


def controller_of(obj: dict[str, Any]) -> dict[str, Any]:
    refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    assert len(refs) == 1, obj["metadata"]
    return refs[0]


def events_for(api: httpx.Client, ns: str, name: str) -> list[dict[str, Any]]:
    found = items(
        api, f"/api/v1/namespaces/{ns}/events", fieldSelector=f"involvedObject.name={name}"
    )
    return sorted(found, key=lambda e: int(e["metadata"]["resourceVersion"]))


def wait_available(
    api: httpx.Client, ns: str, name: str, replicas: int, timeout: float = 15.0
) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        d = get(api, f"{APPS}/{ns}/deployments/{name}")
        s = d.get("status") or {}
        complete = (
            s.get("observedGeneration") == d["metadata"]["generation"]
            and s.get("updatedReplicas") == replicas
            and s.get("availableReplicas") == replicas
            and s.get("replicas") == replicas
        )
        return d if complete else None

    found: dict[str, Any] = eventually(done, timeout, f"deployment {ns}/{name} available")
    return found


def replay(
    api: httpx.Client, path: str, resource_version: str, *, query: str = ""
) -> list[dict[str, Any]]:
    """Every WATCH event on `path` since `resource_version`, as a watcher saw them.

    The server replays its change log from that version, then the short timeout ends
    the stream: the events a client watching all along received, in order.
    """
    events: list[dict[str, Any]] = []
    url = f"{path}?watch=true&resourceVersion={resource_version}&timeoutSeconds=0.3{query}"
    with api.stream("GET", url) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                events.append(json.loads(line))
    return events


def list_rv(api: httpx.Client, path: str) -> str:
    rv: str = get(api, path)["metadata"]["resourceVersion"]
    return rv


# --- deployments ------------------------------------------------------------------------------


def test_deployment_becomes_available_with_owned_replica_set_and_pods(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    created = create(api, f"{APPS}/{ns}/deployments", deployment("web"))
    waited = cluster.kubectl(
        "-n", ns, "wait", "--for=condition=Available", "deployment/web", "--timeout=20s"
    )
    assert "condition met" in waited.stdout
    rolled = cluster.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=20s")
    assert 'deployment "web" successfully rolled out' in rolled.stdout

    d = wait_available(api, ns, "web", 3)
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    status = d["status"]
    assert (
        status["replicas"],
        status["updatedReplicas"],
        status["readyReplicas"],
        status["availableReplicas"],
    ) == (3, 3, 3, 3)
    assert status["observedGeneration"] == d["metadata"]["generation"]
    assert "unavailableReplicas" not in status  # zero, so omitted as the real API does
    available, progressing = condition(d, "Available"), condition(d, "Progressing")
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")

    [rs] = items(api, f"{APPS}/{ns}/replicasets")
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"] == {
        "app": "web",
        "pod-template-hash": pod_hash,
    }
    assert controller_of(rs) == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
        "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
    }  # fmt: skip
    annotations = rs["metadata"]["annotations"]
    assert annotations["deployment.kubernetes.io/revision"] == "1"
    assert annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    assert annotations["deployment.kubernetes.io/max-replicas"] == "4"  # 25% surge of 3, rounded up
    assert (
        rs["status"]["replicas"]
        == rs["status"]["readyReplicas"]
        == rs["status"]["availableReplicas"]
        == 3
    )
    assert rs["status"]["fullyLabeledReplicas"] == 3

    pods = items(api, f"/api/v1/namespaces/{ns}/pods")
    assert len(pods) == 3
    for pod in pods:
        name = pod["metadata"]["name"]
        assert name.startswith(f"web-{pod_hash}-") and len(name) == len(f"web-{pod_hash}-") + 5
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
        ref = controller_of(pod)
        assert (ref["kind"], ref["name"], ref["uid"], ref["blockOwnerDeletion"]) == (
            "ReplicaSet",
            rs["metadata"]["name"],
            rs["metadata"]["uid"],
            True,
        )
        assert is_ready(pod)
    scaling = [
        e["message"] for e in events_for(api, ns, "web") if e["reason"] == "ScalingReplicaSet"
    ]
    assert scaling == [f"Scaled up replica set web-{pod_hash} from 0 to 3"]
    created_pods = [
        e for e in events_for(api, ns, rs["metadata"]["name"]) if e["reason"] == "SuccessfulCreate"
    ]
    assert (
        len(created_pods) == 3 and created_pods[0]["source"]["component"] == "replicaset-controller"
    )


def test_pods_admission_refuses_are_retried_with_one_event_not_in_a_tight_loop(
    api: httpx.Client,
) -> None:
    """A template naming a missing ServiceAccount: kube-controller-manager keeps one
    FailedCreate event (its count rising) naming the pod by its generateName, and retries
    with a back-off. Each refusal named a new pod once, so each made a new event, a new
    ReplicaFailure message and at once another try: hundreds of thousands of events."""
    ns = new_ns(api)
    body = deployment("nosa", replicas=1)
    body["spec"]["template"]["spec"]["serviceAccountName"] = "ghost"
    create(api, f"{APPS}/{ns}/deployments", body)
    [rs] = eventually(lambda: items(api, f"{APPS}/{ns}/replicasets"), what="a ReplicaSet")
    refused = (
        f'pods "{rs["metadata"]["name"]}-" is forbidden: error looking up service account '
        f'{ns}/ghost: serviceaccount "ghost" not found'
    )
    failure = eventually(
        lambda: condition(
            get(api, f"{APPS}/{ns}/replicasets/{rs['metadata']['name']}"), "ReplicaFailure"
        ),
        what="ReplicaFailure",
    )
    assert failure["message"] == refused
    time.sleep(1.5)
    events = [
        e for e in items(api, f"/api/v1/namespaces/{ns}/events") if e["reason"] == "FailedCreate"
    ]
    assert [e["message"] for e in events] == [f"Error creating: {refused}"]
    assert 1 < events[0]["count"] < 20


def test_rolling_update_never_drops_below_replicas_minus_max_unavailable(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    body = deployment(
        "web", replicas=4,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
    )  # fmt: skip
    create(api, f"{APPS}/{ns}/deployments", body)
    wait_available(api, ns, "web", 4)
    pods_path = f"/api/v1/namespaces/{ns}/pods"
    since = list_rv(api, pods_path)
    ready = {p["metadata"]["name"]: is_ready(p) for p in items(api, pods_path)}
    assert sum(ready.values()) == 4

    r = api.patch(
        f"{APPS}/{ns}/deployments/web",
        json={
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.30"}]}}}
        },
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    rolled = cluster.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=30s")
    assert "successfully rolled out" in rolled.stdout
    d = wait_available(api, ns, "web", 4)
    eventually(lambda: len(items(api, pods_path)) == 4, 10, "old pods gone")
    events = replay(api, pods_path, since)

    counts = []
    for event in events:
        pod = event["object"]
        if event["type"] == "DELETED":
            ready.pop(pod["metadata"]["name"], None)
        else:
            ready[pod["metadata"]["name"]] = is_ready(pod)
        counts.append(sum(ready.values()))
    assert len(counts) > 20, events  # pods were created, became ready, terminated
    assert min(counts) >= 4 - 1, counts
    assert min(counts) < 4 or max(counts) > 4, counts  # the rollout did replace pods
    assert counts[-1] == 4
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    sets = {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs
        for rs in items(api, f"{APPS}/{ns}/replicasets")
    }
    assert (
        sets["nginx:1.30"]["spec"]["replicas"] == 4 and sets["nginx:1.29"]["spec"]["replicas"] == 0
    )
    assert sets["nginx:1.30"]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    pods = items(api, pods_path)
    assert {
        p["spec"]["containers"][0]["image"]
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
    } == {"nginx:1.30"}


def test_rollout_undo_and_scale_through_kubectl(api: httpx.Client, cluster: Any) -> None:
    ns = new_ns(api)
    create(api, f"{APPS}/{ns}/deployments", deployment("web", replicas=2))
    wait_available(api, ns, "web", 2)
    cluster.kubectl("-n", ns, "set", "image", "deployment/web", "web=nginx:1.30")
    cluster.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=30s")
    first = {
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs["metadata"]["name"]
        for rs in items(api, f"{APPS}/{ns}/replicasets")
    }
    assert set(first) == {"1", "2"}

    cluster.kubectl("-n", ns, "rollout", "undo", "deployment/web")
    cluster.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=30s")
    d = wait_available(api, ns, "web", 2)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    sets = {rs["metadata"]["name"]: rs for rs in items(api, f"{APPS}/{ns}/replicasets")}
    assert len(sets) == 2  # the old ReplicaSet came back; no third one was made
    back = sets[first["1"]]
    assert back["spec"]["replicas"] == 2
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert sets[first["2"]]["spec"]["replicas"] == 0
    history = cluster.kubectl("-n", ns, "rollout", "history", "deployment/web").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]

    scaled = cluster.kubectl("-n", ns, "scale", "deployment/web", "--replicas=5")
    assert "scaled" in scaled.stdout
    cluster.kubectl("-n", ns, "rollout", "status", "deployment/web", "--timeout=30s")
    d = wait_available(api, ns, "web", 5)
    assert sets[first["1"]]["metadata"]["name"] in {
        p["metadata"]["ownerReferences"][0]["name"]
        for p in items(api, f"/api/v1/namespaces/{ns}/pods")
    }
    assert any(
        e["message"] == f"Scaled up replica set {first['1']} from 2 to 5"
        for e in events_for(api, ns, "web")
    )


def test_crashing_rollout_stalls_with_progress_deadline_exceeded(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    body = deployment(
        "stall", replicas=2, minReadySeconds=10, progressDeadlineSeconds=12,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    )  # fmt: skip
    create(api, f"{APPS}/{ns}/deployments", body)
    wait_available(api, ns, "stall", 2)
    # A crashing container with no readiness probe is Ready while it runs (0.2 s here, 4
    # simulated seconds, under minReadySeconds): on a loaded machine its run stretched past
    # 10 simulated seconds and the rollout moved on. With a probe it is never Ready.
    crashing = {
        "name": "web",
        "image": "registry.local/app-crashloop:1",
        "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
    }
    template = {"spec": {"template": {"spec": {"containers": [crashing]}}}}
    cluster.kubectl("-n", ns, "patch", "deployment/stall", "-p", json.dumps(template))
    started = time.monotonic()
    # The crashing pod is never Ready, so the rollout cannot move.
    stalled = cluster.kubectl(
        "-n", ns, "rollout", "status", "deployment/stall", "--timeout=30s", check=False
    )
    elapsed = time.monotonic() - started
    assert stalled.returncode == 1, stalled.stdout + stalled.stderr
    assert 'deployment "stall" exceeded its progress deadline' in stalled.stderr
    # 12 simulated seconds without progress are 0.6 s: never sooner, and not much later.
    assert 0.6 <= elapsed < 15, elapsed

    d = get(api, f"{APPS}/{ns}/deployments/stall")
    assert d["status"]["updatedReplicas"] == 1 and d["status"]["availableReplicas"] == 2
    assert condition(d, "Available")["status"] == "True"  # the old pods still serve
    old = [
        rs
        for rs in items(api, f"{APPS}/{ns}/replicasets")
        if rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    ]
    assert old[0]["spec"]["replicas"] == 2  # maxUnavailable 0: nothing old was removed
    scaling = [
        e["message"] for e in events_for(api, ns, "stall") if e["reason"] == "ScalingReplicaSet"
    ]
    # The old set up to 2 at creation, the new one up to 1 (the surge); nothing after that.
    assert len(scaling) == 2 and scaling[1].endswith("from 0 to 1"), scaling


def test_a_revert_after_a_missed_deadline_is_observed_before_the_old_condition_clears(
    api: httpx.Client, cluster: Any
) -> None:
    """What `kubectl rollout undo` after a stalled rollout looks like on a real cluster (its
    `rollout status` then fails at once): the first status of the reverted generation still
    carries the stalled ReplicaSet's ProgressDeadlineExceeded, as kube-controller-manager's
    getNewReplicaSet resets Progressing only for a ReplicaSet it creates; the revision
    already names the reverted ReplicaSet; progress clears the condition a moment later."""
    ns = new_ns(api)
    path = f"{APPS}/{ns}/deployments/back"
    create(
        api, f"{APPS}/{ns}/deployments", deployment("back", replicas=1, progressDeadlineSeconds=4)
    )
    wait_available(api, ns, "back", 1)
    bad = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "web", "image": "nginx:doesnotexist"}]}}
        }
    }
    cluster.kubectl("-n", ns, "patch", "deployment/back", "-p", json.dumps(bad))

    def stalled() -> dict[str, Any] | None:
        d = get(api, path)
        observed = d["status"].get("observedGeneration") == d["metadata"]["generation"]
        timed_out = condition(d, "Progressing").get("reason") == "ProgressDeadlineExceeded"
        return d if observed and timed_out else None

    stuck = eventually(stalled, what="the bad rollout past its deadline")
    since = stuck["metadata"]["resourceVersion"]
    good = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}}}
    }
    cluster.kubectl("-n", ns, "patch", "deployment/back", "-p", json.dumps(good))
    done = wait_available(api, ns, "back", 1)
    generation = done["metadata"]["generation"]
    assert generation == stuck["metadata"]["generation"] + 1
    assert condition(done, "Progressing")["reason"] == "NewReplicaSetAvailable"

    revision = "deployment.kubernetes.io/revision"
    sets = {rs["metadata"]["name"]: rs for rs in items(api, f"{APPS}/{ns}/replicasets")}
    assert len(sets) == 2  # the first ReplicaSet came back
    stalled_rs = condition(stuck, "Progressing")["message"].split('"')[1]
    assert sets[stalled_rs]["metadata"]["annotations"][revision] == "2"
    seen = [
        e["object"]
        for e in replay(
            api, f"{APPS}/{ns}/deployments", since, query="&fieldSelector=metadata.name%3Dback"
        )
        if e["type"] == "MODIFIED"
    ]
    first = next(d for d in seen if d["status"].get("observedGeneration") == generation)
    assert first["metadata"]["annotations"][revision] == "3"
    assert condition(first, "Progressing") == condition(stuck, "Progressing")
    assert first["status"]["replicas"] == 2 and first["status"]["updatedReplicas"] == 1


def test_foreground_deletion_removes_replica_sets_and_pods_before_the_deployment(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    create(api, f"{APPS}/{ns}/deployments", deployment("gone", replicas=2))
    wait_available(api, ns, "gone", 2)
    paths = {
        "pod": f"/api/v1/namespaces/{ns}/pods",
        "rs": f"{APPS}/{ns}/replicasets",
        "deploy": f"{APPS}/{ns}/deployments",
    }
    since = list_rv(api, paths["deploy"])
    r = api.request(
        "DELETE", f"{APPS}/{ns}/deployments/gone",
        json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"},
    )  # fmt: skip
    assert r.status_code in (200, 202), r.text
    marked = r.json()
    assert (
        marked["metadata"]["deletionTimestamp"]
        and "foregroundDeletion" in marked["metadata"]["finalizers"]
    )
    eventually(
        lambda: api.get(f"{APPS}/{ns}/deployments/gone").status_code == 404, 15, "deployment gone"
    )
    gone = {
        kind: [e for e in replay(api, path, since) if e["type"] == "DELETED"]
        for kind, path in paths.items()
    }
    assert len(gone["pod"]) == 2 and len(gone["rs"]) == 1 and len(gone["deploy"]) == 1

    def rv(event: dict[str, Any]) -> int:
        return int(event["object"]["metadata"]["resourceVersion"])

    last_dependent = max(rv(e) for e in gone["pod"] + gone["rs"])
    assert rv(gone["deploy"][0]) > last_dependent
    assert max(rv(e) for e in gone["pod"]) < rv(
        gone["rs"][0]
    )  # the ReplicaSet waited for its pods too
    assert items(api, f"/api/v1/namespaces/{ns}/pods") == []


# --- jobs --------------------------------------------------------------------------------------


def test_job_of_failing_pods_fails_after_backoff_limit(api: httpx.Client, cluster: Any) -> None:
    ns = new_ns(api)
    created = create(
        api, f"{BATCH}/{ns}/jobs", job("fail", "registry.local/task-exit1:1", backoffLimit=2)
    )
    waited = cluster.kubectl(
        "-n", ns, "wait", "--for=condition=Failed", "job/fail", "--timeout=30s"
    )
    assert "condition met" in waited.stdout
    j = get(api, f"{BATCH}/{ns}/jobs/fail")
    status = j["status"]
    assert status["failed"] == 3 and "succeeded" not in status and "active" not in status
    assert (
        status["uncountedTerminatedPods"] == {}
        and status["ready"] == 0
        and status["terminating"] == 0
    )
    for kind in ("FailureTarget", "Failed"):
        cond = condition(j, kind)
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "True",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )
    pods = items(api, f"/api/v1/namespaces/{ns}/pods")
    assert len(pods) == 3
    uid = created["metadata"]["uid"]
    for pod in pods:
        assert pod["status"]["phase"] == "Failed"
        assert pod["metadata"]["name"].startswith("fail-")
        labels = pod["metadata"]["labels"]
        assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
        assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "fail"
        assert "batch.kubernetes.io/job-tracking" not in (pod["metadata"].get("finalizers") or [])
        assert controller_of(pod)["uid"] == uid
    reasons = [e["reason"] for e in events_for(api, ns, "fail")]
    assert reasons.count("SuccessfulCreate") == 3 and reasons[-1] == "BackoffLimitExceeded"
    # Each new pod waited for the previous one to fail (and its back-off): never two at once.
    starts = sorted(p["metadata"]["creationTimestamp"] for p in pods)
    assert starts == sorted(starts)


def test_job_of_succeeding_pods_completes_within_parallelism(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    pods_path = f"/api/v1/namespaces/{ns}/pods"
    since = list_rv(api, pods_path)
    create(
        api,
        f"{BATCH}/{ns}/jobs",
        job("ok", "registry.local/task-exit0:1", completions=3, parallelism=2),
    )
    cluster.kubectl("-n", ns, "wait", "--for=condition=Complete", "job/ok", "--timeout=30s")
    running: dict[str, bool] = {}
    most = 0
    for event in replay(api, pods_path, since):
        pod = event["object"]
        name = pod["metadata"]["name"]
        if event["type"] == "DELETED" or pod["status"].get("phase") in ("Succeeded", "Failed"):
            running.pop(name, None)
        else:
            running[name] = True
        most = max(most, len(running))
    assert most == 2
    j = get(api, f"{BATCH}/{ns}/jobs/ok")
    assert j["status"]["succeeded"] == 3 and "failed" not in j["status"]
    assert j["status"]["completionTime"] >= j["status"]["startTime"]
    for kind in ("SuccessCriteriaMet", "Complete"):
        cond = condition(j, kind)
        assert (cond["status"], cond["reason"]) == ("True", "CompletionsReached")
    assert [e["reason"] for e in events_for(api, ns, "ok")][-1] == "Completed"
    assert (
        cluster.kubectl("-n", ns, "get", "job", "ok", "-o", "jsonpath={.status.succeeded}").stdout
        == "3"
    )


def test_an_init_containers_command_decides_whether_the_pod_goes_on(
    api: httpx.Client, cluster: Any
) -> None:
    """As on a node: an init container whose command exits 3 fails its Job's pod
    (Init:Error) before the work starts, and `kubectl logs -c` says what it ran and its
    code; one writing a file through a here-document whose text says `exit 1` completes,
    and the work runs (both used to complete whatever the command said)."""
    ns = new_ns(api)
    jobs = f"{BATCH}/{ns}/jobs"
    for name, script in (
        ("migrate", "echo migrating; exit 3"),
        ("configure", "cat > /hooks/stop.sh <<'EOF'\necho stopping\nexit 1\nEOF\necho ok"),
    ):
        body = job(name, "busybox:1.36", ["sh", "-c", "echo hello"], backoffLimit=0)
        body["spec"]["template"]["spec"]["initContainers"] = [
            {"name": "setup", "image": "busybox:1.36", "command": ["sh", "-c", script]}
        ]
        create(api, jobs, body)
    cluster.kubectl("-n", ns, "wait", "--for=condition=Failed", "job/migrate", "--timeout=20s")
    cluster.kubectl("-n", ns, "wait", "--for=condition=Complete", "job/configure", "--timeout=20s")
    (pod,) = items(api, f"/api/v1/namespaces/{ns}/pods", labelSelector="job-name=migrate")
    (setup,) = pod["status"]["initContainerStatuses"]
    assert (setup["state"]["terminated"]["exitCode"], pod["status"]["phase"]) == (3, "Failed")
    assert "running" not in pod["status"]["containerStatuses"][0]["state"]
    logs = cluster.kubectl("-n", ns, "logs", "job/migrate", "-c", "setup").stdout
    assert "INFO running sh -c echo migrating; exit 3\n" in logs, logs
    assert logs.endswith("INFO exiting with code 3\n"), logs


def test_a_jobs_command_runs_to_completion_unless_it_never_ends(
    api: httpx.Client, cluster: Any
) -> None:
    """A Job's container given a command runs it and exits 0, as a node runs busybox's
    `echo hello`; `sleep 20` takes 20 kubelet seconds (1 s at speed 1). One whose command
    never ends (`sleep infinity`, `tail -n0 -f`), or that runs its image's own server, keeps
    its Job active. One whose command fails (`false`) with restartPolicy OnFailure is
    restarted in its pod, and the restarts count against the Job's backoffLimit."""
    ns = new_ns(api)
    jobs = f"{BATCH}/{ns}/jobs"
    began = time.monotonic()
    create(api, jobs, job("hello", "busybox:1.36", ["sh", "-c", "echo hello"]))
    create(api, jobs, job("nap", "busybox:1.36", ["sh", "-c", "sleep '20'"]))
    create(api, jobs, job("forever", "busybox:1.36", ["sleep", "infinity"]))
    create(api, jobs, job("follow", "busybox:1.36", ["tail", "-n0", "-f", "/dev/null"]))
    create(api, jobs, job("server", "nginx:1.29"))
    retry = job("retry", "busybox:1.36", ["false"], backoffLimit=1)
    retry["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    create(api, jobs, retry)
    waited = cluster.kubectl(
        "-n", ns, "wait", "--for=condition=Complete", "job/hello", "job/nap", "--timeout=20s"
    )
    assert waited.stdout.count("condition met") == 2
    cluster.kubectl("-n", ns, "wait", "--for=condition=Failed", "job/retry", "--timeout=20s")
    failed = get(api, f"{jobs}/retry")
    assert condition(failed, "Failed")["reason"] == "BackoffLimitExceeded", failed["status"]
    assert failed["status"]["failed"] == 1  # its one pod, restarted in place until the limit
    assert time.monotonic() - began >= 20 * 0.05  # the nap was not cut short
    for name in ("hello", "nap"):
        (pod,) = items(api, f"/api/v1/namespaces/{ns}/pods", labelSelector=f"job-name={name}")
        assert pod["status"]["phase"] == "Succeeded"
        terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    logs = cluster.kubectl("-n", ns, "logs", "job/hello").stdout
    assert "INFO running sh -c echo hello\n" in logs and "exiting with code 0" in logs
    for name in ("forever", "follow", "server"):
        status = get(api, f"{jobs}/{name}")["status"]
        assert status["active"] == 1 and "succeeded" not in status, status
        assert "Complete" not in {c["type"] for c in status.get("conditions") or []}, status
        (pod,) = items(api, f"/api/v1/namespaces/{ns}/pods", labelSelector=f"job-name={name}")
        assert pod["status"]["phase"] == "Running" and is_ready(pod), pod["status"]
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0


def test_indexed_job_runs_each_index_and_ttl_deletes_it(api: httpx.Client) -> None:
    ns = new_ns(api)
    body = job(
        "idx", "registry.local/task-exit0:1", completions=3, parallelism=3, completionMode="Indexed"
    )
    body["spec"]["ttlSecondsAfterFinished"] = 20  # one simulated second is 0.05 s at speed 1
    create(api, f"{BATCH}/{ns}/jobs", body)
    j = eventually(
        lambda: (lambda j: j if condition(j, "Complete").get("status") == "True" else None)(
            get(api, f"{BATCH}/{ns}/jobs/idx")
        ),
        20,
        "indexed job complete",
    )
    assert j["status"]["completedIndexes"] == "0-2"
    pods = items(api, f"/api/v1/namespaces/{ns}/pods")
    indexes = sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods
    )
    assert indexes == ["0", "1", "2"]
    for pod in pods:
        index = pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
        assert pod["metadata"]["name"].startswith(f"idx-{index}-")
        assert pod["spec"]["hostname"] == f"idx-{index}"
        assert pod["spec"]["containers"][0]["env"][0]["name"] == "JOB_COMPLETION_INDEX"
    # ttlSecondsAfterFinished: the Job goes (foreground, so its pods go first).
    eventually(
        lambda: api.get(f"{BATCH}/{ns}/jobs/idx").status_code == 404, 15, "job deleted by its TTL"
    )
    assert items(api, f"/api/v1/namespaces/{ns}/pods") == []


# --- stateful sets -----------------------------------------------------------------------------


def test_statefulset_creates_pods_in_order_with_claims_and_scales_down_from_the_top(
    api: httpx.Client, cluster: Any
) -> None:
    ns = new_ns(api)
    pods_path = f"/api/v1/namespaces/{ns}/pods"
    since = list_rv(api, pods_path)
    pod_spec = {
        "terminationGracePeriodSeconds": 5,
        "containers": [
            {
                "name": "db",
                "image": "postgres:17",
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        ],
    }
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body = statefulset("web", 3, pod_spec, volumeClaimTemplates=[claim])
    create(api, f"{APPS}/{ns}/statefulsets", body)
    rolled = cluster.kubectl("-n", ns, "rollout", "status", "statefulset/web", "--timeout=30s")
    assert "roll out complete" in rolled.stdout
    sts = get(api, f"{APPS}/{ns}/statefulsets/web")

    # Creation order through the watch: each pod appears only once the previous one is Ready.
    state: dict[str, bool] = {}
    added: list[str] = []
    for event in replay(api, pods_path, since):
        pod = event["object"]
        name = pod["metadata"]["name"]
        if event["type"] == "ADDED":
            ordinal = int(name.rsplit("-", 1)[1])
            assert all(state.get(f"web-{i}") for i in range(ordinal)), (name, state)
            added.append(name)
        state[name] = is_ready(pod)
    assert added == ["web-0", "web-1", "web-2"]

    status = sts["status"]
    assert (
        status["replicas"],
        status["readyReplicas"],
        status["currentReplicas"],
        status["updatedReplicas"],
    ) == (3, 3, 3, 3)
    assert status["availableReplicas"] == 3 and status["observedGeneration"] == 1
    assert status["currentRevision"] == status["updateRevision"] and status["collisionCount"] == 0
    [revision] = items(api, f"{APPS}/{ns}/controllerrevisions")
    assert revision["metadata"]["name"] == status["updateRevision"] and revision["revision"] == 1
    assert (
        revision["metadata"]["name"].startswith("web-") and controller_of(revision)["name"] == "web"
    )
    for pod in items(api, pods_path):
        name = pod["metadata"]["name"]
        labels = pod["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == name
        assert labels["apps.kubernetes.io/pod-index"] == name.rsplit("-", 1)[1]
        assert labels["controller-revision-hash"] == status["updateRevision"]
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (name, "web")
        assert {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}} in pod[
            "spec"
        ]["volumes"]
    claims = {
        c["metadata"]["name"]: c
        for c in items(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
    }
    assert set(claims) == {"data-web-0", "data-web-1", "data-web-2"}
    assert claims["data-web-1"]["metadata"]["labels"] == {"app": "web"}
    eventually(
        lambda: all(
            c["status"].get("phase") == "Bound"
            for c in items(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
        ),
        10,
        "claims bound",
    )

    since = list_rv(api, pods_path)
    cluster.kubectl("-n", ns, "scale", "statefulset/web", "--replicas=1")
    eventually(
        lambda: [p["metadata"]["name"] for p in items(api, pods_path)] == ["web-0"],
        20,
        "scaled down to web-0",
    )
    deleted = [
        e["object"]["metadata"]["name"]
        for e in replay(api, pods_path, since)
        if e["type"] == "DELETED"
    ]
    assert deleted == ["web-2", "web-1"]
    # Claims outlive their pods (persistentVolumeClaimRetentionPolicy whenScaled: Retain).
    assert len(items(api, f"/api/v1/namespaces/{ns}/persistentvolumeclaims")) == 3


def stuck_statefulset(api: httpx.Client, ns: str) -> dict[str, Any]:
    """A one-pod StatefulSet whose pod never runs a container (its image cannot be
    pulled): deleting that pod has nothing to wait for, and the controller recreates it
    under the same name as soon as it is gone."""
    body = statefulset(
        "db", 1, {"containers": [{"name": "db", "image": "example.com/doesnotexist:1"}]}
    )
    create(api, f"{APPS}/{ns}/statefulsets", body)
    return eventually(lambda: pod_named(api, ns, "db-0"), what="pod db-0")


def pod_named(api: httpx.Client, ns: str, name: str) -> dict[str, Any] | None:
    r = api.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    if r.status_code == 404:
        return None
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def test_a_watch_from_a_pods_version_sees_its_deletion_though_its_controller_recreates_it(
    api: httpx.Client,
) -> None:
    """A watch from resourceVersion N delivers every change after N in order, as
    kube-apiserver's does: a pod deleted and at once recreated under its name by its
    StatefulSet is seen DELETED (with its own uid) before its successor is ADDED, whether
    the watch was open during the deletion or opened from N after it, with a
    fieldSelector on the name."""
    ns = new_ns(api)
    pods = f"/api/v1/namespaces/{ns}/pods"
    stuck_statefulset(api, ns)
    watched = f"{pods}?watch=true&fieldSelector=metadata.name%3Ddb-0&timeoutSeconds=30"
    for _ in range(5):
        pod = eventually(lambda: pod_named(api, ns, "db-0"), what="pod db-0")
        uid, since = pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
        live: list[tuple[str, str]] = []
        with api.stream("GET", f"{watched}&resourceVersion={since}") as response:
            assert response.status_code == 200
            assert api.delete(f"{pods}/db-0").status_code == 200
            for line in response.iter_lines():
                event = json.loads(line)
                live.append((event["type"], event["object"]["metadata"]["uid"]))
                if event["type"] == "ADDED":
                    break
        assert live[-2:] == [("DELETED", uid), ("ADDED", live[-1][1])], live
        assert live[-1][1] != uid
        assert {u for _, u in live[:-1]} == {uid}, live
        replayed = [
            (e["type"], e["object"]["metadata"]["uid"])
            for e in replay(api, pods, since, query="&fieldSelector=metadata.name%3Ddb-0")
        ]
        assert replayed[: len(live)] == live


def test_kubectl_delete_of_a_statefulset_pod_returns_once_the_pod_is_gone(
    api: httpx.Client, cluster: Any
) -> None:
    """`kubectl delete pod` waits for the pod's removal: it GETs the pod, then LISTs it by
    name and watches from that list. Until kubectl 1.36 (kubernetes/kubectl#1803) the
    wait never ends if the list already holds the StatefulSet's replacement, so the
    kubelet must take the time a real one takes to tear a pod down — even a pod with no
    container running — rather than remove it before kubectl's list."""
    ns = new_ns(api)
    stuck_statefulset(api, ns)
    for _ in range(12):
        uid = eventually(lambda: pod_named(api, ns, "db-0"), what="pod db-0")["metadata"]["uid"]
        deleted = cluster.kubectl("delete", "pod", "db-0", "-n", ns, "--timeout=10s", check=False)
        assert deleted.returncode == 0, deleted.stderr
        after = pod_named(api, ns, "db-0")
        assert after is None or after["metadata"]["uid"] != uid


# --- daemon sets (three nodes) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(cluster: Any) -> Iterator[Any]:
    """A three-node cluster in the same temporary home as `cluster`."""
    info, _ = lifecycle.start("workloads3", nodes=3)
    try:
        yield type(cluster)(info, cluster.home)
    finally:
        lifecycle.stop("workloads3")


def test_daemonset_runs_one_pod_per_eligible_node(three: Any) -> None:
    with three.http() as api:
        ns = new_ns(api)
        body = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "a", "image": "agent:1"}]},
                },
            },
        }
        create(api, f"{APPS}/{ns}/daemonsets", body)
        rolled = three.kubectl("-n", ns, "rollout", "status", "daemonset/agent", "--timeout=30s")
        assert 'daemon set "agent" successfully rolled out' in rolled.stdout
        pods = items(api, f"/api/v1/namespaces/{ns}/pods")
        assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-2", "node-3"]
        for pod in pods:
            terms = pod["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            assert terms == [
                {
                    "matchFields": [
                        {
                            "key": "metadata.name",
                            "operator": "In",
                            "values": [pod["spec"]["nodeName"]],
                        }
                    ]
                }
            ]
            tolerated = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
            assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerated
            assert ("node.kubernetes.io/not-ready", "NoExecute") in tolerated
            assert controller_of(pod)["kind"] == "DaemonSet"
        ds = get(api, f"{APPS}/{ns}/daemonsets/agent")
        status = ds["status"]
        assert (
            status["desiredNumberScheduled"],
            status["currentNumberScheduled"],
            status["numberReady"],
        ) == (3, 3, 3)
        assert (
            status["numberAvailable"],
            status["updatedNumberScheduled"],
            status["numberMisscheduled"],
        ) == (3, 3, 0)
        [revision] = items(api, f"{APPS}/{ns}/controllerrevisions")
        assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {
            revision["metadata"]["labels"]["controller-revision-hash"]
        }

        # A nodeSelector narrows it to the matching node.
        body["metadata"]["name"] = "picky"
        body["spec"]["selector"] = {"matchLabels": {"app": "picky"}}
        body["spec"]["template"]["metadata"]["labels"] = {"app": "picky"}
        body["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-2"}
        create(api, f"{APPS}/{ns}/daemonsets", body)
        picky = eventually(
            lambda: (lambda d: d if (d.get("status") or {}).get("numberReady") == 1 else None)(
                get(api, f"{APPS}/{ns}/daemonsets/picky")
            ),
            15,
            "picky daemon set ready",
        )
        assert picky["status"]["desiredNumberScheduled"] == 1
        [pod] = items(api, f"/api/v1/namespaces/{ns}/pods", labelSelector="app%3Dpicky")
        assert pod["spec"]["nodeName"] == "node-2"


# --- autoscaler and disruption budget status ----------------------------------------------------------


def test_hpa_and_pdb_report_status(api: httpx.Client) -> None:
    ns = new_ns(api)
    create(api, f"{APPS}/{ns}/deployments", deployment("web", replicas=2))
    wait_available(api, ns, "web", 2)
    create(
        api, f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
        {
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5},
        },
    )  # fmt: skip
    create(
        api, f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
            "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
        },
    )  # fmt: skip
    hpa = eventually(
        lambda: (lambda h: h if condition(h, "ScalingActive") else None)(
            get(api, f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/web")
        ),
        10,
        "hpa status",
    )
    assert hpa["status"]["currentReplicas"] == 2
    assert (condition(hpa, "AbleToScale")["status"], condition(hpa, "AbleToScale")["reason"]) == (
        "True",
        "SucceededGetScale",
    )
    active = condition(hpa, "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetResourceMetric")
    pdb = eventually(
        lambda: (lambda p: p if "disruptionsAllowed" in (p.get("status") or {}) else None)(
            get(api, f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web")
        ),
        10,
        "pdb status",
    )
    status = pdb["status"]
    assert (
        status["expectedPods"],
        status["currentHealthy"],
        status["desiredHealthy"],
        status["disruptionsAllowed"],
    ) == (2, 2, 1, 1)
    assert status["observedGeneration"] == 1
    allowed = condition(pdb, "DisruptionAllowed")
    assert (allowed["status"], allowed["reason"]) == ("True", "SufficientPods")


def test_pods_a_quota_refuses_are_each_controllers_failed_create_and_the_quota_shows_use(
    api: httpx.Client,
) -> None:
    """A namespace whose ResourceQuota allows one pod: a Job's and a StatefulSet's pods
    beyond it are refused by quota admission, and each controller reports the refusal
    as its upstream FailedCreate event; the quota's status counts the pod there is."""
    ns = new_ns(api)
    create(api, f"/api/v1/namespaces/{ns}/resourcequotas", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "one-pod"},
        "spec": {"hard": {"pods": "1", "count/jobs.batch": "5"}},
    })  # fmt: skip
    create(api, f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "first"},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
    })  # fmt: skip
    exceeded = (
        "is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1"
    )
    create(api, f"{BATCH}/{ns}/jobs", job("batch", "busybox:1.36", ["true"]))
    create(api, f"{APPS}/{ns}/statefulsets", statefulset(
        "db", 1, {"containers": [{"name": "db", "image": "nginx:1.29"}]}
    ))  # fmt: skip

    def refusals(name: str) -> list[str]:
        return [e["message"] for e in events_for(api, ns, name) if e["reason"] == "FailedCreate"]

    assert eventually(lambda: refusals("batch"), what="the Job's FailedCreate") == [
        f'Error creating: pods "batch-" {exceeded}'
    ]
    assert eventually(lambda: refusals("db"), what="the StatefulSet's FailedCreate") == [
        f'create Pod db-0 in StatefulSet db failed error: pods "db-0" {exceeded}'
    ]
    quota = eventually(
        lambda: (q := get(api, f"/api/v1/namespaces/{ns}/resourcequotas/one-pod"))
        .get("status", {}).get("used", {}).get("count/jobs.batch") == "1" and q,
        what="the quota's status",
    )  # fmt: skip
    assert quota["status"] == {
        "hard": {"pods": "1", "count/jobs.batch": "5"},
        "used": {"pods": "1", "count/jobs.batch": "1"},
    }


def test_pods_naming_a_missing_priority_class_are_each_controllers_failed_create(
    api: httpx.Client,
) -> None:
    """Priority admission refuses the pods of a template naming a PriorityClass that does
    not exist; the ReplicaSet, Job, StatefulSet and DaemonSet controllers each report it
    as their upstream FailedCreate event, the ReplicaSet in its ReplicaFailure too."""
    ns = new_ns(api)
    ghost = {"priorityClassName": "ghost-class"}
    missing = "is forbidden: no PriorityClass with name ghost-class was found"
    web = deployment("web", replicas=1)
    web["spec"]["template"]["spec"].update(ghost)
    create(api, f"{APPS}/{ns}/deployments", web)
    batch = job("batch", "busybox:1.36", ["true"])
    batch["spec"]["template"]["spec"].update(ghost)
    create(api, f"{BATCH}/{ns}/jobs", batch)
    create(api, f"{APPS}/{ns}/statefulsets", statefulset(
        "db", 1, {"containers": [{"name": "db", "image": "nginx:1.29"}], **ghost}
    ))  # fmt: skip
    agent = workload("DaemonSet", "agent", 1, {"containers": [{"name": "a", "image": "agent:1"}],
                                               **ghost})  # fmt: skip
    del agent["spec"]["replicas"]
    create(api, f"{APPS}/{ns}/daemonsets", agent)

    def refusals(name: str) -> list[str]:
        return [e["message"] for e in events_for(api, ns, name) if e["reason"] == "FailedCreate"]

    [rs] = eventually(lambda: items(api, f"{APPS}/{ns}/replicasets"), what="a ReplicaSet")
    rs_name = rs["metadata"]["name"]
    assert eventually(lambda: refusals(rs_name), what="the ReplicaSet's FailedCreate") == [
        f'Error creating: pods "{rs_name}-" {missing}'
    ]
    failure = eventually(
        lambda: condition(get(api, f"{APPS}/{ns}/replicasets/{rs_name}"), "ReplicaFailure"),
        what="ReplicaFailure",
    )
    assert failure["message"] == f'pods "{rs_name}-" {missing}'
    assert eventually(lambda: refusals("batch"), what="the Job's FailedCreate") == [
        f'Error creating: pods "batch-" {missing}'
    ]
    assert eventually(lambda: refusals("db"), what="the StatefulSet's FailedCreate") == [
        f'create Pod db-0 in StatefulSet db failed error: pods "db-0" {missing}'
    ]
    assert eventually(lambda: refusals("agent"), what="the DaemonSet's FailedCreate") == [
        f'Error creating: pods "agent-" {missing}'
    ]
    assert items(api, f"/api/v1/namespaces/{ns}/pods") == []
