"""Jobs: run pods to `completions` successes, within `backoffLimit` failures.

A port of `pkg/controller/job` (1.33 behaviour, tracking with finalizers): every
pod carries the `batch.kubernetes.io/job-tracking` finalizer; a finished pod is
first recorded in `status.uncountedTerminatedPods`, then its finalizer removed,
then folded into `succeeded` / `failed` — so a pod deleted at any moment is
counted exactly once. Up to `parallelism` pods run at a time; new pods after
failures wait an exponential back-off (10 simulated seconds, doubling). More failures than
`backoffLimit` (with restartPolicy OnFailure, container restarts count too) or
running past `activeDeadlineSeconds` set FailureTarget, delete the remaining pods,
then Failed; enough successes set SuccessCriteriaMet, then Complete with
`completionTime`. Indexed jobs give each pod an index (annotation, label, env,
hostname) and track `completedIndexes`. `suspend` deletes active pods and resumes
later; `ttlSecondsAfterFinished` deletes a finished Job (the TTL-after-finished
controller's part, done here).

Must never: count one pod twice, or leave a pod held by the tracking finalizer once
its Job is finished or gone.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.workload_common import (
    JOB,
    MANAGER,
    POD,
    OwnerIndex,
    claim_owned,
    controller_key,
    controller_ref,
    copy_obj,
    deletion_rank,
    find_condition,
    is_ready,
    is_terminal,
    labels_of,
    omit_zero,
    pod_from_template,
    restart_count,
    selector,
    set_condition,
    spec_seconds,
)
from stackwright.localcluster.store import DELETED, Change, Obj

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"

#: New pods after a failure wait 10 simulated seconds, doubling up to 10 minutes.
BACKOFF_BASE = 10.0
BACKOFF_MAX = 600.0

BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")


class JobController(Controller):
    name = "job-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, pace: Pace) -> None:
        super().__init__(cluster)
        self.index = index
        self.pace = pace
        self.events = EventRecorder(cluster, "job-controller")
        self.jobs = cluster.type_for("batch", "v1", "jobs")
        self.pods = cluster.type_for("", "v1", "pods")
        # job uid → (failures since the last success, monotonic time of the last one).
        self._backoff: dict[str, tuple[int, float]] = {}

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == JOB:
            if change.type == DELETED:
                self._backoff.pop(change.obj["metadata"]["uid"], None)
                return [("gone", change.obj["metadata"]["uid"])]
            return [(change.namespace, change.name)]
        if change.key != POD or (change.type == DELETED and change.old is None):
            return []
        pod = change.obj
        key = controller_key(pod, "Job")
        if key is not None:
            if self.cluster.store.get(JOB, *key) is None and TRACKING_FINALIZER in (
                pod["metadata"].get("finalizers") or ()
            ):
                return [("pod", change.namespace, change.name)]  # its Job is gone: let it go
            return [key]
        if change.type != DELETED and controller_ref(pod) is None:
            if TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ()):
                # Orphaned (its Job deleted with propagation Orphan): nobody counts it now.
                return [("pod", change.namespace, change.name)]
            pod_labels = labels_of(pod)
            return [
                (change.namespace, job["metadata"]["name"])
                for job in self.index.in_namespace(JOB, change.namespace)
                if selector(job["spec"].get("selector")).matches(pod_labels)
            ]
        return []

    def initial_keys(self) -> list[Hashable]:
        keys: list[Hashable] = [
            (ns, job["metadata"]["name"])
            for ns in self.index.namespaces(JOB)
            for job in self.index.in_namespace(JOB, ns)
        ]
        # Tracked pods orphaned while the cluster was down.
        for ns in self.index.namespaces(POD):
            for pod in self.index.in_namespace(POD, ns):
                if TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or ()):
                    continue
                owner = controller_key(pod, "Job")
                if owner is None or self.cluster.store.get(JOB, *owner) is None:
                    keys.append(("pod", ns, pod["metadata"]["name"]))
        return keys

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        if key[0] == "gone":
            for pod in self.index.owned(POD, key[1]):
                self._release_finalizer(pod)
            return
        if key[0] == "pod" and len(key) == 3:
            # syncOrphanPod: let go of a tracked pod no unfinished Job controls any more.
            orphan = self.cluster.store.get(POD, key[1], key[2])
            if orphan is None:
                return
            ref = controller_ref(orphan)
            if ref is not None and ref.get("kind") != "Job":
                return  # another kind of controller's pod: not ours to touch
            job = self.cluster.store.get(JOB, key[1], str(ref["name"])) if ref else None
            if job is None or _finished(job):
                self._release_finalizer(orphan)
            return
        namespace, name = key
        job = self.cluster.store.get(JOB, namespace, name)
        if job is None:
            return
        pods = self._claim_pods(job)
        if job["metadata"].get("deletionTimestamp"):
            for pod in pods:
                self._release_finalizer(pod)
            return
        if _finished(job):
            for pod in pods:
                self._release_finalizer(pod)
            self._expire(job)
            return
        _Sync(self, job, pods).run()

    # --- pods --------------------------------------------------------------------------------

    def _claim_pods(self, job: Obj) -> list[Obj]:
        # A Job keeps every pod it owns (its selector is generated and immutable).
        selected = selector(job["spec"].get("selector"))
        return claim_owned(self.index, POD, job, selected, self._write_pod, release=False)

    def _write_pod(self, pod: Obj) -> Obj:
        meta = pod["metadata"]
        return self.cluster.update(
            self.pods, meta["namespace"], meta["name"], pod, WriteOptions(field_manager=MANAGER)
        ).obj

    def _release_finalizer(self, pod: Obj) -> None:
        finalizers = pod["metadata"].get("finalizers") or []
        if TRACKING_FINALIZER not in finalizers:
            return
        released = copy_obj(pod)
        kept = [f for f in finalizers if f != TRACKING_FINALIZER]
        if kept:
            released["metadata"]["finalizers"] = kept
        else:
            released["metadata"].pop("finalizers", None)
        with contextlib.suppress(api_status.NotFound, api_status.Conflict):
            self._write_pod(released)

    def _expire(self, job: Obj) -> None:
        """ttlSecondsAfterFinished: delete the Job (and, in the foreground, its pods)."""
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        status = job.get("status") or {}
        moments = self.index.moments
        uid = job["metadata"]["uid"]
        finished = moments.when(uid, "finished", status.get("completionTime"))
        if finished is None:
            failed = find_condition(status.get("conditions"), "Failed")
            finished = moments.when(uid, "finished", (failed or {}).get("lastTransitionTime"))
        if finished is None:
            return
        left = (finished - self.cluster.clock()).total_seconds() + spec_seconds(
            self.pace, float(ttl)
        )
        if left > 0:
            self.enqueue_after((job["metadata"]["namespace"], job["metadata"]["name"]), left + 0.05)
            return
        # As the TTL-after-finished controller: foreground, with a uid precondition.
        with contextlib.suppress(api_status.NotFound, api_status.Conflict):
            self.cluster.delete(
                self.jobs, job["metadata"]["namespace"], job["metadata"]["name"],
                DeleteOptions(propagation="Foreground", precondition_uid=job["metadata"]["uid"]),
            )  # fmt: skip


class _Sync:
    """One reconcile of an unfinished Job (syncJob)."""

    def __init__(self, controller: JobController, job: Obj, pods: list[Obj]) -> None:
        self.c = controller
        self.cluster = controller.cluster
        self.job = job
        self.spec: dict[str, Any] = job.get("spec") or {}
        self.pods = pods
        self.key = (job["metadata"]["namespace"], job["metadata"]["name"])
        self.uid: str = job["metadata"]["uid"]
        self.now = self.cluster.clock()
        self.now_text = timestamp(self.now)
        self.status: dict[str, Any] = copy_obj(job.get("status") or {})
        self.indexed = self.spec.get("completionMode") == "Indexed"
        self.completions: int | None = self.spec.get("completions")
        self.suspended = bool(self.spec.get("suspend"))

    def run(self) -> None:
        self._count_finished()
        conditions: list[dict[str, Any]] = self.status.setdefault("conditions", [])
        active = [p for p in self.pods if _active(p)]
        terminating = [p for p in self.pods if _terminating(p)]
        if self.suspended:
            self._suspend(active)
            active = []
        else:
            self._resume()
        if not self.status.get("startTime") and not self.suspended:
            self._start()
        target = find_condition(conditions, "FailureTarget")
        met = find_condition(conditions, "SuccessCriteriaMet")
        if target is None and met is None:
            failure = self._failure(active)
            if failure is not None:
                set_condition(
                    conditions, "FailureTarget", "True", *failure, self.now_text, probe_time=True
                )
                target = find_condition(conditions, "FailureTarget")
            elif self._complete(active):
                set_condition(
                    conditions,
                    "SuccessCriteriaMet",
                    "True",
                    *COMPLETIONS_REACHED,
                    self.now_text,
                    probe_time=True,
                )
                met = find_condition(conditions, "SuccessCriteriaMet")
        if target is not None or met is not None:
            for pod in active:
                self._delete_pod(pod)
            active = []
            terminating = [p for p in self.c.index.owned(POD, self.uid) if _terminating(p)]
            if not terminating:
                self._finish(target, met)
        elif not self.suspended:
            active = self._manage(active)
        self._write(active, terminating)

    # --- counting -------------------------------------------------------------------------

    def _count_finished(self) -> None:
        """trackJobStatusAndRemoveFinalizers: uncounted first, finalizers off, then counted."""
        uncounted = self.status.get("uncountedTerminatedPods") or {}
        known_ok = set(uncounted.get("succeeded") or [])
        known_failed = set(uncounted.get("failed") or [])
        succeeded_indexes = _parse_indexes(self.status.get("completedIndexes", ""))
        finishing_job = find_condition(self.status.get("conditions"), "FailureTarget") is not None
        newly_ok: list[str] = []
        newly_failed: list[str] = []
        releasing: list[Obj] = []
        for pod in self.pods:
            meta = pod["metadata"]
            if TRACKING_FINALIZER not in (meta.get("finalizers") or ()):
                continue
            uid = meta["uid"]
            phase = (pod.get("status") or {}).get("phase")
            if uid in known_ok or uid in known_failed:
                releasing.append(pod)
                continue
            if phase == "Succeeded":
                index = _index(pod)
                if not self.indexed or (
                    index is not None
                    and index < (self.completions or 0)
                    and index not in succeeded_indexes
                ):
                    newly_ok.append(uid)
                    if index is not None:
                        succeeded_indexes.add(index)
                releasing.append(pod)
            elif phase == "Failed" or (
                meta.get("deletionTimestamp") and (not self.suspended or finishing_job)
            ):
                # A pod deleted before it finished counts as failed (podReplacementPolicy
                # TerminatingOrFailed), except pods a suspension removed.
                newly_failed.append(uid)
                releasing.append(pod)
            elif meta.get("deletionTimestamp"):
                releasing.append(pod)
        if not releasing:
            return
        if newly_ok or newly_failed:
            self.status["uncountedTerminatedPods"] = {
                k: v for k, v in (
                    ("succeeded", sorted(known_ok | set(newly_ok))),
                    ("failed", sorted(known_failed | set(newly_failed))),
                ) if v
            }  # fmt: skip
            self._write_status(self.status)
        for pod in releasing:
            self.c._release_finalizer(pod)
        all_ok = known_ok | set(newly_ok)
        all_failed = known_failed | set(newly_failed)
        self.status["succeeded"] = int(self.status.get("succeeded") or 0) + len(all_ok)
        self.status["failed"] = int(self.status.get("failed") or 0) + len(all_failed)
        if self.indexed:
            self.status["completedIndexes"] = _format_indexes(succeeded_indexes)
        self.status["uncountedTerminatedPods"] = {}
        failures, last = self.c._backoff.get(self.uid, (0, 0.0))
        if all_ok:
            failures = 0
        if all_failed:
            failures, last = failures + len(all_failed), time.monotonic()
        self.c._backoff[self.uid] = (failures, last)
        self.pods = self.c.index.owned(POD, self.uid)

    # --- decisions ----------------------------------------------------------------------------

    def _failure(self, active: list[Obj]) -> tuple[str, str] | None:
        limit = int(self.spec.get("backoffLimit", 6))
        failed = int(self.status.get("failed") or 0)
        if failed > limit or self._past_limit_on_failure(active, limit):
            return BACKOFF_LIMIT_EXCEEDED
        deadline = self.spec.get("activeDeadlineSeconds")
        started = self.c.index.moments.when(self.uid, "startTime", self.status.get("startTime"))
        if deadline is not None and started is not None and not self.suspended:
            left = (started - self.now).total_seconds() + spec_seconds(self.c.pace, float(deadline))
            if left <= 0:
                return DEADLINE_EXCEEDED
            self.c.enqueue_after(self.key, left + 0.05)
        return None

    def _past_limit_on_failure(self, active: list[Obj], limit: int) -> bool:
        """pastBackoffLimitOnFailure: with OnFailure, container restarts count as failures."""
        template_spec = (self.spec.get("template") or {}).get("spec") or {}
        if template_spec.get("restartPolicy") != "OnFailure":
            return False
        restarts = sum(
            restart_count(p)
            for p in active
            if (p.get("status") or {}).get("phase") in ("Pending", "Running")
        )
        return restarts > 0 if limit == 0 else restarts >= limit

    def _complete(self, active: list[Obj]) -> bool:
        succeeded = self._succeeded()
        if self.completions is None:
            return succeeded > 0 and not active
        return succeeded >= int(self.completions) and not active

    def _succeeded(self) -> int:
        if self.indexed:
            return len(_parse_indexes(self.status.get("completedIndexes", "")))
        return int(self.status.get("succeeded") or 0)

    def _finish(self, target: dict[str, Any] | None, met: dict[str, Any] | None) -> None:
        conditions = self.status["conditions"]
        if target is not None:
            reason, message = str(target.get("reason")), str(target.get("message"))
            if set_condition(
                conditions, "Failed", "True", reason, message, self.now_text, probe_time=True
            ):
                self.c.index.moments.note(self.uid, "finished", self.now_text, self.now)
                self.c.events.record(self.job, WARNING, reason, message)
        elif met is not None and set_condition(
            conditions, "Complete", "True", *COMPLETIONS_REACHED, self.now_text, probe_time=True
        ):
            self.status["completionTime"] = self.now_text
            self.c.index.moments.note(self.uid, "finished", self.now_text, self.now)
            self.c.events.record(self.job, NORMAL, "Completed", "Job completed")
        self.c.enqueue(self.key)  # for ttlSecondsAfterFinished

    def _start(self) -> None:
        self.status["startTime"] = self.now_text
        self.c.index.moments.note(self.uid, "startTime", self.now_text, self.now)

    def _suspend(self, active: list[Obj]) -> None:
        conditions = self.status.setdefault("conditions", [])
        for pod in active:
            self._delete_pod(pod)
        if set_condition(
            conditions,
            "Suspended",
            "True",
            "JobSuspended",
            "Job suspended",
            self.now_text,
            probe_time=True,
        ):
            self.c.events.record(self.job, NORMAL, "Suspended", "Job suspended")

    def _resume(self) -> None:
        conditions = self.status.setdefault("conditions", [])
        suspended = find_condition(conditions, "Suspended")
        if suspended is None or suspended.get("status") != "True":
            return
        set_condition(
            conditions,
            "Suspended",
            "False",
            "JobResumed",
            "Job resumed",
            self.now_text,
            probe_time=True,
        )
        self._start()  # activeDeadlineSeconds counts from the resume
        self.c.events.record(self.job, NORMAL, "Resumed", "Job resumed")

    # --- pods ------------------------------------------------------------------------------------

    def _manage(self, active: list[Obj]) -> list[Obj]:
        """manageJob: delete extra active pods, create missing ones after any back-off."""
        parallelism = int(self.spec.get("parallelism", 1))
        succeeded = self._succeeded()
        if self.completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(min(int(self.completions) - succeeded, parallelism), 0)
        if self.indexed:
            done = _parse_indexes(self.status.get("completedIndexes", ""))
            seen: set[int] = set()
            extra: list[Obj] = []
            for pod in sorted(active, key=deletion_rank, reverse=True):
                index = _index(pod)
                if (
                    index is None
                    or index in done
                    or index >= int(self.completions or 0)
                    or index in seen
                ):
                    extra.append(pod)
                else:
                    seen.add(index)
            kept = [p for p in active if p not in extra]
            for pod in extra:
                self._delete_pod(pod)
            active = kept
        if len(active) > want:
            for pod in sorted(active, key=deletion_rank)[: len(active) - want]:
                self._delete_pod(pod)
                active = [p for p in active if p is not pod]
            return active
        missing = want - len(active)
        if missing <= 0:
            return active
        wait = self._backoff_left()
        if wait > 0:
            self.c.enqueue_after(self.key, wait + 0.01)
            return active
        indexes: list[int | None] = [None] * missing
        if self.indexed:
            done = _parse_indexes(self.status.get("completedIndexes", ""))
            running = {_index(p) for p in active}
            free = [
                i for i in range(int(self.completions or 0)) if i not in done and i not in running
            ]
            indexes = list(free[:missing])
        for index in indexes:
            created = self._create_pod(index)
            if created is not None:
                active.append(created)
        return active

    def _backoff_left(self) -> float:
        failures, last = self.c._backoff.get(self.uid, (0, 0.0))
        if failures == 0:
            return 0.0
        delay = spec_seconds(self.c.pace, min(BACKOFF_BASE * 2 ** (failures - 1), BACKOFF_MAX))
        return last + delay - time.monotonic()

    def _create_pod(self, index: int | None) -> Obj | None:
        template = copy_obj(self.spec.get("template") or {})
        name = self.job["metadata"]["name"]
        meta = template.setdefault("metadata", {})
        meta["finalizers"] = [*(meta.get("finalizers") or []), TRACKING_FINALIZER]
        generate_name = f"{name}-"
        if index is not None:
            meta.setdefault("annotations", {})[INDEX_ANNOTATION] = str(index)
            meta.setdefault("labels", {})[INDEX_LABEL] = str(index)
            generate_name = f"{name}-{index}-"
            pod_spec = template.setdefault("spec", {})
            if not pod_spec.get("hostname"):
                pod_spec["hostname"] = f"{name}-{index}"
            for container in [
                *(pod_spec.get("initContainers") or []),
                *(pod_spec.get("containers") or []),
            ]:
                env = [
                    e for e in container.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"
                ]
                env.insert(0, {
                    "name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.labels['{INDEX_LABEL}']"}},
                })  # fmt: skip
                container["env"] = env
        pod = pod_from_template(template, self.job, generate_name=generate_name)
        try:
            created = self.cluster.create(
                self.c.pods, self.key[0], pod, WriteOptions(field_manager=MANAGER)
            ).obj
        except api_status.AlreadyExists:
            raise Retry(0.0) from None
        except api_status.APIError as exc:
            self.c.events.record(self.job, WARNING, "FailedCreate", f"Error creating: {exc}")
            raise Retry(spec_seconds(self.c.pace, 10.0)) from None
        self.c.events.record(
            self.job, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
        )
        return created

    def _delete_pod(self, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            self.cluster.delete(
                self.c.pods, self.key[0], name, DeleteOptions(propagation="Background")
            )
        except api_status.NotFound:
            return
        self.c.events.record(self.job, NORMAL, "SuccessfulDelete", f"Deleted pod: {name}")

    # --- status ------------------------------------------------------------------------------------

    def _write(self, active: list[Obj], terminating: list[Obj]) -> None:
        pods = self.c.index.owned(POD, self.uid)
        live = [p for p in pods if _active(p)]
        self.status["active"] = len(live)
        self.status["ready"] = sum(1 for p in live if is_ready(p))
        self.status["terminating"] = sum(1 for p in pods if _terminating(p))
        self.status.setdefault("uncountedTerminatedPods", {})
        if self.indexed:
            self.status.setdefault("completedIndexes", "")
        if not self.status.get("conditions"):
            self.status.pop("conditions", None)
        omit_zero(self.status, "active", "succeeded", "failed")
        self._write_status(self.status)

    def _write_status(self, status: dict[str, Any]) -> None:
        if (self.job.get("status") or {}) == status:
            return
        self.job = self.cluster.update(
            self.c.jobs, self.key[0], self.key[1], {**self.job, "status": copy_obj(status)},
            WriteOptions(field_manager=MANAGER), "status",
        ).obj  # fmt: skip


def _finished(job: Obj) -> bool:
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return True
    return False


def _active(pod: Obj) -> bool:
    return not is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp")) and not is_terminal(pod)


def _index(pod: Obj) -> int | None:
    value = (pod["metadata"].get("annotations") or {}).get(INDEX_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _parse_indexes(text: str) -> set[int]:
    """`1,3-5,7` → {1, 3, 4, 5, 7} (the completedIndexes format)."""
    indexes: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            indexes.update(range(int(low), int(high) + 1))
        else:
            indexes.add(int(part))
    return indexes


def _format_indexes(indexes: set[int]) -> str:
    """{1, 3, 4, 5, 7} → `1,3-5,7`."""
    parts: list[str] = []
    ordered = sorted(indexes)
    start = prev = None
    for index in ordered:
        if start is None:
            start = prev = index
        elif prev is not None and index == prev + 1:
            prev = index
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = index
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


__all__ = ["JobController"]
