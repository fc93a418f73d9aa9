"""Readiness rules per kind, judged without a cluster: states and the exact messages users see."""

from __future__ import annotations

import re
from typing import Any

import pytest

from stackwright.providers.kubernetes.readiness import (
    Readiness,
    Related,
    State,
    check_annotations,
    evaluate,
    needs,
    parse_wait_for,
    pod_status,
    skip_await,
    timeout_seconds,
    trivially_ready,
)

# --- builders -------------------------------------------------------------------------------


def deployment(
    *,
    replicas: int = 3,
    generation: int = 2,
    observed: int | None = 2,
    ready: int = 0,
    updated: int = 0,
    available: int = 0,
    total: int | None = None,
    conditions: list[dict[str, Any]] | None = None,
    revision: str = "2",
    paused: bool = False,
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "replicas": updated if total is None else total,
        "readyReplicas": ready,
        "updatedReplicas": updated,
        "availableReplicas": available,
        "conditions": conditions or [],
    }
    if observed is not None:
        status["observedGeneration"] = observed
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "dep-uid",
            "generation": generation,
            "annotations": {"deployment.kubernetes.io/revision": revision},
        },
        "spec": {
            "replicas": replicas,
            "paused": paused,
            "selector": {"matchLabels": {"app": "web"}},
        },
        "status": status,
    }


def replicaset(name: str, uid: str, revision: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "uid": uid,
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "dep-uid"}],
        },
    }


def pod(
    name: str,
    owner_uid: str = "rs-new",
    *,
    phase: str = "Pending",
    ready: bool = False,
    waiting: tuple[str, str] | None = None,
    terminated: tuple[str, int] | None = None,
    last_exit: int | None = None,
    scheduled: tuple[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "ready": ready, "restartCount": 0, "state": {}}
    if waiting is not None:
        reason, message = waiting
        container["state"] = {
            "waiting": {"reason": reason, **({"message": message} if message else {})}
        }
    if terminated is not None:
        container["state"] = {"terminated": {"reason": terminated[0], "exitCode": terminated[1]}}
    if last_exit is not None:
        container["lastState"] = {"terminated": {"reason": "Error", "exitCode": last_exit}}
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    if scheduled is not None:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": scheduled[0],
                "message": scheduled[1],
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": labels or {"app": "web"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "x", "uid": owner_uid}],
        },
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": [container]},
    }


def event(
    involved: str, reason: str, message: str, *, when: str, kind: str = "Warning"
) -> dict[str, Any]:
    return {
        "involvedObject": {"name": involved},
        "type": kind,
        "reason": reason,
        "message": message,
        "lastTimestamp": when,
    }


PULL_BACKOFF = ("ImagePullBackOff", 'Back-off pulling image "nginx:doesnotexist"')


# --- Deployment --------------------------------------------------------------------------------


def test_deployment_ready_when_all_updated_replicas_are_available() -> None:
    verdict = evaluate(deployment(ready=3, updated=3, available=3))
    assert (verdict.state, verdict.message) == (State.READY, "web: 3/3 ready")


def test_deployment_whose_ready_pods_are_not_yet_available_says_so() -> None:
    dep = deployment(ready=2, updated=2, available=0, replicas=2)
    dep["spec"]["minReadySeconds"] = 30
    verdict = evaluate(dep)
    assert (verdict.state, verdict.message) == (
        State.WAITING,
        "web: 2/2 ready, 0/2 available (minReadySeconds 30)",
    )


def test_deployment_waits_for_the_controller_to_observe_the_generation() -> None:
    verdict = evaluate(deployment(generation=3, observed=2, ready=3, updated=3, available=3))
    assert verdict.state is State.WAITING
    assert verdict.message == "web: waiting for the Deployment controller to observe generation 3"


def test_deployment_waits_when_status_is_missing_entirely() -> None:
    obj = deployment(observed=None)
    del obj["status"]
    assert evaluate(obj).state is State.WAITING


def test_deployment_waits_for_updated_replicas_and_names_the_pending_pod() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[
            pod("web-new-a", phase="Running", ready=True),
            pod("web-new-b", waiting=("ContainerCreating", "")),
        ],
    )
    verdict = evaluate(deployment(ready=1, updated=2, available=1), related)
    assert verdict.state is State.WAITING
    assert verdict.message == "web: 1/3 ready, 2/3 updated — pod web-new-b: ContainerCreating"
    assert verdict.culprit == "web-new-b"


def test_deployment_waits_for_old_replicas_to_go() -> None:
    verdict = evaluate(deployment(ready=3, updated=3, available=3, total=4))
    assert verdict.state is State.WAITING
    assert verdict.message == "web: 3/3 ready — 1 old replica pending termination"


def test_deployment_scaling_down_says_so_rather_than_more_than_all_ready() -> None:
    verdict = evaluate(deployment(replicas=2, ready=5, updated=5, available=5, total=5))
    # Done, as `kubectl rollout status` has it (a scale-down is not a rollout to wait for).
    assert verdict.state is State.READY
    assert verdict.message == "web: 5 ready, scaling down to 2"


def test_deployment_image_pull_backoff_is_failing_with_the_pod_and_message() -> None:
    related = Related(
        replicasets=[replicaset("web-old", "rs-old", "1"), replicaset("web-7c9f", "rs-new", "2")],
        pods=[
            pod("web-7c9f-x2k", waiting=PULL_BACKOFF),
            pod("web-7c9f-y3m", waiting=("ErrImagePull", "")),
            pod("web-old-a", "rs-old", phase="Running", ready=True),
        ],
    )
    verdict = evaluate(deployment(ready=0, updated=3, available=0), related)
    assert verdict.state is State.FAILING
    assert verdict.message == (
        'web: 0/3 ready — pod web-7c9f-x2k: ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"'
    )


def test_deployment_failing_mid_rollout_counts_the_updated_replicas() -> None:
    # The old pods are all still ready; the failure is the one new pod's.
    related = Related(
        replicasets=[replicaset("web-old", "rs-old", "1"), replicaset("web-7c9f", "rs-new", "2")],
        pods=[
            pod("web-7c9f-x2k", waiting=PULL_BACKOFF),
            *(pod(f"web-old-{i}", "rs-old", phase="Running", ready=True) for i in "abc"),
        ],
    )
    verdict = evaluate(deployment(ready=3, updated=1, available=3, total=4), related)
    assert verdict.state is State.FAILING
    assert verdict.message == (
        "web: 3/3 ready, 1/3 updated — pod web-7c9f-x2k: ImagePullBackOff: "
        'Back-off pulling image "nginx:doesnotexist"'
    )


def test_deployment_only_judges_pods_of_the_newest_replicaset() -> None:
    related = Related(
        replicasets=[replicaset("web-old", "rs-old", "1"), replicaset("web-new", "rs-new", "2")],
        pods=[
            pod("web-old-a", "rs-old", waiting=PULL_BACKOFF),
            pod("web-new-a", phase="Running", ready=True),
        ],
    )
    verdict = evaluate(deployment(ready=1, updated=3, available=1, total=4), related)
    assert verdict.state is State.WAITING


def test_deployment_invalid_image_name_fails_at_once() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[pod("web-new-a", waiting=("InvalidImageName", 'invalid image name "NGINX:::"'))],
    )
    verdict = evaluate(deployment(updated=3), related)
    assert verdict.state is State.FAILED
    assert (
        verdict.message
        == 'web: 0/3 ready — pod web-new-a: InvalidImageName: invalid image name "NGINX:::"'
    )


def test_deployment_crash_loop_reports_the_last_exit_code() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[
            pod(
                "web-new-a",
                phase="Running",
                waiting=("CrashLoopBackOff", "back-off 10s restarting failed container=web"),
                last_exit=1,
            )
        ],
    )
    verdict = evaluate(deployment(updated=3), related)
    assert verdict.state is State.FAILING
    assert verdict.message == (
        "web: 0/3 ready — pod web-new-a: CrashLoopBackOff: back-off 10s restarting failed "
        "container=web (last exit code 1)"
    )


def test_deployment_progress_deadline_exceeded_fails() -> None:
    condition = {
        "type": "Progressing",
        "status": "False",
        "reason": "ProgressDeadlineExceeded",
        "message": 'ReplicaSet "web-7c9f" has timed out progressing.',
    }
    verdict = evaluate(deployment(updated=3, conditions=[condition]))
    assert verdict.state is State.FAILED
    assert verdict.message == (
        'web: 0/3 ready — the rollout exceeded its progress deadline: ReplicaSet "web-7c9f" has timed out progressing.'
    )


def test_deployment_progress_deadline_prefers_the_pod_cause() -> None:
    condition = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[pod("web-new-a", phase="Running", scheduled=None)],
    )
    verdict = evaluate(deployment(updated=3, conditions=[condition]), related)
    assert verdict.state is State.FAILED
    assert verdict.message == (
        "web: 0/3 ready — pod web-new-a: Running, not ready; the rollout exceeded its progress deadline"
    )


def timed_out(replicaset_name: str) -> dict[str, Any]:
    """The Progressing condition kube-controller-manager leaves when a rollout stalls."""
    return {
        "type": "Progressing",
        "status": "False",
        "reason": "ProgressDeadlineExceeded",
        "message": f'ReplicaSet "{replicaset_name}" has timed out progressing.',
    }


def after_the_stall(current: str) -> tuple[dict[str, Any], Related]:
    """A Deployment whose bad rollout (web-bad) missed its deadline, its template then put
    to `current`'s (which gets revision 3), in the controller's first status after that: the
    new generation observed, the bad pod not yet gone, the old condition still there."""
    obj = deployment(
        replicas=1, generation=3, observed=3, ready=1, updated=1, available=1, total=2,
        conditions=[timed_out("web-bad")], revision="3",
    )  # fmt: skip
    older = {"web-good": "1", "web-bad": "2"}
    related = Related(
        replicasets=[
            replicaset(name, f"rs-{name}", "3" if name == current else revision)
            for name, revision in older.items()
        ],
        pods=[
            pod("web-good-a", "rs-web-good", phase="Running", ready=True),
            pod("web-bad-a", "rs-web-bad", waiting=("ImagePullBackOff", 'pulling "nginx:nope"')),
        ],
    )
    return obj, related


def test_a_progress_deadline_left_from_a_superseded_rollout_is_not_this_ones_failure() -> None:
    # The template went back to the good ReplicaSet. kubectl rollout status fails here
    # (kubernetes' own controller keeps the condition on a revert); the revert is
    # progressing, and ready once the bad pod is gone.
    verdict = evaluate(*after_the_stall(current="web-good"))
    assert (verdict.state, verdict.message) == (
        State.WAITING,
        "web: 1/1 ready — 1 old replica pending termination",
    )


def test_a_progress_deadline_of_the_current_replica_set_fails_though_others_exist() -> None:
    verdict = evaluate(*after_the_stall(current="web-bad"))
    assert verdict.state is State.FAILED
    assert verdict.message == (
        'web: 1/1 ready — pod web-bad-a: ImagePullBackOff: pulling "nginx:nope"; '
        "the rollout exceeded its progress deadline"
    )


def test_an_old_progress_deadline_waits_while_the_new_generation_is_not_observed() -> None:
    # `kubectl rollout status`'s order: the generation first, only then the conditions.
    obj = deployment(
        replicas=1, generation=4, observed=3, ready=1, updated=1, available=1,
        conditions=[timed_out("web-bad")],
    )  # fmt: skip
    verdict = evaluate(obj, Related(replicasets=[replicaset("web-bad", "rs-bad", "2")]))
    assert (verdict.state, verdict.message) == (
        State.WAITING,
        "web: waiting for the Deployment controller to observe generation 4",
    )


def test_deployment_replica_failure_is_failing() -> None:
    condition = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": 'pods "web-1" is forbidden: exceeded quota: q',
    }
    verdict = evaluate(deployment(conditions=[condition]))
    assert verdict.state is State.FAILING
    assert (
        verdict.message
        == 'web: 0/3 ready — FailedCreate: pods "web-1" is forbidden: exceeded quota: q'
    )


def test_deployment_failed_pod_is_only_a_reason_to_wait_since_it_gets_replaced() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[pod("web-new-a", phase="Failed", terminated=("Evicted", 137))],
    )
    verdict = evaluate(deployment(updated=3), related)
    assert verdict.state is State.WAITING


def test_deployment_paused_and_scaled_to_zero_are_ready() -> None:
    assert evaluate(deployment(paused=True)).message == "web: paused, so no rollout to wait for"
    verdict = evaluate(deployment(replicas=0))
    assert (verdict.state, verdict.message) == (State.READY, "web: scaled to 0")


def test_deployment_unschedulable_pod_waits_with_the_scheduler_message() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[
            pod(
                "web-new-a",
                scheduled=("Unschedulable", "0/1 nodes are available: 1 Insufficient cpu."),
            )
        ],
    )
    verdict = evaluate(deployment(updated=3), related)
    assert verdict.state is State.WAITING
    assert verdict.message == (
        "web: 0/3 ready — pod web-new-a: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."
    )


def test_waiting_pod_is_explained_by_its_latest_warning_event() -> None:
    related = Related(
        replicasets=[replicaset("web-new", "rs-new", "2")],
        pods=[pod("web-new-a", phase="Running")],
        events=[
            event(
                "web-new-a", "Unhealthy", "Readiness probe failed: old", when="2025-01-01T00:00:00Z"
            ),
            event(
                "web-new-a",
                "Unhealthy",
                "Readiness probe failed: HTTP 500",
                when="2025-01-01T00:01:00Z",
            ),
            event("web-new-a", "Pulled", "pulled", when="2025-01-01T00:02:00Z", kind="Normal"),
            event("other", "Failed", "not me", when="2025-01-01T00:03:00Z"),
        ],
    )
    verdict = evaluate(deployment(updated=3), related)
    assert verdict.message == (
        "web: 0/3 ready — pod web-new-a: Running, not ready; Unhealthy: Readiness probe failed: HTTP 500"
    )


def test_pods_without_owner_references_are_found_by_selector() -> None:
    orphan = pod("web-a", waiting=PULL_BACKOFF)
    del orphan["metadata"]["ownerReferences"]
    verdict = evaluate(deployment(updated=3), Related(pods=[orphan]))
    assert verdict.state is State.FAILING


# --- StatefulSet, DaemonSet, ReplicaSet ------------------------------------------------------


def statefulset(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "uid": "sts-uid", "generation": 1},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}}},
        "status": {"observedGeneration": 1, **status},
    }


def test_statefulset_ready_and_waiting_for_revision() -> None:
    ready = statefulset(
        readyReplicas=2, updatedReplicas=2, currentRevision="db-1", updateRevision="db-1"
    )
    assert evaluate(ready).message == "db: 2/2 ready"
    rolling = statefulset(readyReplicas=2, currentRevision="db-1", updateRevision="db-2")
    verdict = evaluate(rolling)
    assert verdict.state is State.WAITING
    assert verdict.message == "db: 2/2 ready — rolling update to revision db-2 in progress"


def test_statefulset_waits_for_ready_replicas_and_fails_on_crash_loop() -> None:
    assert evaluate(statefulset(readyReplicas=1)).message == "db: 1/2 ready"
    crashing = pod(
        "db-0", "sts-uid", phase="Running", waiting=("CrashLoopBackOff", ""), labels={"app": "db"}
    )
    verdict = evaluate(statefulset(readyReplicas=1), Related(pods=[crashing]))
    assert (verdict.state, verdict.message) == (
        State.FAILING,
        "db: 1/2 ready — pod db-0: CrashLoopBackOff",
    )


def test_a_failing_statefulset_pod_of_an_earlier_revision_is_said_to_need_deleting() -> None:
    """OrderedReady never replaces a pod that is not ready (kubernetes/kubernetes#67250):
    one of an earlier revision stays broken whatever the update; Parallel replaces it."""
    stuck = pod("db-1", "sts-uid", phase="Pending", waiting=PULL_BACKOFF, labels={"app": "db"})
    stuck["metadata"]["labels"]["controller-revision-hash"] = "db-1"
    stuck["metadata"]["namespace"] = "data"
    updating = statefulset(readyReplicas=1, currentRevision="db-1", updateRevision="db-2")
    verdict = evaluate(updating, Related(pods=[stuck]))
    assert verdict.state is State.FAILING
    assert verdict.message.endswith(
        "; db-1 has an earlier revision's template, and a StatefulSet does not replace a pod "
        "that is not ready (OrderedReady): delete it (`kubectl delete pod db-1 -n data`) for "
        "it to come back with the new one"
    )
    parallel = {**updating, "spec": {**updating["spec"], "podManagementPolicy": "Parallel"}}
    assert "earlier revision" not in evaluate(parallel, Related(pods=[stuck])).message
    stuck["metadata"]["labels"]["controller-revision-hash"] = "db-2"  # the new one failing
    assert "earlier revision" not in evaluate(updating, Related(pods=[stuck])).message


def test_statefulset_scaled_down_waits_for_the_extra_pods_to_go() -> None:
    # 3 -> 2: three pods still counted (one terminating) were "ready", and the outputs read
    # then said 3 ready replicas; Pulumi waits until status.replicas matches.
    scaling = statefulset(
        replicas=3, readyReplicas=3, updatedReplicas=3, currentRevision="a", updateRevision="a"
    )
    verdict = evaluate(scaling)
    assert (verdict.state, verdict.message) == (State.WAITING, "db: 3 pods, scaling down to 2")
    done = statefulset(
        replicas=2, readyReplicas=2, updatedReplicas=2, currentRevision="a", updateRevision="a"
    )
    assert evaluate(done).state is State.READY


def test_statefulset_partitioned_rollout() -> None:
    obj = statefulset(readyReplicas=2, updatedReplicas=0, currentRevision="a", updateRevision="b")
    obj["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    assert evaluate(obj).message == "db: 2/2 ready, 0/1 updated (partition 1)"


def daemonset(desired: int, updated: int, available: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "uid": "ds", "generation": 2},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, **spec},
        "status": {
            "observedGeneration": 2,
            "desiredNumberScheduled": desired,
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
        },
    }


def test_daemonset_counts_scheduled_updated_and_available() -> None:
    assert evaluate(daemonset(3, 2, 2)).message == "agent: 2/3 available, 2/3 updated"
    assert evaluate(daemonset(3, 3, 3)).state is State.READY


def test_daemonset_failing_mid_rollout_counts_the_updated_pods() -> None:
    surged = pod("agent-x2k", "ds", waiting=PULL_BACKOFF, labels={"app": "agent"})
    assert evaluate(daemonset(1, 0, 1), Related(pods=[surged])) == Readiness(
        State.FAILING,
        "agent: 1/1 available, 0/1 updated — pod agent-x2k: ImagePullBackOff: "
        'Back-off pulling image "nginx:doesnotexist"',
        "agent-x2k",
    )


def test_daemonset_on_delete_is_ready_with_its_pods_of_an_earlier_template() -> None:
    on_delete = {"updateStrategy": {"type": "OnDelete"}}
    assert evaluate(daemonset(3, 0, 3, **on_delete)) == Readiness(
        State.READY,
        "agent: 3/3 available — 3 pods on an earlier template until deleted (updateStrategy OnDelete)",
    )
    assert evaluate(daemonset(3, 0, 2, **on_delete)).state is State.WAITING


def test_replicaset_ready_when_ready_and_available() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "uid": "u", "generation": 1},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": 1, "readyReplicas": 2, "availableReplicas": 1},
    }
    assert evaluate(obj) == Readiness(State.WAITING, "rs: 2/2 ready, 1/2 available")
    obj["status"]["availableReplicas"] = 2
    assert evaluate(obj).message == "rs: 2/2 ready"


# --- Pod, Job ------------------------------------------------------------------------------------


def test_pod_states() -> None:
    assert evaluate(pod("p", phase="Running", ready=True)).message == "p: ready"
    assert evaluate(pod("p", phase="Succeeded")).message == "p: completed"
    failed = evaluate(pod("p", phase="Failed", terminated=("Error", 1)))
    assert (failed.state, failed.message) == (State.FAILED, "p: failed — Error (exit code 1)")
    pulling = evaluate(pod("p", waiting=PULL_BACKOFF))
    assert pulling.state is State.FAILING
    assert pulling.message == 'p: ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"'
    assert evaluate(pod("p")).message == "p: Pending"


def test_unschedulable_pod_says_the_scheduler_message_once() -> None:
    """A lone Pod, like a Deployment's, does not repeat the FailedScheduling event that only
    restates its PodScheduled condition; an event that says more is still added."""
    message = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    obj = pod("p", scheduled=("Unschedulable", message))
    scheduling = event("p", "FailedScheduling", message, when="2025-01-01T00:00:00Z")
    verdict = evaluate(obj, Related(events=[scheduling]))
    assert (verdict.state, verdict.message) == (State.WAITING, f"p: Unschedulable: {message}")
    mount = event("p", "FailedMount", "volume data not found", when="2025-01-01T00:01:00Z")
    assert evaluate(obj, Related(events=[scheduling, mount])).message == (
        f"p: Unschedulable: {message}; FailedMount: volume data not found"
    )


def test_pod_status_init_containers_and_config_errors() -> None:
    obj = pod("p")
    obj["status"]["initContainerStatuses"] = [
        {
            "name": "init",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
        }
    ]
    assert pod_status(obj) == (State.FAILING, "Init:CrashLoopBackOff: back-off")
    config = pod("q", waiting=("CreateContainerConfigError", 'configmap "settings" not found'))
    assert pod_status(config) == (
        State.FAILING,
        'CreateContainerConfigError: configmap "settings" not found',
    )


def job(conditions: list[dict[str, Any]] | None = None, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "uid": "job-uid"},
        "spec": {"completions": 1, "backoffLimit": 0},
        "status": {"conditions": conditions or [], **status},
    }


def test_job_complete_is_ready() -> None:
    verdict = evaluate(job([{"type": "Complete", "status": "True"}], succeeded=1))
    assert (verdict.state, verdict.message) == (State.READY, "migrate: complete (1 succeeded)")


def test_job_failed_reports_reason_and_the_failed_pod() -> None:
    failed = {
        "type": "Failed",
        "status": "True",
        "reason": "BackoffLimitExceeded",
        "message": "Job has reached the specified backoff limit",
    }
    pods = [pod("migrate-x7", "job-uid", phase="Failed", terminated=("Error", 1))]
    verdict = evaluate(job([failed], failed=1), Related(pods=pods))
    assert verdict.state is State.FAILED
    assert verdict.message == (
        "migrate: failed — BackoffLimitExceeded: Job has reached the specified backoff limit; "
        "pod migrate-x7: Error (exit code 1)"
    )


def test_job_running_waits_and_image_problems_are_failing() -> None:
    assert evaluate(job(active=1)).message == "migrate: 0/1 succeeded, 1 active"
    pulling = [pod("migrate-x7", "job-uid", waiting=PULL_BACKOFF)]
    verdict = evaluate(job(active=1), Related(pods=pulling))
    assert verdict.state is State.FAILING


def test_job_suspended_is_ready() -> None:
    obj = job()
    obj["spec"]["suspend"] = True
    assert evaluate(obj).message == "migrate: suspended"


def test_job_with_parallelism_zero_is_paused_once_its_pods_are_gone() -> None:
    paused = job(active=1)
    paused["spec"]["parallelism"] = 0
    assert evaluate(paused).state is State.WAITING  # its running pod is being stopped
    paused["status"]["active"] = 0
    assert evaluate(paused) == Readiness(State.READY, "migrate: paused (parallelism 0)")


# --- Service, Ingress ------------------------------------------------------------------------------


def service(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": spec,
        "status": status or {},
    }


def endpoint_slice(
    service_name: str, ready: list[bool], ports: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"{service_name}-abc",
            "labels": {"kubernetes.io/service-name": service_name},
        },
        "ports": [{"name": "", "port": 80, "protocol": "TCP"}] if ports is None else ports,
        "endpoints": [
            {"addresses": [f"10.0.0.{i}"], "conditions": {"ready": r}} for i, r in enumerate(ready)
        ],
    }


def test_a_service_fed_later_does_not_wait_for_endpoints_but_a_load_balancer_still_does() -> None:
    """Its Pods come from a resource that waits for it (`graph.services_fed_later`)."""
    obj = service({"selector": {"app": "web"}, "ports": [{"port": 80}]})
    assert evaluate(obj).state is State.WAITING and needs(obj)  # as any Service
    fed = "kubernetes:apps/v1:Deployment web"
    assert needs(obj, fed) == frozenset()
    assert evaluate(obj, fed_later=fed) == Readiness(
        State.READY,
        f"web: endpoints not waited for: its Pods come from {fed}, which waits for it",
    )
    balanced = service({"type": "LoadBalancer", "selector": {"app": "web"}})
    assert evaluate(balanced, fed_later=fed).state is State.WAITING  # its address


def test_service_without_selector_is_ready_at_once() -> None:
    obj = service({"ports": [{"port": 80}]})
    assert needs(obj) == frozenset()
    verdict = evaluate(obj)
    assert (verdict.state, verdict.message) == (
        State.READY,
        "web: no selector, so no endpoints to wait for",
    )


def test_service_external_name_and_headless_are_ready() -> None:
    assert evaluate(service({"type": "ExternalName", "externalName": "db.example.com"})).ready
    assert (
        evaluate(service({"clusterIP": "None", "selector": {"app": "web"}})).message
        == "web: headless"
    )


def test_service_with_selector_waits_for_a_ready_endpoint() -> None:
    obj = service({"selector": {"app": "web"}, "ports": [{"port": 80}]})
    assert needs(obj) == frozenset({"endpointslices", "pods"})
    nothing = evaluate(obj)
    assert nothing.message == "web: no ready endpoints — no Pod matches selector app=web"
    # A misspelt selector shows while the Service waits: the Pod whose labels come closest.
    others = [
        pod("db-a", labels={"tier": "db"}),
        pod("webapp-a", labels={"app": "webapp", "tier": "front"}),
    ]
    near = evaluate(obj, Related(pods=others))
    assert (near.state, near.message) == (
        State.WAITING,
        "web: no ready endpoints — no Pod matches selector app=web (Pod webapp-a has app=webapp)",
    )
    assert evaluate(obj, Related(pods=others[:1])).message == nothing.message
    # Where every Pod has the key (each has an `app` label), the value spelt most like it.
    apps = [pod(f"{app}-a", labels={"app": app}) for app in ("api", "cache", "wbe", "worker")]
    assert evaluate(obj, Related(pods=apps)).message.endswith("(Pod wbe-a has app=wbe)")
    pending = evaluate(
        obj,
        Related(
            pods=[pod("web-a", phase="Running")], endpointslices=[endpoint_slice("web", [False])]
        ),
    )
    assert (
        pending.message
        == "web: no ready endpoints — 0/1 selected Pods ready — pod web-a: Running, not ready"
    )
    ready = evaluate(
        obj,
        Related(
            endpointslices=[endpoint_slice("web", [True, False]), endpoint_slice("other", [True])]
        ),
    )
    assert (ready.state, ready.message) == (State.READY, "web: 1 ready endpoint")


def test_service_whose_selected_pods_fail_fails_with_their_cause() -> None:
    """Deployment + Service with a bad image: the Service says why within the grace,
    as its Deployment does, instead of waiting out its whole timeout."""
    obj = service({"selector": {"app": "web"}, "ports": [{"port": 80}]})
    pulling = evaluate(obj, Related(pods=[pod("web-a", waiting=PULL_BACKOFF), pod("web-b")]))
    assert (pulling.state, pulling.message, pulling.culprit) == (
        State.FAILING,
        "web: no ready endpoints — 0/2 selected Pods ready — pod web-a: "
        'ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"',
        "web-a",
    )
    invalid = evaluate(obj, Related(pods=[pod("web-a", waiting=("InvalidImageName", ""))]))
    assert invalid.state is State.FAILED
    # A failed Pod of a controller is replaced: only a reason to wait.
    replaced = evaluate(obj, Related(pods=[pod("web-a", phase="Failed", terminated=("Error", 1))]))
    assert replaced.state is State.WAITING


def test_service_whose_named_target_port_no_pod_declares_fails_saying_so() -> None:
    """`targetPort: http` that no container of the selected Pods names: the endpoint
    controllers give those Pods no port (an EndpointSlice without ports), so nothing is
    served. It was called ready ("3 ready endpoints"); it fails within the grace."""
    obj = service({"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]})
    running = [pod(f"web-{i}", phase="Running", ready=True) for i in "abc"]
    unported = Related(pods=running, endpointslices=[endpoint_slice("web", [True] * 3, [])])
    verdict = evaluate(obj, unported)
    assert (verdict.state, verdict.message) == (
        State.FAILING,
        'web: no ready endpoints — targetPort "http" (of port 80) is a container port name '
        'that none of the 3 Pods it selects declares: name a containerPort "http" in their '
        "template, or give targetPort a number",
    )
    # A Pod (a rollout's new one) that declares it: a reason to wait, then ready.
    named = pod("web-d", phase="Running")
    named["spec"] = {
        "containers": [{"name": "web", "ports": [{"name": "http", "containerPort": 80}]}]
    }
    rolling = evaluate(obj, Related(pods=[*running, named], endpointslices=unported.endpointslices))
    assert rolling.state is State.WAITING
    served = Related(pods=[*running, named], endpointslices=[endpoint_slice("web", [True])])
    assert evaluate(obj, served).message == "web: 1 ready endpoint"


def test_service_whose_named_target_port_a_sidecar_declares_waits() -> None:
    """A sidecar (an init container with restartPolicy Always, an auth proxy) serving the
    named port: the endpoint controllers find it (podutil.FindPort), so Pods not ready yet
    are a reason to wait, not a failure saying no Pod declares the port."""
    obj = service({"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "proxy"}]})
    starting = pod("web-a", phase="Running")
    starting["spec"] = {
        "initContainers": [
            {
                "name": "proxy",
                "restartPolicy": "Always",
                "ports": [{"name": "proxy", "containerPort": 4180}],
            }
        ],
        "containers": [{"name": "web", "ports": [{"name": "http", "containerPort": 80}]}],
    }
    verdict = evaluate(
        obj, Related(pods=[starting], endpointslices=[endpoint_slice("web", [False])])
    )
    assert verdict.state is State.WAITING
    # An init container that runs to completion serves nothing: no Pod declares the port.
    starting["spec"]["initContainers"][0].pop("restartPolicy")
    verdict = evaluate(
        obj, Related(pods=[starting], endpointslices=[endpoint_slice("web", [False], [])])
    )
    assert verdict.state is State.FAILING


def test_service_reads_legacy_endpoints_when_there_are_no_slices() -> None:
    obj = service({"selector": {"app": "web"}})
    endpoints = {
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}],
    }
    assert evaluate(obj, Related(endpoints=[endpoints])).message == "web: 2 ready endpoints"


def test_load_balancer_service_needs_an_ingress_address() -> None:
    obj = service({"type": "LoadBalancer", "selector": {"app": "web"}})
    assert (
        evaluate(obj).message
        == "web: waiting for a load balancer address (status.loadBalancer.ingress)"
    )
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "172.18.0.5"}]}}
    verdict = evaluate(obj, Related(endpointslices=[endpoint_slice("web", [True])]))
    assert verdict.message == "web: 1 ready endpoint, load balancer 172.18.0.5"
    no_selector = service(
        {"type": "LoadBalancer"}, {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}
    )
    assert evaluate(no_selector).ready


def test_ingress_ready_once_admitted_even_without_its_backend() -> None:
    obj = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "site"},
        "spec": {
            "ingressClassName": "nginx",
            "defaultBackend": {"service": {"name": "missing", "port": {"number": 80}}},
        },
        "status": {},
    }
    waiting = evaluate(obj)
    assert waiting.message == (
        "site: waiting for an ingress controller for class nginx to admit it (no status.loadBalancer.ingress yet)"
    )
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "10.1.2.3"}]}}
    assert evaluate(obj).message == "site: address 10.1.2.3"


def ingress_class(name: str, *, default: bool = False) -> dict[str, Any]:
    marks = {"ingressclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {"metadata": {"name": name, "annotations": marks}, "spec": {"controller": "x/" + name}}


def ingress(cls: str | None = None, legacy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    if cls is not None:
        spec["ingressClassName"] = cls
    marks = {"kubernetes.io/ingress.class": legacy} if legacy else {}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "site", "annotations": marks},
        "spec": spec,
    }


def test_an_ingress_naming_an_ingress_class_that_does_not_exist_is_failing() -> None:
    """A misspelt class is admitted by no controller: a failure within the grace, not a
    ten-minute wait, as a claim naming a missing StorageClass is."""
    classes = [ingress_class("nginx"), ingress_class("traefik")]
    verdict = evaluate(ingress("ngnix"), Related(ingressclasses=classes))
    assert verdict.state is State.FAILING
    assert verdict.message == (
        "site: IngressClass ngnix does not exist (the cluster has nginx, traefik); fix "
        "spec.ingressClassName, or create the class with its ingress controller"
    )
    assert evaluate(ingress("nginx"), Related(ingressclasses=classes)).message == (
        "site: waiting for an ingress controller for class nginx to admit it "
        "(no status.loadBalancer.ingress yet)"
    )
    # The classes could not be listed, or there are none (a cloud's built-in controller,
    # as GKE's, takes Ingresses naming a class no object defines): only the wait.
    assert evaluate(ingress("ngnix")).state is State.WAITING
    none = evaluate(ingress("gce"), Related(ingressclasses=[]))
    assert none.state is State.WAITING
    # ... and says what a local cluster, which admits nothing without its class, lacks.
    assert none.message == (
        "site: waiting for an ingress controller for class gce to admit it, but the cluster has "
        "no IngressClass: unless a built-in controller (as GKE's) admits it, create "
        "IngressClass gce with its ingress controller"
    )


def test_an_ingress_naming_no_class_where_none_is_the_default_says_so() -> None:
    """Nothing may ever admit it (the local cluster's controller does not): the wait says
    why from its first line, and the timeout's message with it."""
    verdict = evaluate(ingress(), Related(ingressclasses=[ingress_class("nginx")]))
    assert verdict.state is State.WAITING
    assert verdict.message == (
        "site: waiting for an ingress controller to admit it, but spec.ingressClassName is "
        "unset and no IngressClass is the default (the cluster has nginx): set "
        "spec.ingressClassName, or annotate an IngressClass "
        'ingressclass.kubernetes.io/is-default-class: "true"'
    )
    none = evaluate(ingress(), Related(ingressclasses=[])).message
    assert "is the default (the cluster has none)" in none
    plain = (
        "site: waiting for an ingress controller to admit it (no status.loadBalancer.ingress yet)"
    )
    default = [ingress_class("nginx", default=True)]
    assert evaluate(ingress(), Related(ingressclasses=default)).message == plain
    # The annotation that named a class before ingressClassName: its controller decides.
    assert evaluate(ingress(legacy="nginx"), Related(ingressclasses=[])).message == plain


# --- PVC, CRD, Namespace -------------------------------------------------------------------------


def pvc(phase: str, storage_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"]}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": spec,
        "status": {"phase": phase},
    }


def storage_class(name: str, mode: str, default: bool = False) -> dict[str, Any]:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {"metadata": {"name": name, "annotations": annotations}, "volumeBindingMode": mode}


def test_pvc_bound_is_ready_and_lost_fails() -> None:
    bound = pvc("Bound")
    bound["spec"]["volumeName"] = "pv-1"
    assert evaluate(bound).message == "data: Bound to pv-1"
    assert evaluate(pvc("Lost")).state is State.FAILED


def test_pvc_waiting_for_first_consumer_is_ready_so_its_workload_can_start() -> None:
    classes = [
        storage_class("standard", "WaitForFirstConsumer", default=True),
        storage_class("fast", "Immediate"),
    ]
    verdict = evaluate(pvc("Pending"), Related(storageclasses=classes))
    assert verdict.state is State.READY
    assert verdict.message == (
        "data: Pending until its first consumer is scheduled (StorageClass standard binds on first consumer)"
    )
    immediate = evaluate(pvc("Pending", "fast"), Related(storageclasses=classes))
    assert (immediate.state, immediate.message) == (State.WAITING, "data: Pending")
    static = evaluate(pvc("Pending", ""), Related(storageclasses=classes))
    assert static.state is State.WAITING


def test_pvc_pending_is_explained_by_a_provisioning_event() -> None:
    events = [event("data", "ProvisioningFailed", "no volume plugin", when="2025-01-01T00:00:00Z")]
    verdict = evaluate(pvc("Pending", "fast"), Related(events=events))
    assert verdict.message == "data: Pending — ProvisioningFailed: no volume plugin"


def test_pvc_naming_a_storage_class_that_does_not_exist_is_failing() -> None:
    classes = [storage_class("standard", "Immediate", default=True)]
    verdict = evaluate(pvc("Pending", "nope"), Related(storageclasses=classes))
    assert verdict.state is State.FAILING
    assert verdict.message == (
        "data: Pending — StorageClass nope does not exist (the cluster has standard); "
        "create it or fix spec.storageClassName"
    )
    # The classes could not be listed: no verdict on them, only the wait.
    assert evaluate(pvc("Pending", "nope")).state is State.WAITING


def crd(conditions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "status": {"conditions": conditions},
    }


def test_crd_established_waiting_and_refused_names() -> None:
    assert (
        evaluate(crd([{"type": "Established", "status": "True"}])).message
        == "widgets.example.com: Established"
    )
    assert evaluate(crd([])).message == "widgets.example.com: waiting to be Established"
    refused = crd(
        [
            {
                "type": "NamesAccepted",
                "status": "False",
                "reason": "MultipleNamesNotAllowed",
                "message": '"widget" is already in use',
            }
        ]
    )
    verdict = evaluate(refused)
    assert verdict.state is State.FAILED
    assert verdict.message == (
        'widgets.example.com: its names were not accepted — MultipleNamesNotAllowed: "widget" is already in use'
    )


def test_namespace_active_and_terminating() -> None:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team"},
        "status": {"phase": "Active"},
    }
    assert evaluate(ns).message == "team: Active"
    ns["status"]["phase"] = "Terminating"
    assert evaluate(ns).message == "team: Terminating — an earlier deletion has not finished"


# --- generic (kstatus) -----------------------------------------------------------------------------


def custom(status: dict[str, Any] | None, generation: int = 1) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "generation": generation},
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_custom_object_without_status_or_conditions_is_ready() -> None:
    assert evaluate(custom(None)).message == "w: ready"
    assert evaluate(custom({"phase": "Whatever"})).ready


def test_custom_object_waits_for_observed_generation_then_ready_condition() -> None:
    behind = evaluate(custom({"observedGeneration": 1}, generation=2))
    assert behind.message == "w: waiting for its controller to observe generation 2 (observed 1)"
    not_ready = custom(
        {
            "observedGeneration": 2,
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "Deploying", "message": "2 of 3"}
            ],
        },
        2,
    )
    assert evaluate(not_ready).message == "w: Ready=False — Deploying: 2 of 3"
    available = custom(
        {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Available", "status": "False"},
            ]
        }
    )
    assert evaluate(available).message == "w: Available=False"
    both = custom(
        {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Available", "status": "True"},
            ]
        }
    )
    assert evaluate(both).ready


def test_custom_object_stalled_fails_and_reconciling_waits() -> None:
    stalled = custom(
        {
            "conditions": [
                {
                    "type": "Stalled",
                    "status": "True",
                    "reason": "BadSpec",
                    "message": "size must be > 0",
                }
            ]
        }
    )
    verdict = evaluate(stalled)
    assert (verdict.state, verdict.message) == (
        State.FAILED,
        "w: Stalled — BadSpec: size must be > 0",
    )
    reconciling = custom({"conditions": [{"type": "Reconciling", "status": "True"}]})
    assert evaluate(reconciling).message == "w: Reconciling"


def test_a_service_account_token_secret_waits_for_its_token_and_others_do_not() -> None:
    opaque = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}
    assert trivially_ready(opaque) and evaluate(opaque).ready
    token = {
        **opaque,
        "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "t", "annotations": {"kubernetes.io/service-account.name": "ci"}},
    }
    assert not trivially_ready(token)
    waiting = evaluate(token)
    assert waiting.state is State.WAITING
    assert waiting.message == (
        "t: waiting for the token controller to fill data.token (for service account 'ci')"
    )
    assert evaluate({**token, "data": {"token": "ZXlK"}}).ready


def test_kinds_without_a_rule_are_ready_at_once() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {}}
    assert trivially_ready(cm)
    assert evaluate(cm).ready
    assert not trivially_ready(
        {
            **cm,
            "metadata": {
                "name": "x",
                "annotations": {"stackwright.io/wait-for": "condition=Ready"},
            },
        }
    )
    assert not trivially_ready(deployment())
    # The marks of a managed object are not waiting annotations: still ready at once.
    stamped = {
        **cm,
        "metadata": {
            "name": "x",
            "annotations": {
                "stackwright.io/stack": "dev",
                "stackwright.io/urn": "urn:sw:dev::p::t::x",
            },
        },
    }
    assert trivially_ready(stamped)
    assert not trivially_ready(
        {**cm, "metadata": {"name": "x", "annotations": {"stackwright.io/timeout-seconds": "x"}}}
    )


# --- annotations ------------------------------------------------------------------------------------


def annotated(annotations: dict[str, str], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = custom(status)
    obj["metadata"]["annotations"] = annotations
    return obj


def test_skip_await_and_timeout_annotations() -> None:
    assert skip_await(annotated({"stackwright.io/skip-await": "true"}))
    assert not skip_await(annotated({"stackwright.io/skip-await": "false"}))
    assert timeout_seconds(annotated({"stackwright.io/timeout-seconds": "90"})) == 90
    assert timeout_seconds(custom(None)) is None
    with pytest.raises(ValueError, match="must be a number of seconds, got 'soon'"):
        timeout_seconds(annotated({"stackwright.io/timeout-seconds": "soon"}))
    with pytest.raises(ValueError, match="greater than 0"):
        check_annotations(annotated({"stackwright.io/timeout-seconds": "0"}))


@pytest.mark.parametrize(
    ("annotations", "problem"),
    [
        ({"stackwright.io/timeout-seconds": "nan"}, "must be a number of seconds, got 'nan'"),
        ({"stackwright.io/timeout-seconds": "inf"}, "must be a number of seconds, got 'inf'"),
        ({"stackwright.io/skip-await": "yes"}, 'must be "true" or "false", got \'yes\''),
    ],
)
def test_waiting_annotations_that_cannot_be_read_are_refused(
    annotations: dict[str, str], problem: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        check_annotations(annotated(annotations))
    check_annotations(annotated({"stackwright.io/skip-await": "False"}))


def test_wait_for_condition() -> None:
    wanted = {"stackwright.io/wait-for": "condition=Ready"}
    waiting = evaluate(annotated(wanted, {"conditions": [{"type": "Ready", "status": "False"}]}))
    assert (waiting.state, waiting.message) == (
        State.WAITING,
        "w: waiting for condition=Ready (now Ready=False)",
    )
    assert (
        evaluate(annotated(wanted)).message
        == "w: waiting for condition=Ready (now no Ready condition)"
    )
    ready = evaluate(annotated(wanted, {"conditions": [{"type": "ready", "status": "True"}]}))
    assert (ready.state, ready.message) == (State.READY, "w: condition=Ready")


def test_wait_for_condition_with_status_and_stale_generation() -> None:
    wanted = {"stackwright.io/wait-for": "condition=Available=False"}
    obj = annotated(
        wanted, {"conditions": [{"type": "Available", "status": "False", "observedGeneration": 0}]}
    )
    assert (
        evaluate(obj).message
        == "w: waiting for condition=Available=False (now Available=False for an older generation)"
    )
    obj["status"]["conditions"][0]["observedGeneration"] = 1
    assert evaluate(obj).ready


def test_wait_for_condition_falls_back_to_the_status_observed_generation() -> None:
    """As `kubectl wait --for=condition=...`: a condition without its own observedGeneration
    is as old as `status.observedGeneration`, so an update is not ready on the old Ready=True."""
    wanted = {"stackwright.io/wait-for": "condition=Ready"}
    obj = annotated(
        wanted, {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]}
    )
    obj["metadata"]["generation"] = 2
    stale = evaluate(obj)
    assert (stale.state, stale.message) == (
        State.WAITING,
        "w: waiting for condition=Ready (now Ready=True for an older generation)",
    )
    obj["status"]["observedGeneration"] = 2
    assert evaluate(obj).ready
    # A condition's own observedGeneration is the one that counts.
    obj["status"]["observedGeneration"] = 1
    obj["status"]["conditions"][0]["observedGeneration"] = 2
    assert evaluate(obj).ready


def test_wait_for_jsonpath_value_and_existence() -> None:
    wanted = {"stackwright.io/wait-for": "jsonpath={.status.phase}=Running"}
    assert evaluate(annotated(wanted, {"phase": "Pending"})).message == (
        "w: waiting for jsonpath={.status.phase}=Running (now Pending)"
    )
    assert evaluate(annotated(wanted, {"phase": "Running"})).ready
    exists = {"stackwright.io/wait-for": "jsonpath={.status.endpoint}"}
    assert (
        evaluate(annotated(exists, {})).message
        == "w: waiting for jsonpath={.status.endpoint} (now nothing)"
    )
    assert evaluate(annotated(exists, {"endpoint": "https://x"})).ready


def test_wait_for_list_needs_every_condition_and_replaces_the_kind_rule() -> None:
    wanted = {"stackwright.io/wait-for": '["condition=Ready", "jsonpath={.status.replicas}=3"]'}
    obj = annotated(wanted, {"conditions": [{"type": "Ready", "status": "True"}], "replicas": 2})
    assert evaluate(obj).message == "w: waiting for jsonpath={.status.replicas}=3 (now 2)"
    obj["status"]["replicas"] = 3
    assert evaluate(obj).message == "w: condition=Ready, jsonpath={.status.replicas}=3"
    dep = deployment()
    dep["metadata"]["annotations"]["stackwright.io/wait-for"] = "jsonpath={.spec.replicas}=3"
    assert evaluate(dep).ready  # the Deployment rule would still be waiting


def test_wait_for_says_what_the_kind_rule_sees_failing_while_it_waits() -> None:
    """A Deployment waited for by `condition=Available` whose new pods cannot pull their
    image: the wait goes on (the annotation decides), but its status names the pod and
    the cause within seconds, not only `Available=False` when it times out."""
    dep = deployment(ready=0, updated=3, available=0)
    dep["status"]["conditions"] = [{"type": "Available", "status": "False"}]
    dep["metadata"]["annotations"]["stackwright.io/wait-for"] = "condition=Available"
    assert needs(dep) == frozenset({"replicasets", "pods"})
    related = Related(
        replicasets=[replicaset("web-7c9f", "rs-new", "2")],
        pods=[pod("web-7c9f-x2k", waiting=PULL_BACKOFF)],
    )
    assert evaluate(dep, related) == Readiness(
        State.WAITING,
        "web: waiting for condition=Available (now Available=False) — 0/3 ready — pod "
        'web-7c9f-x2k: ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"',
        "web-7c9f-x2k",
    )
    # Only waiting, as the rule says too: the condition alone.
    calm = Related(pods=[pod("web-7c9f-x2k", waiting=("ContainerCreating", ""))])
    assert evaluate(dep, calm).message == (
        "web: waiting for condition=Available (now Available=False)"
    )


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("ready", "is not understood"),
        ("condition=", "is not understood"),
        ("jsonpath=.status.phase=Running", "write the path in braces"),
        ("jsonpath={.status[}=x", "JSONPath"),
        ("[1, 2]", "JSON list of strings"),
        ("[oops", "not valid JSON"),
        ("delete=now", "is not understood"),
        ("condition=Ready=maybe", "True, False or Unknown, not 'maybe'"),
    ],
)
def test_wait_for_rejects_malformed_values_with_the_reason(raw: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_wait_for(raw)


# --- pods the API server refuses (FailedCreate) ------------------------------------------------

REFUSED = (
    "FailedCreate",
    'create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota: '
    "cap, requested: pods=1, used: pods=1, limited: pods=1",
)


def test_a_controller_whose_pods_are_refused_is_failing_with_its_failed_create() -> None:
    waiting = evaluate(statefulset())
    # No pod to blame: the StatefulSet's own events are the ones to read.
    assert (waiting.state, waiting.message, waiting.culprit) == (
        State.WAITING,
        "db: 0/2 ready",
        "db",
    )
    refused = event("db", *REFUSED, when="2026-01-01T00:00:05Z")
    verdict = evaluate(statefulset(), Related(events=[refused]))
    assert (verdict.state, verdict.message) == (
        State.FAILING,
        f"db: 0/2 ready — {': '.join(REFUSED)}",
    )
    quota = 'Error creating: pods "migrate-" is forbidden: exceeded quota: cap'
    failed_job = event("migrate", "FailedCreate", quota, when="2026-01-01T00:00:05Z")
    verdict = evaluate(job(), Related(events=[failed_job]))
    assert (verdict.state, verdict.message) == (
        State.FAILING, f"migrate: 0/1 succeeded, 0 active — FailedCreate: {quota}"
    )  # fmt: skip


def test_a_refusal_older_than_the_last_pod_made_is_only_history() -> None:
    refused = event("db", *REFUSED, when="2026-01-01T00:00:05Z")
    made = event(
        "db", "SuccessfulCreate", "create Pod db-0 in StatefulSet db successful",
        when="2026-01-01T00:00:09Z", kind="Normal",
    )  # fmt: skip
    verdict = evaluate(statefulset(readyReplicas=1), Related(events=[refused, made]))
    assert (verdict.state, verdict.message) == (State.WAITING, "db: 1/2 ready")
