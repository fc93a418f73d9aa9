"""An object another stack is making, or left making, is that stack's before it records it.

`manager_of` read only another stack's recorded resources: an object whose create step
that stack had journaled but not ended (under way, or left pending by a crash that its
next operation settles as its own) looked free, and this stack imported it, so both
stacks recorded it. Scenarios against the fake cluster and one real SQLite store.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_stack import PROJECT, Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine import operations
from stackwright.engine.events import Summary
from stackwright.engine.execute import Options
from stackwright.model import STACK_ANNOTATION, URN_ANNOTATION, Op, ResourceState, make_urn
from stackwright.sdk.context import Program, running
from stackwright.state import Operation

CM = "kubernetes:core/v1:ConfigMap"
OTHER = "prod"
THEIRS = make_urn(OTHER, PROJECT, CM, "settings")
RELEASE = f"remove it from that stack first (`stackwright state delete {THEIRS} --stack prod` "
RECORDED = f"stack prod of project shop manages it as {THEIRS}; {RELEASE}"


def settings(*, adopt: bool) -> Callable[[Program], None]:
    def declare(p: Program) -> None:
        opts = sw.ResourceOptions(import_="default/settings") if adopt else None
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"}, opts=opts)

    return declare


def run_other(stack: Stack, kind: str, declare: Callable[[Program], None] | None) -> Summary:
    """Run `kind` on stack prod of the same project, store and cluster."""
    program = None
    if declare is not None:
        program = Program(project=PROJECT, stack=OTHER)
        with running(program):
            declare(program)
    return operations.run(
        stack.backend,
        project=PROJECT,
        stack=OTHER,
        options=Options(kind),
        program=program,
        providers=stack.fake.factory(),
        listener=lambda event: None,
    )


def refused(stack: Stack, *, adopt: bool) -> str:
    """Why this stack's `up` adopting (or creating over) the object fails; it changes nothing."""
    summary = stack.up(settings(adopt=adopt))
    assert not summary.ok
    (failure,) = summary.failures
    assert stack.state().resources == [] and stack.state().pending == []
    assert [c for c in stack.fake.calls_to("apply", "delete") if c.name == "settings"] == []
    return failure


@pytest.fixture
def other(stack: Stack) -> Stack:
    stack.backend.create_stack(PROJECT, OTHER)
    return stack


def test_an_object_whose_create_a_lost_answer_left_pending_is_not_adopted(other: Stack) -> None:
    stack = other
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not run_other(stack, "up", settings(adopt=False)).ok
    assert [p.op for p in stack.backend.load(PROJECT, OTHER).pending] == [Op.CREATE]
    assert stack.fake.names("ConfigMap") == ["default/settings"]  # it landed, marked as prod's
    stack.fake.lose_reply.clear()
    stack.fake.calls.clear()

    pending = (
        f"stack prod of project shop manages it as {THEIRS}: a step of an earlier operation "
        "on it is still pending (interrupted, or its answer lost); run `stackwright refresh "
        f"--stack prod` there to settle it, then {RELEASE}"
    )
    assert f"cannot import default/settings: {pending}" in refused(stack, adopt=True)
    assert f"ConfigMap default/settings already exists: {pending}" in refused(stack, adopt=False)

    # Settled, the object is recorded by prod: refused as any recorded object is.
    assert run_other(stack, "refresh", None).ok
    assert [r.urn for r in stack.backend.load(PROJECT, OTHER).resources] == [THEIRS]
    assert f"cannot import default/settings: {RECORDED}" in refused(stack, adopt=True)


def begin_create(stack: Stack) -> tuple[Operation, ResourceState]:
    """Prod's `up` under way (this process), its create journaled and its object made."""
    operation = stack.backend.begin_operation(PROJECT, OTHER, kind="up")
    marked = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "settings",
            "namespace": "default",
            "labels": {"app.kubernetes.io/managed-by": "stackwright"},
            "annotations": {STACK_ANNOTATION: OTHER, URN_ANNOTATION: THEIRS},
        },
        "data": {"a": "1"},
    }
    state = ResourceState(urn=THEIRS, type=CM, id="default/settings", inputs=marked)
    operation.begin(1, Op.CREATE, state)
    stack.fake.put(marked)
    stack.fake.calls.clear()
    return operation, state


def refused_while_under_way(stack: Stack) -> None:
    failure = refused(stack, adopt=True)
    assert (
        f"cannot import default/settings: stack prod of project shop manages it as {THEIRS}: "
        "an `up` started"
    ) in failure, failure
    assert f"has a step on it under way; wait for that operation to end, then {RELEASE}" in failure


def test_an_object_another_stack_is_creating_stays_its_own_once_recorded(other: Stack) -> None:
    stack = other
    operation, state = begin_create(stack)
    try:
        refused_while_under_way(stack)
        operation.end(1, state)
    finally:
        operation.finish()

    assert f"cannot import default/settings: {RECORDED}" in refused(stack, adopt=True)


def test_an_object_whose_create_failed_is_free_to_adopt_again(other: Stack) -> None:
    stack = other
    operation, _ = begin_create(stack)
    try:
        refused_while_under_way(stack)
        operation.fail_step(1)  # the step is gone from the journal: prod never made it
    finally:
        operation.finish("failed")

    summary = stack.up(settings(adopt=True))

    assert summary.ok, summary.failures
    assert [r.id for r in stack.state().resources] == ["default/settings"]
