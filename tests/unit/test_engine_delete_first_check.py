"""The check a delete-first replacement makes before it deletes: a dry run over the old
object, whose refusal of the fields that force the replacement is no verdict on the new one.
The plan hands those fields over as paths, which a key holding ": " does not cut short."""

from __future__ import annotations

from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import StepStarted
from stackwright.model import Op
from stackwright.providers.kubernetes.errors import ApplyRejected, Cause
from stackwright.sdk.context import Program
from stackwright.sdk.resource import ResourceOptions

KEY = "route: main"  # a key holding ": ", as a custom resource's map may have
FORCING = f'data["{KEY}"]'


def routes(value: str, other: str = "1") -> Declare:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "routes",
            metadata={"name": "routes"},
            data={KEY: value, "other": other},
            opts=ResourceOptions(replace_on_changes=[FORCING]),
        )

    return declare


def refusing(field: str) -> ApplyRejected:
    """An admission policy's refusal of a change to `field`, worded its own way, the key bare
    in brackets as the server writes it."""
    cause = Cause(field, "FieldValueInvalid", 'Invalid value: "b": no changes allowed')
    return ApplyRejected('ConfigMap "routes" is invalid: [...]', causes=(cause,), status=422)


def test_a_refusal_of_the_forcing_field_whose_key_holds_a_colon_is_no_verdict(
    stack: Stack,
) -> None:
    assert stack.up(routes("a")).ok
    stack.fake.fail_preview["routes"] = refusing(f"data[{KEY}]")

    summary = stack.up(routes("b"))

    assert summary.ok and summary.counts == {"replace": 1}, summary
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.op is Op.REPLACE]
    assert step.delete_before_replace and step.forcing == (FORCING,)
    assert stack.recorded(urn("kubernetes:core/v1:ConfigMap", "routes")).inputs["data"][KEY] == "b"


def test_a_refusal_of_another_field_keeps_the_old_object(stack: Stack) -> None:
    assert stack.up(routes("a")).ok
    stack.fake.fail_preview["routes"] = refusing("data[other]")

    summary = stack.up(routes("b", other="2"))

    assert not summary.ok and summary.counts == {}, summary
    (failure,) = summary.failures
    assert "data[other]" in failure and "left as it is" in failure, failure
    assert stack.fake.calls_to("delete") == []
