"""CronJob scheduling in process, with a fake clock (schedules are real wall-clock minutes).

A `Cluster` over an in-memory store, the CronJob controller with the same fake
clock, and `reconcile` called by hand as time moves: no server, no waiting.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.cronjobs import CronJobController
from stackwright.localcluster.controllers.workload_common import OwnerIndex
from stackwright.localcluster.store import Store

UTC = datetime.UTC
NS = "default"


class FakeClock:
    def __init__(self, start: datetime.datetime) -> None:
        self.now = start

    def __call__(self) -> datetime.datetime:
        return self.now

    def set(self, text: str) -> None:
        self.now = datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


class Harness:
    def __init__(self, start: str) -> None:
        self.clock = FakeClock(datetime.datetime.fromisoformat(start).replace(tzinfo=UTC))
        self.cluster = Cluster(Store(":memory:"), clock=self.clock)
        self.controller = CronJobController(
            self.cluster, OwnerIndex(self.cluster), clock=self.clock
        )
        self.cron_jobs = self.cluster.type_for("batch", "v1", "cronjobs")
        self.jobs = self.cluster.type_for("batch", "v1", "jobs")

    def create(self, schedule: str, **spec: Any) -> None:
        body = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "tick"},
            "spec": {
                "schedule": schedule,
                "jobTemplate": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "c", "image": "busybox"}],
                            }
                        }
                    },
                },
                **spec,
            },
        }
        self.cluster.create(self.cron_jobs, NS, body, WriteOptions())

    def sync(self, at: str) -> None:
        self.clock.set(at)
        asyncio.run(self.controller.reconcile((NS, "tick")))

    def jobs_now(self) -> list[dict[str, Any]]:
        return self.cluster.store.items(("batch", "jobs"), NS)

    def names(self) -> list[str]:
        return [j["metadata"]["name"] for j in self.jobs_now()]

    def status(self) -> dict[str, Any]:
        cj = self.cluster.store.get(("batch", "cronjobs"), NS, "tick")
        assert cj is not None
        found: dict[str, Any] = cj.get("status") or {}
        return found

    def reasons(self) -> list[str]:
        return [e["reason"] for e in self.cluster.store.items(("", "events"), NS)]

    def finish(self, name: str, kind: str = "Complete") -> None:
        job = self.cluster.store.get(("batch", "jobs"), NS, name)
        assert job is not None
        now = timestamp(self.clock())
        status: dict[str, Any] = {
            "startTime": now,
            "conditions": [{"type": kind, "status": "True", "lastTransitionTime": now}],
        }
        if kind == "Complete":
            status["completionTime"] = now
            status["succeeded"] = 1
            status["conditions"].insert(
                0, {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now}
            )
        else:
            status["failed"] = 1
            status["conditions"].insert(
                0, {"type": "FailureTarget", "status": "True", "lastTransitionTime": now}
            )
        self.cluster.update(
            self.jobs, NS, name, {**job, "status": status}, WriteOptions(), "status"
        )


def minutes(text: str) -> int:
    return int(datetime.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()) // 60


def test_a_job_per_scheduled_time_named_by_its_minute() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("*/5 * * * *")
    h.sync("2026-01-01T10:00:30")
    assert h.names() == [] and h.status() == {}
    h.sync("2026-01-01T10:04:59")
    assert h.names() == []
    h.sync("2026-01-01T10:05:10")
    assert h.names() == [f"tick-{minutes('2026-01-01T10:05:00')}"]
    [job] = h.jobs_now()
    assert (
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        == "2026-01-01T10:05:00Z"
    )
    assert job["metadata"]["labels"] == {"team": "a"}
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("CronJob", "tick", True)
    status = h.status()
    assert status["lastScheduleTime"] == "2026-01-01T10:05:00Z"
    assert [a["name"] for a in status["active"]] == h.names()
    h.sync("2026-01-01T10:05:40")  # the same scheduled time again: nothing new
    assert len(h.names()) == 1
    assert h.reasons().count("SuccessfulCreate") == 1


def test_allow_runs_jobs_side_by_side_and_completion_is_recorded() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("*/5 * * * *")
    h.sync("2026-01-01T10:05:01")
    h.sync("2026-01-01T10:10:01")
    assert len(h.names()) == 2 and len(h.status()["active"]) == 2
    first = h.names()[0]
    h.finish(first)
    h.sync("2026-01-01T10:11:00")
    status = h.status()
    assert [a["name"] for a in status["active"]] == [h.names()[1]]
    assert status["lastSuccessfulTime"] == "2026-01-01T10:10:01Z"  # its completionTime
    assert "SawCompletedJob" in h.reasons()


def test_forbid_skips_while_a_job_runs() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("*/5 * * * *", concurrencyPolicy="Forbid")
    h.sync("2026-01-01T10:05:01")
    h.sync("2026-01-01T10:10:01")
    assert len(h.names()) == 1
    assert "JobAlreadyActive" in h.reasons()
    assert h.status()["lastScheduleTime"] == "2026-01-01T10:05:00Z"
    h.finish(h.names()[0])
    h.sync("2026-01-01T10:10:30")  # the 10:10 run was not lost, only postponed
    assert h.names()[-1] == f"tick-{minutes('2026-01-01T10:10:00')}"


def test_replace_deletes_the_running_job_first() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("*/5 * * * *", concurrencyPolicy="Replace")
    h.sync("2026-01-01T10:05:01")
    h.sync("2026-01-01T10:10:01")
    assert h.names() == [f"tick-{minutes('2026-01-01T10:10:00')}"]
    assert [a["name"] for a in h.status()["active"]] == h.names()
    assert "SuccessfulDelete" in h.reasons()


def test_starting_deadline_skips_times_too_long_ago() -> None:
    late = Harness("2026-01-01T10:00:30")
    late.create("*/5 * * * *", startingDeadlineSeconds=30)
    late.sync("2026-01-01T10:05:45")  # 45 s after 10:05, the deadline is 30 s
    assert late.names() == []
    late.sync("2026-01-01T10:10:20")
    assert late.names() == [f"tick-{minutes('2026-01-01T10:10:00')}"]

    anyway = Harness("2026-01-01T10:00:30")
    anyway.create("*/5 * * * *")
    anyway.sync("2026-01-01T10:05:45")
    assert anyway.names() == [f"tick-{minutes('2026-01-01T10:05:00')}"]


def test_suspended_cron_job_creates_nothing() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("* * * * *", suspend=True)
    h.sync("2026-01-01T10:30:00")
    assert h.names() == []


def test_only_the_most_recent_missed_time_runs_and_many_misses_warn() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("* * * * *")
    h.sync("2026-01-03T10:00:30")  # two days of missed minutes
    assert h.names() == [f"tick-{minutes('2026-01-03T10:00:00')}"]
    assert "TooManyMissedTimes" in h.reasons()


def test_history_limits_delete_the_oldest_finished_jobs() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("* * * * *", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1)
    for minute in ("01", "02", "03", "04"):
        h.sync(f"2026-01-01T10:{minute}:01")
    ok1, ok2, bad1, bad2 = h.names()
    h.finish(ok1)
    h.finish(ok2)
    h.finish(bad1, "Failed")
    h.finish(bad2, "Failed")
    h.sync("2026-01-01T10:04:30")
    assert h.names() == [ok2, bad2]


def test_time_zone_decides_the_minute() -> None:
    h = Harness("2025-12-31T23:59:00")  # 08:59 in Tokyo
    h.create("0 9 * * *", timeZone="Asia/Tokyo")
    h.sync("2026-01-01T00:00:05")  # 09:00:05 in Tokyo
    assert h.names() == [f"tick-{minutes('2026-01-01T00:00:00')}"]
    [job] = h.jobs_now()
    assert (
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        == "2026-01-01T09:00:00+09:00"
    )


def test_unparseable_schedule_is_reported_not_raised() -> None:
    h = Harness("2026-01-01T10:00:30")
    h.create("*/5 * * * *")
    cj = h.cluster.store.get(("batch", "cronjobs"), NS, "tick")
    assert cj is not None
    # Validation keeps bad schedules out of the API; a stored one (older server) is reported.
    h.cluster.store.put(
        ("batch", "cronjobs"),
        {
            **cj,
            "spec": {**cj["spec"], "schedule": "61 * * * *"},
            "metadata": {
                **cj["metadata"],
                "resourceVersion": str(h.cluster.store.next_resource_version()),
            },
        },
        cj,
    )
    h.sync("2026-01-01T10:10:00")
    assert h.names() == [] and "UnparseableSchedule" in h.reasons()
