"""Saved plans in the engine, against the fake cluster: a preview fills the plan with its
steps; an `up` with it takes only those, refusing a changed state or a program that no
longer matches before any write, and failing, as it begins, a step that an Output makes
differ only during the run."""

from __future__ import annotations

from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import StepDone, StepSkipped
from stackwright.engine.saved_plan import PlanOptions, SavedPlan
from stackwright.errors import StackwrightError
from stackwright.model import Op
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"


def config_maps(colour: str, *, extra: bool = False, late: list[str] | None = None) -> Declare:
    """`colour` (its data), `apart` (fixed), and `late`, which reads `late[0]` as `colour`'s
    Output is applied: a value the run alone sees change."""

    def declare(p: Program) -> None:
        made = k8s.core.v1.ConfigMap("colour", metadata={"name": "colour"}, data={"colour": colour})
        k8s.core.v1.ConfigMap("apart", metadata={"name": "apart"}, data={"k": colour})
        if late is not None:
            value = made.metadata["name"].apply(lambda _: late[0])
            k8s.core.v1.ConfigMap("late", metadata={"name": "late"}, data={"v": value})
        if extra:
            k8s.core.v1.ConfigMap("extra", metadata={"name": "extra"})

    return declare


def previewed(stack: Stack, declare: Declare) -> SavedPlan:
    plan = SavedPlan(PROJECT, STACK, -1, PlanOptions())
    assert stack.preview(declare, save_plan=plan).ok
    return plan


def test_a_preview_records_its_steps_against_the_state_it_planned_from(stack: Stack) -> None:
    stack.up(config_maps("blue"))
    plan = previewed(stack, config_maps("green", extra=True))

    assert plan.state_version == stack.state().version
    assert {urn.rpartition("::")[2]: r.ops for urn, r in plan.resources.items()} == {
        "colour": (Op.UPDATE,),
        "apart": (Op.UPDATE,),
        "extra": (Op.CREATE,),
    }
    assert plan.resources[urn(CM, "colour")].inputs == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "colour"},
        "data": {"colour": "green"},
    }

    stack.fake.calls.clear()
    assert stack.up(config_maps("green", extra=True), plan=plan).ok
    assert sorted(c.name for c in stack.fake.calls_to("apply")) == ["apart", "colour", "extra"]


def test_a_program_that_no_longer_matches_is_refused_before_any_write(stack: Stack) -> None:
    stack.up(config_maps("blue"))
    plan = previewed(stack, config_maps("green"))
    version = stack.state().version
    stack.fake.calls.clear()

    with pytest.raises(StackwrightError) as refused:
        stack.up(config_maps("red", extra=True), plan=plan)
    said = str(refused.value)
    assert 'ConfigMap colour: data.colour differs from the plan: planned "green", now "red"' in said
    assert "ConfigMap extra: the plan has no step for it" in said
    assert not stack.fake.writes()
    assert stack.state().version == version


def test_a_state_changed_since_the_preview_is_refused(stack: Stack) -> None:
    stack.up(config_maps("blue"))
    plan = previewed(stack, config_maps("green"))
    stack.up(config_maps("red"))
    stack.fake.calls.clear()

    with pytest.raises(StackwrightError, match="changed since the plan was made"):
        stack.up(config_maps("green"), plan=plan)
    assert not stack.fake.writes()


def test_a_value_an_output_changes_during_the_run_fails_that_step_alone(stack: Stack) -> None:
    value = ["one"]
    stack.up(config_maps("blue", late=value))
    value[0] = "two"
    plan = previewed(stack, config_maps("green", late=value))
    assert plan.resources[urn(CM, "late")].inputs["data"] == {"v": "two"}  # type: ignore[index]

    value[0] = "three"
    summary = stack.up(config_maps("green", late=value), plan=plan)
    assert not summary.ok
    (failed,) = [e for e in stack.of(StepDone) if not e.ok]
    assert failed.step.urn == urn(CM, "late") and failed.step.op is Op.UPDATE
    assert "violates the plan: data.v differs from the plan" in failed.error
    assert not stack.of(StepSkipped)
    assert stack.recorded(urn(CM, "apart")).inputs["data"] == {"k": "green"}
    assert stack.recorded(urn(CM, "late")).inputs["data"] == {"v": "one"}


def test_a_delete_the_plan_does_not_have_fails_as_it_begins(stack: Stack) -> None:
    both: Any = config_maps("blue", extra=True)
    stack.up(both)
    # Planned with --exclude of `extra`: an up without it would delete `extra`.
    excluded = frozenset({urn(CM, "extra")})
    plan = SavedPlan(PROJECT, STACK, -1, PlanOptions(excludes=tuple(excluded)))
    assert stack.preview(config_maps("blue"), save_plan=plan, excludes=excluded).ok
    assert urn(CM, "extra") not in plan.resources

    with pytest.raises(
        StackwrightError, match="this `up` would delete it, which the plan does not"
    ):
        stack.up(config_maps("blue"), plan=plan)
