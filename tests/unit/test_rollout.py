"""Rollout arithmetic (maxSurge / maxUnavailable) and Deployment scaling decisions, in process.

The arithmetic is pure. The scaling tests run the Deployment and ReplicaSet
controllers over an in-memory cluster with a stand-in kubelet that makes pods
Ready at once (or never, for an image named `bad`), so the decisions a rollout
makes can be checked exactly, without a server.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Hashable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackwright.localcluster.cluster import Cluster, WriteOptions, timestamp
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.deployments import (
    DeploymentController,
    max_surge_and_unavailable,
)
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.replicasets import ReplicaSetController
from stackwright.localcluster.controllers.workload_common import (
    BadIntOrPercent,
    OwnerIndex,
    resolve_fenceposts,
    scaled_value,
)
from stackwright.localcluster.store import ADDED, DELETED, Change, Store

# --- arithmetic ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "total", "up", "down"),
    [
        (2, 10, 2, 2),
        ("25%", 3, 1, 0),
        ("25%", 4, 1, 1),
        ("33%", 3, 1, 0),  # 0.99: down is 0, never a float's 0.9899…
        ("50%", 5, 3, 2),
        ("100%", 7, 7, 7),
        ("0%", 9, 0, 0),
        (None, 9, 0, 0),
    ],
)
def test_int_or_percent_rounds_up_or_down(value: Any, total: int, up: int, down: int) -> None:
    assert scaled_value(value, total, round_up=True) == up
    assert scaled_value(value, total, round_up=False) == down


@pytest.mark.parametrize("value", ["5", "abc%", True])
def test_int_or_percent_rejects_what_is_neither(value: Any) -> None:
    with pytest.raises(BadIntOrPercent):
        scaled_value(value, 10, round_up=True)


@given(st.integers(0, 100), st.integers(0, 10_000))
def test_percent_rounding_brackets_the_exact_value(percent: int, total: int) -> None:
    up = scaled_value(f"{percent}%", total, round_up=True)
    down = scaled_value(f"{percent}%", total, round_up=False)
    assert down * 100 <= percent * total <= up * 100
    assert up - down in (0, 1)


@pytest.mark.parametrize(
    ("surge", "unavailable", "replicas", "expected"),
    [
        ("25%", "25%", 4, (1, 1)),
        ("25%", "25%", 3, (1, 0)),  # surge rounds up, unavailable down
        ("25%", "25%", 1, (1, 0)),
        (0, 0, 5, (0, 1)),  # never both zero: the rollout could not move
        ("0%", "0%", 10, (0, 1)),
        (3, 2, 10, (3, 2)),
    ],
)
def test_fenceposts(surge: Any, unavailable: Any, replicas: int, expected: tuple[int, int]) -> None:
    assert resolve_fenceposts(surge, unavailable, replicas) == expected


def _deployment(replicas: int, strategy: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"replicas": replicas, "strategy": strategy}}


def test_deployment_surge_and_unavailable() -> None:
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 9}}
    assert max_surge_and_unavailable(_deployment(4, rolling)) == (2, 4)  # capped at replicas
    assert max_surge_and_unavailable(_deployment(0, rolling)) == (2, 0)
    assert max_surge_and_unavailable(_deployment(4, {"type": "Recreate"})) == (0, 0)
    assert max_surge_and_unavailable(_deployment(8, {"type": "RollingUpdate"})) == (
        2,
        2,
    )  # 25% each


# --- scaling decisions, in process -----------------------------------------------------------


class InstantKubelet(Controller):
    """Pods run and are Ready as soon as they exist, unless their image is named `bad`."""

    name = "instant-kubelet"

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self.pods = cluster.type_for("", "v1", "pods")

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == ("", "pods") and change.type == ADDED:
            return [(change.namespace, change.name)]
        return []

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        pod = self.cluster.store.get(("", "pods"), *key)
        if pod is None:
            return
        ready = "bad" not in pod["spec"]["containers"][0]["image"]
        now = timestamp(self.cluster.clock())
        running = copy.deepcopy(pod)
        running["status"] = {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now}
            ],
        }
        self.cluster.update(self.pods, key[0], key[1], running, WriteOptions(), "status")


class World:
    def __init__(self) -> None:
        self.cluster = Cluster(Store(":memory:"))
        index = OwnerIndex(self.cluster)
        pace = Pace()
        self.controllers = [
            InstantKubelet(self.cluster),
            DeploymentController(self.cluster, index, pace),
            ReplicaSetController(self.cluster, index, pace),
        ]
        self.deployments = self.cluster.type_for("apps", "v1", "deployments")
        self.changes: list[Change] = []
        self.cluster.store.add_listener(self.changes.append)

    def create(self, replicas: int, image: str, **spec: Any) -> None:
        body = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image}]},
                },
                **spec,
            },
        }
        self.cluster.create(self.deployments, "default", body, WriteOptions())

    def change(self, edit: Callable[[dict[str, Any]], None]) -> None:
        d = copy.deepcopy(self.cluster.store.get(("apps", "deployments"), "default", "web"))
        assert d is not None
        edit(d["spec"])
        self.cluster.update(self.deployments, "default", "web", d, WriteOptions())

    def sets(self) -> dict[str, int]:
        """Spec replicas per image of the Deployment's ReplicaSets."""
        return {
            rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["spec"]["replicas"]
            for rs in self.cluster.store.items(("apps", "replicasets"), "default")
        }

    async def settle(self, check: Callable[[], bool], timeout: float = 5.0) -> None:
        tasks = [asyncio.ensure_future(c.run()) for c in self.controllers]
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while not check():
                assert loop.time() < deadline, (self.sets(), self.status())
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)  # and nothing more happens after
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def status(self) -> dict[str, Any]:
        d = self.cluster.store.get(("apps", "deployments"), "default", "web")
        assert d is not None
        found: dict[str, Any] = d.get("status") or {}
        return found


def test_scaling_a_stuck_rollout_adds_replicas_proportionally() -> None:
    """The upstream documentation's example: 10 replicas, maxSurge 3, maxUnavailable 2."""

    async def scenario() -> None:
        w = World()
        rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
        w.create(10, "nginx:1.29", strategy=rolling)
        await w.settle(lambda: w.status().get("availableReplicas") == 10)
        w.change(lambda spec: spec["template"]["spec"]["containers"][0].update(image="app:bad"))
        await w.settle(lambda: w.sets() == {"nginx:1.29": 8, "app:bad": 5})
        w.change(lambda spec: spec.update(replicas=15))
        # 5 more within 15 + 3: the old set gets 3 (8 → 11), the new one 2 (5 → 7).
        await w.settle(lambda: w.sets() == {"nginx:1.29": 11, "app:bad": 7})
        assert w.sets() == {"nginx:1.29": 11, "app:bad": 7}

    asyncio.run(scenario())


def test_recreate_removes_every_old_pod_before_the_first_new_one() -> None:
    async def scenario() -> None:
        w = World()
        w.create(3, "nginx:1.29", strategy={"type": "Recreate"})
        await w.settle(lambda: w.status().get("availableReplicas") == 3)
        mark = len(w.changes)
        w.change(lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.30"))
        await w.settle(
            lambda: (
                w.sets() == {"nginx:1.29": 0, "nginx:1.30": 3}
                and w.status().get("availableReplicas") == 3
            )
        )
        pods = [c for c in w.changes[mark:] if c.key == ("", "pods") and c.type in (ADDED, DELETED)]
        kinds = [(c.type, c.obj["spec"]["containers"][0]["image"]) for c in pods]
        assert kinds == [(DELETED, "nginx:1.29")] * 3 + [(ADDED, "nginx:1.30")] * 3

    asyncio.run(scenario())


def test_paused_deployment_scales_but_does_not_roll_until_resumed() -> None:
    async def scenario() -> None:
        w = World()
        w.create(2, "nginx:1.29")
        await w.settle(lambda: w.status().get("availableReplicas") == 2)
        w.change(lambda spec: spec.update(paused=True))
        w.change(lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.30"))
        w.change(lambda spec: spec.update(replicas=4))
        await w.settle(lambda: w.sets() == {"nginx:1.29": 4})
        progressing = next(c for c in w.status()["conditions"] if c["type"] == "Progressing")
        assert (progressing["status"], progressing["reason"]) == ("Unknown", "DeploymentPaused")
        w.change(lambda spec: spec.update(paused=False))
        await w.settle(
            lambda: (
                w.sets() == {"nginx:1.29": 0, "nginx:1.30": 4}
                and w.status().get("availableReplicas") == 4
            )
        )
        progressing = next(c for c in w.status()["conditions"] if c["type"] == "Progressing")
        assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")

    asyncio.run(scenario())


def test_revision_history_limit_deletes_the_oldest_idle_replica_sets() -> None:
    async def scenario() -> None:
        w = World()
        w.create(1, "v1", revisionHistoryLimit=1)
        await w.settle(lambda: w.status().get("availableReplicas") == 1)
        for image in ("v2", "v3", "v4"):
            w.change(
                lambda spec, image=image: spec["template"]["spec"]["containers"][0].update(
                    image=image
                )
            )
            await w.settle(
                lambda image=image: (
                    w.sets().get(image) == 1
                    and w.status().get("updatedReplicas") == 1
                    and w.status().get("replicas") == 1
                )
            )
        assert w.sets() == {"v3": 0, "v4": 1}

    asyncio.run(scenario())
