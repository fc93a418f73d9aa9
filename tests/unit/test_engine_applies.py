"""Apply callbacks whose results nothing uses run as Pulumi runs them: once their inputs are
known (after everything is applied in `up`; in `preview` only if known), and one that raises
fails the run naming its line; a callback runs once per value in one command, though the
policy check, the preview and the apply each resolve it (against the fake cluster, as
test_engine_lifecycle)."""

from __future__ import annotations

import sys
from typing import Any

from engine_stack import PROJECT, STACK, Stack, program, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine import operations
from stackwright.engine.events import Summary
from stackwright.engine.execute import Options
from stackwright.engine.policy_gate import PolicyGate
from stackwright.policy import select_packs
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"


def service(p: Program) -> k8s.core.v1.Service:
    return k8s.core.v1.Service("web", metadata={"name": "web"}, spec={"ports": [{"port": 80}]})


def test_an_unused_apply_runs_once_in_up_with_the_applied_value(stack: Stack) -> None:
    ips: list[Any] = []
    chained: list[Any] = []

    def declare(p: Program) -> None:
        ip = service(p).spec["clusterIP"].apply(lambda value: ips.append(value) or value)
        ip.apply(chained.append)  # consumes `ip`, which still runs once

    summary = stack.up(declare)

    live_ip = stack.fake.find("Service", "web")["spec"]["clusterIP"]  # type: ignore[index]
    assert summary.ok
    assert ips == [live_ip]
    assert chained == [live_ip]


def test_a_preview_runs_an_unused_apply_only_once_its_inputs_are_known(stack: Stack) -> None:
    names: list[Any] = []
    ips: list[Any] = []

    def declare(p: Program) -> None:
        web = service(p)
        web.metadata["name"].apply(names.append)  # given in the program: known
        web.spec["clusterIP"].apply(ips.append)  # the server's: known once created

    assert stack.preview(declare).ok
    assert (names, ips) == (["web"], [])

    stack.up(declare)
    names.clear(), ips.clear()
    assert stack.preview(declare).ok
    live_ip = stack.fake.find("Service", "web")["spec"]["clusterIP"]  # type: ignore[index]
    assert (names, ips) == (["web"], [live_ip])


def test_an_unused_apply_that_raises_fails_the_run_naming_its_line(stack: Stack) -> None:
    line = 0

    def declare(p: Program) -> None:
        nonlocal line
        settings = k8s.core.v1.ConfigMap(
            "settings", metadata={"name": "settings"}, data={"mode": "fast"}
        )
        line = sys._getframe().f_lineno + 1
        settings.data["mode"].apply(lambda mode: int(mode))

    summary = stack.up(declare)

    assert not summary.ok
    assert summary.failures == [
        f"{__file__}:{line}: an apply callback failed: ValueError: invalid literal for "
        "int() with base 10: 'fast'"
    ]
    # Everything was applied and recorded before the callback ran.
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast"}
    assert stack.fake.find("ConfigMap", "settings") is not None


def checked(stack: Stack, declare: Any, *, dry_run: bool) -> Summary:
    """An up (or its preview) with the best-practice policy pack, as `up` runs it."""
    return operations.run(
        stack.backend,
        project=PROJECT,
        stack=STACK,
        options=Options("up", dry_run=dry_run),
        program=program(declare),
        providers=stack.fake.factory(),
        listener=stack.events.append,
        policy=PolicyGate(packs=tuple(select_packs(["kubernetes-best-practices"]))),
    )


def test_a_used_apply_runs_once_though_the_policy_check_and_the_apply_resolve_it(
    stack: Stack,
) -> None:
    calls: list[Any] = []

    def declare(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap(
            "settings", metadata={"name": "settings"}, data={"mode": "fast"}
        )
        upper = settings.data["mode"].apply(lambda mode: calls.append(mode) or mode.upper())
        k8s.core.v1.ConfigMap("derived", metadata={"name": "derived"}, data={"mode": upper})

    for dry_run in (True, False):
        calls.clear()
        assert checked(stack, declare, dry_run=dry_run).ok
        assert calls == ["fast"]
    assert stack.recorded(urn(CM, "derived")).inputs["data"] == {"mode": "FAST"}
