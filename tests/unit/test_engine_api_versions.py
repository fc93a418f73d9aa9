"""A kind's new apiVersion is the same object moved to a new type (Pulumi's built-in
aliases between versions), not a create beside a delete; a real replacement stays one."""

from __future__ import annotations

from typing import Any

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.engine.plan import FieldChange
from stackwright.errors import UsageError
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ResourceOptions


def db_type(api_version: str, kind: str = "Database") -> str:
    return f"kubernetes:{api_version}:{kind}"


def database(
    api_version: str,
    *,
    kind: str = "Database",
    logical: str = "db",
    size: str = "1Gi",
    namespace: str = "default",
    **opts: Any,
) -> Declare:
    def declare(p: Program) -> None:
        k8s.apiextensions.CustomResource(
            logical,
            api_version=api_version,
            kind=kind,
            metadata={"name": "db", "namespace": namespace},
            spec={"size": size},
            opts=ResourceOptions(**opts),
        )

    return declare


def later(value: str) -> Any:
    """`value` as an Output, which the program's run does not see through."""
    return Output.from_input(value)


def served(stack: Stack, *kinds: tuple[str, str]) -> Stack:
    for group_kind in kinds or [("acme.io", "Database")]:
        stack.fake.served[group_kind] = True
    return stack


def test_a_new_api_version_moves_the_record_to_the_new_type_without_a_replacement(
    stack: Stack,
) -> None:
    served(stack).up(database("acme.io/v1beta1"))
    before, after = urn(db_type("acme.io/v1beta1"), "db"), urn(db_type("acme.io/v1"), "db")
    stack.fake.calls.clear()

    preview = stack.preview(database("acme.io/v1"))

    assert preview.ok and preview.counts == {"update": 1}
    assert stack.fake.writes() == []
    assert stack.changes(after) == [FieldChange("apiVersion", "acme.io/v1beta1", "acme.io/v1")]
    moved = f"renamed from {before} (apiVersion acme.io/v1beta1 → acme.io/v1, same object)"
    assert f"{moved}: no replacement" in [d.message for d in stack.of(Diagnostic)]
    assert stack.recorded(before), "a preview moved the record"

    summary = stack.up(database("acme.io/v1"))

    assert summary.ok and summary.counts == {"update": 1}
    assert [c.method for c in stack.fake.calls_to("apply", "delete")] == ["apply"]
    assert [r.urn for r in stack.state().resources] == [after]
    assert stack.recorded(after).inputs["apiVersion"] == "acme.io/v1"
    assert stack.up(database("acme.io/v1")).counts == {"same": 1}


def test_a_built_in_kind_moving_to_its_stable_version_is_the_same_object(stack: Stack) -> None:
    def hpa(version: str) -> Declare:
        def declare(p: Program) -> None:
            module = getattr(k8s.autoscaling, version)
            module.HorizontalPodAutoscaler(
                "web",
                metadata={"name": "web"},
                spec={
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                    },
                    "minReplicas": 1,
                    "maxReplicas": 3,
                },
            )

        return declare

    stack.up(hpa("v1"))
    stack.fake.calls.clear()

    summary = stack.up(hpa("v2"))

    assert summary.ok and summary.counts == {"update": 1}
    assert stack.fake.calls_to("delete") == []
    hpa_v2 = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
    assert [r.urn for r in stack.state().resources] == [urn(hpa_v2, "web")]


def test_a_protected_resource_moving_to_a_new_version_is_not_refused_as_a_delete(
    stack: Stack,
) -> None:
    # `up` refuses before any change a run that would delete a protected resource; a new
    # apiVersion of the same object deletes nothing.
    served(stack).up(database("acme.io/v1beta1", protect=True))

    summary = stack.up(database("acme.io/v1", protect=True))

    assert summary.ok and summary.counts == {"update": 1}
    assert stack.fake.calls_to("delete") == []
    assert [r.urn for r in stack.state().resources] == [urn(db_type("acme.io/v1"), "db")]
    assert stack.recorded(urn(db_type("acme.io/v1"), "db")).protect


def test_a_protected_resource_of_another_group_is_still_refused(stack: Stack) -> None:
    served(stack, ("acme.io", "Database"), ("other.io", "Database"))
    stack.up(database("acme.io/v1beta1", protect=True))

    with pytest.raises(UsageError, match=r"up refused: .*acme\.io/v1beta1:Database::db"):
        stack.up(database("other.io/v1"))

    assert [r.urn for r in stack.state().resources] == [urn(db_type("acme.io/v1beta1"), "db")]


@pytest.mark.parametrize(
    "changed",
    [
        database("acme.io/v1", kind="Cache"),
        database("other.io/v1"),
        database("acme.io/v1", namespace="elsewhere"),
    ],
    ids=["kind", "group", "namespace"],
)
def test_another_kind_group_or_namespace_is_still_a_create_and_a_delete(
    stack: Stack, changed: Declare
) -> None:
    served(stack, ("acme.io", "Database"), ("acme.io", "Cache"), ("other.io", "Database"))
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}})
    stack.up(database("acme.io/v1beta1"))

    summary = stack.up(changed)

    assert summary.ok and summary.counts == {"create": 1, "delete": 1}
    assert stack.of(Diagnostic) == []


def test_two_resources_cannot_claim_one_old_record(stack: Stack) -> None:
    served(stack).up(database("acme.io/v1beta1"))

    def two(p: Program) -> None:
        database("acme.io/v1")(p)
        # A namespace known only once applied: two static names of one object are refused
        # before anything runs (test_engine_one_object_each.py).
        database("acme.io/v2", namespace=later("default"))(p)

    summary = stack.up(two)

    # Neither takes the old record; the second, naming the first's object, fails its step
    # (and the old record's delete is not started after it: counted as skipped).
    assert summary.counts == {"create": 1, "skipped": 1}
    (failure,) = summary.failures
    assert "is the object" in failure and "creates too" in failure, failure
    assert not any("same object" in d.message for d in stack.of(Diagnostic))


def test_an_explicit_alias_wins_over_the_version_match(stack: Stack) -> None:
    served(stack).up(database("acme.io/v1beta1"))
    before = urn(db_type("acme.io/v1beta1"), "db")

    def program(p: Program) -> None:
        database("acme.io/v1", logical="primary", aliases=[before])(p)
        database("acme.io/v2", size="2Gi", namespace=later("default"))(p)

    summary = stack.up(program)

    # The other, naming the object primary keeps, fails its step (it used to apply over it).
    assert summary.counts == {"update": 1}
    (failure,) = summary.failures
    assert "is the object" in failure and "primary holds" in failure, failure
    assert stack.recorded(urn(db_type("acme.io/v1"), "primary")).id == "default/db"
    messages = [d.message for d in stack.of(Diagnostic)]
    assert f"renamed from {before} (alias): no replacement" in messages
    assert not any("same object" in m for m in messages)


def test_a_namespace_known_only_once_applied_may_be_the_same_object(stack: Stack) -> None:
    def declare(api_version: str) -> Declare:
        def program(p: Program) -> None:
            ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
            k8s.apiextensions.CustomResource(
                "db",
                api_version=api_version,
                kind="Database",
                metadata={"name": "db", "namespace": ns.metadata["name"]},
            )

        return program

    served(stack).up(declare("acme.io/v1beta1"))

    summary = stack.up(declare("acme.io/v1"))

    assert summary.ok and summary.counts == {"same": 1, "update": 1}
    assert stack.recorded(urn(db_type("acme.io/v1"), "db")).id == "apps/db"


def test_a_record_an_explicit_alias_names_is_no_other_resources_former_version(
    stack: Stack,
) -> None:
    served(stack).up(database("acme.io/v1beta1"))
    before = urn(db_type("acme.io/v1beta1"), "db")

    def main(p: Program) -> None:
        k8s.apiextensions.CustomResource(
            "main",
            api_version="acme.io/v1",
            kind="Database",
            metadata={"name": "main"},
            opts=ResourceOptions(aliases=[before]),
        )

    stack.up(lambda p: (database("acme.io/v1beta1")(p), main(p)))
    assert stack.recorded(before)  # `main` was recorded already: its alias did nothing

    summary = stack.up(lambda p: (database("acme.io/v1")(p), main(p)))

    assert summary.counts == {"create": 1, "delete": 1, "same": 1}
    assert not any("same object" in d.message for d in stack.of(Diagnostic))
