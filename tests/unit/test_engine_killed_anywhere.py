"""A kill -9 at every write of an `up`, against the fake cluster: the next run converges.

The kill is taken where it lands (before a write reaches the cluster, or once it has, its
answer never read): the state store is what SQLite had committed then (a backup read
through another connection), the cluster what the fake held; the run's own later writes
are dropped, as a killed process makes none. The next `up` (of the same program, or of
the one before: a user who rolls back) must leave nothing pending, no object marked as
the stack's that its state does not record as such, nothing recorded that is absent, each
Patch's fields on its object, and a second `up` that changes nothing.

The integration crash tests kill real processes at random instants; this one visits every
write of a small program, which random instants seldom hit.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Stack, program

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.testing import FakeCluster
from stackwright.model import URN_ANNOTATION
from stackwright.sdk.context import Program
from stackwright.state import open_backend


class Killed(BaseException):
    """The engine's process is gone: nothing after this point happens."""


class KilledCluster(FakeCluster):
    """A fake cluster whose `kill_at`-th write kills the run (`after`: once it landed),
    keeping the state store as committed then (`store`) and the objects as they were."""

    def __init__(self, database: Path) -> None:
        super().__init__()
        self.database = database
        self.kill_at = 0
        self.after = False
        self.writes_seen = 0
        self.killed = False
        self.store: sqlite3.Connection | None = None
        self.left: Any = None

    def _write(self, landed: bool, index: int = 0) -> int:
        if self.killed:
            raise Killed
        if not landed:
            self.writes_seen += 1
            index = self.writes_seen
        if index == self.kill_at and landed == self.after:
            self.killed = True
            self.store = sqlite3.connect(":memory:")
            with sqlite3.connect(self.database) as committed:
                committed.backup(self.store)
            self.left = (dict(self.objects), dict(self.owners))
            raise Killed
        return index

    async def apply(self, desired: Any, **options: Any) -> dict[str, Any]:
        index = self._write(False)
        live = await super().apply(desired, **options)
        self._write(True, index)
        return live

    async def delete(self, *ref: Any, **options: Any) -> dict[str, Any] | None:
        index = self._write(False)
        found = await super().delete(*ref, **options)
        self._write(True, index)
        return found

    async def unmark(self, *ref: Any, **options: Any) -> None:
        index = self._write(False)
        await super().unmark(*ref, **options)
        self._write(True, index)

    async def read(self, *ref: Any) -> dict[str, Any] | None:
        if self.killed:
            raise Killed
        return await super().read(*ref)


def _killed_up(stack: Stack, fake: KilledCluster, declare: Callable[[Program], None]) -> bool:
    """`up` of `declare` killed at `fake.kill_at`; the store and cluster as the kill left
    them. False when the run made fewer writes (nothing killed)."""
    with contextlib.suppress(Killed):
        stack.up(declare)
    if not fake.killed:
        return False
    assert fake.store is not None
    stack.backend.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{fake.database}{suffix}").unlink(missing_ok=True)
    with sqlite3.connect(fake.database) as restored:
        fake.store.backup(restored)
        # The lease of a dead holder lapses (test_engine_interrupted): taken as lapsed.
        restored.execute("UPDATE locks SET operation_id = NULL, expires = NULL")
    stack.backend = open_backend(f"file://{fake.database}")
    fake.objects, fake.owners = fake.left
    fake.killed, fake.kill_at = False, 0
    return True


def passing_on(gen: int) -> Callable[[Program], None]:
    """Even generations: `old` holds ConfigMap `moved`, and `base` (replaced deleting first
    when `gen` changes) holds its own; odd ones pass `moved` on to `new`. A Patch on each."""

    def declare(p: Program) -> None:
        holder = "old" if gen % 2 == 0 else "new"
        moved = k8s.core.v1.ConfigMap(holder, metadata={"name": "moved"}, data={"holder": holder})
        base = k8s.core.v1.ConfigMap(
            "base",
            metadata={"name": "base"},
            data={"gen": str(gen)},
            opts=sw.ResourceOptions(replace_on_changes=["data"], delete_before_replace=True),
        )
        for target, name in ((moved, "moved"), (base, "base")):
            k8s.core.v1.ConfigMapPatch(
                f"{name}-extra",
                metadata={"name": name},
                data={"extra": "1"},
                opts=sw.ResourceOptions(depends_on=[target]),
            )

    return declare


def _check_converged(stack: Stack, declare: Callable[[Program], None], where: str) -> None:
    state = stack.state()
    assert state.pending == [], where
    records = {r.id: r.urn for r in state.resources if not r.type.endswith("Patch") and r.custom}
    marked = {
        f"{key.namespace}/{key.name}": obj["metadata"]["annotations"][URN_ANNOTATION]
        for key, obj in stack.fake.objects.items()
        if URN_ANNOTATION in (obj["metadata"].get("annotations") or {})
    }
    assert marked == records, f"{where}: the cluster's marks and the state differ"
    for name in ("moved", "base"):
        live = stack.fake.find("ConfigMap", name)
        assert live is not None and live["data"].get("extra") == "1", f"{where}: {live}"
    holder = program(declare).resources[0].resource_name
    moved = stack.fake.find("ConfigMap", "moved")
    assert moved is not None and moved["data"]["holder"] == holder, where
    assert stack.up(declare).ok, where
    assert {op for op, _ in stack.started()} == {"same"}, f"{where}: {stack.started()}"


@pytest.mark.parametrize("after", [False, True], ids=["before", "landed"])
@pytest.mark.parametrize("back", [False, True], ids=["same-program", "rolled-back"])
def test_an_up_killed_at_any_write_converges_on_the_next(
    tmp_path: Path, after: bool, back: bool
) -> None:
    kills = 0
    for kill_at in range(1, 50):
        database = tmp_path / f"kill-{kill_at}.db"
        backend = open_backend(f"file://{database}")
        backend.create_stack(PROJECT, STACK)
        fake = KilledCluster(database)
        stack = Stack(backend, fake=fake)
        try:
            assert stack.up(passing_on(0)).ok
            fake.kill_at, fake.after, fake.writes_seen = kill_at, after, 0
            if not _killed_up(stack, fake, passing_on(1)):
                break
            kills += 1
            declare = passing_on(0 if back else 1)
            summary = stack.up(declare)
            where = f"killed {'after' if after else 'before'} write {kill_at}"
            assert summary.ok, f"{where}: {summary.failures}"
            _check_converged(stack, declare, where)
        finally:
            stack.backend.close()
    assert kills >= 4, "the up made fewer writes than its steps"
