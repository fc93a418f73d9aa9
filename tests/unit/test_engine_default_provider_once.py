"""An operation makes the stack's default provider once: the one `check_clusters` made to
ask the cluster's identity serves the run, with its connection and event loop (a second
provider, TLS connection and loop were ~5 ms of every `up` and `preview`). Whoever takes
it closes it; one no run took is closed as the operation ends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Stack
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.ports import Provider
from stackwright.errors import StackLocked
from stackwright.sdk.context import Program


def settings(p: Program) -> None:
    k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": "fast"})


def counted(stack: Stack) -> list[Mapping[str, Any] | None]:
    """The settings of each provider the operation's factory makes, from now on."""
    made: list[Mapping[str, Any] | None] = []
    fake = stack.fake.factory()

    def factory(chosen: Mapping[str, Any] | None) -> Provider:
        made.append(chosen)
        return fake(chosen)

    stack.factory = factory
    return made


@pytest.mark.parametrize("kind", ["up", "preview", "destroy"])
def test_an_operation_makes_the_default_provider_once_and_closes_it(
    stack: Stack, kind: str
) -> None:
    stack.up(settings)  # `destroy` has an object to delete; `up`, `preview` one to update
    made = counted(stack)
    closed = stack.fake.closed

    if kind == "destroy":
        summary = stack.destroy()
    else:
        change = lambda p: k8s.core.v1.ConfigMap(  # noqa: E731
            "settings", metadata={"name": "settings"}, data={"mode": "slow"}
        )
        summary = stack.up(change) if kind == "up" else stack.preview(change)

    assert summary.ok, summary.failures
    assert summary.counts == ({"delete": 1} if kind == "destroy" else {"update": 1})
    assert made == [None]
    assert stack.fake.closed == closed + 1


def test_the_default_provider_no_run_took_is_closed(stack: Stack) -> None:
    stack.up(settings)
    made = counted(stack)
    closed = stack.fake.closed

    # Another operation holds the lock: the check of the clusters has made the provider,
    # the run never starts.
    with stack.backend.begin_operation(PROJECT, STACK, kind="up"), pytest.raises(StackLocked):
        stack.up(settings)

    assert made == [None]
    assert stack.fake.closed == closed + 1
