"""The saved plan's document (`preview --save-plan`) and its check of a step (`up --plan`),
without a cluster: what is written, what is refused on reading, and which steps and
inputs a plan allows."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stackwright.engine.plan import Step
from stackwright.engine.saved_plan import (
    FORMAT,
    PlannedResource,
    PlanOptions,
    SavedPlan,
    first_difference,
    read,
    write,
)
from stackwright.errors import UsageError
from stackwright.model import UNKNOWN, Op, ResourceState, outermost, transform_at
from stackwright.sdk.output import Partial

URN = "urn:sw:dev::web::kubernetes:core/v1:ConfigMap::app"
OTHER = "urn:sw:dev::web::kubernetes:core/v1:ConfigMap::other"


def _sealing(change: Any) -> Any:
    def at_secrets(state: ResourceState) -> ResourceState:
        inputs = state.inputs
        for path in outermost(state.secret_paths):
            inputs = transform_at(inputs, path, change)
        return replace(state, inputs=inputs)

    return at_secrets


#: Stand-ins for the stack's Encrypter: reversible, and never the plain text.
seal = _sealing(lambda value: {"@secret": json.dumps(value)[::-1]})
unseal = _sealing(lambda value: json.loads(value["@secret"][::-1]))


def state(inputs: dict[str, Any], secret_paths: tuple[str, ...] = ()) -> ResourceState:
    return ResourceState(urn=URN, type="kubernetes:core/v1:ConfigMap", inputs=inputs,
                         secret_paths=secret_paths)  # fmt: skip


def a_plan(*steps: Step) -> SavedPlan:
    plan = SavedPlan("web", "dev", 7, PlanOptions(targets=(URN,), refresh=True))
    for step in steps:
        plan.record(step)
    return plan


INPUTS = {"data": {"colour": "green", "uid": UNKNOWN, "password": "hunter2-long"}}


def test_the_document_seals_secrets_writes_unknowns_and_reads_back(tmp_path: Path) -> None:
    plan = a_plan(Step(Op.UPDATE, URN, None, state(INPUTS, ("data.password",))),
                  Step(Op.DELETE, OTHER, state({}), None))  # fmt: skip
    path = tmp_path / "plan.json"
    write(path, plan, seal=seal)

    text = path.read_text()
    assert "hunter2-long" not in text
    document = json.loads(text)
    assert (document["stackwrightPlan"], document["project"], document["stack"]) == (
        FORMAT, "web", "dev",
    )  # fmt: skip
    assert document["stateVersion"] == 7
    assert document["options"]["targets"] == [URN] and document["options"]["refresh"] is True
    app, other = document["resources"]
    assert app["ops"] == ["update"] and app["secretPaths"] == ["data.password"]
    assert app["inputs"]["data"]["uid"] == {"@unknown": True}
    assert set(app["inputs"]["data"]["password"]) == {"@secret"}
    assert other == {"urn": OTHER, "ops": ["delete"]}

    again = read(path, project="web", stack="dev", unseal=unseal)
    assert again == plan
    assert again.resources[URN].inputs == INPUTS


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (None, "--plan {path}: no such file; make one with `stackwright preview --save-plan"),
        ("[1, 2", "is not a plan written by `stackwright preview --save-plan` (not JSON"),
        ('{"version": 2}', "it is not a plan written by `stackwright preview --save-plan`"),
        ('{"stackwrightPlan": 2}', "it has format 2, newer than this Stackwright reads (1)"),
        ('{"stackwrightPlan": "1"}', "its 'stackwrightPlan' must be a format number"),
        ('{"stackwrightPlan": 1, "project": "api", "stack": "dev"}',
         "it was made for project 'api', not 'web'"),
        ('{"stackwrightPlan": 1, "project": "web", "stack": "prod"}',
         "it was made for stack 'prod', not 'dev'"),
        ('{"stackwrightPlan": 1, "project": "web", "stack": "dev", "stateVersion": 1,'
         ' "resources": [{"urn": "u", "ops": ["explode"]}]}',
         "its resources[0].ops holds an unknown operation"),
        ('{"stackwrightPlan": 1, "project": "web", "stack": "dev", "stateVersion": 1,'
         ' "options": {"refresh": "yes"}, "resources": []}',
         "its options.refresh must be true or false"),
        ('{"stackwrightPlan": 1, "project": "web", "stack": "dev", "stateVersion": 1,'
         ' "options": {"forceConflicts": 1}, "resources": []}',
         "its options.forceConflicts must be true or false"),
        ('{"stackwrightPlan": 1, "project": "web", "stack": "dev", "stateVersion": 1,'
         ' "options": {"policyPacks": ["mine"]}, "resources": []}',
         "its options.policyPacks must map each pack's name to its level"),
    ],
)  # fmt: skip
def test_a_document_that_cannot_be_applied_is_one_line(
    tmp_path: Path, text: str | None, said: str
) -> None:
    path = tmp_path / "plan.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(UsageError) as refused:
        read(path, project="web", stack="dev", unseal=unseal)
    message = str(refused.value)
    assert said.format(path=path) in message
    assert "\n" not in message and message.startswith(f"--plan {path}")


def test_a_step_must_be_one_the_plan_has_for_its_resource() -> None:
    old = state({"data": {"colour": "blue"}})
    plan = a_plan(Step(Op.UPDATE, URN, old, state({"data": {"colour": "green"}})))
    assert plan.violation(Step(Op.UPDATE, URN, old, state({"data": {"colour": "green"}}))) is None
    assert plan.violation(Step(Op.REPLACE, URN, old, state({"data": {"colour": "green"}}))) == (
        "the plan would update it, and this `up` would replace it"
    )
    assert plan.violation(Step(Op.SAME, URN, old, old)) == (
        "the plan would update it, and this `up` would keep it unchanged"
    )
    assert plan.violation(Step(Op.CREATE, OTHER, None, state({}))) == (
        "the plan has no step for it, and this `up` would create it"
    )
    # A `same` in the plan that would now change.
    kept = a_plan(Step(Op.SAME, URN, old, old))
    assert "the plan would keep it unchanged, and this `up` would update it" in str(
        kept.violation(Step(Op.UPDATE, URN, old, state({"data": {"colour": "red"}})))
    )


def test_a_replacement_deletes_its_old_object_as_a_step_of_its_own() -> None:
    old = state({"data": {"colour": "blue"}})
    plan = a_plan(Step(Op.REPLACE, URN, old, state({"data": {"colour": "green"}})))
    assert plan.violation(Step(Op.DELETE_REPLACED, URN, old, None)) is None
    assert plan.violation(Step(Op.DELETE, URN, old, None)) is not None


def test_the_first_input_that_differs_is_named_and_a_secret_masked() -> None:
    plan = a_plan(Step(Op.CREATE, URN, None, state(INPUTS, ("data.password",))))
    now = {"data": {"colour": "red", "uid": "1234", "password": "hunter2-long"}}
    assert plan.violation(Step(Op.CREATE, URN, None, state(now))) == (
        'data.colour differs from the plan: planned "green", now "red"'
    )
    # What the plan did not know may be anything; a secret is compared, never shown.
    now = {"data": {"colour": "green", "uid": {"any": ["thing"]}, "password": "other-long"}}
    said = plan.violation(Step(Op.CREATE, URN, None, state(now, ("data.password",))))
    assert said == "data.password differs from the plan: planned [secret], now [secret]"
    now = {"data": {"colour": "green", "uid": "x", "password": "hunter2-long"}}
    assert plan.violation(Step(Op.CREATE, URN, None, state(now))) is None


@pytest.mark.parametrize(
    ("planned", "actual", "found"),
    [
        ({"a": 1}, {"a": 1}, None),
        ({"a": 2}, {"a": 2.0}, None),  # one JSON number
        ({"a": 1}, {"a": True}, ("a", 1, True)),
        ({"a": 1}, {}, ("a", 1, None)),
        ({}, {"b": 1}, ("b", None, 1)),
        ({"a": [1, 2]}, {"a": [1, 3]}, ("a[1]", 2, 3)),
        ({"a": [1]}, {"a": [1, 2]}, ("a", [1], [1, 2])),
        ({"a": UNKNOWN}, {"a": {"deep": [1]}}, None),
        ({"a": [UNKNOWN, "x"]}, {"a": ["y", "x"]}, None),
        ({"a": {"b": "c"}}, {"a": "c"}, ("a", {"b": "c"}, "c")),
    ],
)
def test_first_difference(planned: Any, actual: Any, found: Any) -> None:
    assert first_difference(planned, actual) == found


def test_options_given_again_or_not_at_all_and_the_first_that_differs() -> None:
    planned = PlanOptions(targets=(URN,))
    assert PlanOptions(refresh=True).differing(planned) == "--refresh"  # the one given first
    assert PlanOptions(targets=(OTHER,)).differing(planned) == "--target"
    assert planned.differing(planned) is None
    assert planned.said() == f"--target {URN}"
    assert PlanOptions().said() == "none"
    assert PlanOptions.from_dict(planned.to_dict()) == planned


def test_the_rules_a_plan_was_previewed_under_are_kept_and_compared(tmp_path: Path) -> None:
    plan = a_plan()
    plan.force_conflicts, plan.policy_packs = True, {"mine": "advisory"}
    write(tmp_path / "plan.json", plan, seal=seal)
    again = read(tmp_path / "plan.json", project="web", stack="dev", unseal=unseal)
    assert (again.force_conflicts, again.policy_packs) == (True, {"mine": "advisory"})

    assert plan.run_difference(True, {"mine": "advisory"}) is None
    assert plan.run_difference(False, {"mine": "advisory"}) == (
        "the plan was made with --force-conflicts, and this `up` runs without it"
    )
    assert plan.run_difference(True, {"mine": "mandatory"}) == (
        "policy pack mine was run at level advisory when the plan was made, and this `up` "
        "runs it at level mandatory"
    )
    assert plan.run_difference(True, {}) == (
        "policy pack mine was run at level advisory when the plan was made, and this `up` "
        "does not run it"
    )
    assert plan.run_difference(True, {"mine": "advisory", "yours": "mandatory"}) == (
        "policy pack yours was not run when the plan was made, and this `up` runs it at "
        "level mandatory"
    )


def test_a_planned_delete_keeps_no_inputs() -> None:
    plan = a_plan(Step(Op.DELETE_REPLACED, URN, state({}), None),
                  Step(Op.REPLACE, URN, state({}), state({"data": {}})))  # fmt: skip
    assert plan.resources[URN] == PlannedResource(URN, (Op.DELETE_REPLACED, Op.REPLACE),
                                                  {"data": {}}, ())  # fmt: skip


def test_a_partly_known_object_is_planned_unknown() -> None:
    """Another resource's object passed whole, partly known at preview: what it lacks is
    unknown, not absent, so the plan takes it as unknown altogether."""
    partial = Partial({"metadata": {"name": "a"}})
    plan = a_plan(Step(Op.CREATE, URN, None, state({"data": {"copy": partial}})))
    assert plan.resources[URN].inputs == {"data": {"copy": UNKNOWN}}
    now = {"data": {"copy": {"metadata": {"name": "a", "uid": "1"}}}}
    assert plan.violation(Step(Op.CREATE, URN, None, state(now))) is None
