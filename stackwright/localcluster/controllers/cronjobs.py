"""CronJobs: create a Job at each scheduled time, as the cronjob controller (v2) does.

Schedules are real wall-clock minutes (`stackwright.localcluster.cron`, in the
CronJob's time zone); the controller's clock is injectable so tests can move time.
At the most recent scheduled time not yet run it creates
`<cronjob>-<scheduled minutes since the epoch>` from the job template, unless that
time is older than `startingDeadlineSeconds` (MissSchedule), the CronJob is
suspended, or concurrencyPolicy says otherwise (Forbid: skip while a Job runs;
Replace: delete the running ones first). Status keeps the active Jobs,
lastScheduleTime and lastSuccessfulTime; finished Jobs beyond the success and
failure history limits are deleted. It wakes itself just after the next
scheduled time.

Must never: create two Jobs for one scheduled time, or Pace-scale schedule times
(a schedule names clock minutes; only the clock is swappable).
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Hashable
from typing import Any

from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.workload_common import (
    CRON_JOB,
    JOB,
    MANAGER,
    OwnerIndex,
    controller_key,
    copy_obj,
    find_condition,
    owner_reference,
    parse_time,
)
from stackwright.localcluster.cron import Schedule, ScheduleError, parse_schedule
from stackwright.localcluster.store import Change, Obj

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: Wake this long after a scheduled time, so the clock has surely passed it (nextScheduleDelta).
NEXT_SCHEDULE_DELTA = 0.1
#: More missed times than this and the controller warns instead of listing them.
TOO_MANY_MISSED = 100

Clock = Callable[[], datetime.datetime]


class CronJobController(Controller):
    name = "cronjob-controller"

    def __init__(self, cluster: Cluster, index: OwnerIndex, *, clock: Clock | None = None) -> None:
        super().__init__(cluster)
        self.index = index
        self.clock: Clock = clock or cluster.clock
        self.events = EventRecorder(cluster, "cronjob-controller")
        self.cron_jobs = cluster.type_for("batch", "v1", "cronjobs")
        self.jobs = cluster.type_for("batch", "v1", "jobs")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == CRON_JOB:
            return [(change.namespace, change.name)]
        if change.key == JOB:
            key = controller_key(change.obj, "CronJob")
            return [key] if key is not None else []
        return []

    def initial_keys(self) -> list[Hashable]:
        return [
            (ns, cj["metadata"]["name"])
            for ns in self.index.namespaces(CRON_JOB)
            for cj in self.index.in_namespace(CRON_JOB, ns)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        namespace, name = key
        cj = self.cluster.store.get(CRON_JOB, namespace, name)
        if cj is None:
            return
        now = self.clock()
        status: dict[str, Any] = copy_obj(cj.get("status") or {})
        children = self.index.owned(JOB, cj["metadata"]["uid"])
        self._track_children(cj, status, children)
        wake: float | None = None
        if not cj["metadata"].get("deletionTimestamp"):
            wake = self._schedule(cj, status, now)
        self._write_status(cj, status)
        self._clean_up(cj)
        if wake is not None:
            self.enqueue_after(key, max(wake, 0.0))

    # --- children -------------------------------------------------------------------------

    def _track_children(self, cj: Obj, status: dict[str, Any], children: list[Obj]) -> None:
        active: list[dict[str, Any]] = list(status.get("active") or [])
        active_uids = {ref.get("uid") for ref in active}
        for job in children:
            uid = job["metadata"]["uid"]
            finished = _finished_condition(job)
            if uid not in active_uids and finished is None:
                self.events.record(
                    cj,
                    WARNING,
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job['metadata']['name']}",
                )
            elif uid in active_uids and finished is not None:
                active = [ref for ref in active if ref.get("uid") != uid]
                self.events.record(
                    cj,
                    NORMAL,
                    "SawCompletedJob",
                    f"Saw completed job: {job['metadata']['name']}, condition: {finished}",
                )
            if finished == "Complete":
                completed = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if completed and (not last or completed > last):
                    status["lastSuccessfulTime"] = completed
        present = {job["metadata"]["uid"] for job in children}
        for ref in list(active):
            if ref.get("uid") not in present:
                active = [r for r in active if r.get("uid") != ref.get("uid")]
                self.events.record(
                    cj, NORMAL, "MissingJob", f"Active job went missing: {ref.get('name')}"
                )
        if active:
            status["active"] = active
        else:
            status.pop("active", None)

    # --- scheduling -----------------------------------------------------------------------------

    def _schedule(self, cj: Obj, status: dict[str, Any], now: datetime.datetime) -> float | None:
        """syncCronJob's scheduling half; returns seconds until it should look again."""
        spec = cj.get("spec") or {}
        try:
            schedule = parse_schedule(str(spec.get("schedule", "")), spec.get("timeZone"))
        except ScheduleError as exc:
            reason = "UnknownTimeZone" if "time zone" in str(exc) else "UnparseableSchedule"
            self.events.record(
                cj, WARNING, reason, f"unparseable schedule: {spec.get('schedule')!r} : {exc}"
            )
            return None
        if spec.get("suspend"):
            return None
        deadline = spec.get("startingDeadlineSeconds")
        scheduled, missed = most_recent_schedule_time(
            cj, status, now, schedule, include_deadline=True
        )
        if missed > TOO_MANY_MISSED:
            self.events.record(
                cj, WARNING, "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )  # fmt: skip
        wake = self._next_wake(cj, status, now, schedule)
        if scheduled is None:
            return wake
        if deadline is not None and scheduled + datetime.timedelta(seconds=int(deadline)) < now:
            self.events.record(
                cj, WARNING, "MissSchedule",
                f"Missed scheduled time to start a job: {scheduled.astimezone(datetime.UTC).strftime('%a, %d %b %Y %H:%M:%S +0000')}",
            )  # fmt: skip
            return wake
        name = job_name(cj, scheduled)
        if any(ref.get("name") == name for ref in status.get("active") or []):
            return wake
        if parse_time(status.get("lastScheduleTime")) == scheduled.astimezone(datetime.UTC).replace(
            microsecond=0
        ):
            return wake
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            self.events.record(
                cj, NORMAL, "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )  # fmt: skip
            return wake
        if policy == "Replace":
            for ref in list(status.get("active") or []):
                self._delete_job(cj, str(ref.get("name")))
                status["active"] = [
                    r for r in status.get("active") or [] if r.get("uid") != ref.get("uid")
                ]
            if not status.get("active"):
                status.pop("active", None)
        job = job_from_template(cj, scheduled)
        try:
            created = self.cluster.create(
                self.jobs, cj["metadata"]["namespace"], job, WriteOptions(field_manager=MANAGER)
            ).obj
        except api_status.AlreadyExists:
            # Made already (a status write lost); it is in our children and will be tracked.
            status["lastScheduleTime"] = timestamp(scheduled.astimezone(datetime.UTC))
            return wake
        except api_status.APIError as exc:
            self.events.record(cj, WARNING, "FailedCreate", f"Error creating job: {exc}")
            return wake
        self.events.record(
            cj, NORMAL, "SuccessfulCreate", f"Created job {created['metadata']['name']}"
        )
        status.setdefault("active", []).append(
            {
                "kind": "Job",
                "namespace": created["metadata"]["namespace"],
                "name": created["metadata"]["name"],
                "uid": created["metadata"]["uid"],
                "apiVersion": "batch/v1",
                "resourceVersion": created["metadata"]["resourceVersion"],
            }
        )
        status["lastScheduleTime"] = timestamp(scheduled.astimezone(datetime.UTC))
        return self._next_wake(cj, status, now, schedule)

    def _next_wake(
        self, cj: Obj, status: dict[str, Any], now: datetime.datetime, schedule: Schedule
    ) -> float | None:
        """nextScheduleTimeDuration: seconds until just after the next scheduled time."""
        recent, _ = most_recent_schedule_time(cj, status, now, schedule, include_deadline=False)
        after = schedule.next_after(recent or _earliest(cj, status, now, None))
        if after is None:
            return None
        return (after - now).total_seconds() + NEXT_SCHEDULE_DELTA

    # --- writes ------------------------------------------------------------------------------------

    def _delete_job(self, cj: Obj, name: str) -> None:
        try:
            self.cluster.delete(
                self.jobs,
                cj["metadata"]["namespace"],
                name,
                DeleteOptions(propagation="Background"),
            )
        except api_status.NotFound:
            return
        self.events.record(cj, NORMAL, "SuccessfulDelete", f"Deleted job {name}")

    def _write_status(self, cj: Obj, status: dict[str, Any]) -> None:
        if (cj.get("status") or {}) == status:
            return
        with contextlib.suppress(api_status.NotFound):
            self.cluster.update(
                self.cron_jobs, cj["metadata"]["namespace"], cj["metadata"]["name"], {**cj, "status": status},
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip

    def _clean_up(self, cj: Obj) -> None:
        """cleanupFinishedJobs: keep the newest finished Jobs within each history limit."""
        spec = cj.get("spec") or {}
        finished: dict[str, list[Obj]] = {"Complete": [], "Failed": []}
        for job in self.index.owned(JOB, cj["metadata"]["uid"]):
            condition = _finished_condition(job)
            if condition is not None and not job["metadata"].get("deletionTimestamp"):
                finished[condition].append(job)
        for condition, limit_field in (
            ("Complete", "successfulJobsHistoryLimit"),
            ("Failed", "failedJobsHistoryLimit"),
        ):
            limit = spec.get(limit_field)
            if limit is None:
                continue
            jobs = sorted(finished[condition], key=_start_time)
            for job in jobs[: max(len(jobs) - int(limit), 0)]:
                self._delete_job(cj, job["metadata"]["name"])


# --- schedule arithmetic (pure, for tests too) ------------------------------------------------------


def job_name(cj: Obj, scheduled: datetime.datetime) -> str:
    """`<cronjob>-<minutes since the epoch>` (getJobName)."""
    return f"{cj['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cj: Obj, scheduled: datetime.datetime) -> Obj:
    """getJobFromTemplate2: the Job for one scheduled time."""
    template = copy_obj((cj.get("spec") or {}).get("jobTemplate") or {})
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = _rfc3339(scheduled)
    meta: dict[str, Any] = {
        "name": job_name(cj, scheduled),
        "namespace": cj["metadata"]["namespace"],
        "annotations": annotations,
        "ownerReferences": [owner_reference(cj)],
    }
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": template.get("spec") or {},
    }


def most_recent_schedule_time(
    cj: Obj,
    status: dict[str, Any],
    now: datetime.datetime,
    schedule: Schedule,
    *,
    include_deadline: bool,
) -> tuple[datetime.datetime | None, int]:
    """mostRecentScheduleTime: the latest scheduled time in (earliest, now], and how many were missed."""
    earliest = _earliest(
        cj,
        status,
        now,
        (cj.get("spec") or {}).get("startingDeadlineSeconds") if include_deadline else None,
    )
    first = schedule.next_after(earliest)
    if first is None or now < first:
        return None, 0
    second = schedule.next_after(first)
    if second is None or now < second:
        return first, 1
    interval = round((second - first).total_seconds())
    if interval < 1:
        return None, 0
    missed = int((now - first).total_seconds()) // interval + 1
    # Jump close to now instead of walking every missed time (the upstream approximation).
    probe = first + datetime.timedelta(seconds=(missed - 2) * interval)
    recent: datetime.datetime | None = None
    moment = schedule.next_after(probe if probe > earliest else earliest)
    while moment is not None and moment <= now:
        recent = moment
        moment = schedule.next_after(moment)
    return recent, missed


def _earliest(
    cj: Obj, status: dict[str, Any], now: datetime.datetime, deadline: Any
) -> datetime.datetime:
    earliest = (
        parse_time(status.get("lastScheduleTime"))
        or parse_time(cj["metadata"].get("creationTimestamp"))
        or now
    )
    if deadline is not None:
        floor = now - datetime.timedelta(seconds=int(deadline))
        if floor > earliest:
            earliest = floor
    return earliest


def _finished_condition(job: Obj) -> str | None:
    for kind in ("Complete", "Failed"):
        cond = find_condition((job.get("status") or {}).get("conditions"), kind)
        if cond is not None and cond.get("status") == "True":
            return kind
    return None


def _start_time(job: Obj) -> tuple[str, str]:
    status = job.get("status") or {}
    return (
        str(status.get("startTime") or job["metadata"].get("creationTimestamp") or ""),
        job["metadata"]["name"],
    )


def _rfc3339(moment: datetime.datetime) -> str:
    text = moment.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


__all__ = ["CronJobController", "job_from_template", "job_name", "most_recent_schedule_time"]
