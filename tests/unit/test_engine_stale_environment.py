"""A workload whose env reads a ConfigMap or Secret the run changes in place, its pod
template left as it is, is warned that its pods keep the former values; one that reads
only keys the run leaves as they are is not (`rollouts`)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_stack import Declare, Stack
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.sdk.context import Program


def program(
    data: dict[str, str],
    env: list[dict[str, Any]],
    kind: str = "ConfigMap",
    env_from: list[dict[str, Any]] | None = None,
) -> Declare:
    def declare(p: Program) -> None:
        if kind == "ConfigMap":
            k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data=data)
        else:
            k8s.core.v1.Secret("settings", metadata={"name": "settings"}, string_data=data)
        container = {"name": "web", "image": "nginx:1.29", "env": env, "envFrom": env_from or []}
        k8s.apps.v1.Deployment(
            "web",
            metadata={"name": "web"},
            spec={
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [container]},
                },
            },
        )

    return declare


def reads(key: str, kind: str = "ConfigMap") -> dict[str, Any]:
    ref = "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef"
    return {"name": key, "valueFrom": {ref: {"name": "settings", "key": key}}}


def warnings(stack: Stack) -> list[str]:
    return [d.message for d in stack.of(Diagnostic) if d.severity == "warning"]


def test_a_key_the_env_does_not_read_changing_is_no_warning(stack: Stack) -> None:
    stack.up(program({"A": "1", "B": "1"}, [reads("A")]))

    summary = stack.up(program({"A": "1", "B": "2"}, [reads("A")]))

    assert summary.ok and summary.counts == {"update": 1, "same": 1}
    assert warnings(stack) == []


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret"])
def test_a_key_the_env_reads_changing_is_warned_of(stack: Stack, kind: str) -> None:
    stack.up(program({"A": "1", "B": "1"}, [reads("A", kind)], kind))

    stack.up(program({"A": "2", "B": "1"}, [reads("A", kind)], kind))

    [warning] = warnings(stack)
    assert f"its pods read {kind} settings into their environment" in warning


def test_env_from_reads_every_key(stack: Stack) -> None:
    env_from = [{"configMapRef": {"name": "settings"}}]
    stack.up(program({"A": "1", "B": "1"}, [], env_from=env_from))

    stack.up(program({"A": "1", "B": "2"}, [], env_from=env_from))

    assert len(warnings(stack)) == 1
