"""What a refusal names besides the fields that cannot change once set: what decides whether a
delete-first replacement goes ahead (the dry run over the old object refuses those fields)."""

from __future__ import annotations

from stackwright.errors import InputsRejected
from stackwright.providers.kubernetes.errors import ApplyRejected, Cause

SELECTOR = Cause(
    "spec.selector",
    "FieldValueInvalid",
    'Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
)
STATEFULSET = Cause(
    "spec",
    "FieldValueForbidden",
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden",
)
REPLICAS = Cause(
    "spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"
)


def refused(*causes: Cause) -> ApplyRejected:
    return ApplyRejected('Deployment.apps "api" is invalid: [...]', causes=causes, status=422)


def test_only_fields_that_cannot_change_are_no_refusal_of_a_new_object() -> None:
    assert refused(SELECTOR).beyond_immutable() is None
    assert refused(STATEFULSET, SELECTOR).beyond_immutable() is None


def test_anything_else_is_said_alone() -> None:
    assert refused(SELECTOR, REPLICAS).beyond_immutable() == (
        'Deployment.apps "api" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    )


def test_a_refusal_without_causes_is_no_verdict() -> None:
    assert refused().beyond_immutable() is None
    assert InputsRejected("the server said no").beyond_immutable() is None
