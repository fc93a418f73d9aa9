"""The engine's test harness: one stack in a real SQLite store, deployed to the fake cluster.

Scenarios run real programs through `operations.run` against
`stackwright.engine.testing.FakeCluster`, then assert the steps (events), what the
cluster was asked to do (the fake's calls) and what the state recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from stackwright.engine import operations
from stackwright.engine.events import Event, Listener, StepStarted, Summary
from stackwright.engine.execute import Options
from stackwright.engine.plan import FieldChange
from stackwright.engine.testing import FakeCluster
from stackwright.model import ResourceState, make_urn
from stackwright.sdk.context import Program, running
from stackwright.state import Backend, Snapshot, open_backend

PROJECT, STACK = "shop", "dev"

Declare = Callable[[Program], None]


def urn(type_: str, name: str) -> str:
    return make_urn(STACK, PROJECT, type_, name)


def program(declare: Declare) -> Program:
    declared = Program(project=PROJECT, stack=STACK)
    with running(declared):
        declare(declared)
    return declared


@dataclass
class Stack:
    """One stack in a real SQLite store, deployed to a fake cluster."""

    backend: Backend
    fake: FakeCluster = field(default_factory=FakeCluster)
    factory: Any = None
    events: list[Event] = field(default_factory=list)

    def run(
        self,
        kind: str,
        declare: Declare | None,
        listener: Listener | None = None,
        **options: Any,
    ) -> Summary:
        """Run `kind` (events go to `listener`, else to `events`)."""
        self.events = []
        return operations.run(
            self.backend,
            project=PROJECT,
            stack=STACK,
            options=Options(kind, **options),
            program=program(declare) if declare is not None else None,
            providers=self.factory or self.fake.factory(),
            listener=listener or self.events.append,
        )

    def up(self, declare: Declare, **options: Any) -> Summary:
        return self.run("up", declare, **options)

    def preview(self, declare: Declare, **options: Any) -> Summary:
        return self.run("up", declare, dry_run=True, **options)

    def destroy(self, **options: Any) -> Summary:
        return self.run("destroy", None, **options)

    def refresh(self) -> Summary:
        return self.run("refresh", None)

    def state(self) -> Snapshot:
        return self.backend.load(PROJECT, STACK)

    def recorded(self, urn_: str) -> ResourceState:
        found = self.state().resource(urn_)
        assert found is not None, f"{urn_} is not in the state"
        return found

    def started(self) -> list[tuple[str, str]]:
        """(op, resource name) of each step started, in event order."""
        return [
            (e.step.op.value, e.step.urn.rpartition("::")[2])
            for e in self.events
            if isinstance(e, StepStarted)
        ]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def changes(self, urn_: str) -> list[FieldChange]:
        (step,) = [e.step for e in self.of(StepStarted) if e.step.urn == urn_]
        return list(step.changes)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    try:
        yield Stack(backend)
    finally:
        backend.close()
