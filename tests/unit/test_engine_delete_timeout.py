"""`custom_timeouts.delete` through the engine (fake cluster): recorded in the state, so
that a delete the program no longer describes (a removed resource, a destroy) still hands
the provider the timeout, and a replacement's delete hands it the program's current one.

Which timeout wins over an object's own `stackwright.io/timeout-seconds` is the
provider's rule (`_deletion_limit`); here only what the engine passes is asserted.
"""

from __future__ import annotations

from typing import Any

from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"


def config_maps(*names: str, delete: Any = None, named: bool = True, value: str = "v") -> Declare:
    """ConfigMaps `names` (auto-named unless `named`), their delete bounded by `delete`."""

    def declare(p: Program) -> None:
        for name in names:
            k8s.core.v1.ConfigMap(
                name,
                metadata={"name": name} if named else {},
                data={"k": value},
                opts=sw.ResourceOptions(
                    custom_timeouts=None if delete is None else sw.CustomTimeouts(delete=delete),
                    replace_on_changes=["data"],
                ),
            )

    return declare


def test_a_removed_resource_is_deleted_with_its_recorded_timeout(stack: Stack) -> None:
    def declare(p: Program) -> None:
        config_maps("slow", delete="5m")(p)
        config_maps("plain")(p)

    stack.up(declare)
    assert stack.recorded(urn(CM, "slow")).delete_timeout == 300.0
    assert stack.recorded(urn(CM, "plain")).delete_timeout is None
    done = stack.up(lambda p: None)
    assert done.ok, done.failures
    assert sorted(stack.fake.delete_timeouts) == [("plain", None), ("slow", 300.0)]


def test_a_destroy_deletes_with_the_recorded_timeout(stack: Stack) -> None:
    stack.up(config_maps("slow", delete=90))
    done = stack.destroy()
    assert done.ok, done.failures
    assert stack.fake.delete_timeouts == [("slow", 90.0)]


def test_a_changed_delete_timeout_alone_is_recorded_without_a_write(stack: Stack) -> None:
    stack.up(config_maps("slow", delete="1m"))
    stack.fake.calls.clear()
    changed = stack.up(config_maps("slow", delete="2m"))
    assert changed.counts == {"same": 1}
    assert stack.fake.writes() == []
    assert stack.recorded(urn(CM, "slow")).delete_timeout == 120.0
    stack.destroy()
    assert stack.fake.delete_timeouts == [("slow", 120.0)]


def test_a_replacement_deletes_with_the_programs_current_timeout(stack: Stack) -> None:
    # Named: deleted first; auto-named: deleted after its successor was made.
    for named in (True, False):
        stack.fake.delete_timeouts.clear()
        stack.up(config_maps("conf", delete="1m", named=named, value=f"a{named}"))
        done = stack.up(config_maps("conf", delete="3m", named=named, value=f"b{named}"))
        assert done.ok and done.counts["replace"] == 1, (done.counts, done.failures)
        assert [timeout for _, timeout in stack.fake.delete_timeouts] == [180.0], named
        stack.destroy()
