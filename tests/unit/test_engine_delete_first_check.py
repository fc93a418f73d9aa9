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


def stateful(storage: str, replicas: int) -> Declare:
    def declare(p: Program) -> None:
        labels = {"app": "db"}
        k8s.apps.v1.StatefulSet(
            "db",
            metadata={"name": "db"},
            spec={
                "replicas": replicas,
                "serviceName": "db",
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": storage}},
                        },
                    }
                ],
            },
        )

    return declare


def test_a_refusal_of_a_field_the_spec_rule_lets_change_keeps_the_old_object(
    stack: Stack,
) -> None:
    """A StatefulSet's spec cannot change except its replicas, template, …: a new claim
    template forces the replacement, and the server's refusal of `replicas: -1` (which may
    change, so forces nothing) is a verdict on the new object, not one of the forcing field
    (which used to be all of `spec`, taking every refusal under it for one)."""
    assert stack.up(stateful("1Gi", 1)).ok
    forbidden = Cause(
        "spec",
        "FieldValueForbidden",
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
        "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
        "'minReadySeconds' are forbidden",
    )
    replicas = Cause(
        "spec.replicas",
        "FieldValueInvalid",
        "Invalid value: -1: must be greater than or equal to 0",
    )
    stack.fake.fail_preview["db"] = ApplyRejected(
        'StatefulSet.apps "db" is invalid: [...]', causes=(forbidden, replicas), status=422
    )

    summary = stack.up(stateful("2Gi", -1))

    assert not summary.ok and summary.counts == {}, summary
    (failure,) = summary.failures
    assert "spec.replicas: Invalid value: -1" in failure and "left as it is" in failure, failure
    assert stack.fake.calls_to("delete") == []
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.op is Op.REPLACE]
    assert step.forcing == ("spec.volumeClaimTemplates[0].spec.resources.requests.storage",)
