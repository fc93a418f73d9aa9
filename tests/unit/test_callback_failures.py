"""A program's callback that raises on the value it was given: reported in one line with
the program's file and line and what the error says, a secret it was given masked."""

from __future__ import annotations

import io

from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.cli.render import failed_line, make_renderer
from stackwright.engine.events import StepDone
from stackwright.errors import forget_secrets
from stackwright.sdk.context import Program


def _port(value: str) -> int:
    return int(value.split("-")[1])


def test_a_callback_given_a_secret_tells_what_went_wrong_with_the_secret_masked(
    stack: Stack,
) -> None:
    def declare(_: Program) -> None:
        ns = k8s.core.v1.Namespace("ns", metadata={"name": "shop"})
        token = sw.Output.secret("tok-hunter22-x")
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"namespace": ns.metadata["name"]},
            data={"port": sw.Output.all(ns.metadata["name"], token).apply(lambda v: _port(v[1]))},
        )

    try:
        summary = stack.up(declare)
    finally:
        forget_secrets()
    assert not summary.ok
    (failure,) = summary.failures
    # Where it was raised, and what it said: the part of the secret it quotes masked.
    assert failure == (
        f"{__file__}:{_port.__code__.co_firstlineno + 1}: kubernetes:core/v1:ConfigMap "
        "settings: an apply callback failed: ValueError: invalid literal for int() with "
        "base 10: '[secret]'"
    )


def test_an_input_callback_that_raises_names_its_line_and_what_it_said(stack: Stack) -> None:
    line = 0

    def declare(_: Program) -> None:
        nonlocal line
        ns = k8s.core.v1.Namespace("ns", metadata={"name": "shop"})
        line = declare.__code__.co_firstlineno + 7
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"namespace": ns.metadata["name"]},
            data={"team": ns.metadata.apply(lambda m: m["team"])},
        )

    summary = stack.up(declare)
    assert summary.failures == [
        f"{__file__}:{line}: kubernetes:core/v1:ConfigMap settings: an apply callback failed: "
        "KeyError: 'team'"
    ]


def test_the_failed_steps_line_names_the_resource_once(stack: Stack) -> None:
    """The step's error leads with the callback's line and names the resource: its line,
    plain or live, says it as it is, not after the resource's name a second time."""

    def declare(_: Program) -> None:
        k8s.core.v1.Namespace("ns", metadata={"name": "shop"})
        k8s.core.v1.ConfigMap("settings", data={"port": sw.Output.from_input("x").apply(_port)})

    (failure,) = stack.up(declare).failures
    assert failure.startswith(f"{__file__}:{_port.__code__.co_firstlineno + 1}: "), failure
    out = io.StringIO()
    plain = make_renderer("up", json_lines=False, show_diff=False, stream=out, live=False)
    for event in stack.events:
        plain(event)
    plain.close()
    assert f"! failed  {failure}" in out.getvalue().splitlines(), out.getvalue()
    (done,) = [e for e in stack.of(StepDone) if not e.ok]
    assert failed_line(done, with_type=True).plain == f"! failed  {failure}"  # the live one


def test_only_the_parts_of_the_secret_a_callback_was_given_are_masked(stack: Stack) -> None:
    def declare(_: Program) -> None:
        ns = k8s.core.v1.Namespace("ns", metadata={"name": "shop"})
        # Another secret of the stack, never given to the callback: its words ("base",
        # "with", "literal") are no part of what the callback could quote.
        k8s.core.v1.Secret(
            "db",
            metadata={"namespace": ns.metadata["name"]},
            string_data={"url": sw.Output.secret("postgres://database/shop?with_literal=1")},
        )
        token = sw.Output.secret("tok-hunter22-x")
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"namespace": ns.metadata["name"]},
            data={"port": token.apply(_port)},
        )

    try:
        summary = stack.up(declare)
    finally:
        forget_secrets()
    (failure,) = summary.failures
    assert failure.endswith("ValueError: invalid literal for int() with base 10: '[secret]'")
