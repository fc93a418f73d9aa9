"""`stackwright.io/deletion-propagation` through the engine (fake cluster): the policy is
recorded with the resource, so that every delete of its object hands it to the provider —
a resource the program dropped, a destroy, either half of a replacement (with the policy
the program says now), a delete a crash left pending — and a value it does not name is
refused before anything changes.

What the cluster then does with each policy is the integration tests' business
(tests/integration/test_cli_deletion_propagation.py).
"""

from __future__ import annotations

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.model import Op
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"
KEY = "stackwright.io/deletion-propagation"


def config_map(name: str, policy: str | None, *, named: bool = True, value: str = "v") -> Declare:
    """ConfigMap `name` (auto-named unless `named`) annotated with `policy` (None: not)."""

    def declare(p: Program) -> None:
        meta: dict[str, object] = {"name": name} if named else {}
        if policy is not None:
            meta["annotations"] = {KEY: policy}
        k8s.core.v1.ConfigMap(
            name,
            metadata=meta,
            data={"k": value},
            opts=sw.ResourceOptions(replace_on_changes=["data"]),
        )

    return declare


def test_a_removed_resource_is_deleted_with_its_recorded_policy(stack: Stack) -> None:
    def declare(p: Program) -> None:
        config_map("kept-pods", "orphan")(p)
        config_map("waited", "FOREGROUND")(p)  # any case
        config_map("plain", None)(p)

    stack.up(declare)
    assert stack.recorded(urn(CM, "kept-pods")).deletion_propagation == "Orphan"
    assert stack.recorded(urn(CM, "waited")).deletion_propagation == "Foreground"
    assert stack.recorded(urn(CM, "plain")).deletion_propagation is None
    done = stack.up(lambda p: None)
    assert done.ok, done.failures
    assert sorted(stack.fake.delete_propagations) == [
        ("kept-pods", "Orphan"),
        ("plain", None),
        ("waited", "Foreground"),
    ]


def test_a_destroy_deletes_with_the_recorded_policy(stack: Stack) -> None:
    stack.up(config_map("conf", " Orphan "))
    done = stack.destroy()
    assert done.ok, done.failures
    assert stack.fake.delete_propagations == [("conf", "Orphan")]


def test_a_replacement_deletes_with_the_programs_current_policy(stack: Stack) -> None:
    """Adding `orphan` along with the change that replaces the object orphans what the
    old object owns in that same run (Pulumi needs a run that sets it first)."""
    # Named: deleted first; auto-named: deleted after its successor was made.
    for named in (True, False):
        stack.fake.delete_propagations.clear()
        stack.up(config_map("conf", None, named=named, value=f"a{named}"))
        done = stack.up(config_map("conf", "orphan", named=named, value=f"b{named}"))
        assert done.ok and done.counts["replace"] == 1, (done.counts, done.failures)
        assert [policy for _, policy in stack.fake.delete_propagations] == ["Orphan"], named
        stack.destroy()


def test_a_delete_left_pending_is_settled_and_retried_with_the_recorded_policy(
    stack: Stack,
) -> None:
    stack.up(config_map("conf", "foreground"))
    stack.fake.fail_delete["conf"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    assert [(p.op, p.resource.deletion_propagation) for p in stack.state().pending] == [
        (Op.DELETE, "Foreground")
    ]
    stack.fake.fail_delete.clear()
    stack.fake.delete_propagations.clear()
    done = stack.destroy()
    assert done.ok, done.failures
    assert stack.fake.delete_propagations == [("conf", "Foreground")]


def test_a_record_without_the_policy_takes_it_from_the_program_without_a_write(
    stack: Stack,
) -> None:
    """A record an older Stackwright wrote has the annotation in its object but not the
    policy: the next `up` records it (a same step, no API call), so a later destroy uses it."""
    stack.up(config_map("conf", "orphan"))
    record = stack.recorded(urn(CM, "conf"))
    older = {k: v for k, v in record.to_dict().items() if k != "deletionPropagation"}
    document = stack.backend.export("shop", "dev")
    document["resources"] = [older]
    stack.backend.import_("shop", "dev", document)
    assert stack.recorded(urn(CM, "conf")).deletion_propagation is None
    stack.fake.calls.clear()

    again = stack.up(config_map("conf", "orphan"))

    assert again.counts == {"same": 1}
    assert stack.fake.writes() == []
    assert stack.recorded(urn(CM, "conf")).deletion_propagation == "Orphan"


@pytest.mark.parametrize("value", ["cascade", "", "true"])
def test_a_value_it_does_not_name_is_refused_before_anything_changes(
    stack: Stack, value: str
) -> None:
    stack.up(config_map("before", None))
    stack.fake.calls.clear()

    def declare(p: Program) -> None:
        config_map("before", None)(p)
        config_map("bad", value)(p)

    with pytest.raises(UsageError) as refused:
        stack.up(declare)
    message = str(refused.value)
    assert "\n" not in message
    assert "ConfigMap bad" in message, message
    assert "test_engine_deletion_propagation.py:" in message, message
    assert f"{KEY} must be one of orphan | background | foreground, got {value!r}" in message
    assert stack.fake.writes() == []
    assert [r.urn for r in stack.state().resources] == [urn(CM, "before")]


def test_a_replaced_objects_record_keeps_the_policy_its_delete_uses(stack: Stack) -> None:
    """A replacement made first deletes the old object as the program says now; when the
    run does not get to that delete (another step failed), the old object's record says so
    too, so a later destroy, which runs no program, deletes it so."""

    def with_bad(p: Program) -> None:
        config_map("conf", "orphan", named=False, value="b")(p)
        config_map("bad", None)(p)

    stack.up(config_map("conf", None, named=False, value="a"))
    stack.fake.fail_apply["bad"] = "admission webhook denied the request"
    failed = stack.up(with_bad)
    assert not failed.ok
    (old,) = [r for r in stack.state().resources if r.delete_pending]
    assert old.deletion_propagation == "Orphan"
    del stack.fake.fail_apply["bad"]
    stack.fake.delete_propagations.clear()
    assert stack.destroy().ok
    assert (old.inputs["metadata"]["name"], "Orphan") in stack.fake.delete_propagations
