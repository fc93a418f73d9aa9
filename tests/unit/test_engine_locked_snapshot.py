"""An operation plans against the state as it is once it holds the stack's lock: the
snapshot read to check its input serves when nothing changed the state since (loading
1,000 resources again cost ~50 ms of every up, refresh and destroy), and a state another
operation changed in between is read again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from engine_stack import PROJECT, STACK, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.model import Op
from stackwright.sdk.context import Program
from stackwright.state import Backend, Operation, Snapshot

CM = "kubernetes:core/v1:ConfigMap"


class Watched:
    """A backend that counts its loads and runs `meanwhile` just before an operation
    takes the lock (another process writing between the input check and the lock)."""

    def __init__(self, backend: Backend, meanwhile: Callable[[], None] | None = None) -> None:
        self._backend = backend
        self.meanwhile = meanwhile
        self.loads = 0

    def load(self, project: str, stack: str) -> Snapshot:
        self.loads += 1
        return self._backend.load(project, stack)

    def begin_operation(self, *args: Any, **kwargs: Any) -> Operation:
        if self.meanwhile is not None:
            self.meanwhile()
        return self._backend.begin_operation(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def settings(mode: str) -> Callable[[Program], None]:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": mode})
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"a": "b"})

    return declare


def test_an_operation_reads_the_state_once_when_nothing_changed_it(stack: Stack) -> None:
    stack.up(settings("fast"))
    watched = Watched(stack.backend)
    stack.backend = watched  # type: ignore[assignment]

    for run in (lambda: stack.up(settings("fast")), stack.refresh, stack.destroy):
        watched.loads = 0
        assert run().ok
        assert watched.loads == 1


def test_a_state_changed_before_the_lock_was_taken_is_read_again(stack: Stack) -> None:
    stack.up(settings("fast"))
    backend = stack.backend

    def another_operation_records_an_edit() -> None:
        recorded = backend.load(PROJECT, STACK).resource(urn(CM, "settings"))
        assert recorded is not None
        edited = replace(recorded, inputs={**recorded.inputs, "data": {"mode": "edited"}})
        with backend.begin_operation(PROJECT, STACK, kind="up") as operation:
            operation.begin(1, Op.UPDATE, edited)
            operation.end(1, edited)
            operation.finish()

    watched = Watched(backend, another_operation_records_an_edit)
    stack.backend = watched  # type: ignore[assignment]

    summary = stack.up(settings("fast"))

    # Planned against the edited record, not the snapshot read before the edit.
    assert summary.ok and summary.counts == {"update": 1, "same": 1}
    assert watched.loads == 2
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast"}
